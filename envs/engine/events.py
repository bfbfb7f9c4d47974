"""The hand's log: one typed record per event, each field meaning one thing.

Every record is a small immutable tuple whose first field is its :class:`EventKind`, so a log
reads as ``for e in game.log: if e.kind == EventKind.DEAL: ...`` and plain strings compare
equal to the kinds (``e.kind == "deal"``). Chips are whole chips; ``seat`` is a seat number.

==============  =========================================================================
record          fields
==============  =========================================================================
:class:`Ante`   ``seat``, ``amount`` (chips put in), ``all_in``
:class:`Deal`   ``seat``, ``card`` (``None`` in a view where the card is hidden), ``up``
:class:`Wild`   ``rank`` (the rank wild from now on, ``None``: nothing is), ``ended`` (the
                rank a face-up queen ended, or ``None``)
:class:`Action` ``kind`` (fold, check, call, bring_in, complete, bet, raise), ``seat``,
                ``amount`` (chips put in by it), ``round_total`` (the seat's chips in this
                betting round after it: for a complete, bet or raise its raise-to total),
                ``all_in``
:class:`StreetStart`  ``street`` (betting round index, 0 first), ``bet_size`` (its bet)
:class:`Show`   ``seat``, ``cards`` (the face-down cards shown), ``value``
:class:`Win`    ``seat``, ``amount`` (chips won), ``pot`` (0 main pot, then side pots),
                ``reason`` (:class:`WinReason`), ``value`` (the winning hand, or ``None``)
:class:`End`    ``how`` (why the hand ended, in words)
==============  =========================================================================
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from envs.engine.cards import Card, format_cards
from envs.engine.hands import HandValue


class EventKind(StrEnum):
    """What a log record records."""

    ANTE = "ante"
    DEAL = "deal"
    WILD = "wild"
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BRING_IN = "bring_in"
    COMPLETE = "complete"
    BET = "bet"
    RAISE = "raise"
    STREET = "street"
    SHOW = "show"
    WIN = "win"
    END = "end"


ACTION_KINDS = (EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BRING_IN,
                EventKind.COMPLETE, EventKind.BET, EventKind.RAISE)
"""The kinds of a player's action (:class:`Action`)."""
BET_KINDS = frozenset((EventKind.COMPLETE, EventKind.BET, EventKind.RAISE))
"""A full bet or raise (or an all-in short of one): ``round_total`` is its raise-to total."""


class WinReason(StrEnum):
    """Why a seat won chips from a pot."""

    BEST_HAND = "best hand"
    LOW_CHICAGO = "Low Chicago"
    UNCALLED = "uncalled"          # the only contender of the top pot: a bet nobody could match
    UNCONTESTED = "everyone else folded"


def _all_in(flag: bool) -> str:
    return " and is all-in" if flag else ""


class Ante(NamedTuple):
    kind: EventKind
    seat: int
    amount: int
    all_in: bool = False

    def describe(self) -> str:
        return f"Seat {self.seat} antes {self.amount}" + (" (all-in)" if self.all_in else "")


class Deal(NamedTuple):
    kind: EventKind
    seat: int
    card: Card | None
    up: bool

    def describe(self) -> str:
        card = "a card" if self.card is None else format_cards((self.card,))
        return f"Seat {self.seat} is dealt {card} {'up' if self.up else 'down'}"


class Wild(NamedTuple):
    kind: EventKind
    rank: str | None
    ended: str | None = None

    def describe(self) -> str:
        if self.rank is None:
            return f"The queen ends {self.ended}s wild: nothing is wild"
        return f"{self.rank}s are wild (followed the queen)"


class Action(NamedTuple):
    kind: EventKind
    seat: int
    amount: int = 0
    round_total: int = 0
    all_in: bool = False

    def describe(self) -> str:
        who, kind = f"Seat {self.seat}", self.kind
        if kind == EventKind.FOLD:
            return f"{who} folds"
        if kind == EventKind.CHECK:
            return f"{who} checks"
        if kind == EventKind.CALL:
            return f"{who} calls {self.amount}" + _all_in(self.all_in)
        if kind == EventKind.BRING_IN:
            return f"{who} brings in for {self.amount}" + _all_in(self.all_in)
        if kind == EventKind.COMPLETE:
            return f"{who} completes to {self.round_total}" + _all_in(self.all_in)
        if kind == EventKind.BET:
            return f"{who} bets {self.round_total}" + _all_in(self.all_in)
        if kind == EventKind.RAISE:
            return f"{who} raises to {self.round_total}" + _all_in(self.all_in)
        raise ValueError(f"{kind!r} is not an action")


class StreetStart(NamedTuple):
    kind: EventKind
    street: int
    bet_size: int

    def describe(self) -> str:
        return f"*** Betting round {self.street + 1} (bet size {self.bet_size}) ***"


class Show(NamedTuple):
    kind: EventKind
    seat: int
    cards: tuple[Card, ...]
    value: HandValue

    def describe(self) -> str:
        return f"Seat {self.seat} shows {format_cards(self.cards)}: {self.value}"


class Win(NamedTuple):
    kind: EventKind
    seat: int
    amount: int
    pot: int
    reason: WinReason
    value: HandValue | None = None

    def describe(self) -> str:
        where = "the main pot" if self.pot == 0 else f"side pot {self.pot}"
        why = self.value if self.reason == WinReason.BEST_HAND else self.reason.value
        return f"Seat {self.seat} wins {self.amount} from {where} ({why})"


class End(NamedTuple):
    kind: EventKind
    how: str

    def describe(self) -> str:
        return f"*** Hand over: {self.how} ***"


Event = Ante | Deal | Wild | Action | StreetStart | Show | Win | End
"""Any record of the log."""
