"""Betting structures, all-ins, side pots and split pots (docs/rules.md "Common rules").

Most hands use Follow the Bitch (no bring-in, so the first player may open with any legal bet)
with no face-up queens, so nothing is wild; the first player to act is the one showing the
highest up card. Seats per pass: D D U | D U | D U. With ``button = n - 1`` the passes go
seat 0, 1, 2, ... in order.
"""

from __future__ import annotations

import dataclasses

from envs.engine.game import Game
from envs.engine.rules import RULES
from tests.helpers import call_down, deal, play, refused

FTB = RULES["follow_the_bitch"]
SOKO = RULES["soko"]


def ftb(betting: str, **changes):
    return dataclasses.replace(FTB, betting=betting, **changes)


def legal(game, *amounts) -> list[bool]:
    return [game.can_bet_or_raise(a) for a in amounts]


# Three players, button 2: seat 0 shows the ace and opens.
FIRST_STREET_3 = {0: "2c 3d Ah", 1: "4c 6d 7c", 2: "8c 9d 5d"}


# ---------------------------------------------------------------- fixed limit

def test_fixed_limit_sizes_and_raise_cap():
    # RULES: fixed limit: one size per round; a bet plus at most three raises.
    g = Game(FTB, 3, button=2, deck=deal(3, 2, FIRST_STREET_3))
    assert g.current_player == 0
    assert g.raise_to_amounts() == (4,)
    assert legal(g, 3, 4, 5, 8) == [False, True, False, False]
    play(g, "0:b 1:r 2:r")
    assert g.committed[2] == 12 and g.raise_to_amounts() == (16,)
    play(g, "0:r16")
    assert g.raises_this_round == 4
    assert g.current_player == 1 and g.raise_to_amounts() == () and not g.can_bet_or_raise()
    refused(g, g.bet_or_raise, 20)
    play(g, "1:c 2:c /")
    assert g.pot == 3 + 48
    assert g.raise_to_amounts() == (8,)  # round 2 uses the big bet


# ---------------------------------------------------------------- spread limit

def test_spread_limit_sizes_and_bounds():
    # Contract spread_limit: increment any whole chips from the bet size to 2 x bet size, and at
    # least the previous increment; offered sizes are spread_sizes (1, 1.5, 2) x the bet size.
    g = Game(ftb("spread_limit"), 3, button=2, deck=deal(3, 2, FIRST_STREET_3))
    assert g.current_player == 0
    assert g.raise_to_amounts() == (4, 6, 8)
    assert legal(g, 3, 4, 5, 7, 8, 9) == [False, True, True, True, True, False]
    play(g, "0:b6")
    # The next raise adds 6..8 chips: raise-to 12..14.
    assert g.to_call == 6
    assert g.raise_to_amounts() == (12, 14)
    assert legal(g, 11, 12, 13, 14, 15) == [False, True, True, True, False]
    play(g, "1:r14")
    # Previous increment 8 = the maximum: only raise-to 22.
    assert g.raise_to_amounts() == (22,)
    assert legal(g, 21, 22, 23) == [False, True, False]


def test_spread_limit_big_bet_round_and_raise_cap():
    # RULES: spread limit keeps the fixed-limit raise cap (a bet plus three raises).
    g = Game(ftb("spread_limit"), 3, button=2, deck=deal(3, 2, FIRST_STREET_3))
    play(g, "0:b4 1:r8 2:r12 0:r16")
    assert g.raises_this_round == 4
    assert g.current_player == 1 and not g.can_bet_or_raise() and g.raise_to_amounts() == ()
    refused(g, g.bet_or_raise, 20)
    play(g, "1:c 2:c /")
    # Round 2: the big bet of 8 -> 8, 12, 16.
    assert g.raise_to_amounts() == (8, 12, 16)


# ---------------------------------------------------------------- pot limit

FIRST_STREET_4 = {0: "2c 3d Ah", 1: "4c 6d 7c", 2: "8c 9d 5d", 3: "Tc Jd 6h"}


def test_pot_limit_sizes_and_bounds():
    # Contract pot_limit: increment from max(bet size, previous increment) up to the pot after
    # calling; offered sizes include the pot fractions (0.5, 1.0) of that pot.
    g = Game(ftb("pot_limit"), 4, button=3, deck=deal(4, 3, FIRST_STREET_4))
    assert g.pot == 4 and g.current_player == 0
    # Round 1: minimum bet 4, pot 4: exactly 4.
    assert legal(g, 3, 4, 5) == [False, True, False]
    assert g.raise_to_amounts() == (4,)
    play(g, "0:b4 1:c 2:c 3:c /")
    assert g.pot == 20
    # Round 2: bet 8 (big bet) .. 20 (the pot).
    assert legal(g, 7, 8, 19, 20, 21) == [False, True, True, True, False]
    sizes = g.raise_to_amounts()
    assert {10, 20} <= set(sizes) and max(sizes) == 20 and min(sizes) >= 8
    assert list(sizes) == sorted(sizes)
    play(g, "b10")
    # Next player: call 10 -> pot 40; increment 10..40 -> raise-to 20..50.
    assert g.to_call == 10
    assert legal(g, 19, 20, 35, 50, 51) == [False, True, True, True, False]
    sizes = g.raise_to_amounts()
    assert {30, 50} <= set(sizes) and max(sizes) == 50 and min(sizes) >= 20


def test_pot_limit_has_no_raise_cap():
    # RULES: the raise cap belongs to fixed and spread limit only.
    g = Game(ftb("pot_limit"), 4, button=3, deck=deal(4, 3, FIRST_STREET_4))
    play(g, "0:b4 1:r8 2:r12 3:r16")
    assert g.raises_this_round == 4
    assert g.current_player == 0 and g.can_bet_or_raise()
    play(g, "0:r20 1:r24")
    assert g.raises_this_round == 6 and g.can_bet_or_raise()


# ---------------------------------------------------------------- no limit

HEADS_UP_FIRST_STREET = {0: "2c 3d Ah", 1: "4c 6d 7c"}


def test_no_limit_sizes_and_bounds():
    # Contract no_limit: from the bet size (or the previous increment) up to all-in; all-in is
    # offered.
    g = Game(ftb("no_limit"), 2, button=1, stacks=[100, 100], deck=deal(2, 1, HEADS_UP_FIRST_STREET))
    assert g.current_player == 0
    assert legal(g, 3, 4, 57, 99, 100) == [False, True, True, True, False]
    sizes = g.raise_to_amounts()
    assert 99 in sizes and max(sizes) == 99 and min(sizes) >= 4
    play(g, "0:b10")
    assert g.to_call == 10
    assert legal(g, 19, 20, 64, 99, 100) == [False, True, True, True, False]
    sizes = g.raise_to_amounts()
    assert 99 in sizes and max(sizes) == 99 and min(sizes) >= 20
    play(g, "1:r99")
    assert g.all_in[1]
    # Seat 0 faces the all-in: call (all of its chips) or fold; no raise is possible.
    assert g.current_player == 0 and g.to_call == 89
    assert g.can_fold() and g.can_check_or_call() and not g.can_bet_or_raise()
    play(g, "0:c")
    # Both all-in: the rest is dealt without betting and the hand is over.
    assert g.is_over
    assert sorted(g.payoffs) == [-100, 100] or tuple(g.payoffs) == (0, 0)
    assert all(len(g.up_cards(s)) == 3 and len(g.hole_cards(s)) == 4 for s in range(2))


def test_no_limit_has_no_raise_cap():
    g = Game(ftb("no_limit"), 2, button=1, deck=deal(2, 1, HEADS_UP_FIRST_STREET))
    play(g, "0:b4 1:r8 0:r12 1:r16 0:r20 1:r24")
    assert g.raises_this_round == 6
    assert g.can_bet_or_raise()


# ---------------------------------------------------------------- all-in for less

def test_all_in_call_for_less_and_the_uncalled_chips_go_back():
    # RULES: "a player may go all-in for less". Seat 1 (stack 3) calls a bet of 4 with its last
    # 2 chips; seat 0 owes nothing and is the only player who can act, so the rest is dealt
    # at once. Seat 1's two pair wins only what it covered: 3 chips from seat 0.
    deck = deal(2, 1, {0: "2c 3d Ah | 5c 7d | 9h Jc", 1: "Kc Kd 4h | 6c 8d | Ts 4s"})
    g = Game(FTB, 2, button=1, stacks=[800, 3], deck=deck)
    play(g, "0:b4")
    assert g.current_player == 1 and g.can_check_or_call()
    play(g, "1:c")
    assert g.is_over
    assert g.total_committed[1] == 3
    assert tuple(g.payoffs) == (-3, 3)


def test_all_in_bet_for_less_than_a_full_bet():
    # RULES: a player may always go all-in for less than a full bet.
    g = Game(FTB, 2, button=1, stacks=[3, 800], deck=deal(2, 1, HEADS_UP_FIRST_STREET))
    assert g.current_player == 0
    assert g.raise_to_amounts() == (2,)
    assert legal(g, 2, 4) == [True, False]
    play(g, "0:b2")
    assert g.all_in[0]
    assert g.current_player == 1 and g.to_call == 2
    play(g, "1:c")
    assert g.is_over
    assert sum(g.payoffs) == 0 and min(g.payoffs) >= -3


def test_incomplete_all_in_raise_does_not_reopen_betting():
    # Contract/RULES: an all-in raise for less than a full raise does not reopen the betting
    # for players who already acted. Seat 1 (6 chips behind) raises 4 -> 6 all-in.
    g = Game(FTB, 3, button=2, stacks=[800, 7, 800], deck=deal(3, 2, FIRST_STREET_3))
    play(g, "0:b4")
    assert g.current_player == 1
    assert g.raise_to_amounts() == (6,)
    assert legal(g, 6, 8) == [True, False]
    play(g, "1:r6")
    assert g.all_in[1]
    # Seat 2 has not acted yet: it may call, fold or raise.
    assert g.current_player == 2 and g.to_call == 6 and g.can_bet_or_raise()
    play(g, "2:c")
    # Seat 0 already acted and the raise was incomplete: call or fold only.
    assert g.current_player == 0 and g.to_call == 2
    assert g.can_check_or_call() and g.can_fold()
    assert not g.can_bet_or_raise() and g.raise_to_amounts() == ()
    refused(g, g.bet_or_raise, 10)
    refused(g, g.bet_or_raise, 12)
    play(g, "0:c /")
    assert g.street == 1 and g.pot == 3 + 18


def test_full_raise_after_an_incomplete_all_in_reopens_betting():
    # Seat 1's incomplete all-in (4 -> 6) is followed by seat 2's full raise to 10 (current bet
    # + bet size, contract fixed_limit): seat 0 may raise again.
    g = Game(FTB, 3, button=2, stacks=[800, 7, 800], deck=deal(3, 2, FIRST_STREET_3))
    play(g, "0:b4 1:r6")
    assert g.current_player == 2 and g.raise_to_amounts() == (10,)
    play(g, "2:r10")
    assert g.current_player == 0 and g.to_call == 6
    assert g.can_bet_or_raise() and g.raise_to_amounts() == (14,)


# ---------------------------------------------------------------- side pots

def test_side_pots_with_three_all_ins_of_different_sizes():
    # RULES: side pots are built and awarded correctly. Stacks 10/30/60/100; seat 3 moves
    # all-in, everyone calls all-in for less. Hands: seat 0 quad deuces > seat 1 trip threes >
    # seat 2 pair of fours > seat 3 ace high.
    # Main pot 4 x 10 = 40 -> seat 0; side 3 x 20 = 60 -> seat 1; side 2 x 30 = 60 -> seat 2;
    # seat 3's uncalled 40 returns to it.
    deck = deal(4, 3, {
        0: "2c 2d 3c | 2h 5d | 2s 7h",
        1: "3d 3h 4c | 3s 6d | 8c 9d",
        2: "4d 4h 5h | 6h 9s | Ts Jc",
        3: "7c 8d Ac | Kd 6s | Jh Td",
    })
    g = Game(ftb("no_limit"), 4, button=3, stacks=[10, 30, 60, 100], deck=deck)
    assert g.current_player == 3
    play(g, "3:b99 0:c 1:c")
    assert g.all_in[0] and g.all_in[1] and g.all_in[3]
    play(g, "2:c")
    assert g.is_over
    assert tuple(g.payoffs) == (30, 30, 0, -60)


def test_side_pot_in_fixed_limit_with_a_short_bring_in():
    # Soko, button 0 (passes: seat 1, 2, 0). Seat 1 (stack 3) posts the bring-in all-in, seat 2
    # (stack 7) completes, seat 0 raises to 8, seat 2 calls all-in for less (6). Nobody can act:
    # the rest is dealt. Seat 1 trip aces > seat 0 pair of kings > seat 2 jack high.
    # Main 3 x 3 = 9 -> seat 1 (+6); side 2 x 4 = 8 -> seat 0, plus its uncalled 2 back (+1);
    # seat 2 loses its 7.
    deck = deal(3, 0, {1: "Ac 2c Ad As 9h", 2: "3d 5h 7c 9c Jd", 0: "Kh Kd 4s 6d 8h"})
    g = Game(SOKO, 3, button=0, stacks=[800, 3, 7], deck=deck)
    assert g.bring_in_seat == 1
    play(g, "1:c")
    assert g.all_in[1]
    play(g, "2:b4 0:r8 2:c")
    assert g.is_over
    assert g.total_committed[1] == 3 and g.total_committed[2] == 7
    assert all(len(g.up_cards(s)) == 4 for s in range(3))
    assert tuple(g.payoffs) == (1, 6, -7)


# ---------------------------------------------------------------- split pots

def test_odd_chip_goes_to_the_tied_winner_closest_to_the_dealers_left():
    # RULES: "an odd chip goes to the tied winner closest to the left of the dealer".
    # Button 0: seats 0 and 2 tie with A-K-9-7-4 (suits never break ties); pot 9 -> seat 2,
    # first clockwise from the dealer's left, gets 5 and seat 0 gets 4.
    deck = deal(3, 0, {1: "Jc 3s 6h 8d Ts", 2: "As Kd 9h 7c 4d", 0: "Ah Kh 9c 7d 4s"})
    g = Game(SOKO, 3, button=0, deck=deck)
    assert g.bring_in_seat == 1
    play(g, "1:c 2:c 0:c /")
    call_down(g)
    assert tuple(g.payoffs) == (1, -3, 2)


def test_odd_chip_wraps_around_from_the_dealer():
    # Same tie, button 2: the order from the dealer's left is seat 0, 1, 2, so seat 0 now gets
    # the odd chip ahead of seat 2.
    deck = deal(3, 2, {1: "Jc 3s 6h 8d Ts", 2: "As Kd 9h 7c 4d", 0: "Ah Kh 9c 7d 4s"})
    g = Game(SOKO, 3, button=2, deck=deck)
    assert g.bring_in_seat == 1
    play(g, "1:c 2:c 0:c /")
    call_down(g)
    assert tuple(g.payoffs) == (2, -3, 1)


def test_equal_hands_split_the_pot():
    # RULES: "Pots are split equally between tied winners". Four players; seats 1 and 3 tie
    # with A-K-9-7-4, seats 0 and 2 have jack high. Pot 4 antes + 4 x 2 = 12 -> 6 each.
    deck = deal(4, 0, {1: "Ah Kh 9c 7d 4s", 2: "Jc 3s 6h 8d Ts", 3: "As Kd 9h 7c 4d",
                       0: "Jd 2c 5s 8c Th"})
    g = Game(SOKO, 4, button=0, deck=deck)
    assert g.bring_in_seat == 0  # 2c
    play(g, "0:c 1:c 2:c 3:c /")
    call_down(g)
    assert tuple(g.payoffs) == (-3, 3, -3, 3)


def test_heads_up_tie_returns_every_chip():
    deck = deal(2, 0, {1: "Ah Kh 9c 7d 4s", 0: "As Kd 9h 7c 4d"})
    g = Game(SOKO, 2, button=0, deck=deck)
    call_down(g)
    assert tuple(g.payoffs) == (0, 0)


# ---------------------------------------------------------------- nobody left to bet

def test_round_with_one_player_able_to_act_and_nothing_owed_deals_out():
    # RULES: "Once at most one active player can still act and that player owes nothing to
    # call, the remaining cards are dealt with no more betting." Soko heads-up: seat 0
    # (stack 5) completes all-in, seat 1 calls; the hand runs out to showdown at once.
    deck = deal(2, 0, {1: "9c 2d 5h 8s Jc", 0: "Kh Kd 3c 7h Ts"})
    g = Game(SOKO, 2, button=0, stacks=[5, 800], deck=deck)
    assert g.bring_in_seat == 1
    play(g, "1:c 0:b4")
    assert g.all_in[0]
    assert g.current_player == 1 and g.to_call == 2
    play(g, "1:c")
    assert g.is_over and g.current_player is None
    assert all(len(g.up_cards(s)) == 4 for s in range(2))
    assert tuple(g.payoffs) == (5, -5)  # pair of kings beats jack high


def test_player_facing_an_all_in_still_acts():
    # The one player who can still act owes chips: they must call or fold first.
    g = Game(ftb("no_limit"), 2, button=1, stacks=[20, 800], deck=deal(2, 1, HEADS_UP_FIRST_STREET))
    play(g, "0:b19")
    assert g.all_in[0]
    assert not g.is_over and g.current_player == 1 and g.to_call == 19
    play(g, "1:f")
    assert g.is_over and tuple(g.payoffs) == (1, -1)
