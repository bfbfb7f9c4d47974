"""Stud Arena environments: PettingZoo AEC envs and a single-agent Gymnasium view.

``from envs import soko_v0, follow_the_bitch_v0`` gives the AEC envs (``env()`` / ``raw_env()``);
``from envs import SingleAgentEnv`` the one-learner view for stable-baselines3. The rules engine
``envs.engine`` imports none of gymnasium, pettingzoo or torch; importing it alone
(``import envs.engine.game``) loads this package lazily, so it stays free of them too.
"""

from __future__ import annotations

import importlib

__all__ = ["soko_v0", "follow_the_bitch_v0", "SingleAgentEnv"]


def __getattr__(name: str):
    # Lazy: `import envs.engine` (or envs.actions) must not pull in gymnasium or pettingzoo.
    if name in ("soko_v0", "follow_the_bitch_v0"):
        return importlib.import_module(f"envs.{name}")
    if name == "SingleAgentEnv":
        return importlib.import_module("envs.single_agent").SingleAgentEnv
    raise AttributeError(f"module 'envs' has no attribute {name!r}")
