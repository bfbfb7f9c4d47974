"""Network pieces for the policies we train (``ppo.features_extractor`` in a training config).

:class:`CardPlanes` reads every 52-card block of the observation (the face-down cards, each
seat's face-up cards, the wild cards) as a plane of 13 ranks x 4 suits (card id = rank * 4 +
suit, ``envs.engine.cards``), one channel per block, as AlphaHoldem's card tensor does, and
convolves them:

* across the suits of each rank (kernel 1 x 4): how many of a rank each player holds (pairs,
  trips);
* across the ranks of each suit (kernel 13 x 1): flushes and four-flushes;
* along five neighbouring ranks of the per-rank features (kernel 5 x 1): straights and
  four-straights.

Their outputs (tanh) are concatenated with the observation's other columns (chips, betting,
the optional hand-strength pieces) and go on to the config's ``net_arch`` MLP. The card one-hots
are not passed on themselves, so the policy sees cards only through the planes.

The class is imported by name when a model that uses it is loaded (SB3 pickles the policy's
arguments), so it lives here, beside the agent that loads models (``agents/trained.py``).
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

__all__ = ["CardPlanes", "card_blocks"]


def card_blocks(layout) -> list[int]:
    """The start columns of the observation's 52-card blocks (``envs.observation`` layout
    pieces of one-hot cards: hole_cards, up_cards, wild_cards)."""
    starts = []
    for piece in layout:
        if piece.name in ("hole_cards", "up_cards", "wild_cards"):
            if piece.size % 52:
                raise ValueError(f"observation piece {piece.name} is not whole 52-card blocks ({piece.size})")
            starts += range(piece.start, piece.start + piece.size, 52)
    return starts


class CardPlanes(BaseFeaturesExtractor):
    """Card blocks as 13 x 4 planes through three small convolutions, then the other columns."""

    def __init__(self, observation_space: gym.spaces.Box, blocks: list[int], channels: int = 8) -> None:
        size = int(observation_space.shape[0])
        if not blocks or min(blocks) < 0 or max(blocks) + 52 > size:
            raise ValueError(f"card blocks {blocks} do not fit an observation of {size} columns")
        card_columns = torch.cat([torch.arange(b, b + 52) for b in blocks])
        rest = torch.ones(size, dtype=torch.bool)
        rest[card_columns] = False
        features = channels * (13 + 4 + 9) + int(rest.sum())
        super().__init__(observation_space, features)
        self.blocks = len(blocks)
        self.register_buffer("card_columns", card_columns, persistent=False)
        self.register_buffer("rest_columns", rest.nonzero().flatten(), persistent=False)
        self.by_rank = nn.Conv2d(self.blocks, channels, kernel_size=(1, 4))
        self.by_suit = nn.Conv2d(self.blocks, channels, kernel_size=(13, 1))
        self.runs = nn.Conv2d(channels, channels, kernel_size=(5, 1))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        planes = observations[:, self.card_columns].reshape(-1, self.blocks, 13, 4)
        ranks = torch.tanh(self.by_rank(planes))                 # (B, channels, 13, 1)
        suits = torch.tanh(self.by_suit(planes))                 # (B, channels, 1, 4)
        runs = torch.tanh(self.runs(ranks))                      # (B, channels, 9, 1)
        return torch.cat([ranks.flatten(1), suits.flatten(1), runs.flatten(1),
                          observations[:, self.rest_columns]], dim=1)
