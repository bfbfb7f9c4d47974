"""Cards: parsing formats, strict errors, Card properties and round trips (envs/engine/cards.py)."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.engine.cards import DECK, RANKS, SUITS, Card, format_cards, parse_cards

# --- parse_cards: the accepted formats ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Ah Kd 7c", "AhKd7c", "Ah,Kd,7c", "Ah, Kd, 7c", "  Ah   Kd 7c  ", "AhKd 7c"],
)
def test_parse_cards_text_formats(text):
    cards = parse_cards(text)
    assert [str(c) for c in cards] == ["Ah", "Kd", "7c"]
    assert all(isinstance(c, Card) for c in cards)
    assert isinstance(cards, tuple)


def test_parse_cards_sequences_of_names_ints_and_cards_agree():
    expected = parse_cards("Ah Kd 7c")
    assert parse_cards(["Ah", "Kd", "7c"]) == expected
    assert parse_cards([Card.from_str("Ah"), Card.from_str("Kd"), Card.from_str("7c")]) == expected
    # index = rank_index * 4 + suit_index: Ah = 12*4+2, Kd = 11*4+1, 7c = 5*4+0
    assert parse_cards([50, 45, 20]) == expected
    assert parse_cards(["Ah", 45, Card(20)]) == expected
    assert parse_cards(("Ah", "Kd", "7c")) == expected
    assert parse_cards(iter(["Ah", "Kd", "7c"])) == expected


def test_parse_cards_keeps_order_and_accepts_a_single_card():
    assert [str(c) for c in parse_cards("2c As Td")] == ["2c", "As", "Td"]
    assert parse_cards(Card.from_str("Qs")) == (Card.from_str("Qs"),)
    assert parse_cards("") == ()
    assert parse_cards([]) == ()


# --- parse_cards: errors name the offending text --------------------------------------------


@pytest.mark.parametrize(
    "text, named",
    [
        ("Ah Kx 7c", "Kx"),   # unknown suit
        ("Ah 1d 7c", "1d"),   # unknown rank
        ("Ah Kd 10c", "10c"),  # ten is T, and the chunk has an odd length
        ("Ah K", "K"),        # truncated
        ("AhKd7", "AhKd7"),   # odd-length run of cards
        ("Zz", "Zz"),
    ],
)
def test_parse_cards_malformed_text_raises_naming_it(text, named):
    with pytest.raises(ValueError) as info:
        parse_cards(text)
    assert named in str(info.value)


@pytest.mark.parametrize("bad", [["Ah", "Xx"], ["Ah", "A"], ["Ah", "Ahh"]])
def test_parse_cards_malformed_name_in_sequence_raises_naming_it(bad):
    with pytest.raises(ValueError) as info:
        parse_cards(bad)
    assert bad[1] in str(info.value)


@pytest.mark.parametrize("bad", [52, -1, 100, 3.0, None, True, b"Ah"])
def test_parse_cards_bad_items_raise(bad):
    with pytest.raises(ValueError) as info:
        parse_cards(["Ah", bad])
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)


@pytest.mark.parametrize(
    "cards", ["Ah Kd Ah", "AhAh", ["Ah", "Ah"], [50, "Ah"], [Card(50), Card(50)]]
)
def test_parse_cards_duplicate_raises_naming_the_card(cards):
    with pytest.raises(ValueError) as info:
        parse_cards(cards)
    message = str(info.value)
    assert "Ah" in message
    assert "duplicate" in message.lower()


# --- Card ----------------------------------------------------------------------------------


def test_card_properties():
    card = Card.from_str("Ts")
    assert card.rank == "T"
    assert card.suit == "s"
    assert card.rank_index == 8
    assert card.suit_index == 3
    assert card.index == 8 * 4 + 3 == int(card)
    assert str(card) == "Ts"
    assert repr(card) == "Ts"
    assert isinstance(card, int)


def test_card_extremes_and_suit_order():
    assert int(Card.from_str("2c")) == 0
    assert int(Card.from_str("As")) == 51
    # clubs < diamonds < hearts < spades (docs/rules.md bring-in tie order)
    assert Card.from_str("7c") < Card.from_str("7d") < Card.from_str("7h") < Card.from_str("7s")
    # rank first, then suit
    assert Card.from_str("7s") < Card.from_str("8c")
    assert RANKS == "23456789TJQKA"
    assert SUITS == "cdhs"


@pytest.mark.parametrize("bad", ["A", "Ahh", "1h", "Ax", "", "AH ", 5, None])
def test_card_from_str_rejects_malformed(bad):
    with pytest.raises(ValueError) as info:
        Card.from_str(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [-1, 52, 1.0, "5", True])
def test_card_constructor_rejects_non_indices(bad):
    with pytest.raises(ValueError):
        Card(bad)


def test_card_constructor_and_deck():
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert [int(c) for c in DECK] == list(range(52))
    assert [str(c) for c in DECK[:5]] == ["2c", "2d", "2h", "2s", "3c"]
    assert str(DECK[-1]) == "As"
    for i in range(52):
        assert Card(i) == i
        assert Card(i) is DECK[i]
        assert Card(Card(i)) is DECK[i]
        card = DECK[i]
        assert card.rank_index * 4 + card.suit_index == i
        assert card.rank == RANKS[card.rank_index]
        assert card.suit == SUITS[card.suit_index]
        assert Card.from_str(str(card)) is card


def test_card_pickle_and_copy_round_trip():
    card = Card.from_str("Qh")
    assert pickle.loads(pickle.dumps(card)) == card
    assert isinstance(pickle.loads(pickle.dumps(card)), Card)
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card


def test_format_cards():
    assert format_cards(parse_cards("AhKd7c")) == "Ah Kd 7c"
    assert format_cards([]) == ""


# --- round trips (hypothesis) --------------------------------------------------------------

hands = st.lists(st.integers(min_value=0, max_value=51), min_size=0, max_size=52, unique=True)


@settings(max_examples=200, deadline=None)
@given(hands)
def test_format_parse_round_trip(indices):
    cards = parse_cards(indices)
    assert [int(c) for c in cards] == indices
    text = format_cards(cards)
    assert parse_cards(text) == cards
    assert parse_cards(text.replace(" ", "")) == cards
    assert parse_cards([str(c) for c in cards]) == cards


@settings(max_examples=100, deadline=None)
@given(hands.filter(lambda h: len(h) >= 1), st.data())
def test_any_repeated_card_is_rejected(indices, data):
    repeat = data.draw(st.sampled_from(indices))
    position = data.draw(st.integers(min_value=0, max_value=len(indices)))
    with_duplicate = indices[:position] + [repeat] + indices[position:]
    with pytest.raises(ValueError) as info:
        parse_cards(with_duplicate)
    assert str(Card(repeat)) in str(info.value)
