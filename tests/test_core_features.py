"""The optional observation pieces in the compiled core: the same values as the reference.

``envs.batched.win_probability`` (the core) against ``envs.engine.equity.win_probability`` (the
pure-Python reference) on random states of every preset and table size, folded seats, the
exact last street and the Monte-Carlo streets before it; the counter-based deal sampler both
implement; ``BatchedGame(observation_features=...)`` against the reference encoder, hand by
hand (``envs/differential.py``).
"""

import math

import numpy as np
import pytest

from envs import _stud_core
from envs.actions import action_mask, apply_action, random_action
from envs.batched import CORE_STRENGTH, BatchedGame, core_rules
from envs.batched import win_probabilities as core_win_probabilities
from envs.batched import win_probability as core_win_probability
from envs.differential import compare
from envs.engine.equity import _spot, sample_deals, win_probability
from envs.engine.game import Game
from envs.engine.rules import RULES, get_rules, hand_options
from envs.observation import FEATURES, REFERENCE_STRENGTH, WIN_EXACT, ObservationEncoder

ALL = tuple(FEATURES)


@pytest.mark.parametrize("name", list(RULES) + ["ftb_queens_wild"])
def test_the_core_win_probability_is_the_references_on_random_states(name):
    rules = get_rules("follow_the_bitch", queens_wild=True) if name == "ftb_queens_wild" else RULES[name]
    rng = np.random.default_rng(len(name))
    seen = {"exact": 0, "sampled": 0, "folded": 0}
    for players in range(rules.min_players, rules.max_players + 1):
        for _ in range(3):
            game = Game(rules, players, seed=int(rng.integers(1 << 30)), button=int(rng.integers(players)))
            while not game.is_over:
                for seat in range(players):
                    view = game.view(seat)
                    expected = win_probability(view)
                    assert core_win_probability(game, seat) == expected, (name, players, game.history(), seat)
                    if view.folded[seat]:
                        seen["folded"] += 1
                    elif sum(not f for f in view.folded) > 1:
                        spot = _spot(view)
                        seen["exact" if math.perm(len(spot.pool), spot.need) <= WIN_EXACT else "sampled"] += 1
                apply_action(game, random_action(action_mask(game), rng))
    # Both branches and folded seats came up (heads-up Soko's last street is exact; in Follow
    # the Bitch three face-down cards per opponent leave too many ways; the 12-card mini deck
    # is always few enough).
    assert seen["folded"] > 5 or rules.max_players == 2  # heads-up, a fold ends the hand
    assert seen["sampled"] > 20 or name == "soko_mini"
    assert seen["exact"] > 5 or rules.follow_the_queen


def test_a_candidate_face_down_card_gives_the_value_of_holding_it():
    # Local best response asks what the seat's features would be with each card it might hold:
    # the same as a game dealt that card (swapped with the seat's own in the deck), same actions.
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(12):
        game = Game("soko", 2, seed=int(rng.integers(1 << 30)), button=int(rng.integers(2)))
        played = []
        while not game.is_over:
            seat = game.current_player
            deck = [int(c) for c in game.deck]
            mine = int(game.hole_cards(seat)[0])
            face_up = {int(c) for s in range(2) for c in game.up_cards(s)}
            unseen = [c for c in deck if c != mine and c not in face_up]  # what the seat might hold
            for card in rng.choice(unseen, 3, replace=False).tolist():
                swapped_deck = [card if c == mine else mine if c == card else c for c in deck]
                swapped = Game("soko", 2, deck=swapped_deck, button=game.button)
                for action in played:
                    apply_action(swapped, action)
                assert core_win_probability(game, seat, hole=(card,)) == win_probability(swapped.view(seat))
                checked += 1
            # Every unseen card at once: the values of one card at a time.
            holes = [(card,) for card in unseen]
            assert core_win_probabilities(game, seat, holes) == [core_win_probability(game, seat, hole=h)
                                                                  for h in holes]
            action = random_action(action_mask(game), rng)
            apply_action(game, action)
            played.append(action)
    assert checked > 50


def test_the_reference_and_the_core_hand_strength_agree_for_candidate_face_down_cards():
    # The encoder's two HandStrength values: what local best response asks (every card the
    # seat might hold, and the hand classes of many hands at once) is the same in pure Python.
    rng = np.random.default_rng(3)
    checked = 0
    for name, players in [("soko", 2), ("soko_mini", 2), ("follow_the_bitch_low_chicago", 3)]:
        game = Game(name, players, seed=int(rng.integers(1 << 30)))
        while not game.is_over:
            seat = game.current_player
            own = game.hole_cards(seat)
            seen = {int(c) for c in own} | {int(c) for s in range(players) for c in game.up_cards(s)}
            unseen = [c for c in game.rules.deck if int(c) not in seen]
            holes = [own] + [tuple(rng.choice(unseen, len(own), replace=False).tolist()) for _ in range(3)]
            assert (REFERENCE_STRENGTH.win_probabilities(game, seat, holes)
                    == CORE_STRENGTH.win_probabilities(game, seat, holes))
            rows = np.array([[*hole, *game.up_cards(seat)] for hole in holes], dtype=np.int64)
            options = hand_options(game.rules, game.wild_ranks)
            assert np.array_equal(REFERENCE_STRENGTH.evaluate_rows(rows, **options),
                                  CORE_STRENGTH.evaluate_rows(rows, **options))
            checked += 1
            apply_action(game, random_action(action_mask(game), rng))
    assert checked > 6


def test_the_sampler_deals_distinct_pool_cards_evenly_and_repeats_itself():
    pool = np.array([c for c in range(52) if c % 3])  # 34 cards, not 0..n-1
    deals = sample_deals(pool, 5, 20_000, [3, 1, 4, 1, 5])
    assert deals.shape == (20_000, 5)
    assert np.isin(deals, pool).all()
    assert all(len(set(row)) == 5 for row in deals[:500].tolist())
    assert np.array_equal(deals, sample_deals(pool, 5, 20_000, [3, 1, 4, 1, 5]))
    assert not np.array_equal(deals, sample_deals(pool, 5, 20_000, [3, 1, 4, 1, 6]))
    # Every card about equally often in every position: 20,000 / 34 = 588 each, sd about 24.
    for j in range(5):
        counts = np.bincount(deals[:, j], minlength=52)[pool]
        assert counts.min() > 588 - 120 and counts.max() < 588 + 120, (j, counts)


def test_the_batched_core_writes_the_features_as_the_reference_encoder():
    for name, players in [("soko", 2), ("soko", 5), ("soko_nordic", 3), ("soko_mini", 2),
                          ("follow_the_bitch", 4), ("follow_the_bitch_low_chicago", 3)]:
        report = compare(RULES[name], players, 8, seed=players, features=ALL)
        assert report.steps > 20
        assert not report.mismatches, "\n\n".join(report.mismatches[:3])
    ftb = get_rules("follow_the_bitch", queens_wild=True, low_chicago=True)
    report = compare(ftb, 2, 20, seed=1, short_stacks=True, features=["win_probability"])
    assert not report.mismatches, "\n\n".join(report.mismatches[:3])


def test_the_batched_observations_have_the_feature_layout():
    g = BatchedGame("soko", 2, 4, observations=True, observation_features=["win_probability", "hand_class"])
    g.reset(seeds=range(4))
    assert g.layout.features == ("hand_class", "win_probability")
    assert g.observations.shape == (4, 606 + 12 + 1)
    wp = g.observations[:, g.layout.slice("win_probability")]
    assert ((wp > 0) & (wp < 1)).all()  # third street: nobody is sure of anything
    assert (g.observations[:, g.layout.slice("hand_class")].sum(axis=1) == 1).all()
    with pytest.raises(ValueError, match="observations=True"):
        BatchedGame("soko", 2, 4, observation_features=["hand_class"])
    with pytest.raises(ValueError, match="unknown observation feature"):
        BatchedGame("soko", 2, 4, observations=True, observation_features=["equity"])


def test_the_direct_binding_refuses_bad_input_with_a_reason():
    rules = core_rules("soko")
    args = dict(button=0, street=0, seat=0, wild=-1, holes=[[0], [1]], face_down_counts=[1, 1],
                up_cards=[[4], [8]], folded=[False, False], samples=8, max_exact=10)
    values = _stud_core.win_probabilities(rules, **args)
    assert len(values) == 2 and all(0 < v < 1 for v in values)
    for bad, message in [(dict(holes=[[0], [4]]), "distinct cards"), (dict(seat=2), "seat"),
                         (dict(street=9), "street"), (dict(folded=[False]), "one face-down count"),
                         (dict(samples=0), "samples"),
                         (dict(holes=[[0, 1]]), "more cards than the rules deal"),
                         (dict(up_cards=[[4, 12, 16], [8]]), "more cards than the rules deal")]:
        with pytest.raises(ValueError, match=message):
            _stud_core.win_probabilities(rules, **{**args, **bad})


def test_the_encoder_gets_the_same_observation_from_the_core_and_the_reference():
    rng = np.random.default_rng(7)
    for name in ("soko", "follow_the_bitch_low_chicago"):
        fast = ObservationEncoder(name, features=ALL, strength=CORE_STRENGTH)
        slow = ObservationEncoder(name, features=ALL)
        for _ in range(4):
            game = Game(name, 3, seed=int(rng.integers(1 << 30)))
            while not game.is_over:
                for seat in range(3):
                    assert np.array_equal(fast.encode(game, seat), slow.encode(game, seat))
                apply_action(game, random_action(action_mask(game), rng))


def test_the_reference_scores_three_card_hands_after_many_rows(monkeypatch):
    # soko_mini's hands have three cards, which have no batch tables: the reference must keep
    # scoring them one at a time however many rows it has scored (it once switched to the
    # five-to-seven-card batch evaluator after BUILD_AFTER rows and failed).
    from envs.engine import equity

    r = RULES["soko_mini"]
    key = (r.canadian_hands, (), r.double_ace_flush, r.ace_low_four_straight, 3)
    monkeypatch.setitem(equity._LAZY_ROWS, key, equity.BUILD_AFTER)  # as if after many rows
    game = Game(r, 2, seed=3)
    assert win_probability(game.view(0)) == core_win_probability(game, 0)


@pytest.mark.parametrize("name,players", [("soko", 2), ("soko", 4), ("follow_the_bitch", 3)])
def test_observed_seats_write_the_same_observations_for_the_listed_seats_only(name, players):
    """Two batches on the same seeds and actions, one writing every seat's observation and one
    only some seats' (changed now and then, as the training env does per hand): where the
    player to act is listed the rows are equal, elsewhere they are zeros."""
    n = 24
    every = BatchedGame(name, players, n, observations=True, observation_features=ALL)
    some = BatchedGame(name, players, n, observations=True, observation_features=ALL)
    assert some.observed_seats.shape == (n, players) and some.observed_seats.all()  # default: every seat
    for g in (every, some):
        g.reset(seeds=range(n))
    rng = np.random.default_rng(players)
    written = skipped = encoded_elsewhere = 0
    for step in range(60):
        if step % 7 == 0:   # new seats for some slots: their rows are rewritten at once
            slots = rng.choice(n, size=n // 2, replace=False)
            some.set_observed_seats(rng.random((len(slots), players)) < 0.5, slots)
        current = some.current_player
        observed = some.observed_seats[np.arange(n), current] & (current >= 0)
        np.testing.assert_array_equal(current, every.current_player)
        np.testing.assert_array_equal(some.observations[observed], every.observations[observed])
        assert not some.observations[~observed].any()
        written += int(observed.sum())
        skipped += int((~observed).sum())
        encoded_elsewhere += int(every.observations[~observed].any(axis=1).sum())
        actions = np.argmax(rng.random(every.action_mask.shape) * every.action_mask, axis=1)
        for g in (every, some):
            g.step(actions)
    assert written > 300 and skipped > 300 and encoded_elsewhere == skipped   # both kinds of rows


def test_observed_seats_refuse_bad_input_with_a_reason():
    g = BatchedGame("soko", 3, 4, observations=True, observation_features=["win_probability"])
    g.reset(seeds=range(4))
    for seats, slots, message in [(np.ones((4, 2), bool), None, r"shape \(4, 3\), not \(4, 2\)"),
                                  (np.ones((3, 3), bool), None, r"shape \(4, 3\)"),
                                  (np.ones((2, 3), bool), [0, 4], "hand slots are 0 to 3"),
                                  (np.ones((1, 3), bool), [-1], "hand slots are 0 to 3")]:
        with pytest.raises(ValueError, match=message):
            g.set_observed_seats(seats, slots)
    with pytest.raises(ValueError, match="observations=True"):
        BatchedGame("soko", 3, 4).set_observed_seats(np.ones((4, 3), bool))
    core = _stud_core.Batch(core_rules("soko"), 3, 4)
    with pytest.raises(RuntimeError, match="bind_observations"):
        core.bind_observed_seats(np.ones((4, 3), bool))
    with pytest.raises(ValueError, match=r"observed seats \(bool, N x players\)"):
        g._core.bind_observed_seats(np.ones((4, 3), np.int32))
