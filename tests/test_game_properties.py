"""Property tests: random legal play under every preset, player count and betting structure.

Each step draws one action among those the engine offers (fold if ``can_fold()``, check/call if
``can_check_or_call()``, any size in ``raise_to_amounts()``). Stacks are random and often short, so
all-ins and side pots happen. After every step the invariants of docs/rules.md "Common rules"
must hold; at the end the payoffs must conserve chips.
"""

from __future__ import annotations

import dataclasses
import random
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.actions import action_mask, apply_action
from envs.engine.game import ACTION_KINDS, Game
from envs.engine.rules import RULES
from tests.helpers import cards_in, check_pots, hidden_from, refused

PRESETS = ("soko", "soko_nordic", "follow_the_bitch", "follow_the_bitch_low_chicago")
BETTINGS = ("fixed_limit", "spread_limit", "pot_limit", "no_limit")
MAX_STEPS = 400  # far more actions than any hand can take


def rules_for(preset: str, betting: str):
    return dataclasses.replace(RULES[preset], betting=betting)


def check_invariants(g: Game, start: tuple[int, ...]) -> None:
    """What must hold at every decision point and at the end."""
    n = g.num_players
    if g.is_over:
        # The hand is over exactly when nobody is to act; nothing is legal any more.
        assert g.current_player is None
        assert g.payoffs is not None and len(g.payoffs) == n
        assert not g.can_fold() and not g.can_check_or_call() and not g.can_bet_or_raise()
        return
    p = g.current_player
    assert p is not None and 0 <= p < n
    assert g.payoffs is None
    assert not g.folded[p] and not g.all_in[p]
    # Chips are conserved while the hand runs: behind + put in = the starting stack.
    for s in range(n):
        assert g.stacks[s] >= 0
        assert g.stacks[s] + g.total_committed[s] == start[s]
    assert g.pot == sum(g.total_committed)
    # Someone who must act has something to do; the masks agree with the offered sizes.
    assert g.can_check_or_call() or g.can_fold() or g.can_bet_or_raise()
    sizes = g.raise_to_amounts()
    assert list(sizes) == sorted(set(sizes))
    assert g.can_bet_or_raise() == bool(sizes)
    for size in sizes:
        assert g.can_bet_or_raise(size)
        assert size > g.committed[p]
        assert size - g.committed[p] <= g.stacks[p]  # nobody bets chips they do not have
    # Folding is never offered against a free check (RULES "Common").
    if g.to_call == 0:
        assert not g.can_fold()
    assert 0 <= g.to_call <= g.stacks[p]
    # At least two players are still in while the hand runs.
    assert sum(not f for f in g.folded) >= 2


def check_final(g: Game, start: tuple[int, ...]) -> None:
    payoffs = g.payoffs
    assert sum(payoffs) == 0
    for s in range(g.num_players):
        assert payoffs[s] >= -start[s]
        # Each seat's winnings (its net result plus what it put in) are never negative...
        assert payoffs[s] + g.total_committed[s] >= 0
        # ...and folded seats win nothing back.
        if g.folded[s]:
            assert payoffs[s] == -g.total_committed[s]
    # The payoffs pay out exactly the pot.
    assert sum(payoffs[s] + g.total_committed[s] for s in range(g.num_players)) == g.pot
    # A hand that reaches showdown deals every card to each player still in (the rest is dealt
    # even when nobody can bet any more).
    still_in = [s for s in range(g.num_players) if not g.folded[s]]
    if len(still_in) > 1:
        for s in still_in:
            assert len(g.hole_cards(s)) + len(g.up_cards(s)) == g.rules.cards_per_player
        check_pots(g)  # one pot unless someone is all-in; even splits; one Chicago half a pot
    # Chips end where the payoffs say.
    assert tuple(g.stacks) == tuple(start[s] + payoffs[s] for s in range(g.num_players))


def check_views(g: Game, seats) -> None:
    """Before showdown no seat sees another seat's face-down card (RULES "Common")."""
    for seat in seats:
        leaked = cards_in(g.view(seat)) & hidden_from(g, seat)
        assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))} before showdown"


def check_final_views(g: Game) -> None:
    """After the hand, folded hands stay hidden, and a hand won by folds is not shown."""
    still_in = [s for s in range(g.num_players) if not g.folded[s]]
    for seat in range(g.num_players):
        seen = cards_in(g.view(seat))
        for other in range(g.num_players):
            if other == seat:
                continue
            if g.folded[other] or len(still_in) == 1:
                leaked = seen & set(g.hole_cards(other))
                assert not leaked, f"seat {seat} sees folded/uncontested seat {other}'s {leaked}"


def try_refused(g: Game, rng: random.Random) -> None:
    """An illegal action raises ValueError and changes nothing."""
    p = g.current_player
    choice = rng.randrange(3)
    if choice == 1 and not g.can_fold():
        refused(g, g.fold)
    elif choice == 0:
        refused(g, g.bet_or_raise, g.committed[p] + g.stacks[p] + 1)  # more chips than it has
    else:
        refused(g, g.bet_or_raise, g.committed[p])  # a "raise" that adds nothing


def run_hand(g: Game, start: tuple[int, ...], choose, rng: random.Random, *,
             check_views_often: bool) -> None:
    """Play ``g`` to the end with ``choose``; ``start`` holds the stacks before the antes."""
    n = g.num_players
    for step in range(MAX_STEPS):
        check_invariants(g, start)
        if g.is_over:
            break
        if check_views_often and rng.random() < 0.3:
            check_views(g, (rng.randrange(n),))
        if rng.random() < 0.1:
            try_refused(g, rng)
        options = []
        if g.can_fold():
            options.append(("fold", None))
        if g.can_check_or_call():
            options.append(("call", None))
        options.extend(("bet", size) for size in g.raise_to_amounts())
        kind, size = choose(options)
        if kind == "fold":
            g.fold()
        elif kind == "call":
            g.check_or_call()
        else:
            g.bet_or_raise(size)
    else:
        raise AssertionError(f"the hand did not end in {MAX_STEPS} actions:\n{g.history()}")
    check_final(g, start)
    check_final_views(g)


def weighted_choice(draw):
    """Pick an action: mostly calls and bets, sometimes folds, so hands often reach showdown."""
    def choose(options):
        folds = [o for o in options if o[0] == "fold"]
        calls = [o for o in options if o[0] == "call"]
        bets = [o for o in options if o[0] == "bet"]
        roll = draw(st.integers(0, 9))
        if roll == 0 and folds:
            return folds[0]
        if roll >= 7 and bets:
            return bets[draw(st.integers(0, len(bets) - 1))]
        if calls:
            return calls[0]
        return options[draw(st.integers(0, len(options) - 1))]
    return choose


stack_strategy = st.one_of(st.integers(1, 12), st.integers(13, 60), st.integers(61, 2000))


@pytest.mark.parametrize("betting", BETTINGS)
@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_legal_play_keeps_every_invariant(preset, betting, data):
    rules = rules_for(preset, betting)
    n = data.draw(st.integers(rules.min_players, rules.max_players), label="num_players")
    if data.draw(st.booleans(), label="default stacks"):
        stacks = None
    else:
        stacks = data.draw(st.lists(stack_strategy, min_size=n, max_size=n), label="stacks")
    button = data.draw(st.integers(0, n - 1), label="button")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    g = Game(rules, n, stacks=stacks, button=button, seed=seed)
    start = tuple(stacks) if stacks is not None else (rules.stack,) * n
    rng = random.Random(seed)
    run_hand(g, start, weighted_choice(data.draw), rng, check_views_often=True)


@pytest.mark.parametrize("betting", BETTINGS)
@pytest.mark.parametrize("preset", PRESETS)
def test_every_player_count_plays_to_the_end(preset, betting):
    # Every player count from min to max, several seeded hands each, stacks short and long.
    rules = rules_for(preset, betting)
    for n in range(rules.min_players, rules.max_players + 1):
        for k in range(4):
            rng = random.Random(zlib.crc32(f"{preset} {betting} {n} {k}".encode()))
            stacks = [rng.choice((rng.randint(1, 15), rng.randint(16, 100), 800)) for _ in range(n)]
            g = Game(rules, n, stacks=stacks, button=rng.randrange(n), seed=rng.randrange(2**32))

            def choose(options, rng=rng):
                weights = [1 if kind == "fold" else 5 if kind == "call" else 2 for kind, _ in options]
                return rng.choices(options, weights)[0]

            run_hand(g, tuple(stacks), choose, rng, check_views_often=(k == 0))


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(PRESETS), n=st.integers(2, 7))
def test_same_seed_replays_the_same_deal(seed, preset, n):
    # RULES "Common": a seeded shuffle; the same seed deals the same cards.
    a = Game(preset, n, seed=seed)
    b = Game(preset, n, seed=seed)
    for s in range(n):
        assert a.hole_cards(s) == b.hole_cards(s) and a.up_cards(s) == b.up_cards(s)
    assert a.current_player == b.current_player


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(PRESETS), n=st.integers(2, 7))
def test_no_card_is_dealt_twice(seed, preset, n):
    g = Game(preset, n, seed=seed)
    while not g.is_over:
        g.check_or_call()
    cards = [c for s in range(n) for c in g.hole_cards(s) + g.up_cards(s)]
    assert len(cards) == len(set(cards)) == n * RULES[preset].cards_per_player


def test_play_logged_replays_a_hand_and_refuses_events_that_are_no_action():
    rng = np.random.default_rng(12)
    for seed in range(20):
        game = Game("follow_the_bitch_low_chicago", 3, button=seed % 3, seed=seed)
        while not game.is_over:
            mask = action_mask(game)
            apply_action(game, int(rng.choice(np.flatnonzero(mask))))
        again = Game(game.rules, 3, button=game.button, deck=list(game.deck))
        for event in game.log:
            if event.kind in ACTION_KINDS:
                again.play_logged(event)
        assert again.log == game.log and again.payoffs == game.payoffs
        deal = next(e for e in game.log if e.kind == "deal")
        with pytest.raises(ValueError, match="no player's action"):
            again.play_logged(deal)
