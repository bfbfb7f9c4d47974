"""Soko (Canadian stud) as a PettingZoo AEC environment; see :mod:`envs.stud_env` for the
agents, actions, observation index table and options.

>>> from envs import soko_v0
>>> env = soko_v0.env(num_players=2, rules="soko_nordic")
>>> env.reset(seed=1)
>>> env.unwrapped.game.rules.bring_in     # a StrEnum: equal to its plain string
<Order.HIGHEST: 'highest'>
>>> env.unwrapped.game.rules.bring_in == "highest"
True
"""

from __future__ import annotations

from envs.stud_env import StudEnv, wrap_env


class raw_env(StudEnv):  # noqa: N801 (PettingZoo's name for the unwrapped env)
    """Soko without PettingZoo's wrappers: illegal actions raise ValueError."""

    game_name = "soko"
    presets = ("soko", "soko_nordic", "soko_mini")
    metadata = {**StudEnv.metadata, "name": "soko_v0"}


def env(**kwargs) -> StudEnv:
    """Soko wrapped in PettingZoo's standard wrappers (keyword arguments as :class:`raw_env`)."""
    return wrap_env(raw_env(**kwargs))
