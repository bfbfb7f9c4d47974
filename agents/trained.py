"""Trained policies as agents: ``ppo:PATH`` loads a MaskablePPO checkpoint (sb3-contrib).

``PATH`` is a model ``.zip`` (the suffix may be left out, as SB3 allows) or a training run
folder, whose ``final_model.zip`` is loaded (``agents.registry.resolve_checkpoint``).

The policy's input is the env's observation vector, so this agent encodes the game with
``envs.observation.ObservationEncoder`` (``ObservationEncoder(rules).encode(game, seat)``), the
same encoder the training env uses. The encoder takes a :class:`Game`: the tournament calls
``act_game(game, seat, action_mask)`` (``agents.base.choose_action`` prefers it), and
``act(view, action_mask)`` encodes ``agents.base.game_from_view(view)``, a replay of the view
with stand-in cards for the other seats' face-down cards. ``tests/test_agents.py`` checks
that the agent's choice never depends on other seats' face-down cards.

Deterministic by default (the most likely legal action); ``ppo:PATH,deterministic=false``
samples from the policy, seeded by :meth:`PPOAgent.reset` through torch's generator.
Torch and sb3-contrib are imported on first use.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent, game_from_view
from envs.engine.game import Game, PlayerView

__all__ = ["PPOAgent"]


class PPOAgent(Agent):
    """A MaskablePPO checkpoint, loaded lazily (on first action) on the CPU."""

    def __init__(self, *, path: str = "", deterministic: bool = True) -> None:
        super().__init__()
        if not path:
            raise ValueError("ppo needs a checkpoint path: ppo:runs/<run>/final_model.zip")
        self.path = Path(path)
        self.deterministic = deterministic
        self._model = None
        self._encoders: dict = {}

    @property
    def model(self):
        if self._model is None:
            from sb3_contrib import MaskablePPO

            from agents.registry import resolve_checkpoint

            self._model = MaskablePPO.load(str(resolve_checkpoint(self.path)), device="cpu")
        return self._model

    def _encoder(self, rules, num_players: int):
        key = (rules, num_players)
        encoder = self._encoders.get(key)
        if encoder is None:
            import envs.observation as observation

            if hasattr(observation, "ObservationEncoder"):
                encoder = observation.ObservationEncoder(rules)
            else:
                encoder = observation.Encoder(rules, num_players)
            self._encoders[key] = encoder
        return encoder

    def reset(self, seed=None) -> None:
        super().reset(seed)
        if not self.deterministic and seed is not None:
            import torch

            self.model  # loading draws from torch's generator: load before seeding it
            seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
            torch.manual_seed(int(seq.generate_state(1)[0]))

    def _predict(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        action, _ = self.model.predict(obs, deterministic=self.deterministic,
                                       action_masks=np.asarray(action_mask, dtype=bool))
        return int(np.asarray(action).reshape(-1)[0])

    def act_game(self, game: Game, seat: int, action_mask: np.ndarray) -> int:
        obs = self._encoder(game.rules, game.num_players).encode(game, seat)
        return self._predict(obs, action_mask)

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        return self.act_game(game_from_view(view), view.seat, action_mask)
