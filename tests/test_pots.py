"""How the chips of a hand are cut into pots and paid out
(docs/rules.md "Antes, stacks, all-in and side pots").

A pot ends only where a contender (a seat still in) is all-in for less than the others; folded
seats' chips belong to the pot they fall in. So with nobody all-in there is exactly one pot,
tied winners of a pot get shares that differ by at most one chip, and the Low Chicago half is
taken once from each pot.
"""

from __future__ import annotations

import dataclasses
import random
import zlib

import pytest

from envs.engine.game import Game
from envs.engine.rules import RULES
from tests.helpers import call_down, check_pots, deal, play, wins_by_pot

PRESETS = ("soko", "soko_nordic", "follow_the_bitch", "follow_the_bitch_low_chicago")
BETTINGS = ("fixed_limit", "spread_limit", "pot_limit", "no_limit")


def random_hand(rules, n: int, rng: random.Random, *, deep: bool) -> tuple[Game, list[int]]:
    """A hand played to the end by random legal actions (calls most, folds least)."""
    if deep:
        stacks = [rules.stack] * n
    else:
        stacks = [rng.choice((rng.randint(1, 15), rng.randint(16, 100), rules.stack))
                  for _ in range(n)]
    g = Game(rules, n, stacks=stacks, button=rng.randrange(n), seed=rng.randrange(2**32))
    while not g.is_over:
        options = []
        if g.can_fold():
            options.append((1, g.fold, ()))
        if g.can_check_or_call():
            options.append((6, g.check_or_call, ()))
        options.extend((2, g.bet_or_raise, (size,)) for size in g.raise_to_amounts())
        _, action, args = rng.choices(options, [w for w, _, _ in options])[0]
        action(*args)
    return g, stacks


@pytest.mark.parametrize("betting", BETTINGS)
@pytest.mark.parametrize("preset", PRESETS)
def test_random_hands_build_and_pay_pots_correctly(preset, betting):
    rules = dataclasses.replace(RULES[preset], betting=betting)
    rng = random.Random(zlib.crc32(f"pots {preset} {betting}".encode()))
    showdowns = one_pot_with_folds = split = 0
    for n in range(rules.min_players, rules.max_players + 1):
        for deep in (True, False):
            for _ in range(12):
                g, stacks = random_hand(rules, n, rng, deep=deep)
                assert sum(g.payoffs) == 0
                assert tuple(g.stacks) == tuple(s + p for s, p in zip(stacks, g.payoffs))
                if sum(not f for f in g.folded) < 2:
                    assert len(g.pots) == 1 and g.pots[0][0] == g.pot
                    continue
                showdowns += 1
                check_pots(g)
                folded_chips = any(g.folded[s] and g.total_committed[s] for s in range(n))
                one_pot_with_folds += len(g.pots) == 1 and folded_chips
                split += any(len({e.seat for e in ev}) > 1 for ev in wins_by_pot(g).values())
    # The sample reaches the cases the properties are about.
    assert showdowns > 50 and one_pot_with_folds > 10
    if rules.low_chicago:
        assert split > 10


def test_deep_stacks_never_make_a_side_pot():
    # Nobody can be all-in under fixed limit with 100 big bets, whatever folds on the way.
    rng = random.Random(7)
    for preset in PRESETS:
        rules = RULES[preset]
        for _ in range(150):
            g, _ = random_hand(rules, rules.max_players - 1, rng, deep=True)
            assert not any(t == s for t, s in zip(g.total_committed, g.starting_stacks))
            assert len(g.pots) == 1 and g.pots[0][0] == g.pot
            assert "side pot" not in g.history()


def test_tied_winners_who_put_in_the_same_chips_break_even_on_one_pot():
    # Soko, 5 players, bring-in 1 (ante 1, small bet 4), button 4: passes go seat 0, 1, ..., 4.
    # Round 1: seat 0 (2d, the lowest up card) brings in for 1; seats 1 and 3 call, seats 2
    # and 4 fold, and the round ends (everyone called the bring-in). Round 2: seat 0 (lowest
    # showing hand, 5-2) checks, seat 1 bets 4, seat 3 calls, seat 0 folds.
    # Put in: seat 0 1 + 1 = 2, seats 2 and 4 their ante 1, seats 1 and 3 1 + 1 + 4 = 6 each.
    # Seats 1 and 3 check down and tie with A-K-9-7-4. One pot of 2 + 1 + 1 + 6 + 6 = 16 with
    # contenders 1 and 3: 8 each, so +2 and +2. (Cut into layers at 1, 2 and 6 chips and split
    # layer by layer, it paid 5 -> 3 + 2, 3 -> 2 + 1, 8 -> 4 + 4: +3 and +1.)
    rules = dataclasses.replace(RULES["soko"], bring_in_amount=1)
    deck = deal(5, 4, {
        0: "Jc 2d | 5h",
        1: "Ah Kh | 9c 7d 4s",
        2: "3s 8d",
        3: "As Kd | 9h 7c 4d",
        4: "Ts 6c",
    })
    g = Game(rules, 5, button=4, deck=deck)
    assert g.bring_in_seat == 0
    play(g, "0:c 1:c 2:f 3:c 4:f /")
    assert g.total_committed == (2, 2, 1, 2, 1)
    play(g, "0:k 1:b4 3:c 0:f /")
    call_down(g)
    assert g.total_committed == (2, 6, 1, 6, 1)
    assert g.pots == [(16, (1, 3))]
    assert tuple(g.payoffs) == (-2, 2, -1, 2, -1)
    assert "side pot" not in g.history()


def test_low_chicago_half_is_taken_once_from_one_pot_with_folded_chips():
    # Follow the Bitch, Low Chicago, ante 1, small bet 3, big bet 6 (odd sizes make odd
    # layers), 5 players, button 4: passes go seat 0, 1, ..., 4. Seat 0 shows the ace and acts
    # first every round. Round 1: seat 0 bets 3, seats 1 and 2 call, seats 3 and 4 fold.
    # Round 2: seat 0 bets 6, seat 1 calls, seat 2 folds. Round 3: checked down.
    # Put in: seats 0 and 1 1 + 3 + 6 = 10, seat 2 4, seats 3 and 4 1: one pot of 26 with
    # contenders 0 and 1. Seat 0 has the high hand (pair of kings), seat 1 the only face-down
    # spade among them (4s): 13 and 13, so +3 and +3. (Cut into layers at 1, 4 and 10 chips
    # and halved layer by layer, 5 -> 3 + 2, 9 -> 5 + 4, 12 -> 6 + 6 paid +4 and +2.)
    rules = dataclasses.replace(RULES["follow_the_bitch_low_chicago"], small_bet=3, big_bet=6)
    deck = deal(5, 4, {
        0: "Kc Kd Ah | 2c 7d | 9c 3d",
        1: "4s 6h 5c | 8d Tc | Jh 2d",
        2: "5d 9h 3c | Th 6c",
        3: "7h 8h 4c",
        4: "9d Td 6d",
    })
    g = Game(rules, 5, button=4, deck=deck)
    play(g, "0:b3 1:c 2:c 3:f 4:f /")
    play(g, "0:b6 1:c 2:f /")
    call_down(g)
    assert g.total_committed == (10, 10, 4, 1, 1)
    assert g.pots == [(26, (0,))]
    wins = [(e.seat, e.amount, e.pot, e.reason) for e in g.log if e.kind == "win"]
    assert sorted(wins) == [(0, 13, 0, "best hand"), (1, 13, 0, "Low Chicago")]
    assert tuple(g.payoffs) == (3, 3, -4, -1, -1)
