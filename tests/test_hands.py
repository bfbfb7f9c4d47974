"""Hand values (envs/engine/hands.py) against docs/rules.md.

(a) scripted hands with explicit cards at every category boundary, Canadian hands, wild cards,
    showing hands, readable strings, bad input;
(b) differential: ``evaluate`` against the slow reference in tests/reference_hands.py on
    thousands of seeded random hands (5..7 cards and 1..4-card showing hands, every option);
(c) differential against eval7 and treys on standard hands: the same ordering and categories;
(d) ``evaluate_batch`` equals ``evaluate`` row by row;
(e) properties (hypothesis): suits never matter, input order never matters, more cards never
    hurt, a wild card never hurts, HandValue round trips.

Random tests are seeded (the seed is in the test id or the assertion message) so a failure
replays exactly.
"""

from __future__ import annotations

import itertools
import random
import warnings

import numpy as np
import pytest
import treys
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.engine.cards import DECK, RANKS, Card, format_cards, parse_cards
from envs.engine.hands import Category, HandValue, evaluate, evaluate_batch
from tests.reference_hands import CATEGORY_NAMES, reference_evaluate, tie_break_ranks

with warnings.catch_warnings():  # eval7 imports pyparsing with deprecated names
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

C = Category


def ev(cards, **options) -> HandValue:
    return evaluate(cards, **options)


def cat(cards, **options) -> Category:
    return evaluate(cards, **options).category


def describe(value: int) -> str:
    """A score as 'CATEGORY[ranks]' for assertion messages."""
    ranks = "".join(RANKS[r] for r in tie_break_ranks(int(value)))
    return f"{CATEGORY_NAMES.get(int(value) >> 20, '?')}[{ranks}]"


def assert_strictly_increasing(hands, **options):
    values = [ev(h, **options) for h in hands]
    for (low, a), (high, b) in zip(zip(hands, values), zip(hands[1:], values[1:])):
        assert a < b, f"{low} ({a}) should lose to {high} ({b}) with {options}"


# =============================================================================================
# (a) scripted hands
# =============================================================================================

# The weakest and strongest five-card hand of each standard category, in ranking order.
STANDARD_BOUNDARIES = [
    ("7c 5d 4h 3s 2c", C.HIGH_CARD),
    ("Ac Kd Qh Js 9c", C.HIGH_CARD),
    ("2c 2d 5h 4s 3c", C.ONE_PAIR),
    ("Ac Ad Kh Qs Jc", C.ONE_PAIR),
    ("3c 3d 2h 2s 4c", C.TWO_PAIR),
    ("Ac Ad Kh Ks Qc", C.TWO_PAIR),
    ("2c 2d 2h 4s 3c", C.THREE_OF_A_KIND),
    ("Ac Ad Ah Ks Qc", C.THREE_OF_A_KIND),
    ("Ac 2d 3h 4s 5c", C.STRAIGHT),
    ("Tc Jd Qh Ks Ac", C.STRAIGHT),
    ("2h 3h 4h 5h 7h", C.FLUSH),
    ("Ah Kh Qh Jh 9h", C.FLUSH),
    ("2c 2d 2h 3s 3c", C.FULL_HOUSE),
    ("Ac Ad Ah Ks Kc", C.FULL_HOUSE),
    ("2c 2d 2h 2s 3c", C.FOUR_OF_A_KIND),
    ("Ac Ad Ah As Kc", C.FOUR_OF_A_KIND),
    ("Ah 2h 3h 4h 5h", C.STRAIGHT_FLUSH),
    ("Ah Kh Qh Jh Th", C.STRAIGHT_FLUSH),
]

# The same for Soko (canadian=True): four-straight and four-flush between one pair and two pair.
# Note the weakest Canadian high card is 7-6-4-3-2: 7-5-4-3-2 holds the four-straight 2-3-4-5.
CANADIAN_BOUNDARIES = [
    ("7c 6d 4h 3s 2c", C.HIGH_CARD),
    ("Ac Kd Qh Ts 8c", C.HIGH_CARD),
    ("2c 2d 6h 5s 3c", C.ONE_PAIR),
    ("Ac Ad Kh Qs Tc", C.ONE_PAIR),
    ("Ac 2d 3h 4s 2c", C.FOUR_STRAIGHT),   # A-2-3-4 is the lowest four-straight
    ("Jc Qd Kh As Ac", C.FOUR_STRAIGHT),   # J-Q-K-A is the highest
    ("2h 3h 4h 5h 2c", C.FOUR_FLUSH),
    ("Ah Kh Qh Jh Ac", C.FOUR_FLUSH),
    ("3c 3d 2h 2s 7c", C.TWO_PAIR),
    ("Ac Ad Kh Ks Qc", C.TWO_PAIR),
    ("2c 2d 2h 4s 7c", C.THREE_OF_A_KIND),
    ("Ac Ad Ah Ks Qc", C.THREE_OF_A_KIND),
    ("Ac 2d 3h 4s 5c", C.STRAIGHT),
    ("Tc Jd Qh Ks Ac", C.STRAIGHT),
    ("2h 3h 4h 5h 7h", C.FLUSH),
    ("Ah Kh Qh Jh 9h", C.FLUSH),
    ("2c 2d 2h 3s 3c", C.FULL_HOUSE),
    ("Ac Ad Ah Ks Kc", C.FULL_HOUSE),
    ("2c 2d 2h 2s 3c", C.FOUR_OF_A_KIND),
    ("Ac Ad Ah As Kc", C.FOUR_OF_A_KIND),
    ("Ah 2h 3h 4h 5h", C.STRAIGHT_FLUSH),
    ("Ah Kh Qh Jh Th", C.STRAIGHT_FLUSH),
]


@pytest.mark.parametrize("hand, category", STANDARD_BOUNDARIES)
def test_standard_category(hand, category):
    assert cat(hand) == category


def test_standard_boundaries_strictly_increasing():
    assert_strictly_increasing([h for h, _ in STANDARD_BOUNDARIES])


@pytest.mark.parametrize("hand, category", CANADIAN_BOUNDARIES)
def test_canadian_category(hand, category):
    assert cat(hand, canadian=True) == category


def test_canadian_boundaries_strictly_increasing():
    assert_strictly_increasing([h for h, _ in CANADIAN_BOUNDARIES], canadian=True)


def test_category_enum_order_matches_rules():
    # docs/rules.md, best first: straight flush, quads, full house, flush, straight, trips, two pair,
    # four-flush, four-straight, one pair, high card (five of a kind above all with wilds).
    order = [C.HIGH_CARD, C.ONE_PAIR, C.FOUR_STRAIGHT, C.FOUR_FLUSH, C.TWO_PAIR,
             C.THREE_OF_A_KIND, C.STRAIGHT, C.FLUSH, C.FULL_HOUSE, C.FOUR_OF_A_KIND,
             C.STRAIGHT_FLUSH, C.FIVE_OF_A_KIND]
    assert [int(c) for c in order] == list(range(12))


def test_score_layout_follows_the_contract():
    # int(v) == category << 20 | r1 << 16 | ... with r = rank_index + 1
    assert int(ev("Ah Kh Qh Jh Th")) == (10 << 20) | (13 << 16)
    assert int(ev("Kd Qc 9h 4s 2c")) == (0 << 20) | (12 << 16) | (11 << 12) | (8 << 8) | (3 << 4) | 1
    assert int(ev("7c 7d Kh 5s 2c")) == (1 << 20) | (6 << 16) | (12 << 12) | (4 << 8) | (1 << 4)


# --- Canadian hands ------------------------------------------------------------------------


def test_four_flush_beats_four_straight_beats_pair_and_two_pair_beats_all():
    pair = ev("Ac Ad Kh Qs Tc", canadian=True)
    four_straight = ev("2c 3d 4h 5s 9c", canadian=True)
    four_flush = ev("2h 3h 4h 7h 9c", canadian=True)
    two_pair = ev("2c 2d 3h 3s 4c", canadian=True)
    assert (pair.category, four_straight.category, four_flush.category, two_pair.category) == (
        C.ONE_PAIR, C.FOUR_STRAIGHT, C.FOUR_FLUSH, C.TWO_PAIR)
    assert pair < four_straight < four_flush < two_pair


def test_canadian_hands_need_canadian():
    assert cat("2c 3d 4h 5s 9c") == C.HIGH_CARD
    assert cat("2h 3h 4h 7h 9c") == C.HIGH_CARD
    assert cat("5c 6d 7h 8s 8c") == C.ONE_PAIR
    assert cat("Ah Kh 9h 2h 2c") == C.ONE_PAIR


def test_four_suited_cards_in_sequence_are_a_four_flush():
    value = ev("5h 6h 7h 8h 2c", canadian=True)
    assert value.category == C.FOUR_FLUSH
    assert value.ranks == ("8", "7", "6", "5", "2")


def test_pair_plus_four_flush_is_a_four_flush():
    value = ev("Ah Kh 9h 2h 2c", canadian=True)
    assert value.category == C.FOUR_FLUSH
    assert value.ranks == ("A", "K", "9", "2", "2")


def test_pair_plus_four_straight_is_a_four_straight():
    value = ev("5c 6d 7h 8s 8c", canadian=True)
    assert value.category == C.FOUR_STRAIGHT
    assert value.ranks == ("8", "8")
    # A-A-K-Q-J holds J-Q-K-A: a four-straight, not a pair of aces
    assert cat("Ac Ad Kh Qs Jc", canadian=True) == C.FOUR_STRAIGHT


def test_five_suited_cards_are_a_flush_not_a_four_flush():
    assert cat("2h 3h 4h 7h 9h", canadian=True) == C.FLUSH
    assert cat("2h 3h 4h 7h 9h Kh 8c", canadian=True) == C.FLUSH


def test_no_wrap_around_four_straight():
    assert cat("Kc Ad 2h 3s 8c", canadian=True) == C.HIGH_CARD
    assert cat("Qc Kd Ah 2s 8c", canadian=True) == C.HIGH_CARD
    assert cat("Kc Ad 2h 3s", canadian=True) == C.HIGH_CARD


def test_ace_low_four_straight_is_the_lowest_and_optional():
    a234 = ev("Ac 2d 3h 4s Kc", canadian=True)
    assert a234.category == C.FOUR_STRAIGHT
    assert a234.ranks == ("4", "K")
    # the lowest: a 2-3-4-5 with a worse fifth card still beats it
    assert a234 < ev("2c 3d 4h 5s 7c", canadian=True)
    assert a234 > ev("Ac Ad Kh Qs Tc", canadian=True)  # the best pair
    off = dict(canadian=True, ace_low_four_straight=False)
    assert cat("Ac 2d 3h 4s Kc", **off) == C.HIGH_CARD
    assert cat("Ac 2d 3h 4s", **off) == C.HIGH_CARD
    assert cat("Ac 2d 3h 4s 2c", **off) == C.ONE_PAIR
    # the option only concerns A-2-3-4: the wheel is still a straight, 2-3-4-5 still counts
    assert cat("Ac 2d 3h 4s 5c", **off) == C.STRAIGHT
    assert cat("2c 3d 4h 5s 9c", **off) == C.FOUR_STRAIGHT
    assert cat("Jc Qd Kh As 2c", **off) == C.FOUR_STRAIGHT


def test_jack_queen_king_ace_is_the_highest_four_straight():
    top = ev("Jc Qd Kh As 2c", canadian=True)
    assert top.category == C.FOUR_STRAIGHT
    assert top.ranks == ("A", "2")
    assert top > ev("Tc Jd Qh Ks 2c", canadian=True)  # T-J-Q-K
    assert top > ev("Tc Jd Qh Ks Kc", canadian=True)  # a better fifth card does not help
    assert top < ev("2h 3h 4h 6h 8c", canadian=True)  # the weakest four-flush


def test_four_flush_tie_breaks_four_suited_high_to_low_then_fifth():
    base = ev("Ah Kh 9h 2h 3c", canadian=True)
    assert base > ev("Ad Kd 8d 7d Qc", canadian=True)   # third suited card 9 > 8
    assert base < ev("Ad Kd 9d 3d 2c", canadian=True)   # fourth suited card 3 > 2
    assert base < ev("Ad Kd 9d 2d 4c", canadian=True)   # same four, fifth card 4 > 3
    assert base == ev("As Ks 9s 2s 3d", canadian=True)  # suits never break ties
    # the fifth card counts only after all four suited cards
    assert ev("Ah Kh 9h 3h 2c", canadian=True) > ev("Ad Kd 9d 2d Qc", canadian=True)


def test_four_straight_tie_breaks_top_card_then_fifth():
    assert ev("5c 6d 7h 8s 2c", canadian=True) < ev("6c 7d 8h 9s 2c", canadian=True)
    assert ev("5c 6d 7h 8s Kc", canadian=True) < ev("6c 7d 8h 9s 2c", canadian=True)
    assert ev("5c 6d 7h 8s Kc", canadian=True) > ev("5d 6h 7s 8c Qd", canadian=True)
    assert ev("5c 6d 7h 8s Kc", canadian=True) == ev("5d 6h 7s 8c Kd", canadian=True)


def test_seven_card_canadian_best_five():
    # four hearts among seven: four-flush, fifth card = the best other card
    value = ev("Ah Kh 9h 2h 3c Qd 7s", canadian=True)
    assert value.category == C.FOUR_FLUSH
    assert value.ranks == ("A", "K", "9", "2", "Q")
    # a four-straight with the best remaining card
    value = ev("5c 6d 7h 8s Kc 2d 2h", canadian=True)
    assert value.category == C.FOUR_STRAIGHT
    assert value.ranks == ("8", "K")
    # two four-straights among seven: J-Q-K-A beats A-2-3-4, the fifth card is the four
    value = ev("Ac 2d 3h 4s Jc Qd Kh", canadian=True)
    assert value.category == C.FOUR_STRAIGHT
    assert value.ranks == ("A", "4")
    # two pair still beats the four-flush it contains
    assert cat("Ah Kh 9h 2h 2c 9d 4s", canadian=True) == C.TWO_PAIR


# --- ties and equal hands ------------------------------------------------------------------


def test_suits_never_break_ties():
    assert ev("Ah Kh Qh Jh 9h") == ev("As Ks Qs Js 9s")
    assert ev("Ac Kd Qh Js 9c") == ev("Ad Kc Qs Jh 9d")
    assert ev("7c 7d Kh 5s 2c") == ev("7h 7s Kc 5d 2d")
    assert ev("Ah 2h 3h 4h 5h") == ev("Ac 2c 3c 4c 5c")
    assert ev("Tc Jd Qh Ks Ac") == ev("Td Jh Qs Kc Ad")


def test_kickers_decide_within_a_category():
    assert ev("7c 7d Kh 5s 2c") < ev("7h 7s Kc 5d 3d")
    assert ev("Ac Ad 9h 9s 4c") < ev("Ah As 9c 9d 5c")
    assert ev("Ac Ad 9h 9s 4c") > ev("Kh Ks Qc Qd Ac")
    assert ev("2c 2d 2h Ks Qc") > ev("2s 2c 2d Ks Jc")
    assert ev("9c 9d 9h 4s 4c") > ev("8c 8d 8h As Ac")
    assert ev("Ah Kh Qh Jh 8h") < ev("As Ks Qs Js 9s")


def test_wheel_is_the_lowest_straight():
    wheel = ev("Ac 2d 3h 4s 5c")
    assert wheel.category == C.STRAIGHT
    assert wheel.ranks == ("5",)
    assert wheel < ev("2c 3d 4h 5s 6c")
    assert wheel > ev("Ac Ad Ah Ks Qc")
    steel_wheel = ev("Ah 2h 3h 4h 5h")
    assert steel_wheel.category == C.STRAIGHT_FLUSH
    assert steel_wheel.ranks == ("5",)
    assert steel_wheel < ev("2h 3h 4h 5h 6h")
    # no wrap-around straight
    assert cat("Qc Kd Ah 2s 3c") == C.HIGH_CARD


def test_royal_flush_string_and_straight_flush_string():
    assert str(ev("Ah Kh Qh Jh Th")) == "Royal flush"
    assert str(ev("Kh Qh Jh Th 9h")) != "Royal flush"
    assert ev("Ah Kh Qh Jh Th") == ev("As Ks Qs Js Ts")


def test_seven_cards_use_the_best_five():
    value = ev("Ah Kh 7h 4h 2h 2c 2d")
    assert value.category == C.FLUSH  # the flush beats the trips
    assert value.ranks == ("A", "K", "7", "4", "2")
    value = ev("5c 6d 7h 8s 9c Tc Jc")
    assert value.category == C.STRAIGHT and value.ranks == ("J",)
    value = ev("Kc Kd Kh 5s 5c 5d 2h")
    assert value.category == C.FULL_HOUSE and value.ranks == ("K", "5")
    value = ev("Ac Ad 9h 9s 4c 4d Kh")  # three pairs: the kicker is the king, not a four
    assert value.category == C.TWO_PAIR and value.ranks == ("A", "9", "K")
    value = ev("Ac Ad Ah As Kc Kd Qh")
    assert value.category == C.FOUR_OF_A_KIND and value.ranks == ("A", "K")
    value = ev("9h Th Jh Qh Kh Ah 2c")
    assert value.category == C.STRAIGHT_FLUSH and value.ranks == ("A",)
    value = ev("Ah Kd 9c 7s 5h 3d 2c")
    assert value.category == C.HIGH_CARD and value.ranks == ("A", "K", "9", "7", "5")
    # six cards: best five too
    assert ev("Ah Kd 9c 7s 5h 2c") == ev("Ah Kd 9c 7s 5h")


# --- wild cards ----------------------------------------------------------------------------


def test_five_of_a_kind_beats_a_royal_flush():
    five = ev("9c 9d 9h Ac Ad", wild_ranks=("9",))
    assert five.category == C.FIVE_OF_A_KIND
    assert five.ranks == ("A",)
    assert five > ev("Ah Kh Qh Jh Th", wild_ranks=("9",))
    assert five > ev("Ah Kh Qh Jh Th")
    # natural quads plus one wild
    assert cat("Kc Kd Kh Ks 9c", wild_ranks=("9",)) == C.FIVE_OF_A_KIND
    assert ev("Kc Kd Kh Ks 9c", wild_ranks=("9",)) < five


def test_wild_in_a_flush_is_the_best_absent_card():
    # A-wild-9-5-2 of hearts = A-K-9-5-2 flush (docs/rules.md, Follow the Bitch)
    value = ev("Ah Jc 9h 5h 2h", wild_ranks=("J",))
    assert value.category == C.FLUSH
    assert value.ranks == ("A", "K", "9", "5", "2")
    assert value == ev("Ah Kh 9h 5h 2h")
    # the wild's own suit does not matter
    assert value == ev("Ah Jh 9h 5h 2h", wild_ranks=("J",))
    # two wilds stand for the two best absent cards
    value = ev("Ah Jc Jd 6h 2h", wild_ranks=("J",))
    assert value.category == C.FLUSH and value.ranks == ("A", "K", "Q", "6", "2")
    # the contract's example: seven cards
    value = ev("Ah 9h 5h 2h 7c Kd Ks", wild_ranks=("7",))
    assert value.category == C.FLUSH and value.ranks == ("A", "K", "9", "5", "2")


def test_double_ace_flush_option():
    value = ev("Ah Jc 9h 5h 2h", wild_ranks=("J",), double_ace_flush=True)
    assert value.category == C.FLUSH
    assert value.ranks == ("A", "A", "9", "5", "2")
    assert value > ev("Ah Jc 9h 5h 2h", wild_ranks=("J",))
    # without a held ace the wild is simply the ace
    value = ev("Kh Jc 9h 5h 2h", wild_ranks=("J",), double_ace_flush=True)
    assert value.ranks == ("A", "K", "9", "5", "2")
    # a straight flush still beats it
    value = ev("Kh Qh Jh Th 9c", wild_ranks=("9",), double_ace_flush=True)
    assert value.category == C.STRAIGHT_FLUSH and value.ranks == ("A",)
    # the option does nothing outside flushes
    assert ev("Ah Jc 9d 5h 2h", wild_ranks=("J",), double_ace_flush=True) == ev(
        "Ah Jc 9d 5h 2h", wild_ranks=("J",))


def test_wild_completes_straights_and_straight_flushes():
    value = ev("Ac Kd Qh 9s Tc", wild_ranks=("9",))
    assert value.category == C.STRAIGHT and value.ranks == ("A",)
    value = ev("Ah Kh Qh Jh 9d", wild_ranks=("9",))
    assert value.category == C.STRAIGHT_FLUSH and value.ranks == ("A",)
    assert str(value) == "Royal flush"
    # both wild nines: A-2-3-4-5 of hearts
    value = ev("Ah 9h 9c 5h 2h", wild_ranks=("9",))
    assert value.category == C.STRAIGHT_FLUSH and value.ranks == ("5",)
    # a wild straight picks the highest top card: 5-6-7-8 + wild = 9-high
    value = ev("5c 6d 7h 8s 9c", wild_ranks=("9",))
    assert value.category == C.STRAIGHT and value.ranks == ("9",)


def test_wild_makes_pairs_trips_and_full_houses():
    value = ev("9c Ah 7d 5s 3c", wild_ranks=("9",))
    assert value.category == C.ONE_PAIR and value.ranks == ("A", "7", "5", "3")
    value = ev("9c Kh Kd 5s 3c", wild_ranks=("9",))
    assert value.category == C.THREE_OF_A_KIND and value.ranks == ("K", "5", "3")
    value = ev("9c Kh Kd 5s 5c", wild_ranks=("9",))
    assert value.category == C.FULL_HOUSE and value.ranks == ("K", "5")


def test_five_wilds_are_five_aces():
    value = ev("9c 9d 9h 9s Qc", wild_ranks=("9", "Q"))
    assert value.category == C.FIVE_OF_A_KIND and value.ranks == ("A",)
    assert value == ev("9c 9d 9h 9s Ac", wild_ranks=("9",))
    assert value == ev("9c 9d 9h 9s Qc Qd Qh", wild_ranks=("9", "Q"))


def test_two_wild_ranks_and_queens_wild():
    # nines wild and queens wild (queens_wild): two wilds with a pair of kings = four kings
    value = ev("9c Qd Kh Ks 2c", wild_ranks=("9", "Q"))
    assert value.category == C.FOUR_OF_A_KIND and value.ranks == ("K", "2")
    # with only nines wild the queen is natural: trips
    value = ev("9c Qd Kh Ks 2c", wild_ranks=("9",))
    assert value.category == C.THREE_OF_A_KIND and value.ranks == ("K", "Q", "2")
    # order and form of the wild ranks do not matter
    assert ev("9c Qd Kh Ks 2c", wild_ranks=("Q", "9")) == ev("9c Qd Kh Ks 2c", wild_ranks=["9", "Q"])
    # a queen in a flush is a wild standing for the best absent card
    value = ev("Qc 9d Ah 7h 2h Jh", wild_ranks=("9", "Q"))
    assert value.category == C.FLUSH and value.ranks == ("A", "K", "Q", "J", "7")


def test_wild_in_a_four_flush_is_the_best_absent_card_and_not_the_fifth_card():
    # three hearts and a wild nine of clubs: A-K-Q-J four-flush; the fifth card is the best
    # natural card outside the four, never the wild's own rank
    value = ev("Ah Kh Qh 9c 2d", canadian=True, wild_ranks=("9",))
    assert value.category == C.FOUR_FLUSH and value.ranks == ("A", "K", "Q", "J", "2")
    value = ev("Ah Kh Qh 9c 2d 3s 7c", canadian=True, wild_ranks=("9",))
    assert value.category == C.FOUR_FLUSH and value.ranks == ("A", "K", "Q", "J", "7")
    value = ev("Ah Kh Qh 9c 2d", canadian=True, wild_ranks=("9",), double_ace_flush=True)
    assert value.category == C.FOUR_FLUSH and value.ranks == ("A", "A", "K", "Q", "2")


def test_no_wild_in_hand_means_a_natural_value():
    for hand, _ in STANDARD_BOUNDARIES:
        if "9" not in hand:
            assert ev(hand, wild_ranks=("9",)) == ev(hand)


# --- showing hands (1..4 up cards) ---------------------------------------------------------


def test_showing_hands_use_only_the_categories_their_size_allows():
    assert ev("Ah").category == C.HIGH_CARD and ev("Ah").ranks == ("A",)
    assert cat("7c 7d") == C.ONE_PAIR
    assert cat("Ah Kh") == C.HIGH_CARD
    assert cat("7c 7d 7h") == C.THREE_OF_A_KIND
    assert cat("5h 6h 7h") == C.HIGH_CARD
    assert cat("5h 6h 7h", canadian=True) == C.HIGH_CARD
    assert cat("7c 7d 7h 7s") == C.FOUR_OF_A_KIND
    assert cat("7c 7d 5h 5s") == C.TWO_PAIR
    assert cat("7c 7d 7h 5s") == C.THREE_OF_A_KIND  # no full house with four cards
    assert cat("5h 6h 7h 8h") == C.HIGH_CARD  # no straight or flush with four cards
    assert cat("5h 6d 7h 8h") == C.HIGH_CARD
    assert cat("Ah 2d 3h 4h") == C.HIGH_CARD


def test_canadian_showing_hands_with_four_up_cards():
    assert cat("5h 6h 7h 8h", canadian=True) == C.FOUR_FLUSH
    assert cat("Ah Kh 9h 2h", canadian=True) == C.FOUR_FLUSH
    assert ev("Ah Kh 9h 2h", canadian=True).ranks == ("A", "K", "9", "2")
    assert cat("5h 6d 7h 8h", canadian=True) == C.FOUR_STRAIGHT
    assert ev("5h 6d 7h 8h", canadian=True).ranks == ("8",)
    assert cat("Ah 2d 3h 4s", canadian=True) == C.FOUR_STRAIGHT
    assert cat("Ah 2d 3h 4s", canadian=True, ace_low_four_straight=False) == C.HIGH_CARD
    assert cat("Kh Ad 2h 3s", canadian=True) == C.HIGH_CARD
    assert cat("7c 7d 5h 5s", canadian=True) == C.TWO_PAIR
    # ordering of four-card showing hands
    assert_strictly_increasing(
        ["Ah Kd 9h 2s", "2c 2d 3h 5s", "Ac Ad Kh Qs", "Ah 2d 3h 4s", "Jc Qd Kh As",
         "2h 3h 4h 6h", "Ah Kh Qh Jh", "2c 2d 3h 3s", "Ac Ad Ah Ks", "2c 2d 2h 2s"],
        canadian=True,
    )


def test_showing_hands_order_by_strength():
    # one card: higher card; two cards: any pair beats any high card
    assert ev("Ah") > ev("Kd")
    assert ev("Ah") == ev("As")
    assert ev("2c 2d") > ev("Ah Kd")
    assert ev("3c 3d") > ev("2c 2d")
    assert ev("Ah Kd") > ev("Ah Qd")
    assert ev("2c 2d 2h") > ev("Ac Ad Kh")
    assert ev("Ac Ad Kh") > ev("Ac Ad Qh")


def test_showing_hands_with_wild_cards():
    assert ev("9c", wild_ranks=("9",)) == ev("Ah")
    value = ev("9c 5d", wild_ranks=("9",))
    assert value.category == C.ONE_PAIR and value.ranks == ("5",)
    value = ev("9c 9d", wild_ranks=("9",))
    assert value.category == C.ONE_PAIR and value.ranks == ("A",)
    value = ev("9c 9d 9h", wild_ranks=("9",))
    assert value.category == C.THREE_OF_A_KIND and value.ranks == ("A",)
    value = ev("9c 5h 5d Kc", wild_ranks=("9",))
    assert value.category == C.THREE_OF_A_KIND and value.ranks == ("5", "K")
    value = ev("9c 9d 9h 9s", wild_ranks=("9",))  # no five of a kind with four cards
    assert value.category == C.FOUR_OF_A_KIND and value.ranks == ("A",)
    value = ev("9c 5h Ah Kh", wild_ranks=("9",), canadian=True)
    assert value.category == C.FOUR_FLUSH and value.ranks == ("A", "K", "Q", "5")
    value = ev("9c 5d Ah Kh", wild_ranks=("9",), canadian=True)  # the wild cannot be two cards
    assert value.category == C.ONE_PAIR and value.ranks == ("A", "K", "5")
    value = ev("9c 5h Ah Kh", wild_ranks=("9",))  # not Canadian: pair of aces
    assert value.category == C.ONE_PAIR and value.ranks == ("A", "K", "5")


# --- readable strings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "hand, options, text",
    [
        ("Kh Qh 9h 2h 3c", {"canadian": True}, "Four-flush, king high"),
        ("Ah Kh Qh Jh Th", {}, "Royal flush"),
        ("7c 7d Kh 5s 2c", {}, "Pair of sevens"),
        ("Kc Kd 5h 5s 2c", {}, "Two pair, kings and fives"),
        ("9c 9d 9h 4s 4c", {}, "Full house, nines over fours"),
        ("Kh Qh 9h 2h", {"canadian": True}, "Four-flush, king high"),
        ("7c 7d", {}, "Pair of sevens"),
    ],
)
def test_readable_strings_from_the_contract(hand, options, text):
    assert str(ev(hand, **options)) == text


def test_every_category_has_a_readable_string():
    samples = {
        C.HIGH_CARD: ("Ac Kd 9h 4s 2c", {}),
        C.ONE_PAIR: ("7c 7d Kh 5s 2c", {}),
        C.FOUR_STRAIGHT: ("5c 6d 7h 8s Kc", {"canadian": True}),
        C.FOUR_FLUSH: ("Kh Qh 9h 2h 3c", {"canadian": True}),
        C.TWO_PAIR: ("Kc Kd 5h 5s 2c", {}),
        C.THREE_OF_A_KIND: ("8c 8d 8h Ks 2c", {}),
        C.STRAIGHT: ("5c 6d 7h 8s 9c", {}),
        C.FLUSH: ("Ah Jh 9h 5h 2h", {}),
        C.FULL_HOUSE: ("9c 9d 9h 4s 4c", {}),
        C.FOUR_OF_A_KIND: ("Jc Jd Jh Js 2c", {}),
        C.STRAIGHT_FLUSH: ("5h 6h 7h 8h 9h", {}),
        C.FIVE_OF_A_KIND: ("Tc Td Th Ts 2c", {"wild_ranks": ("2",)}),
    }
    texts = set()
    for category, (hand, options) in samples.items():
        value = ev(hand, **options)
        assert value.category == category
        text = str(value)
        assert text and text[0].isupper() and "Category" not in text and "HandValue" not in text
        texts.add(text)
    assert len(texts) == len(samples)  # every category reads differently
    assert str(ev("5h 6h 7h 8h 9h")) != "Royal flush"


def test_hand_value_rebuilds_from_its_score():
    for hand, options in [("Kh Qh 9h 2h 3c", {"canadian": True}), ("7c 7d Kh 5s 2c", {}),
                          ("Ah Kh Qh Jh Th", {}), ("9c 9d 9h Ac Ad", {"wild_ranks": ("9",)}),
                          ("Ah", {})]:
        value = ev(hand, **options)
        rebuilt = HandValue(int(value))
        assert rebuilt == value
        assert rebuilt.category == value.category
        assert rebuilt.ranks == value.ranks
        assert str(rebuilt) == str(value)
        assert isinstance(rebuilt.category, Category)
        assert hash(rebuilt) == hash(value)
    assert ev("Kd Qc 9h 4s 2c").ranks == ("K", "Q", "9", "4", "2")


def test_evaluate_accepts_strings_and_card_sequences_alike():
    text = "Ah Kd 7c 7s 2h"
    assert ev(text) == ev(parse_cards(text)) == ev(list(parse_cards(text))) == ev(text.replace(" ", ""))
    assert isinstance(ev(text), HandValue)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cards",
    ["", [], "Ah Kd Qc Jc Tc 9c 8c 7c", "Ah Ah Kd Qc Jc", "Ax Kd Qc Jc Tc", "Ah Kd 1c",
     ["Ah", "Kd", "Ah"]],
)
def test_bad_cards_raise_value_error(cards):
    with pytest.raises(ValueError):
        evaluate(cards)


def test_errors_name_the_offending_text():
    with pytest.raises(ValueError, match="Ax"):
        evaluate("Ax Kd Qc Jc Tc")
    with pytest.raises(ValueError, match="Ah"):
        evaluate("Ah Ah Kd Qc Jc")


def test_bad_input_raises_even_after_the_caches_are_warm():
    # the same configuration evaluated successfully first, so any fast path is primed
    evaluate("Ah Kd Qc Jc 9c", canadian=True)
    with pytest.raises(ValueError):
        evaluate(parse_cards("Ah Kd Qc Jc 9c") + (Card.from_str("Ah"),), canadian=True)
    with pytest.raises(ValueError):
        evaluate(list(parse_cards("Ah Kd Qc Jc 9c 8c 7c 6c")), canadian=True)
    with pytest.raises(ValueError):
        evaluate([], canadian=True)


def test_validation_does_not_depend_on_warm_caches():
    # The same call must be accepted or refused whether or not the evaluator has seen its
    # configuration before. A fresh interpreter gives the cold answer, then the warm one.
    import subprocess
    import sys
    from pathlib import Path

    script = """
import numpy as np
from envs.engine.hands import evaluate
inputs = {'bool': [True, 5, 9, 13, 17], 'float': [1.0, 5, 9, 13, 17],
          'numpy': np.array([1, 5, 9, 13, 17]), 'ints': [1, 5, 9, 13, 17]}
def outcome(cards):
    try:
        return str(evaluate(cards, canadian=True))
    except ValueError:
        return 'ValueError'
cold = {name: outcome(cards) for name, cards in inputs.items()}
evaluate('2d 3d 4d 5d 6d', canadian=True)
warm = {name: outcome(cards) for name, cards in inputs.items()}
print(repr((cold, warm)))
"""
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                            text=True, timeout=120, check=True)
    cold, warm = eval(result.stdout.strip().splitlines()[-1])
    assert cold["ints"] == warm["ints"] != "ValueError"
    for name in ("bool", "float", "numpy"):
        assert cold[name] == warm[name], f"{name}: cold {cold[name]!r}, warm {warm[name]!r}"
    # parse_cards refuses a bool and a float as a card: so must evaluate (contract: malformed
    # cards -> ValueError)
    assert warm["bool"] == warm["float"] == "ValueError"


@pytest.mark.parametrize("options", [{}, {"canadian": True}, {"wild_ranks": ("9",)},
                                     {"canadian": True, "wild_ranks": ("2", "3")}])
@pytest.mark.parametrize("size", [5, 6, 7])
def test_a_card_given_two_to_seven_times_is_refused_when_warm(size, options):
    # The fast path reads a repeated card from the code sum; five copies of one card even
    # carry into the next rank's digit (five deuces read as one three), so warm that entry too.
    rng = random.Random(size)
    for _ in range(200):  # warm the caches with valid hands of every kind
        evaluate([DECK[i] for i in rng.sample(range(52), rng.choice([1, 2, 3, 4, 5, 6, 7]))], **options)
    for warm in ("3c", "3c 2d", "4c", "3c 2d 2h"):
        evaluate(warm, **options)
    for card in (DECK[0], DECK[1], DECK[29], DECK[51]):
        others = [c for c in DECK if c >> 2 != card >> 2]
        for copies in range(2, size + 1):
            hand = [card] * copies + rng.sample(others, size - copies)
            for shaped in (hand, tuple(hand), hand[::-1]):
                with pytest.raises(ValueError, match="duplicate"):
                    evaluate(shaped, **options)


@pytest.mark.parametrize("options", [{}, {"canadian": True}, {"wild_ranks": ("9",)}])
@pytest.mark.parametrize("size", [5, 7])
def test_look_alikes_of_cards_are_refused_when_warm(size, options):
    # True, 1.0, an IntEnum member or a numpy float equal a Card (and hash alike) but are no
    # cards: parse_cards refuses them, so must a warm fast path, in any position.
    evaluate(list(DECK[:size]), **options)
    for fake in (True, False, 1.0, np.float64(3.0), Category.FLUSH):
        for position in range(size):
            hand = list(DECK[20:20 + size])
            hand[position] = fake
            for shaped in (hand, tuple(hand)):
                with pytest.raises(ValueError, match="malformed|card index"):
                    evaluate(shaped, **options)


@pytest.mark.parametrize("wild_ranks", [("X",), ("1",), ("10",), ("",), ("9", "Z"), (9,)])
def test_unknown_wild_rank_raises_value_error(wild_ranks):
    with pytest.raises(ValueError):
        evaluate("Ah Kd Qc Jc Tc", wild_ranks=wild_ranks)


# =============================================================================================
# (b) differential against the reference evaluator
# =============================================================================================


def random_hand(rng: random.Random, size: int, wild_ranks=()) -> list[int]:
    """A random hand of card indices: uniform, or biased towards one suit, a narrow band of
    ranks, the wild ranks, or one suit plus wild cards, where the tricky hands are."""
    mode = rng.randrange(5)
    if mode == 0:
        return rng.sample(range(52), size)
    if mode == 4 and wild_ranks:
        wild = [c for c in range(52) if RANKS[c >> 2] in wild_ranks]
        chosen = rng.sample(wild, rng.randint(1, min(2, size)))
        suit = rng.randrange(4)
        suited = [c for c in range(52) if c & 3 == suit and c not in wild]
        chosen += rng.sample(suited, rng.randint(0, size - len(chosen)))
        rest = [c for c in range(52) if c not in chosen]
        hand = chosen + rng.sample(rest, size - len(chosen))
        rng.shuffle(hand)
        return hand
    if mode in (1, 4):
        suit = rng.randrange(4)
        pool = [c for c in range(52) if c & 3 == suit]
    elif mode == 2:
        low = rng.randrange(-1, 9)  # -1: the band A-2-3-4-5
        band = {r % 13 for r in range(low, low + 6)}
        pool = [c for c in range(52) if c >> 2 in band]
    else:
        wild = [RANKS.index(r) for r in wild_ranks] or [rng.randrange(13)]
        pool = [c for c in range(52) if c >> 2 in wild]
    chosen = rng.sample(pool, rng.randint(0, min(size, len(pool))))
    rest = [c for c in range(52) if c not in chosen]
    hand = chosen + rng.sample(rest, size - len(chosen))
    rng.shuffle(hand)
    return hand


WILD_SETS = {"none": (), "nines": ("9",), "nines_queens": ("9", "Q")}


def check_against_reference(seed, sizes, count, **options):
    rng = random.Random(seed)
    failures = []
    for _ in range(count):
        size = rng.choice(sizes)
        cards = [DECK[i] for i in random_hand(rng, size, options.get("wild_ranks", ()))]
        got = int(evaluate(cards, **options))
        want = reference_evaluate(cards, **options)
        if got != want:
            failures.append(f"{format_cards(cards)}: got {describe(got)}, want {describe(want)}")
    assert not failures, (
        f"seed {seed}, options {options}: {len(failures)} of {count} differ, e.g.\n"
        + "\n".join(failures[:10])
    )


@pytest.mark.parametrize("canadian", [False, True], ids=["standard", "canadian"])
@pytest.mark.parametrize("wilds", list(WILD_SETS), ids=list(WILD_SETS))
def test_flush_candidates_agree_with_the_reference_when_seen_again(wilds, canadian):
    # The first hand of a rank multiset with a suit that may flush teaches the fast look-up
    # to send such hands to the second look; the hands after it must still be right.
    rng = random.Random(77 + canadian)
    options = {"canadian": canadian, "wild_ranks": WILD_SETS[wilds]}
    for _ in range(300):
        suit = rng.randrange(4)
        suited = rng.sample([c for c in DECK if c & 3 == suit], rng.choice([4, 5]))
        rest = rng.sample([c for c in DECK if c not in suited], rng.choice([5, 7]) - len(suited))
        want = reference_evaluate(suited + rest, **options)
        for _ in range(2):
            relabel = rng.sample(range(4), 4)  # same ranks, same suit counts, other suits
            hand = [DECK[(c & ~3) | relabel[c & 3]] for c in suited + rest]
            rng.shuffle(hand)
            assert int(evaluate(hand, **options)) == want, format_cards(hand)


@pytest.mark.parametrize("canadian", [False, True], ids=["standard", "canadian"])
@pytest.mark.parametrize("wilds", list(WILD_SETS), ids=list(WILD_SETS))
@pytest.mark.parametrize("size", [5, 6, 7])
def test_differential_full_hands(size, wilds, canadian):
    seed = size * 100 + len(WILD_SETS[wilds]) * 10 + canadian
    count = 800 if not WILD_SETS[wilds] else 400
    check_against_reference(seed, [size], count, canadian=canadian, wild_ranks=WILD_SETS[wilds])


@pytest.mark.parametrize("canadian", [False, True], ids=["standard", "canadian"])
@pytest.mark.parametrize("wilds", ["nines", "nines_queens"])
def test_differential_double_ace_flush(wilds, canadian):
    check_against_reference(1000 + canadian * 10 + len(WILD_SETS[wilds]), [5, 6, 7], 500,
                            canadian=canadian, wild_ranks=WILD_SETS[wilds], double_ace_flush=True)


@pytest.mark.parametrize("wilds", list(WILD_SETS), ids=list(WILD_SETS))
def test_differential_no_ace_low_four_straight(wilds):
    check_against_reference(2000 + len(WILD_SETS[wilds]), [4, 5, 6, 7], 500, canadian=True,
                            wild_ranks=WILD_SETS[wilds], ace_low_four_straight=False)


@pytest.mark.parametrize("double_ace_flush", [False, True], ids=["", "double_ace"])
@pytest.mark.parametrize("canadian", [False, True], ids=["standard", "canadian"])
@pytest.mark.parametrize("wilds", list(WILD_SETS), ids=list(WILD_SETS))
def test_differential_showing_hands(wilds, canadian, double_ace_flush):
    check_against_reference(3000 + len(WILD_SETS[wilds]) * 10 + canadian * 2 + double_ace_flush,
                            [1, 2, 3, 4], 500, canadian=canadian, wild_ranks=WILD_SETS[wilds],
                            double_ace_flush=double_ace_flush)


def test_differential_many_wild_ranks():
    # three or four wild ranks make five of a kind and multi-wild flushes common
    for seed, wilds in [(4001, ("2", "5", "K")), (4002, ("3", "7", "J", "A"))]:
        for canadian in (False, True):
            check_against_reference(seed + canadian, [1, 2, 3, 4, 5, 6, 7], 300,
                                    canadian=canadian, wild_ranks=wilds,
                                    double_ace_flush=bool(seed % 2))


# Exhaustive where it is cheap: every five-card hand of one suit with one wild rank, and every
# 4-card Canadian showing hand built from two suits.


def test_every_one_suit_five_card_hand_with_a_wild_matches_reference():
    hearts = [c for c in range(52) if c & 3 == 2]
    wild_card = Card.from_str("9c")
    for four in itertools.combinations([c for c in hearts if c >> 2 != 7], 4):
        cards = [DECK[i] for i in four] + [wild_card]
        for options in ({"wild_ranks": ("9",)}, {"wild_ranks": ("9",), "double_ace_flush": True},
                        {"wild_ranks": ("9",), "canadian": True}):
            got = int(evaluate(cards, **options))
            want = reference_evaluate(cards, **options)
            assert got == want, (
                f"{format_cards(cards)} {options}: got {describe(got)}, want {describe(want)}")


# =============================================================================================
# (c) against eval7 and treys on standard hands
# =============================================================================================

EVAL7_NAMES = {
    C.HIGH_CARD: "High Card", C.ONE_PAIR: "Pair", C.TWO_PAIR: "Two Pair",
    C.THREE_OF_A_KIND: "Trips", C.STRAIGHT: "Straight", C.FLUSH: "Flush",
    C.FULL_HOUSE: "Full House", C.FOUR_OF_A_KIND: "Quads", C.STRAIGHT_FLUSH: "Straight Flush",
}
TREYS_NAMES = {
    C.HIGH_CARD: {"High Card"}, C.ONE_PAIR: {"Pair"}, C.TWO_PAIR: {"Two Pair"},
    C.THREE_OF_A_KIND: {"Three of a Kind"}, C.STRAIGHT: {"Straight"}, C.FLUSH: {"Flush"},
    C.FULL_HOUSE: {"Full House"}, C.FOUR_OF_A_KIND: {"Four of a Kind"},
    C.STRAIGHT_FLUSH: {"Straight Flush", "Royal Flush"},
}
_EVAL7_CARDS = [eval7.Card(str(c)) for c in DECK]
_TREYS_CARDS = [treys.Card.new(str(c)) for c in DECK]
_TREYS = treys.Evaluator()


def eval7_score(cards) -> int:
    return eval7.evaluate([_EVAL7_CARDS[c] for c in cards])


def treys_score(cards) -> int:
    """treys ranks 1 (royal flush) .. 7462: negate so that higher is better."""
    return -_TREYS.evaluate([_TREYS_CARDS[c] for c in cards[:2]], [_TREYS_CARDS[c] for c in cards[2:]])


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


# Crafted hands of every standard category, so rare categories are always covered.
CATEGORY_SAMPLES = [h for h, _ in STANDARD_BOUNDARIES] + [
    "Kh Qh Jh Th 9h 2c 3d", "5s 6s 7s 8s 9s", "Tc Td Th Ts 9c 9d 9h", "Ac Ad Kh Ks Qc Qd 2h",
    "2c 3c 4c 5c 7c 8c 9c", "6c 7d 8h 9s Tc 2d 2h", "Ac 2d 3h 4s 5c Kd Kh",
]


@pytest.mark.parametrize("size", [5, 7])
def test_ordering_and_categories_agree_with_eval7_and_treys(size):
    rng = random.Random(5000 + size)
    hands = [tuple(random_hand(rng, size)) for _ in range(3000)]
    hands += [tuple(int(c) for c in parse_cards(h)) for h in CATEGORY_SAMPLES if len(h.split()) == size]
    ours = [int(evaluate([DECK[c] for c in h])) for h in hands]
    e7 = [eval7_score(h) for h in hands]
    tr = [treys_score(h) for h in hands]

    for h, o, a, b in zip(hands, ours, e7, tr):
        category = Category(o >> 20)
        assert EVAL7_NAMES[category] == eval7.handtype(a), format_cards(DECK[c] for c in h)
        assert _TREYS.class_to_string(_TREYS.get_rank_class(-b)) in TREYS_NAMES[category], (
            format_cards(DECK[c] for c in h))

    # Sorted by our value, each neighbouring pair must compare the same way in both libraries;
    # by transitivity every pair of hands then agrees.
    order = sorted(range(len(hands)), key=ours.__getitem__)
    for i, j in zip(order, order[1:]):
        for name, other in (("eval7", e7), ("treys", tr)):
            assert sign(ours[j] - ours[i]) == sign(other[j] - other[i]), (
                f"{name} disagrees: {format_cards(DECK[c] for c in hands[i])} vs "
                f"{format_cards(DECK[c] for c in hands[j])}")
    # and explicitly on random pairs
    for _ in range(3000):
        i, j = rng.randrange(len(hands)), rng.randrange(len(hands))
        assert sign(ours[i] - ours[j]) == sign(e7[i] - e7[j]) == sign(tr[i] - tr[j])


# =============================================================================================
# (d) the batch path equals the per-call path
# =============================================================================================


@pytest.mark.parametrize(
    "size, options",
    [
        (5, {}),
        (6, {}),
        (7, {}),
        (6, {"canadian": True}),
        (7, {"canadian": True}),
        (5, {"wild_ranks": ("9",)}),
        (7, {"wild_ranks": ("9", "Q")}),
        (6, {"wild_ranks": ("9", "Q"), "double_ace_flush": True}),
        (7, {"wild_ranks": ("9",), "double_ace_flush": True}),
        (7, {"canadian": True, "wild_ranks": ("9",)}),
        (5, {"canadian": True, "wild_ranks": ("9", "Q"), "ace_low_four_straight": False}),
    ],
)
def test_batch_equals_per_call(size, options):
    rng = random.Random(6000 + size)
    rows = np.array([random_hand(rng, size, options.get("wild_ranks", ())) for _ in range(1000)])
    expected = [int(evaluate([DECK[c] for c in row], **options)) for row in rows.tolist()]
    for dtype in (np.int64, np.int32, np.uint8):
        out = evaluate_batch(rows.astype(dtype), **options)
        assert out.shape == (len(rows),)
        assert out.dtype == np.int64
        mismatched = np.flatnonzero(out != np.array(expected))
        assert mismatched.size == 0, (
            f"{options} {dtype.__name__}: "
            + "; ".join(f"{format_cards(DECK[c] for c in rows[i])}: batch {describe(out[i])}, "
                        f"evaluate {describe(expected[i])}" for i in mismatched[:5]))


# =============================================================================================
# (e) properties
# =============================================================================================

hand_indices = st.lists(st.integers(min_value=0, max_value=51), min_size=1, max_size=7, unique=True)
options_strategy = st.fixed_dictionaries({
    "canadian": st.booleans(),
    "wild_ranks": st.sampled_from([(), ("9",), ("9", "Q"), ("A",), ("2", "T")]),
    "double_ace_flush": st.booleans(),
    "ace_low_four_straight": st.booleans(),
})


@settings(max_examples=300, deadline=None)
@given(hand_indices, st.permutations(range(4)), options_strategy)
def test_relabelling_suits_never_changes_the_value(indices, suit_map, options):
    relabelled = [(c & ~3) | suit_map[c & 3] for c in indices]
    assert evaluate([DECK[c] for c in indices], **options) == evaluate(
        [DECK[c] for c in relabelled], **options)


@settings(max_examples=200, deadline=None)
@given(hand_indices, st.randoms(use_true_random=False), options_strategy)
def test_card_order_never_changes_the_value(indices, rng, options):
    shuffled = list(indices)
    rng.shuffle(shuffled)
    assert evaluate([DECK[c] for c in indices], **options) == evaluate(
        [DECK[c] for c in shuffled], **options)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=51), min_size=6, max_size=7, unique=True),
       st.booleans(), st.booleans())
def test_adding_a_card_never_lowers_a_five_plus_card_hand(indices, canadian, with_wilds):
    options = {"canadian": canadian, "wild_ranks": ("9", "Q") if with_wilds else ()}
    smaller = [DECK[c] for c in indices[:-1]]
    bigger = [DECK[c] for c in indices]
    assert evaluate(bigger, **options) >= evaluate(smaller, **options)


@settings(max_examples=300, deadline=None)
@given(hand_indices, st.integers(min_value=0, max_value=12), st.booleans(), st.booleans())
def test_making_a_rank_wild_never_lowers_a_hand(indices, rank, canadian, double_ace_flush):
    # a wild card may always stand for itself (in a flush too: the five do not hold it twice)
    cards = [DECK[c] for c in indices]
    plain = evaluate(cards, canadian=canadian)
    wild = evaluate(cards, canadian=canadian, wild_ranks=(RANKS[rank],),
                    double_ace_flush=double_ace_flush)
    assert wild >= plain


@settings(max_examples=200, deadline=None)
@given(hand_indices, options_strategy)
def test_hand_value_is_consistent_with_its_score(indices, options):
    value = evaluate([DECK[c] for c in indices], **options)
    assert isinstance(value, HandValue)
    assert value.category == int(value) >> 20
    assert value.ranks == tuple(RANKS[r] for r in tie_break_ranks(int(value)))
    assert HandValue(int(value)) == value and str(HandValue(int(value))) == str(value)
    # fewer than five cards never make a straight, flush or full house; a Canadian hand needs
    # four cards and canadian=True; five of a kind needs five cards
    if len(indices) < 5:
        assert value.category not in (C.STRAIGHT, C.FLUSH, C.FULL_HOUSE, C.STRAIGHT_FLUSH,
                                      C.FIVE_OF_A_KIND)
    if len(indices) < 4 or not options["canadian"]:
        assert value.category not in (C.FOUR_FLUSH, C.FOUR_STRAIGHT)
    if not options["wild_ranks"]:
        assert value.category != C.FIVE_OF_A_KIND
