"""The exact solver's batched ppo policy (arena/exact.py ``_ppo_batched_strategy``) against the
per-information-set path (``_view_strategy``: ``PPOAgent.policy`` on a replayed view per
information set), on the 8-card soko_mini, for models with and without observation features,
with a NumPy and a torch forward pass (each case about 10 s: the per-information-set path is
the slow one)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from arena.exact import (
    _info_set_decks,
    _ppo_batched_strategy,
    _view_strategy,
    build_tree,
    exploitability,
    uniform_strategy,
)
from envs.engine.game import Game
from envs.engine.rules import get_rules
from envs.observation import FEATURES

TINY = get_rules("soko_mini", deck_ranks="KA", max_raises=1)   # 8 cards, one raise a round


@pytest.fixture(scope="module")
def trees():
    """The whole tree, and the same tree with chance restricted to two round-0 public states
    (one per bring-in seat) and six of the round-1 states below each (both round-1 openers):
    the per-information-set path takes minutes on the whole tree, seconds on this."""
    tree = build_tree(TINY)
    K = tree.block
    valid = [np.zeros_like(v) for v in tree.valid]
    for seat in (0, 1):
        p = int(np.flatnonzero(tree.opener[0] == seat)[0])
        valid[0][p] = tree.valid[0][p]
        below = np.arange(p * K, (p + 1) * K)
        for opener in (0, 1):
            picked = below[tree.opener[1][below] == opener][:3]
            valid[1][picked] = tree.valid[1][picked]
    return tree, dataclasses.replace(tree, valid=valid)


def _random_model(features, activation: str, scale: float = 0.5):
    from envs.single_agent import SingleAgentEnv
    from tests.helpers import random_ppo_agent

    env = SingleAgentEnv("soko", rules=TINY, observation_features=features)
    return random_ppo_agent(env, activation, features=features, scale=scale)


@pytest.mark.parametrize("features, activation, actor", [
    (tuple(FEATURES), "tanh", "NumpyActor"),
    ((), "elu", "TorchActor"),
])
def test_batched_ppo_policy_is_the_per_information_set_one(trees, features, activation, actor):
    tree, sub = trees
    agent = _random_model(features, activation)
    assert agent.features == features and type(agent.actor).__name__ == actor
    batched, slow = uniform_strategy(tree), uniform_strategy(tree)
    _ppo_batched_strategy(sub, agent, batched, (0, 1))
    _view_strategy(sub, agent, slow, (0, 1))
    spread = 0.0
    for n, a, b in zip(tree.nodes, batched, slow):
        entries = sub.valid[n.round] > 0
        assert entries.any()
        assert np.abs(a[:, entries] - b[:, entries]).max() <= 1e-5, n.seq
        spread = max(spread, float(a[:, entries].std(axis=1).max()))
    assert spread > 0.05   # the policy depends on the cards: the comparison is not of constants
    e_batched, e_slow = exploitability(sub, batched), exploitability(sub, slow)
    assert e_batched == pytest.approx(e_slow, rel=1e-5, abs=1e-9)
    assert e_batched[0] > 0
    # On the whole tree the batched policy is the same at these information sets.
    whole = uniform_strategy(tree)
    _ppo_batched_strategy(tree, agent, whole, (0, 1))
    for n, a, b in zip(tree.nodes, whole, batched):
        entries = sub.valid[n.round] > 0
        assert np.abs(a[:, entries] - b[:, entries]).max() <= 1e-6, n.seq


def test_the_kept_observations_give_the_next_model_its_own_policy(trees):
    # The tree keeps the observations of its information sets for the next model (the
    # training pool asks every few thousand steps): a second model gets its own policy, the
    # same as from a tree that keeps nothing.
    _, sub = trees
    first, second = _random_model(tuple(FEATURES), "tanh"), _random_model(tuple(FEATURES), "tanh", scale=1.5)
    a, b, fresh = uniform_strategy(sub), uniform_strategy(sub), uniform_strategy(sub)
    _ppo_batched_strategy(sub, first, a, (0, 1))
    assert "_observation_plan" in sub.__dict__
    _ppo_batched_strategy(sub, second, b, (0, 1))
    _ppo_batched_strategy(dataclasses.replace(sub), second, fresh, (0, 1))   # nothing kept
    assert all(np.array_equal(x, y) for x, y in zip(b, fresh))
    assert any(np.abs(x - y).max() > 0.01 for x, y in zip(a, b))   # two models, two policies


def test_one_seat_leaves_the_other_uniform(trees):
    tree, sub = trees
    agent = _random_model((), "tanh")
    only, both = uniform_strategy(tree), uniform_strategy(tree)
    _ppo_batched_strategy(sub, agent, only, (1,))
    _ppo_batched_strategy(sub, agent, both, (0, 1))
    uniform = uniform_strategy(tree)
    for n, a, b, u in zip(tree.nodes, only, both, uniform):
        entries = (sub.valid[n.round] > 0) & (tree.actor(n) == 1)[:, None]
        others = (sub.valid[n.round] > 0) & (tree.actor(n) == 0)[:, None]
        assert np.abs(a[:, entries] - b[:, entries]).max() <= 1e-6   # other batches, other roundings
        assert np.array_equal(a[:, others], u[:, others])


def test_information_set_decks_deal_the_public_cards_and_the_hole_card(trees):
    tree, _ = trees
    rng = np.random.default_rng(0)
    for rnd in (0, 1):
        pubs, holes = np.nonzero(tree.valid[rnd] > 0)
        picked = rng.choice(len(pubs), size=40, replace=False)
        actors = rng.integers(2, size=40)
        decks = _info_set_decks(tree, rnd, pubs[picked], holes[picked], actors)
        assert decks.shape == (40, tree.size)
        for deck, p, h, s in zip(decks, pubs[picked], holes[picked], actors):
            assert sorted(deck.tolist()) == sorted(int(c) for c in tree.deck)   # a permutation
            g = Game(TINY, 2, deck=deck.tolist(), seed=0)
            while g.street < rnd:
                g.check_or_call()
            public = [tree.deck[c] for c in tree.pubs[rnd][p]]
            assert g.hole_cards(s) == (tree.deck[h],)
            assert g.up_cards(0) == tuple(public[0::2]) and g.up_cards(1) == tuple(public[1::2])
