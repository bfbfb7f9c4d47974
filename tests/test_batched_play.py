"""Matches on the compiled core (``engine="batched"``, ``arena/batched_play.py``) against the
reference engine: the same deals and seatings, so deterministic agents win the same chips hand
for hand; agents that draw at random play the same game with other draws."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import Agent
from agents.registry import make_agent
from arena.lbr import LBRAgent
from arena.match import play_match
from envs.actions import CHECK_CALL


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
    model = make_agent("champion:soko,deterministic=true")
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


@pytest.mark.parametrize("game, agents", [
    ("soko", ["tag", "call"]),
    ("soko", ["tag", "call", "raise"]),
    ("soko_mini", ["raise", "tag"]),
    ("follow_the_bitch", ["tag", "call"]),        # the luck correction's NumPy form (a followed wild rank)
])
def test_the_luck_correction_and_histories_on_the_core_are_the_reference_ones(game, agents):
    """The core keeps each hand's actions and the match replays them on a reference Game: for
    deterministic agents the corrected estimates, the raw ones and the histories (text and PHH)
    are the reference engine's, to the bit."""
    ref, core = _both(game, agents, hands=90, luck_correction=True, histories=7)
    np.testing.assert_array_equal(ref.group_results, core.group_results)
    assert ref.estimates == core.estimates and ref.raw_estimates == core.raw_estimates
    assert ref.estimates != ref.raw_estimates                 # the correction did something
    assert ref.histories == core.histories and len(core.histories) == 7
    assert ref.phh_histories == core.phh_histories


def test_a_local_best_response_match_with_the_luck_correction_on_the_core():
    """arena.exploit's LBR match (luck-corrected) on the core: the numbers of the reference."""
    model = make_agent("champion:soko,deterministic=true")
    ref, core = _both("soko", [LBRAgent(model, samples=20), model], hands=40, luck_correction=True)
    assert ref.estimates == core.estimates and ref.raw_estimates == core.raw_estimates


def test_one_chunk_on_two_threads_plays_what_it_plays_on_one(monkeypatch):
    """A match of one core chunk with two workers gives the chunk's game two threads instead of
    a second process: the same chips, hand for hand, with equity's draws and a local best
    response among the agents."""
    from arena import batched_play

    threads = []
    real = batched_play.play_groups
    monkeypatch.setattr(batched_play, "play_groups",
                        lambda *a, **k: threads.append(k["threads"]) or real(*a, **k))
    model = make_agent("champion:soko,deterministic=true")
    for agents in ([LBRAgent(model, samples=20), model], ["equity:samples=30", "tag"]):
        one = play_match("soko", agents, hands=60, seed=4, engine="batched", luck_correction=True)
        two = play_match("soko", agents, hands=60, seed=4, engine="batched", luck_correction=True, workers=2)
        np.testing.assert_array_equal(one.group_results, two.group_results)
        assert one.estimates == two.estimates
    assert threads == [1, 2, 1, 2]


def test_the_replay_of_one_chunk_splits_over_forked_processes_with_the_same_numbers(monkeypatch):
    """One core chunk on two threads: its replay for the luck correction and the histories is
    split between this process and a forked one, and the match's numbers are the one-process
    ones to the bit (known policies' decision terms included)."""
    from arena import match

    splits = []
    real = match._in_forks
    monkeypatch.setattr(match, "_in_forks",
                        lambda work, parts: splits.append(len(parts)) or real(work, parts))
    for agents in (["tag", "raise"], ["random", "tag"]):
        kw = dict(hands=match.FORK_REPLAY_HANDS + 44, seed=6, engine="batched", luck_correction=True,
                  histories=5)
        one, two = play_match("soko", agents, **kw), play_match("soko", agents, workers=2, **kw)
        np.testing.assert_array_equal(one.group_results, two.group_results)
        assert one.estimates == two.estimates and one.raw_estimates == two.raw_estimates
        assert one.histories == two.histories and one.phh_histories == two.phh_histories
    assert splits == [1, 2, 1, 2]


def test_a_failed_replay_in_a_forked_process_is_raised_here():
    from arena.match import _in_forks

    def work(part):
        if part == "bad":
            raise RuntimeError("hand 7: the core's actions do not replay")
        return (None if part == "none" else np.full((2, 3), len(part), dtype=float)), [(len(part), "t", "p")]

    got = _in_forks(work, ["ab", "none", "abcd"])
    assert got[1] == (None, [(4, "t", "p")]) and got[0][1] == [(2, "t", "p")]
    np.testing.assert_array_equal(got[2][0], np.full((2, 3), 4.0))
    with pytest.raises(RuntimeError, match="hand 7: the core's actions do not replay"):
        _in_forks(work, ["ab", "bad"])


@pytest.mark.timeout(180)
def test_a_champion_in_forked_workers_on_the_core_does_not_hang():
    """Several core chunks on two worker processes with a champion: spec (a ppo model whose
    torch policy the parent built when it checked the engine): the workers finish, with the
    chips of one process."""
    agents = ["champion:soko_6max", "random", "call", "raise", "tag", "equity:samples=20"]
    one = play_match("soko", agents, hands=2400, seed=2, engine="batched")
    two = play_match("soko", agents, hands=2400, seed=2, engine="batched", workers=2)
    np.testing.assert_array_equal(one.group_results, two.group_results)


def test_known_policies_keep_their_decision_terms_on_the_core():
    """``random`` draws other actions on the core, but its decision and coin-flip terms are
    there (its policy is asked at the replayed states): the corrected interval is narrower than
    the plain one, as on the reference engine, and the estimates agree."""
    one = play_match("soko", ["random", "call"], hands=600, seed=5, engine="batched", luck_correction=True)
    two = play_match("soko", ["random", "call"], hands=600, seed=5, engine="batched", luck_correction=True,
                     workers=2)
    assert one.estimates == two.estimates
    ref = play_match("soko", ["random", "call"], hands=600, seed=5, luck_correction=True)
    for result in (one, ref):
        assert result.estimates["random"].half_width < 0.8 * result.raw_estimates["random"].half_width
    a, b = one.estimates["random"], ref.estimates["random"]
    assert abs(a.mean - b.mean) < a.half_width + b.half_width


class _Plain(Agent):
    """An agent with no batched form: it checks or calls."""

    name = "plain"

    def act(self, view, mask):
        return CHECK_CALL


def test_auto_falls_back_and_batched_refuses_what_the_core_cannot_do():
    # An agent without a batched form plays on a reference Game: auto plays there.
    ref = play_match("soko", [_Plain(), "random"], hands=60, seed=1, luck_correction=True)
    auto = play_match("soko", [_Plain(), "random"], hands=60, seed=1, luck_correction=True, engine="auto")
    np.testing.assert_array_equal(ref.group_results, auto.group_results)
    with pytest.raises(ValueError, match="engine 'batched': 'plain' has no batched form"):
        play_match("soko", [_Plain(), "random"], hands=20, engine="batched")
    with pytest.raises(ValueError, match="engine must be one of reference, batched, auto, not 'core'"):
        play_match("soko", ["tag", "random"], hands=20, engine="core")
