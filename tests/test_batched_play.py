"""Matches on the compiled core (``engine="batched"``, ``arena/batched_play.py``) against the
reference engine: the same deals and seatings, so deterministic agents win the same chips hand
for hand; agents that draw at random play the same game with other draws."""

from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_agent
from arena.lbr import LBRAgent
from arena.match import play_match


def _both(game, agents, hands, seed=3, **kw):
    ref = play_match(game, agents, hands=hands, seed=seed, **kw)
    core = play_match(game, agents, hands=hands, seed=seed, engine="batched", **kw)
    return ref, core


@pytest.mark.parametrize("game, agents", [
    ("soko", ["tag", "call"]),
    ("soko", ["raise", "tag"]),
    ("soko_mini", ["tag", "raise"]),
    ("follow_the_bitch", ["tag", "call"]),
    ("soko", ["tag", "call", "raise"]),                # a table of three: three rotations a deal
    ("follow_the_bitch", ["call", "tag", "raise", "tag"]),
])
def test_deterministic_agents_win_the_same_chips_hand_for_hand(game, agents):
    ref, core = _both(game, agents, hands=120)
    np.testing.assert_array_equal(ref.group_results, core.group_results)
    assert ref.bb_per_100 == core.bb_per_100
    assert np.abs(ref.group_results).sum() > 0   # chips moved: the comparison says something


def test_no_duplicate_deals_too():
    ref, core = _both("soko", ["tag", "raise"], hands=80, duplicate=False)
    np.testing.assert_array_equal(ref.group_results, core.group_results)


def test_a_deterministic_model_and_its_local_best_response():
    model = make_agent("champion:soko")
    ref, core = _both("soko", [model, "tag"], hands=200)
    np.testing.assert_array_equal(ref.group_results, core.group_results)
    # The local best response (the core's batched follower) reads the model's policy over its
    # range; seeded per hand as the reference copy is, it makes the same decisions.
    ref, core = _both("soko", [LBRAgent(model, samples=20), model], hands=40)
    np.testing.assert_array_equal(ref.group_results, core.group_results)


def test_random_draws_are_fair_and_do_not_depend_on_workers():
    one = play_match("soko", ["random", "call"], hands=600, seed=5, engine="batched")
    two = play_match("soko", ["random", "call"], hands=600, seed=5, engine="batched", workers=2)
    np.testing.assert_array_equal(one.group_results, two.group_results)
    ref = play_match("soko", ["random", "call"], hands=600, seed=5)
    assert not np.array_equal(one.group_results, ref.group_results)   # other draws...
    # ...of the same player: the two estimates agree within their intervals.
    a, b = one.estimates["random"], ref.estimates["random"]
    assert abs(a.mean - b.mean) < a.half_width + b.half_width
    # Zero-sum, hand for hand.
    np.testing.assert_allclose(one.group_results.sum(axis=1), 0.0, atol=1e-12)


def test_equity_and_a_sampling_model_play_on_the_core():
    model = make_agent("champion:soko,deterministic=false")
    result = play_match("soko", [model, "equity:samples=50"], hands=100, seed=2, engine="batched")
    assert result.hands == 100
    np.testing.assert_allclose(result.group_results.sum(axis=1), 0.0, atol=1e-12)


def test_auto_falls_back_and_batched_refuses_what_the_core_cannot_do():
    # The luck correction and histories read a reference Game: auto plays there.
    ref = play_match("soko", ["tag", "random"], hands=60, seed=1, luck_correction=True)
    auto = play_match("soko", ["tag", "random"], hands=60, seed=1, luck_correction=True, engine="auto")
    np.testing.assert_array_equal(ref.group_results, auto.group_results)
    with pytest.raises(ValueError, match="engine 'batched': the luck correction"):
        play_match("soko", ["tag", "random"], hands=20, luck_correction=True, engine="batched")
    with pytest.raises(ValueError, match="engine 'batched': hand histories"):
        play_match("soko", ["tag", "random"], hands=20, histories=2, engine="batched")
    with pytest.raises(ValueError, match="engine must be one of reference, batched, auto, not 'core'"):
        play_match("soko", ["tag", "random"], hands=20, engine="core")
