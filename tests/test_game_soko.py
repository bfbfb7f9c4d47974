"""Scripted Soko hands with explicit decks (docs/rules.md "Soko (Canadian stud)" and "Common rules").

Every deck is built with ``helpers.deal``: each seat's cards in the order that seat receives
them (Soko: one down, one up, then three more up). With ``button=0`` and three players the
passes go seat 1, seat 2, seat 0. Default stakes: ante 1, bring-in 2, small bet 4, big bet 8.
"""

from __future__ import annotations

import dataclasses

import pytest

from envs.engine.cards import parse_cards
from envs.engine.game import Game
from envs.engine.rules import RULES
from tests.helpers import call_down, cards_in, deal, play, refused

SOKO = RULES["soko"]


# ---------------------------------------------------------------- deal, antes, pot

def test_deal_order_follows_the_contract_example():
    # Contract: 2 players, button 0, deck "A B C D ..." -> seat 1 gets A (down), seat 0 B (down),
    # seat 1 C (up), seat 0 D (up); after round 1 seat 1 gets E (up), seat 0 F.
    g = Game("soko", 2, button=0, deck="Ah Kd 7c 9s 5d 6h 8c Th Jd Qs")
    assert g.hole_cards(1) == parse_cards("Ah") and g.up_cards(1) == parse_cards("7c")
    assert g.hole_cards(0) == parse_cards("Kd") and g.up_cards(0) == parse_cards("9s")
    # Lowest up card (7c, seat 1) brings in; seat 0 calls; the round closes and round 2 is dealt.
    play(g, "1:c 0:c /")
    assert g.up_cards(1) == parse_cards("7c 5d")
    assert g.up_cards(0) == parse_cards("9s 6h")


def test_everyone_antes_before_the_deal():
    # RULES "Everyone antes before the deal": pot = n antes, each stack one chip lighter.
    g = Game("soko", 3, button=0, stacks=[50, 60, 70], seed=1)
    assert g.pot == 3
    assert tuple(g.total_committed) == (1, 1, 1)
    assert tuple(g.stacks) == (49, 59, 69)
    assert not g.is_over and g.payoffs is None


def test_default_stacks_are_100_big_bets():
    # Contract: starting_stack defaults to 100 big bets = 800; ante 1 already paid.
    g = Game("soko", 4, seed=3)
    assert tuple(g.stacks) == (799, 799, 799, 799)
    assert g.pot == 4


def test_a_hand_starts_with_one_down_and_one_up_card():
    g = Game("soko", 5, seed=7)
    for seat in range(5):
        assert len(g.hole_cards(seat)) == 1 and len(g.up_cards(seat)) == 1
    assert g.street == 0


# ---------------------------------------------------------------- bring-in

BRING_IN_DECK = deal(3, 0, {1: "Ad 7h", 2: "Kd 3d", 0: "Qc 3c"})


def test_lowest_up_card_brings_in_clubs_lowest_on_ties():
    # RULES Soko: lowest up card brings in; equal ranks: the lower suit (clubs lowest).
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    assert g.bring_in_seat == 0
    assert g.current_player == 0


@pytest.mark.parametrize("rules", [RULES["soko_nordic"], dataclasses.replace(SOKO, bring_in="highest")],
                         ids=["soko_nordic", "soko_bring_in_highest"])
def test_highest_up_card_brings_in_spades_highest_on_ties(rules):
    # RULES option bring_in="highest" (preset soko_nordic): highest up card, spades highest.
    g = Game(rules, 3, button=0, deck=deal(3, 0, {1: "2c Kd", 2: "3c Ks", 0: "4c 9c"}))
    assert g.bring_in_seat == 2 and g.current_player == 2
    play(g, "2:c")  # posts the bring-in of twice the ante
    assert g.committed[2] == 2 and g.pot == 5


def test_bring_in_player_may_post_or_complete_but_not_fold_or_check():
    # RULES: the bring-in is forced; the player may instead complete to a full small bet.
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    assert g.to_call == 2
    assert not g.can_fold()
    assert g.can_check_or_call()
    assert g.raise_to_amounts() == (4,)
    assert g.can_bet_or_raise(4)
    assert not g.can_bet_or_raise(3) and not g.can_bet_or_raise(2) and not g.can_bet_or_raise(8)
    refused(g, g.fold)
    refused(g, g.bet_or_raise, 3)
    refused(g, g.bet_or_raise, 8)


def test_posting_the_bring_in_is_not_a_bet_for_the_raise_cap():
    # RULES: "The forced bring-in is not a bet for the raise cap".
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:c")
    assert g.committed[0] == 2 and g.stacks[0] == 797 and g.pot == 5
    assert g.raises_this_round == 0


def test_after_the_bring_in_next_players_may_call_complete_or_fold():
    # RULES: "after a bring-in, the next players may call it, complete, or fold".
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:c")
    assert g.current_player == 1
    assert g.to_call == 2
    assert g.can_fold() and g.can_check_or_call()
    assert g.raise_to_amounts() == (4,)
    assert not g.can_bet_or_raise(3) and not g.can_bet_or_raise(8)
    play(g, "1:f")
    assert g.folded[1]
    assert g.current_player == 2 and g.to_call == 2
    play(g, "2:b4")
    assert g.raises_this_round == 1
    assert g.current_player == 0 and g.to_call == 2  # the bring-in player acts again
    play(g, "0:c /")
    assert g.street == 1 and g.pot == 3 + 4 + 4


def test_if_everyone_calls_the_bring_in_the_round_ends():
    # RULES: "If everyone calls the bring-in, the round ends without giving the bring-in player
    # another turn" -- the next street is dealt at once.
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:c 1:c 2:c")
    assert g.street == 1
    assert g.pot == 3 + 3 * 2
    assert all(len(g.up_cards(s)) == 2 for s in range(3))
    assert g.to_call == 0


def test_completing_after_the_bring_in_is_the_first_bet_and_the_cap_follows():
    # RULES: completing is the round's first bet; fixed limit allows a bet plus three raises.
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:c 1:b4")
    assert g.raises_this_round == 1
    assert g.raise_to_amounts() == (8,)
    play(g, "2:r8 0:r12")
    assert g.raises_this_round == 3
    assert g.raise_to_amounts() == (16,)
    play(g, "1:r16")
    assert g.raises_this_round == 4
    # Cap reached: seat 2 may only call or fold.
    assert g.current_player == 2 and g.to_call == 8
    assert g.raise_to_amounts() == () and not g.can_bet_or_raise() and not g.can_bet_or_raise(24)
    assert g.can_check_or_call() and g.can_fold()
    refused(g, g.bet_or_raise, 24)
    refused(g, g.bet_or_raise)
    play(g, "2:c 0:c /")
    assert g.pot == 3 + 3 * 16
    assert tuple(g.total_committed) == (17, 17, 17)


def test_bring_in_player_completing_counts_as_the_first_bet():
    # RULES: completing is the round's first bet: then only three raises follow.
    g = Game("soko", 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:b4")
    assert g.committed[0] == 4 and g.raises_this_round == 1
    assert g.current_player == 1 and g.to_call == 4 and g.raise_to_amounts() == (8,)
    play(g, "1:r8 2:r12 0:r16")
    assert g.current_player == 1 and not g.can_bet_or_raise()
    play(g, "1:c 2:c /")
    assert g.pot == 3 + 48


def test_max_raises_option_changes_the_cap():
    # RULES option max_raises: a bet plus max_raises raises.
    g = Game(dataclasses.replace(SOKO, max_raises=1), 3, button=0, deck=BRING_IN_DECK)
    play(g, "0:c 1:b4 2:r8")
    assert g.current_player == 0 and not g.can_bet_or_raise() and g.raise_to_amounts() == ()


# ---------------------------------------------------------------- later rounds: who acts first

# Seat 1: 3s | 9h 5h Jh 2h -> showing a four-flush on round 4 (hearts J 9 5 2).
# Seat 2: 3c | Kc 7s Kd 4c -> showing a pair of kings from round 3.
# Seat 0: 5c | Ac 8d 6s Td -> showing ace high.
FOUR_FLUSH_DECK = deal(3, 0, {1: "3s 9h 5h Jh 2h", 2: "3c Kc 7s Kd 4c", 0: "5c Ac 8d 6s Td"})


def test_lowest_showing_hand_acts_first_and_a_four_flush_shows():
    # RULES Soko: later rounds start with the lowest showing hand (default); showing hands use
    # the categories the up cards allow, and four up cards can show a four-flush.
    g = Game("soko", 3, button=0, deck=FOUR_FLUSH_DECK)
    assert g.bring_in_seat == 1  # 9h is the lowest up card
    play(g, "1:c 2:c 0:c /")
    # Round 2: 9-5 (seat 1) < K-7 (seat 2) < A-8 (seat 0). No open pair: small bet.
    assert g.current_player == 1 and g.raise_to_amounts() == (4,)
    play(g, "1:k 2:k 0:k /")
    # Round 3: J-9-5 (seat 1) < A-8-6 (seat 0) < kings (seat 2). Big bet.
    assert g.current_player == 1 and g.raise_to_amounts() == (8,)
    play(g, "1:k 2:k 0:k /")
    # Round 4: A-T-8-6 (seat 0) < kings (seat 2) < four-flush (seat 1). Big bet.
    assert g.current_player == 0 and g.raise_to_amounts() == (8,)
    play(g, "0:k 1:k 2:k /")
    # Showdown: four-flush (seat 1) beats a pair of kings (Canadian ranking).
    assert g.is_over and g.current_player is None
    assert tuple(g.payoffs) == (-3, 6, -3)


def test_highest_showing_hand_acts_first_option():
    # RULES option first_to_act="highest": the highest showing hand starts rounds 2-4.
    g = Game(dataclasses.replace(SOKO, first_to_act="highest"), 3, button=0, deck=FOUR_FLUSH_DECK)
    play(g, "1:c 2:c 0:c /")
    assert g.current_player == 0
    play(g, "0:k 1:k 2:k /")
    assert g.current_player == 2  # pair of kings
    play(g, "2:k 0:k 1:k /")
    assert g.current_player == 1  # four-flush beats a pair
    play(g, "1:k 2:k 0:k")
    assert tuple(g.payoffs) == (-3, 6, -3)


def test_showing_four_straight_outranks_a_showing_pair():
    # RULES: a four-straight needs four up cards and ranks above one pair.
    # Seat 1 shows 5c 6d 7h 8s, seat 2 a pair of aces, seat 0 K-J-3-2.
    deck = deal(3, 0, {1: "2c 5c 6d 7h 8s", 2: "3c Ah 9d Ad 4h", 0: "4c Kh Jd 3s 2h"})
    g = Game(dataclasses.replace(SOKO, first_to_act="highest"), 3, button=0, deck=deck)
    assert g.bring_in_seat == 1  # 5c
    play(g, "1:c 2:c 0:c /")
    assert g.current_player == 2  # A-9 is the highest two-card showing hand
    play(g, "2:k 0:k 1:k /")
    assert g.current_player == 2  # pair of aces
    play(g, "2:k 0:k 1:k /")
    assert g.current_player == 1  # four-straight 8-high beats the pair of aces
    play(g, "1:k 2:k 0:k")
    # Showdown: four-straight (seat 1) beats a pair of aces.
    assert tuple(g.payoffs) == (-3, 6, -3)


def test_equal_lowest_showing_hands_first_clockwise_from_dealers_left():
    # RULES: equal showing hands -> the first of them clockwise from the dealer's left.
    # Button 1: the order is seat 2, seat 0, seat 1. Seats 2 and 0 both show K-9 (suits don't
    # break ties between showing hands), seat 1 shows A-5.
    deck = deal(3, 1, {2: "2c Kc 9d", 0: "3c Kh 9s", 1: "4c Ad 5h"})
    g = Game("soko", 3, button=1, deck=deck)
    assert g.bring_in_seat == 2  # Kc: equal kings, clubs lowest
    play(g, "2:c 0:c 1:c /")
    assert g.current_player == 2


def test_equal_highest_showing_hands_first_clockwise_from_dealers_left():
    # Nordic: highest card brings in (hearts beat diamonds), highest showing hand acts first;
    # seats 2 and 0 both show A-9, seat 2 is first clockwise from the dealer's left (button 1).
    deck = deal(3, 1, {2: "2c Ad 9c", 0: "3c Ah 9s", 1: "4c Kc 5h"})
    g = Game("soko_nordic", 3, button=1, deck=deck)
    assert g.bring_in_seat == 0  # Ah
    play(g, "0:c 1:c 2:c /")
    assert g.current_player == 2


def test_all_in_player_is_skipped_for_first_to_act():
    # RULES: "Whenever a rule names a player to act first and that player is all-in, the first
    # player after them clockwise who can act starts." Seat 2 (stack 5) completes all-in and
    # shows the lowest hand on round 2; seat 0 follows it clockwise (seat 1 is merely the
    # second-lowest showing hand).
    deck = deal(3, 0, {1: "Jc 4h 7c 8h 9d", 2: "Tc 2d 3h 5s 6c", 0: "9c Ah Kd Qs Jd"})
    g = Game("soko", 3, button=0, deck=deck, stacks=[800, 800, 5])
    assert g.bring_in_seat == 2
    play(g, "2:b4")
    assert g.all_in[2] and g.stacks[2] == 0
    play(g, "0:c 1:c /")
    assert g.current_player == 0
    play(g, "0:k 1:k /")
    call_down(g)
    # Seat 0 shows J-Q-K-A plus a 9: a four-straight, the best hand; everyone checked after
    # round 1, so seat 0 wins 3 x 5 chips.
    assert tuple(g.payoffs) == (10, -5, -5)


# ---------------------------------------------------------------- bet sizes

OPEN_PAIR_HANDS = {1: "2c 9h 5h", 2: "3c Kc Kd", 0: "5c Ac 8d"}


def test_open_pair_on_third_card_makes_round_two_use_the_big_bet():
    # RULES Soko: a pair among a player's two up cards after the 3rd card doubles round 2.
    g = Game("soko", 3, button=0, deck=deal(3, 0, OPEN_PAIR_HANDS))
    play(g, "1:c 2:c 0:c /")
    assert g.current_player == 1  # 9-5 is still the lowest showing hand
    assert g.raise_to_amounts() == (8,)
    play(g, "1:b8")
    assert g.raise_to_amounts() == (16,)


def test_open_pair_doubling_can_be_turned_off():
    # RULES option open_pair_doubles off: round 2 keeps the small bet.
    rules = dataclasses.replace(SOKO, open_pair_doubles=False)
    g = Game(rules, 3, button=0, deck=deal(3, 0, OPEN_PAIR_HANDS))
    play(g, "1:c 2:c 0:c /")
    assert g.raise_to_amounts() == (4,)


def test_a_pair_with_the_hole_card_does_not_double():
    # RULES: only a pair among the two *up* cards counts (seat 0's 8c is face down).
    g = Game("soko", 3, button=0, deck=deal(3, 0, {1: "2c 9h 5h", 2: "3c Kc 7s", 0: "8c Ac 8d"}))
    play(g, "1:c 2:c 0:c /")
    assert g.current_player == 1 and g.raise_to_amounts() == (4,)


def test_folded_player_gets_no_more_cards_and_round_two_stays_small():
    # RULES: cards go to active players only; seat 0 folds in round 1, so no pair can show.
    deck = deal(3, 0, {1: "2c 9h 5h", 2: "3c Kc 7s", 0: "5c Ac"})
    g = Game("soko", 3, button=0, deck=deck)
    play(g, "1:c 2:c 0:f /")
    assert len(g.up_cards(0)) == 1
    assert g.up_cards(1) == parse_cards("9h 5h") and g.up_cards(2) == parse_cards("Kc 7s")
    assert g.raise_to_amounts() == (4,)


def test_all_in_players_open_pair_still_doubles():
    # RULES: all-in players are active, so seat 2's open pair of deuces counts even though it is
    # all-in after round 1.
    deck = deal(3, 0, {1: "Jc 4h 7c", 2: "Tc 2d 2h", 0: "9c Ah Kd"})
    g = Game("soko", 3, button=0, stacks=[800, 800, 5], deck=deck)
    assert g.bring_in_seat == 2
    play(g, "2:b4 0:c 1:c /")
    assert g.all_in[2]
    assert g.current_player == 1  # 7-4 is the lowest showing hand of those who can act
    assert g.raise_to_amounts() == (8,)


def test_folding_is_not_offered_when_checking_is_free():
    # RULES: "Folding is not offered when checking is free."
    g = Game("soko", 3, button=0, deck=FOUR_FLUSH_DECK)
    play(g, "1:c 2:c 0:c /")
    assert g.to_call == 0
    assert not g.can_fold()
    refused(g, g.fold)
    play(g, "1:b4")
    assert g.can_fold()  # facing a bet, folding is allowed


def test_refused_actions_leave_the_state_unchanged():
    # Contract: refused actions raise ValueError with a sentence and change nothing.
    g = Game("soko", 3, button=0, deck=FOUR_FLUSH_DECK)
    refused(g, g.bet_or_raise, 5)       # not the fixed-limit size
    refused(g, g.bet_or_raise, 10_000)  # more than the stack
    play(g, "1:c 2:c 0:c /")
    refused(g, g.bet_or_raise, 8)       # round 2 is a small-bet round here
    refused(g, g.bet_or_raise, 3)
    play(g, "1:b4")
    refused(g, g.bet_or_raise, 4)       # a raise must be to 8
    refused(g, g.bet_or_raise, 12)


# ---------------------------------------------------------------- ends of a hand

def test_a_hand_won_by_folds_pays_the_last_player_without_showdown():
    # RULES: "A hand ends when one player remains (they take the pot without showing)".
    deck = deal(3, 0, {1: "Jd 2c", 2: "7h Ks", 0: "8d As"})
    g = Game("soko", 3, button=0, deck=deck)
    play(g, "1:c 2:f 0:f")
    assert g.is_over and g.current_player is None
    assert tuple(g.payoffs) == (-1, 2, -1)
    assert sum(g.payoffs) == 0
    assert len(g.up_cards(1)) == 1  # no further cards were dealt
    # The winner's face-down card is never shown to the others.
    for seat in (0, 2):
        assert parse_cards("Jd")[0] not in cards_in(g.view(seat))


def test_no_action_is_accepted_once_the_hand_is_over():
    deck = deal(3, 0, {1: "Jd 2c", 2: "7h Ks", 0: "8d As"})
    g = Game("soko", 3, button=0, deck=deck)
    play(g, "1:c 2:f 0:f")
    assert not g.can_fold() and not g.can_check_or_call() and not g.can_bet_or_raise()
    assert g.raise_to_amounts() == ()
    refused(g, g.fold)
    refused(g, g.check_or_call)
    refused(g, g.bet_or_raise)


def test_showdown_canadian_hand_beats_pair_and_payoffs_sum_to_zero():
    # RULES Soko ranking: four-flush > four-straight > one pair. Two players check it down;
    # seat 0 has four hearts, seat 1 a pair of aces. Pot 2 antes + 2 x 2 = 6.
    deck = deal(2, 0, {1: "Ac 5d As 9c Jd", 0: "2h 3h 7h Kh 8c"})
    g = Game("soko", 2, button=0, deck=deck)
    assert g.bring_in_seat == 0  # 3h < 5d
    call_down(g)
    assert tuple(g.payoffs) == (3, -3)


def test_bring_in_passes_on_from_a_seat_all_in_from_the_ante():
    # docs/rules.md: a named first actor who is all-in is replaced by the first seat after them
    # clockwise who can act; docs/rules.md: that seat takes over the bring-in duty.
    # Button 0, so seat 1 is dealt first: Kd down, then seat 2 Qd, seat 0 Jd; up: 2c, 9h, Th.
    g = Game("soko", 3, stacks=(100, 1, 100), button=0, deck="Kd Qd Jd 2c 9h Th", seed=0)
    assert g.all_in == (False, True, False)  # seat 1 put its only chip in as the ante
    assert g.bring_in_seat == 2 and g.current_player == 2
    assert g.to_call == 2 and not g.can_fold()
    g.check_or_call()  # seat 2 posts the bring-in for seat 1
    assert g.committed == (0, 0, 2) and g.current_player == 0
