"""The compiled core (envs.batched) plays exactly like the reference engine (envs.engine).

A sample of ``envs/differential.py``: every preset x player count x betting structure, plus
each rule option off its preset value, with deep and short stacks; identical player to act,
mask, raise-to amounts, pot and observation (bit for bit, ``envs.observation``) at every
step, identical payoffs and every seat's observation at the end.
``bench/core_differential.py`` runs the same check over a million hands.
"""

import numpy as np
import pytest

from envs.batched import BatchedGame, evaluate_rows
from envs.batched import evaluate as core_evaluate
from envs.differential import compare, sweep, variants
from envs.engine.cards import RANKS
from envs.engine.hands import evaluate
from envs.engine.rules import RULES


def test_every_variant_and_table_size_matches_the_reference():
    report = sweep(num_hands=6, seed=2024, observations=True)
    assert report.hands > 1500 and report.steps > 15_000
    assert not report.mismatches, "\n\n".join(report.mismatches[:3])


@pytest.mark.parametrize("name", list(RULES))
def test_many_short_stacked_hands_match(name):
    rules = RULES[name].replace(betting="no_limit")
    report = compare(rules, min(3, rules.max_players), 300, seed=5, short_stacks=True)
    assert not report.mismatches, "\n\n".join(report.mismatches[:3])


def _random_hands(rng, count, *, suits):
    """Hands of 1-7 distinct cards drawn from ``suits`` suits (few suits: many flushes)."""
    pool = np.array([c for c in range(52) if c & 3 < suits])
    for _ in range(count):
        n = int(rng.integers(1, 8))
        yield rng.choice(pool, n, replace=False).tolist()


@pytest.mark.parametrize("suits", [4, 2, 1])
def test_the_core_evaluator_gives_the_reference_values(suits):
    rng = np.random.default_rng(suits)
    for cards in _random_hands(rng, 6000, suits=suits):
        wild = ()
        kind = int(rng.integers(4))
        if kind >= 2:
            wild = (RANKS[int(rng.integers(13))],) + (("Q",) if kind == 3 else ())
        options = dict(canadian=bool(rng.integers(2)), wild_ranks=wild,
                       double_ace_flush=bool(wild) and bool(rng.integers(2)),
                       ace_low_four_straight=bool(rng.integers(2)))
        assert core_evaluate(cards, **options) == int(evaluate(cards, **options)), (cards, options)


@pytest.mark.parametrize("n", range(1, 8))
def test_rows_are_scored_as_one_by_one(n):
    """evaluate_rows (local best response's roll-outs, hand_class for many face-down cards) is
    the reference value of every row, whatever the options."""
    rng = np.random.default_rng(n)
    rows = np.argsort(rng.random((400, 52)), axis=1)[:, :n]
    for wild, canadian in (((), True), ((), False), (("7", "Q"), True)):
        options = dict(canadian=canadian, wild_ranks=wild, double_ace_flush=bool(wild))
        assert evaluate_rows(rows, **options).tolist() == [int(evaluate(r, **options)) for r in rows.tolist()]


@pytest.mark.parametrize("rows, message", [(np.zeros((2, 8), dtype=int), "1..7"),
                                           (np.zeros(5, dtype=int), "1..7"),
                                           (np.full((1, 5), 52), "0..51"), (np.zeros((1, 5)), "integer"),
                                           (np.array([[4, 9, 13, 9, 30]]), "repeated")])
def test_rows_of_bad_cards_are_refused(rows, message):
    with pytest.raises(ValueError, match=message):
        evaluate_rows(rows)


def test_every_five_card_rank_multiset_has_the_reference_value():
    # Five natural cards are scored by a table built for them (FiveCards in src/engine/hands.h):
    # every one of the 6,175 ways five cards can fall on the ranks, each suit at most twice (no
    # flush to mask the ranks' value), under each option.
    hands = []

    def fill(rank, left, counts):
        if rank == 13:
            if not left:
                ranks = [r for r in range(13) for _ in range(counts[r])]
                hands.append([4 * r + i % 4 for i, r in enumerate(ranks)])   # suits 0 1 2 3 0
            return
        for c in range(min(left, 4) + 1):
            fill(rank + 1, left - c, counts + [c])

    fill(0, 5, [])
    assert len(hands) == 6175
    for canadian in (False, True):
        for ace_low in (False, True):
            options = dict(canadian=canadian, ace_low_four_straight=ace_low)
            got = evaluate_rows(np.array(hands), **options).tolist()
            assert got == [int(evaluate(h, **options)) for h in hands], options


def test_a_hand_with_a_card_twice_is_refused_as_the_reference_refuses_it():
    with pytest.raises(ValueError):
        evaluate([4, 9, 13, 9, 30])
    with pytest.raises(ValueError, match="repeated"):
        core_evaluate([4, 9, 13, 9, 30])


def test_variants_cover_every_betting_structure_and_option():
    seen = {(r.betting, r.bring_in, r.first_to_act, r.canadian_hands, r.queens_wild,
             r.double_ace_flush, r.low_chicago, r.open_pair_doubles) for r in variants()}
    assert {s[0] for s in seen} == {"fixed_limit", "spread_limit", "pot_limit", "no_limit"}
    assert any(s[4] for s in seen) and any(s[5] for s in seen) and any(s[6] for s in seen)
    assert any(not r.ace_low_four_straight for r in variants())


def test_seeds_reproduce_hands_and_auto_reset_deals_new_ones():
    def play(seeds):
        g = BatchedGame("follow_the_bitch", 4, 8)
        g.reset(seeds=seeds)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(200):
            legal = g.action_mask.astype(bool)
            assert (legal.any(axis=1)).all()  # auto reset: someone is always to act
            actions = [rng.choice(np.flatnonzero(row)) for row in legal]
            g.step(actions)
            out.append((g.payoffs.copy(), g.dones.copy(), g.pot.copy()))
            assert (g.payoffs.sum(axis=1) == 0).all()
        return out

    a, b = play(range(8)), play(range(8))
    assert all(np.array_equal(x, y) for s, t in zip(a, b) for x, y in zip(s, t))
    assert sum(int(d.sum()) for _, d, _ in a) > 20  # many hands finished and were re-dealt
    c = play(range(100, 108))
    assert not all(np.array_equal(s[0], t[0]) for s, t in zip(a, c))  # other seeds, other cards


def test_an_illegal_action_is_refused_with_the_hand_named():
    g = BatchedGame("soko", 2, 2)
    g.reset(seeds=[0, 1])
    actions = np.ones(2, dtype=int)
    actions[1] = 0  # fold is never legal against the forced bring-in
    with pytest.raises(ValueError, match="hand 1"):
        g.step(actions)


def test_the_observation_array_holds_the_player_to_acts_view_after_auto_reset():
    g = BatchedGame("follow_the_bitch_low_chicago", 5, 16, observations=True)
    g.reset(seeds=range(16))
    rng = np.random.default_rng(3)
    for _ in range(60):
        g.step([rng.choice(np.flatnonzero(row)) for row in g.action_mask])
        for i in range(16):
            assert np.array_equal(g.observations[i], g.observe(i, int(g.current_player[i])))
    assert g.observations.shape == (16, g.layout.size)


def test_threads_change_nothing_but_the_speed():
    def run(threads):
        g = BatchedGame("soko_nordic", 4, 512, threads=threads, observations=True)
        g.reset(seeds=range(512))
        rng = np.random.default_rng(9)
        out = []
        for _ in range(40):
            g.step(np.argmax(rng.random(g.action_mask.shape) * g.action_mask, axis=1))
            out.append(np.concatenate([g.payoffs.ravel(), g.action_mask.ravel(), g.observations.ravel()]))
        return np.concatenate(out)

    assert np.array_equal(run(1), run(2))


def test_stacks_that_cannot_cover_the_ante_end_the_hand_at_the_deal():
    g = BatchedGame("soko", 2, 2)
    g.reset(seeds=[0, 1], stacks=[[1, 1], [800, 800]])
    assert g.dones.tolist() == [True, False] and g.current_player[0] == -1
    assert g.payoffs[0].sum() == 0
    g.step([-1, 1])  # the finished slot is left alone; the other plays on
    assert g.current_player[1] >= 0
