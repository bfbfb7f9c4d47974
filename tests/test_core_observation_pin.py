"""The compiled core reproduces the observation encoder's regression pin.

``tests/test_observation_layout.py`` pins the SHA-256 of every observation and mask of every
seat at every step of seeded hands. Here the same hands (the same deck draws, stacks, buttons
and random choices from the same generator) are played on ``envs.batched.BatchedGame`` alone,
with its observations and masks hashed the same way: the digests must be the pinned ones.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from envs.batched import BatchedGame
from envs.engine.game import Game
from tests.test_observation_layout import DIGESTS, HANDS, configurations, key, pinned_setup


def core_digest(preset: str, betting: str, n: int, queens_wild: bool) -> str:
    rules, rng = pinned_setup(preset, betting, n, queens_wild)
    core = BatchedGame(rules, n, 1, auto_reset=False, observations=True)
    zeros = np.zeros(core.num_actions, dtype=np.int8)
    h = hashlib.sha256()
    for hand in range(HANDS):
        rng.random()  # the reference draws here whether to pickle its encoder
        kind = hand % 3
        if kind == 0:
            stacks = [rules.stack] * n
        elif kind == 1:
            stacks = [int(x) for x in rng.integers(1, 40, size=n)]
        else:
            stacks = [int(x) for x in rng.integers(20, 3 * rules.stack, size=n)]
        button = int(rng.integers(n))
        # The deck the reference would deal: Game draws it from rng (and nothing else does).
        deck = Game(rules, n, stacks=stacks, button=button, seed=rng).deck
        core.reset(decks=[list(deck)], buttons=[button], stacks=[stacks])
        while True:
            current = int(core.current_player[0])
            for seat in range(n):
                h.update(core.observe(0, seat).tobytes())
                h.update((core.action_mask[0] if seat == current else zeros).tobytes())
            if current < 0:
                break
            legal = np.flatnonzero(core.action_mask[0])
            core.step([int(legal[int(rng.integers(len(legal)))])])
    return h.hexdigest()


@pytest.mark.parametrize("config", configurations(), ids=lambda c: key(*c))
def test_the_core_reproduces_the_pinned_observations_and_masks(config):
    assert core_digest(*config) == DIGESTS[key(*config)]
