"""Playing cards: a small immutable card type and a strict parser.

A :class:`Card` is an ``int`` from 0 to 51, ``rank_index * 4 + suit_index``, so cards sort by
rank, then suit, and pack into numpy arrays as they are. Ranks run ``2..A`` (index 0..12);
suits run clubs, diamonds, hearts, spades (index 0..3), the order docs/rules.md uses to break
bring-in ties (spades highest).

>>> parse_cards("Ah Kd 7c")
(Ah, Kd, 7c)
>>> parse_cards("AhKd7c") == parse_cards(["Ah", "Kd", "7c"])
True
>>> Card.from_str("Ts").rank, Card.from_str("Ts").suit
('T', 's')
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"  # clubs < diamonds < hearts < spades (bring-in tie order)
SUIT_SYMBOLS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
RANK_NAMES = {
    "2": "deuce", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven",
    "8": "eight", "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace",
}
RANK_PLURALS = {r: (n + "es" if n == "six" else n + "s") for r, n in RANK_NAMES.items()}


class Card(int):
    """One card, an int 0..51 (``rank_index * 4 + suit_index``) with a readable ``str()``."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if isinstance(index, Card):
            return index
        if type(index) is not int or not 0 <= index < 52:
            raise ValueError(f"a card index must be an int from 0 to 51, not {index!r}")
        return _DECK[index]

    @classmethod
    def from_str(cls, text: str) -> Card:
        """The card named by two characters: rank (``2-9 T J Q K A``) and suit (``c d h s``)."""
        try:
            return _BY_NAME[text]
        except (KeyError, TypeError):
            pass
        if isinstance(text, str) and len(text) == 2:
            fixed = text[0].upper() + text[1].lower()
            if fixed in _BY_NAME:
                return _BY_NAME[fixed]
        raise ValueError(
            f"malformed card {text!r}: expected a rank from {RANKS} and a suit from {SUITS}, "
            "like 'Ah' or 'Tc'"
        )

    @property
    def rank_index(self) -> int:
        """0 for a deuce up to 12 for an ace."""
        return int(self) >> 2

    @property
    def suit_index(self) -> int:
        """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return int(self) & 3

    @property
    def rank(self) -> str:
        return RANKS[int(self) >> 2]

    @property
    def suit(self) -> str:
        return SUITS[int(self) & 3]

    @property
    def index(self) -> int:
        return int(self)

    def __str__(self) -> str:
        return _NAMES[int(self)]

    __repr__ = __str__

    def __reduce__(self):
        return (Card, (int(self),))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo) -> Card:
        return self


_NAMES = tuple(r + s for r in RANKS for s in SUITS)
_DECK: tuple[Card, ...] = tuple(int.__new__(Card, i) for i in range(52))
_BY_NAME = {name: card for name, card in zip(_NAMES, _DECK)}

DECK: tuple[Card, ...] = _DECK
"""All 52 cards in index order (2c 2d 2h 2s 3c ... As)."""


def _split_text(text: str) -> list[str]:
    """Cut ``"Ah Kd"``, ``"AhKd"`` or ``"Ah,Kd"`` into two-character card names."""
    names = []
    for chunk in text.replace(",", " ").split():
        if len(chunk) % 2:
            raise ValueError(
                f"malformed card text {chunk!r}: cards are two characters each, like 'Ah' or 'Tc'"
            )
        names.extend(chunk[i:i + 2] for i in range(0, len(chunk), 2))
    return names


def parse_cards(cards: str | Iterable[Card | str | int]) -> tuple[Card, ...]:
    """Cards from ``"Ah Kd 7c"``, ``"AhKd7c"`` or a sequence of cards, names or indices.

    Raises ``ValueError`` naming the offending text for a malformed or duplicate card.
    """
    if isinstance(cards, Card):
        items: Iterable = (cards,)
    elif isinstance(cards, str):
        items = _split_text(cards)
    else:
        items = cards
    out: list[Card] = []
    for item in items:
        if type(item) is int and 0 <= item < 52:  # the common case of a deck of indices
            out.append(DECK[item])
        elif isinstance(item, Card):
            out.append(item)
        elif isinstance(item, str):
            out.append(Card.from_str(item.strip()))
        elif isinstance(item, int) and not isinstance(item, bool):
            out.append(Card(item))
        elif hasattr(item, "__index__") and not isinstance(item, bool):  # numpy integers
            out.append(Card(operator.index(item)))
        else:
            raise ValueError(f"malformed card {item!r}: expected a card, a name like 'Ah', or 0..51")
    if len(set(out)) != len(out):
        seen: set[Card] = set()
        for card in out:
            if card in seen:
                raise ValueError(f"duplicate card {card} in {' '.join(map(str, out))}")
            seen.add(card)
    return tuple(out)


def format_cards(cards: Iterable[Card]) -> str:
    """``"Ah Kd 7c"``: the inverse of :func:`parse_cards`."""
    return " ".join(_NAMES[c] for c in cards)
