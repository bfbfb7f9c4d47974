"""Follow the Bitch and Low Chicago, scripted with explicit decks (docs/rules.md "Follow the Bitch").

Each seat's cards are listed in the order it receives them: ``D D U | D U | D U`` (two down
and one up, then down-up twice). With ``button=0`` and three players the passes go seat 1,
seat 2, seat 0, so the face-up cards of a street are dealt in that order too.
"""

from __future__ import annotations

import dataclasses

from envs.engine.cards import parse_cards
from envs.engine.game import Game
from envs.engine.rules import RULES
from tests.helpers import call_down, deal, play, refused

FTB = RULES["follow_the_bitch"]
LOW_CHICAGO = RULES["follow_the_bitch_low_chicago"]


def check_round(game) -> None:
    """Everyone checks once: the betting round closes and the next street is dealt."""
    street = game.street
    while not game.is_over and game.street == street:
        assert game.to_call == 0
        game.check_or_call()


# ---------------------------------------------------------------- deal and betting rounds

def test_three_betting_rounds_dealing_down_down_up_then_down_up_twice():
    # RULES FtB: two down and one up; round; one down one up; round; one down one up; round.
    hands = {1: "2c 3c 5h | 4c 4d | 3d 6s", 2: "6c 7c 8d | 9c 9s | 5d 6h", 0: "Tc Jc Kh | 2d Kc | 8h 3h"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.hole_cards(1) == parse_cards("2c 3c") and g.up_cards(1) == parse_cards("5h")
    assert g.hole_cards(0) == parse_cards("Tc Jc") and g.up_cards(0) == parse_cards("Kh")
    assert g.street == 0 and g.raise_to_amounts() == (4,)  # small bet in round 1
    check_round(g)
    assert g.street == 1 and g.raise_to_amounts() == (8,)  # big bet in round 2
    assert g.hole_cards(2) == parse_cards("6c 7c 9c") and g.up_cards(2) == parse_cards("8d 9s")
    check_round(g)
    assert g.street == 2 and g.raise_to_amounts() == (8,)  # big bet in round 3
    check_round(g)
    assert g.is_over  # three rounds only
    for seat in range(3):
        assert len(g.hole_cards(seat)) == 4 and len(g.up_cards(seat)) == 3
    assert g.up_cards(0) == parse_cards("Kh Kc 3h")
    assert sum(g.payoffs) == 0


def test_no_bring_in_the_first_player_may_check():
    # RULES FtB: "there is no bring-in (the first player may check)".
    g = Game(FTB, 3, button=0, deck=deal(3, 0, {1: "2c 3c 5h", 2: "6c 7c 8d", 0: "Tc Jc Kh"}))
    assert g.bring_in_seat is None
    assert g.current_player == 0  # king is the strongest up card
    assert g.to_call == 0 and g.can_check_or_call()
    assert not g.can_fold()  # checking is free
    refused(g, g.fold)
    play(g, "0:k")
    assert g.committed[0] == 0 and g.pot == 3


# ---------------------------------------------------------------- wild cards

def test_card_after_a_face_up_queen_is_wild():
    # RULES: the next face-up card after a face-up queen sets the wild rank (all four cards).
    g = Game(FTB, 3, button=0, deck=deal(3, 0, {1: "2c 3c Qh", 2: "4c 5c 9d", 0: "6c 7c 5d"}))
    assert g.wild_rank == "9"
    assert tuple(g.wild_ranks) == ("9",)


def test_nothing_is_wild_at_the_start():
    g = Game(FTB, 3, button=0, deck=deal(3, 0, {1: "2c 3c 5h", 2: "6c 7c 8d", 0: "Tc Jc Kh"}))
    assert g.wild_rank is None and tuple(g.wild_ranks) == ()


def test_queen_after_a_queen_the_next_card_is_wild():
    # RULES: "A queen that follows a queen does not become wild; the card after it does."
    g = Game(FTB, 3, button=0, deck=deal(3, 0, {1: "2c 3c Qh", 2: "4c 5c Qd", 0: "6c 8c 7h"}))
    assert g.wild_rank == "7"


def test_queen_as_the_rounds_last_up_card_leaves_nothing_wild_until_a_later_queen():
    # RULES: "If a round's last face-up card is a queen, nothing is wild until a later queen is
    # followed" -- the pending queen does not carry into the next dealing round.
    hands = {1: "2c 3c 5h | 4c 4d | 3d Qs", 2: "6c 7c 8d | 9c 9s | 5d 6h", 0: "Tc Jc Qh | 2d Kc | 8h 3h"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank is None
    check_round(g)
    assert g.up_cards(1)[-1].rank == "4"  # first up card of the next round: not wild
    assert g.wild_rank is None
    check_round(g)
    assert g.wild_rank == "6"  # Qs (seat 1) followed by 6h (seat 2)


def test_a_new_queen_ends_the_current_wild_rank_at_once():
    # RULES: "Whenever a queen is dealt face up, the current wild rank ends at once". Nines are
    # wild after round 1; the last up card of round 2 is a queen, so nothing is wild.
    hands = {1: "2c 3c Qh | 4c 4d", 2: "6c 7c 9d | 9c 5s", 0: "Tc Jc 5d | 2d Qc"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank == "9"
    check_round(g)
    assert g.wild_rank is None


def test_a_later_queen_and_follower_replace_the_wild_rank():
    hands = {1: "2c 3c Qh | 4c Qc", 2: "6c 7c 9d | 9c 4d", 0: "Tc Jc 5d | 2d 5s"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank == "9"
    check_round(g)
    assert g.wild_rank == "4"
    assert tuple(g.wild_ranks) == ("4",)


def test_folded_players_are_skipped_by_the_queen_sequence():
    # RULES: "Face-up cards are dealt in seat order from the dealer's left, active players only."
    # Seat 2 folds in round 1, so seat 1's face-up Qd is followed by seat 0's 7h: sevens wild.
    hands = {1: "2c 3c 5h | 8c Qd", 2: "6c 7c 4d", 0: "Tc Jc Kh | 9c 7h"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    play(g, "0:b4 1:c 2:f /")
    assert len(g.up_cards(2)) == 1
    assert g.wild_rank == "7"


def test_face_down_queens_change_nothing():
    # RULES: "Face-down cards never change the wild rank."
    hands = {1: "Qc Qd 5h | Qs 6d", 2: "2c 3c 9h | 4c 7d", 0: "Tc Jc 8h | 2d Kc"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank is None
    check_round(g)
    assert g.wild_rank is None


def test_face_down_queen_keeps_the_current_wild_rank():
    hands = {1: "2c 3c Qh | Qd 6d", 2: "4c 5c 9h | Qs 7d", 0: "Tc Jc 8h | 2d Kc"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank == "9"
    check_round(g)
    assert g.wild_rank == "9"


def test_queens_wild_option_adds_queens():
    # RULES option queens_wild: queens themselves are wild too.
    rules = dataclasses.replace(FTB, queens_wild=True)
    g = Game(rules, 3, button=0, deck=deal(3, 0, {1: "2c 3c 5h", 2: "6c 7c 8d", 0: "Tc Jc Kh"}))
    assert g.wild_rank is None
    assert tuple(g.wild_ranks) == ("Q",)
    g = Game(rules, 3, button=0, deck=deal(3, 0, {1: "2c 3c Qh", 2: "4c 5c 9d", 0: "6c 7c 5d"}))
    assert g.wild_rank == "9"
    assert set(g.wild_ranks) == {"9", "Q"} and len(g.wild_ranks) == 2


# ---------------------------------------------------------------- who acts first

def test_strongest_showing_hand_acts_first_counting_wild_cards():
    # RULES: first to act is the strongest showing hand, counting the current wild cards.
    # Round 1: Qh (seat 1), 9c (seat 2, wild: an ace), 3d (seat 0) -> seat 2.
    # Round 2: Q-4 (seat 1), 9c-5d = a pair of fives (seat 2), A-3 (seat 0) -> seat 2, where
    # ignoring wilds would pick seat 0's ace.
    hands = {1: "2c 3c Qh | 6c 4h", 2: "7c 8c 9c | Tc 5d", 0: "Jc 2d 3d | 4d Ah"}
    g = Game(FTB, 3, button=0, deck=deal(3, 0, hands))
    assert g.wild_rank == "9"
    assert g.current_player == 2
    play(g, "2:k 0:k 1:k /")
    assert g.wild_rank == "9"
    assert g.current_player == 2


def test_equal_showing_hands_first_clockwise_from_dealers_left():
    # RULES: equal showing hands -> the first clockwise from the dealer's left. Button 1: the
    # order is seat 2, seat 0, seat 1; seats 2 and 0 both show a king.
    g = Game(FTB, 3, button=1, deck=deal(3, 1, {2: "2c 3c Kd", 0: "4c 5c Kh", 1: "6c 7c 8d"}))
    assert g.current_player == 2


def test_all_in_strongest_player_is_skipped():
    # RULES: an all-in first player is skipped for the next clockwise who can act.
    # Seat 0 (stack 5) shows the ace and bets all-in; round 2 it still shows the strongest hand.
    hands = {0: "2c 3d Ah | 5c As", 1: "4c 6d 7c | 8c 9d", 2: "8d 9c 5d | Tc Jd"}
    g = Game(FTB, 3, button=2, stacks=[5, 800, 800], deck=deal(3, 2, hands))
    play(g, "0:b4 1:c 2:c /")
    assert g.all_in[0]
    assert g.current_player == 1


# ---------------------------------------------------------------- showdown with wild cards

def test_showdown_uses_the_wild_rank_at_the_end():
    # RULES: "Showdown uses the wild rank in force at the end of the hand." Nines are wild after
    # round 1 (seat 0 would have five kings with them); the last round's Qd followed by 5h
    # makes fives wild instead: seat 1's four queens beat seat 0's four nines.
    hands = {1: "5c 5d Qh | 2s 7h | 3c Qd", 0: "9d 9h 9c | Kc Kd | 4s 5h"}
    g = Game(FTB, 2, button=0, deck=deal(2, 0, hands))
    assert g.wild_rank == "9"
    call_down(g)
    assert g.wild_rank == "5"
    assert tuple(g.payoffs) == (-1, 1)


# ---------------------------------------------------------------- Low Chicago
# Three players, button 2: passes go seat 0, 1, 2. Seat 0 has the best high hand unless noted.

TRIP_ACES = "Ac Ad Ah | Kc 2d | 7c 9d"


def test_low_chicago_ace_of_spades_is_lowest_and_the_odd_chip_goes_high():
    # RULES Low Chicago: the lowest face-down spade takes half of the pot; the ace is the lowest
    # spade; the odd chip goes to the high half. Pot 3: seat 0 (trip aces) 2, seat 2 (As) 1;
    # seat 1's 2s loses to the ace.
    hands = {0: TRIP_ACES, 1: "2s 3h 4c | 8h Th | Jc 6d", 2: "As 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (1, -1, 0)


def test_low_chicago_splits_an_even_pot_in_half():
    # Heads-up: pot 2 antes + 2 x 4 = 10 -> 5 to the high hand (seat 0), 5 to the Low Chicago
    # (seat 1's face-down As): both break even.
    hands = {0: TRIP_ACES, 1: "As 3h 4c | 8h Th | Jc 6d"}
    g = Game(LOW_CHICAGO, 2, button=1, deck=deal(2, 1, hands))
    play(g, "0:b4 1:c /")
    call_down(g)
    assert tuple(g.payoffs) == (0, 0)


def test_low_chicago_without_the_option_high_hand_takes_all():
    hands = {0: TRIP_ACES, 1: "2s 3h 4c | 8h Th | Jc 6d", 2: "As 5h 3d | 8d Jd | Tc 6c"}
    g = Game(FTB, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (2, -1, -1)


def test_low_chicago_face_up_spade_is_not_eligible():
    # RULES: "A spade dealt face up ... is not eligible": seat 1's As is face up, so seat 2's
    # face-down 9s is the Low Chicago.
    hands = {0: TRIP_ACES, 1: "3h 4c As | 8h Th | Jc 6d", 2: "9s 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (1, -1, 0)


def test_low_chicago_folded_players_spade_is_not_eligible():
    # RULES: a spade "in a folded hand is not eligible". Seat 1 folds its face-down As; pot
    # 3 + 2 x 4 = 11 -> 6 high (seat 0), 5 low (seat 2's 9s).
    hands = {0: TRIP_ACES, 1: "As 4c 3h", 2: "9s 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    play(g, "0:b4 1:f 2:c /")
    call_down(g)
    assert tuple(g.payoffs) == (1, -1, 0)


def test_low_chicago_spades_in_the_stub_are_not_eligible():
    # RULES: a spade "in the deck stub" is not eligible: As and 2s are never dealt, so seat 1's
    # 3s beats seat 2's 4s.
    hands = {0: TRIP_ACES, 1: "3s 5c 4h | 8h Th | Jc 6d", 2: "4s 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (1, 0, -1)


def test_low_chicago_no_eligible_spade_high_hand_takes_all():
    # RULES: "If no eligible player holds a face-down spade, the high hand takes the whole pot."
    hands = {0: TRIP_ACES, 1: "3h 5c 2s | 8h Th | Jc 6d", 2: "9c 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (2, -1, -1)


def test_low_chicago_one_player_with_both_takes_it_all():
    # RULES: "One player with both takes the whole pot." Seat 0: four aces with As face down.
    hands = {0: "As Ad Ah | Ac 2d | 7c 9d", 1: "3h 5c 4c | 8h Th | Jc 6d", 2: "9s 5h 3d | 8d Jd | Tc 6c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    call_down(g)
    assert tuple(g.payoffs) == (2, -1, -1)


def test_low_chicago_everyone_else_folds_last_player_takes_all():
    # RULES: "If everyone else folds, the last player takes the whole pot."
    hands = {0: "2c 3d Ah", 1: "As 4c 3h", 2: "9s 5h 3c"}
    g = Game(LOW_CHICAGO, 3, button=2, deck=deal(3, 2, hands))
    play(g, "0:b4 1:f 2:f")
    assert g.is_over
    assert tuple(g.payoffs) == (2, -1, -1)


def test_low_chicago_high_half_split_between_tied_high_hands():
    # Four players, button 3 (passes seat 0, 1, 2, 3), checked down: pot 4. Seats 0 and 1 tie
    # with K-K-9-7-5 and share the high half (1 each); seat 2's face-down As takes the low 2.
    hands = {
        0: "Kc Kd 9c | 7c 5d | 3c 2d",
        1: "Kh 9h Ks | 7d 5h | 3d 2h",
        2: "As 4c 6c | 8d Tc | Jh 3h",
        3: "4h 6h 8c | Td Jd | 2c 9d",
    }
    g = Game(LOW_CHICAGO, 4, button=3, deck=deal(4, 3, hands))
    call_down(g)
    assert tuple(g.payoffs) == (0, 0, 1, -1)


def test_low_chicago_side_pots_are_split_separately():
    # RULES: "Each pot (main and side) is split". Seat 0 (stack 5) is all-in in round 1.
    # Main pot 3 x 5 = 15: high seat 0 (trip kings) 8, low seat 1 (As down) 7.
    # Side pot 2 x 8 = 16 (seats 1, 2): high seat 2 (pair of fives) 8, low seat 1 (As) 8.
    hands = {
        0: "Kc Kd Kh | 2c 7d | 9c 3d",
        1: "As 4h 6c | 8d Tc | Jh 2d",
        2: "5c 5d 9h | Th 4c | 3c 8c",
    }
    g = Game(LOW_CHICAGO, 3, button=2, stacks=[5, 800, 800], deck=deal(3, 2, hands))
    play(g, "b c c /")
    assert g.all_in[0]
    play(g, "b c /")
    call_down(g)
    assert tuple(g.payoffs) == (3, 2, -5)


def test_low_chicago_side_pot_goes_to_the_lowest_spade_among_its_players():
    # Each pot's low half goes to the lowest face-down spade among the players in that pot.
    # Seat 0 (stack 5, As down) is all-in: it takes the low half of the main pot only; in the
    # side pot (seats 1 and 2) seat 2's 7s is the lowest face-down spade.
    # Main 15: high seat 1 (trip kings) 8, low seat 0 7. Side 16: high seat 1 8, low seat 2 8.
    hands = {
        0: "As 4h 6c | 8d Tc | Jh 2d",
        1: "Kc Kd Kh | 2c 7d | 9c 3d",
        2: "7s 5d 5c | Th 9h | 3c 8c",
    }
    g = Game(LOW_CHICAGO, 3, button=2, stacks=[5, 800, 800], deck=deal(3, 2, hands))
    play(g, "b c c /")
    assert g.all_in[0]
    play(g, "b c /")
    call_down(g)
    assert tuple(g.payoffs) == (2, 3, -5)
