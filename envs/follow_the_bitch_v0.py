"""Follow the Bitch (follow-the-queen wild cards, option Low Chicago) as a PettingZoo AEC
environment; see :mod:`envs.stud_env` for the agents, actions, observation index table and
options.

>>> from envs import follow_the_bitch_v0
>>> env = follow_the_bitch_v0.env(num_players=3, low_chicago=True)
>>> env.reset(seed=1)
>>> env.unwrapped.game.rules.low_chicago, env.unwrapped.layout.size
(True, 617)
"""

from __future__ import annotations

from envs.stud_env import StudEnv, wrap_env


class raw_env(StudEnv):  # noqa: N801 (PettingZoo's name for the unwrapped env)
    """Follow the Bitch without PettingZoo's wrappers: illegal actions raise ValueError."""

    game_name = "follow_the_bitch"
    presets = ("follow_the_bitch", "follow_the_bitch_low_chicago")
    metadata = {**StudEnv.metadata, "name": "follow_the_bitch_v0"}


def env(**kwargs) -> StudEnv:
    """Follow the Bitch wrapped in PettingZoo's standard wrappers (keyword arguments as
    :class:`raw_env`)."""
    return wrap_env(raw_env(**kwargs))
