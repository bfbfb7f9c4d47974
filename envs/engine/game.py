"""One hand of stud poker as a state machine: deal, bet, follow the queen, show down, pay.

>>> g = Game("soko", 2, deck="Ah 2c Kd 3c", seed=0)   # seat 1: Ah down, Kd up; seat 0: 2c, 3c
>>> g.current_player, g.bring_in_seat, g.to_call     # seat 0 shows the lowest card: brings in
(0, 0, 2)
>>> g.can_fold(), g.raise_to_amounts()
(False, (4,))
>>> g.check_or_call()                                # posts the bring-in
>>> g.fold()                                         # seat 1 folds to the bring-in
>>> g.is_over, g.payoffs
(True, (1, -1))

The state is only changed by the three actions; each has a ``can_*`` twin that answers whether
it is legal now (those answers are exactly the environment's action mask). A refused action
raises ``ValueError`` with the reason and changes nothing. Dealing is automatic: antes and the
first street happen in the constructor, the next street as soon as a betting round closes, so
``current_player`` is always a seat that must act, or ``None`` once the hand is over.

Amounts given to :meth:`Game.bet_or_raise` are *raise-to* totals: the chips the player has put
in this betting round after the action.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.engine.cards import DECK, RANKS, Card, parse_cards
from envs.engine.events import (
    ACTION_KINDS,
    BET_KINDS,
    Action,
    Ante,
    Deal,
    End,
    Event,
    EventKind,
    Show,
    StreetStart,
    Wild,
    Win,
    WinReason,
)
from envs.engine.hands import HandValue
from envs.engine.rules import (
    NO_LOW_CHICAGO,
    NO_WILD,
    Betting,
    Order,
    Rules,
    check_players,
    deal_order,
    deal_sequence,
    get_rules,
    low_chicago_key,
    next_wild_rank,
    rules_evaluator,
    wild_ranks,
)

_DECK_OBJECTS = np.array(DECK, dtype=object)  # indexed by a deck order (card indices, top first)
_new = tuple.__new__  # builds a log record from all its fields at once (the hot paths use it)
_DEAL, _STREET = EventKind.DEAL, EventKind.STREET


def starting_stacks(rules: Rules, num_players: int, stacks=None) -> tuple[int, ...]:
    """Each seat's chips at the start of a hand: ``rules.stack`` each by default, else one
    whole number >= 1 per seat (a ValueError says which is wrong)."""
    if stacks is None:
        return (rules.stack,) * num_players
    stacks = tuple(stacks)
    if len(stacks) != num_players:
        raise ValueError(f"stacks gives {len(stacks)} stacks for {num_players} players")
    for i, s in enumerate(stacks):
        if type(s) is not int and not isinstance(s, np.integer) or s < 1:
            raise ValueError(f"stack of seat {i} must be a whole number of chips >= 1, not {s!r}")
    return tuple(int(s) for s in stacks)


def check_button(button, num_players: int) -> None:
    """A ValueError unless ``button`` is a seat (an int from 0 to ``num_players - 1``)."""
    if type(button) is not int or not 0 <= button < num_players:
        raise ValueError(f"button must be a seat from 0 to {num_players - 1}, not {button!r}")


def deck_order(rules: Rules, deck=None, seed=None) -> np.ndarray:
    """A hand's deck order as card indices (int64), top first: the cards of ``deck`` (text or a
    sequence, see :func:`~envs.engine.cards.parse_cards`) first, then the rest of ``rules.deck``
    shuffled by ``seed`` (an int, None or a ``numpy.random.Generator``; one ``permutation`` draw,
    none when ``deck`` is the whole deck). The compiled core deals the same hand from it.
    """
    full = rules.deck
    given = parse_cards(deck) if deck is not None else ()
    if len(full) != 52:
        outside = [str(c) for c in given if c.rank not in rules.deck_ranks]
        if outside:
            raise ValueError(f"card(s) {' '.join(outside)} are not in the {rules.name} deck "
                             f"(ranks {rules.deck_ranks})")
    if len(given) == len(full):
        return np.array(given, dtype=np.int64)  # the whole order is given: nothing to shuffle
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if not given:
        if len(full) == 52:
            return rng.permutation(52)
        return np.array(full, dtype=np.int64)[rng.permutation(len(full))]
    taken = set(given)
    rest = np.array([c for c in full if c not in taken], dtype=np.int64)
    return np.concatenate([np.array(given, dtype=np.int64), rest[rng.permutation(len(rest))]])


def build_deck(rules: Rules, deck=None, seed=None) -> list[Card]:
    """:func:`deck_order` as cards (what :class:`Game` deals from)."""
    return _DECK_OBJECTS[deck_order(rules, deck, seed)].tolist()


@dataclass(frozen=True, slots=True)
class PlayerView:
    """What one seat may know: its own face-down cards and everything public."""

    rules: Rules
    num_players: int
    seat: int
    hole_cards: tuple[Card, ...]
    up_cards: tuple[tuple[Card, ...], ...]
    folded: tuple[bool, ...]
    all_in: tuple[bool, ...]
    stacks: tuple[int, ...]
    committed: tuple[int, ...]
    total_committed: tuple[int, ...]
    pot: int
    street: int
    button: int
    current_player: int | None
    to_call: int
    raise_to_amounts: tuple[int, ...]
    raises_this_round: int
    wild_rank: str | None
    wild_ranks: tuple[str, ...]
    log: tuple[Event, ...]


class Game:
    """One hand of a stud game under ``rules`` (a :class:`Rules` value or a preset name).

    ``stacks``: chips per seat (default ``rules.stack`` each); ``button``: the dealer seat;
    ``deck``: cards top first (a string like ``"Ah Kd 5c"`` or a sequence), dealt before the
    rest of the deck, which ``seed`` (an int, None or a ``numpy.random.Generator``) shuffles.
    """

    def __init__(self, rules: Rules | str, num_players: int, *, stacks=None, button: int = 0,
                 deck=None, seed=None) -> None:
        self.rules = rules = get_rules(rules)
        check_players(rules, num_players)
        n = self.num_players = num_players
        stacks = starting_stacks(rules, n, stacks)
        check_button(button, n)
        self.button = button
        self._start_stacks = stacks
        self._stacks = list(stacks)
        self._deck = build_deck(rules, deck, seed)
        self._next_card = 0
        # Seats clockwise from the dealer's left: the order of dealing and of tie-breaks.
        self._order = deal_order(button, n)
        self._hole: list[list[Card]] = [[] for _ in range(n)]
        self._up: list[list[Card]] = [[] for _ in range(n)]
        self._folded = [False] * n
        self._total = [0] * n
        self._committed = [0] * n
        self.log: list[Event] = []
        self._seen_logs: list[list[Event]] = [[] for _ in range(n)]  # per seat, for view()
        self._wild = NO_WILD  # the followed wild rank index
        self._evaluate = rules_evaluator(rules, wild_ranks(rules, NO_WILD))
        self._queen_pending = False
        self.street = 0
        self.current_player: int | None = None
        self.payoffs: tuple[int, ...] | None = None
        self.bring_in_seat: int | None = None
        self.hand_values: dict[int, HandValue] = {}
        self.pots: list[tuple[int, tuple[int, ...]]] = []
        self._bet = 0
        self._level = 0
        self._full_level = 0
        self._last_increment = 0
        self._raises = 0
        self._acted_level: list[int | None] = [None] * n
        self._pending: set[int] = set()
        self._bring_in_due = False
        self._bounds_key: tuple[int, int] | None = None
        self._bounds: tuple[int, int] | None = None
        self._post_antes()
        self._deal_street(0)
        self._start_round()

    def __getstate__(self) -> dict:
        # Pickle and deepcopy: the evaluator (a closure) is rebuilt from the rules on loading.
        state = self.__dict__.copy()
        del state["_evaluate"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._evaluate = rules_evaluator(self.rules, self.wild_ranks)

    # ----------------------------------------------------------------------------------------
    # Public state

    @property
    def is_over(self) -> bool:
        return self.payoffs is not None

    @property
    def pot(self) -> int:
        """All chips put in this hand, antes included."""
        return sum(self._total)

    @property
    def stacks(self) -> tuple[int, ...]:
        """Chips each seat has behind (not yet put in); after the hand, including winnings."""
        return tuple(self._stacks)

    @property
    def starting_stacks(self) -> tuple[int, ...]:
        return self._start_stacks

    @property
    def committed(self) -> tuple[int, ...]:
        """Chips each seat has put in during the current betting round."""
        return tuple(self._committed)

    @property
    def total_committed(self) -> tuple[int, ...]:
        """Chips each seat has put in this hand, antes included."""
        return tuple(self._total)

    @property
    def folded(self) -> tuple[bool, ...]:
        return tuple(self._folded)

    @property
    def all_in(self) -> tuple[bool, ...]:
        """Seats still in the hand with no chips behind."""
        return tuple([not f and s == 0 for f, s in zip(self._folded, self._stacks)])

    @property
    def active(self) -> tuple[int, ...]:
        """Seats that have not folded."""
        return tuple(p for p in range(self.num_players) if not self._folded[p])

    @property
    def raises_this_round(self) -> int:
        """Full bets, completions and raises so far this round (the bring-in does not count)."""
        return self._raises

    @property
    def bet_size(self) -> int:
        """The bet size of the current betting round (after open-pair doubling)."""
        return self._bet

    @property
    def bet_level(self) -> int:
        """The most chips any seat has put in this round: what a call matches."""
        return self._level

    @property
    def wild_rank(self) -> str | None:
        """The rank that followed a face-up queen and is wild now, or None."""
        return RANKS[self._wild] if self._wild != NO_WILD else None

    @property
    def wild_ranks(self) -> tuple[str, ...]:
        """Every rank wild right now: the followed rank, and queens under ``queens_wild``."""
        return wild_ranks(self.rules, self._wild)

    @property
    def to_call(self) -> int:
        """Chips the current player puts in by :meth:`check_or_call` (the bring-in when due)."""
        p = self.current_player
        if p is None:
            return 0
        if self._bring_in_due:
            return min(self.rules.bring_in_amount, self._stacks[p])
        return min(self._level - self._committed[p], self._stacks[p])

    @property
    def deck(self) -> tuple[Card, ...]:
        """The whole deck order of this hand, top first (replaying it replays the deal)."""
        return tuple(self._deck)

    def hole_cards(self, seat: int) -> tuple[Card, ...]:
        """The seat's face-down cards (only that seat may see them before showdown)."""
        return tuple(self._hole[seat])

    def up_cards(self, seat: int) -> tuple[Card, ...]:
        """The seat's face-up cards, seen by everyone (folded seats' too)."""
        return tuple(self._up[seat])

    def showing_value(self, seat: int) -> HandValue:
        """The value of the seat's face-up cards with the wild cards in force now."""
        return self._evaluate(self._up[seat])

    def history(self) -> str:
        """The hand so far as readable text, one event a line."""
        head = (f"{self.rules.name}: {self.num_players} players, button seat {self.button}, "
                f"stacks {' '.join(map(str, self._start_stacks))}")
        return "\n".join([head] + [e.describe() for e in self.log])

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may see: its face-down cards, all face-up cards, the betting so far.

        Other seats' face-down cards are left out, also from the log, until they are shown.
        """
        if not 0 <= seat < self.num_players:
            raise ValueError(f"no seat {seat!r} at a {self.num_players}-player table")
        # The seat's copy of the log, extended from where it was last asked (the log only grows).
        seen = self._seen_logs[seat]
        for e in self.log[len(seen):]:
            seen.append(e if e.kind != _DEAL or e.up or e.seat == seat else e._replace(card=None))
        log = tuple(seen)
        me = self.current_player == seat
        return PlayerView(
            rules=self.rules, num_players=self.num_players, seat=seat, hole_cards=self.hole_cards(seat),
            up_cards=tuple(map(tuple, self._up)), folded=self.folded, all_in=self.all_in,
            stacks=self.stacks, committed=self.committed, total_committed=self.total_committed,
            pot=self.pot, street=self.street, button=self.button,
            current_player=self.current_player, to_call=self.to_call if me else 0,
            raise_to_amounts=self.raise_to_amounts() if me else (), raises_this_round=self._raises,
            wild_rank=self.wild_rank, wild_ranks=self.wild_ranks, log=log)

    # ----------------------------------------------------------------------------------------
    # Actions

    def play_logged(self, event: Event) -> None:
        """Play the action that ``event`` (from this hand's log or a replayed one's) records."""
        kind = event.kind
        if kind in BET_KINDS:
            self.bet_or_raise(event.round_total)
        elif kind == EventKind.FOLD:
            self.fold()
        elif kind in ACTION_KINDS:  # check, call, bring-in
            self.check_or_call()
        else:
            raise ValueError(f"a {kind!r} event records no player's action")

    def can_fold(self) -> bool:
        """Folding is offered when the player owes chips (never against a free check, never
        instead of the forced bring-in)."""
        p = self.current_player
        return p is not None and not self._bring_in_due and self._level > self._committed[p]

    def fold(self) -> None:
        if not self.can_fold():
            raise ValueError(self._refusal("fold"))
        p = self.current_player
        self._folded[p] = True
        self._pending.discard(p)
        self.log.append(_new(Action, (EventKind.FOLD, p, 0, self._committed[p], False)))
        self._after_action(p)

    def can_check_or_call(self) -> bool:
        return self.current_player is not None

    def check_or_call(self) -> None:
        """Check, call (all-in for less if short), or post the bring-in when that is due."""
        p = self.current_player
        if p is None:
            raise ValueError("the hand is over: no one can check or call")
        if self._bring_in_due:
            amount = self._put_in(p, self.rules.bring_in_amount - self._committed[p])
            self._bring_in_due = False
            self._level = max(self._level, self._committed[p])
            self._pending = {q for q in self._order if q != p and self._can_act(q)}
            self._acted_level[p] = self._full_level
            self.log.append(_new(Action, (EventKind.BRING_IN, p, amount, self._committed[p],
                                          self._stacks[p] == 0)))
            self._after_action(p)
            return
        owed = self._level - self._committed[p]
        if owed > 0:
            amount = self._put_in(p, owed)
            self.log.append(_new(Action, (EventKind.CALL, p, amount, self._committed[p],
                                          self._stacks[p] == 0)))
        else:
            self.log.append(_new(Action, (EventKind.CHECK, p, 0, self._committed[p], False)))
        self._pending.discard(p)
        self._acted_level[p] = self._full_level
        self._after_action(p)

    def can_bet_or_raise(self, amount: int | None = None) -> bool:
        """Whether the current player may bet or raise to ``amount`` (None: to the smallest size)."""
        return self._bet_refusal(amount) is None

    def bet_or_raise(self, amount: int | None = None) -> None:
        """Bet, complete the bring-in, or raise, to a raise-to total of ``amount`` chips this
        round (None: the smallest legal size)."""
        reason = self._bet_refusal(amount)
        if reason is not None:
            raise ValueError(reason)
        p = self.current_player
        low, _ = self._raise_bounds(p)
        if amount is None:
            amount = low
        amount = int(amount)
        min_to = self._min_raise_to()
        if self._bring_in_due or (self._full_level == 0 and self._level > 0):
            kind = EventKind.COMPLETE  # to a full bet over a bring-in (or a short all-in)
        elif self._level == 0:
            kind = EventKind.BET
        else:
            kind = EventKind.RAISE
        put = self._put_in(p, amount - self._committed[p])
        if amount >= min_to:  # a full bet or raise: it counts for the cap and reopens betting
            self._raises += 1
            self._last_increment = amount - self._full_level
            self._full_level = amount
        self._level = amount
        self._bring_in_due = False
        self._pending = {q for q in self._order if q != p and self._can_act(q)}
        self._acted_level[p] = self._full_level
        self.log.append(_new(Action, (kind, p, put, amount, self._stacks[p] == 0)))
        self._after_action(p)

    def raise_to_amounts(self) -> tuple[int, ...]:
        """The raise-to amounts offered to the current player, ascending; () if it cannot raise.

        Fixed limit offers its one size; spread limit the configured multiples of the round's
        bet; pot and no limit the configured pot fractions, the minimum, and the maximum
        (the pot, or all-in). A player short of a full raise is offered all-in only.
        """
        p = self.current_player
        if p is None:
            return ()
        bounds = self._raise_bounds(p)
        if bounds is None:
            return ()
        low, high = bounds
        if low == high:
            return (low,)
        r = self.rules
        if r.betting == Betting.SPREAD_LIMIT:
            base = self._level if self._full_level else 0
            wanted = [base + round(m * self._bet) for m in r.spread_sizes]
        else:  # pot_limit, no_limit
            pot_after_call = self.pot + self._level - self._committed[p]
            wanted = [self._level + round(f * pot_after_call) for f in r.pot_fractions]
        sizes = {low, high}
        sizes.update(min(max(w, low), high) for w in wanted)
        return tuple(sorted(sizes))

    # ----------------------------------------------------------------------------------------
    # Internals: refusals and bounds

    def _refusal(self, action: str) -> str:
        p = self.current_player
        if p is None:
            return f"the hand is over: no one can {action}"
        if self._bring_in_due:
            return (f"seat {p} must post the bring-in ({self.rules.bring_in_amount}) or complete; "
                    f"the bring-in is forced, so it cannot {action}")
        if action == "fold":
            return f"seat {p} can check for free, so folding is not offered"
        return f"seat {p} cannot {action} now"

    def _can_act(self, seat: int) -> bool:
        return not self._folded[seat] and self._stacks[seat] > 0

    def _min_raise_to(self) -> int:
        """The smallest full bet or raise: completing or betting the round's size, or raising
        by at least the bet size (and, outside fixed limit, the last full increment)."""
        if self._full_level == 0:
            return self._bet
        if self.rules.betting == Betting.FIXED_LIMIT:
            return self._level + self._bet
        return self._level + max(self._bet, self._last_increment)

    def _raise_bounds(self, p: int) -> tuple[int, int] | None:
        """(lowest, highest) raise-to totals for seat ``p``, or None if it may not raise.

        Asked several times per decision (mask, sizes, the action itself), so it is kept until
        the state changes; every change appends to the log, so the log length dates it."""
        key = (len(self.log), p)
        if key != self._bounds_key:
            self._bounds_key = key
            self._bounds = self._raise_bounds_now(p)
        return self._bounds

    def _someone_else_can_act(self, p: int) -> bool:
        folded, stacks = self._folded, self._stacks
        for q in range(self.num_players):
            if q != p and not folded[q] and stacks[q] > 0:
                return True
        return False

    def _raise_bounds_now(self, p: int) -> tuple[int, int] | None:
        r = self.rules
        all_in = self._committed[p] + self._stacks[p]
        if all_in <= self._level:
            return None
        if r.betting.is_limit and self._raises >= 1 + r.max_raises:
            return None
        acted = self._acted_level[p]
        if acted is not None and acted >= self._full_level:
            return None  # only an incomplete all-in raise since it acted: betting is not reopened
        if not self._someone_else_can_act(p):
            return None  # nobody left who could call a raise
        low = self._min_raise_to()
        if r.betting == Betting.FIXED_LIMIT:
            high = low
        elif r.betting == Betting.SPREAD_LIMIT:
            base = self._level if self._full_level else 0
            high = max(low, base + 2 * self._bet)
        elif r.betting == Betting.POT_LIMIT:
            high = max(low, self._level + self.pot + self._level - self._committed[p])
        else:
            high = all_in
        if all_in < low:
            return (all_in, all_in)
        return (low, min(high, all_in))

    def _bet_refusal(self, amount) -> str | None:
        p = self.current_player
        if p is None:
            return "the hand is over: no one can bet or raise"
        bounds = self._raise_bounds(p)
        if bounds is None:
            r = self.rules
            if self._committed[p] + self._stacks[p] <= self._level:
                return f"seat {p} has no chips beyond a call, so it cannot raise"
            if r.betting.is_limit and self._raises >= 1 + r.max_raises:
                return f"the betting is capped: a bet and {r.max_raises} raises have been made this round"
            if not self._someone_else_can_act(p):
                return f"every other player is all-in or folded, so seat {p} can only call or fold"
            return f"seat {p} already acted and faces only an incomplete all-in raise: it may call or fold"
        if amount is None:
            return None
        if isinstance(amount, bool) or not isinstance(amount, (int, np.integer)):
            return f"a bet or raise amount is a whole number of chips (raise-to total), not {amount!r}"
        low, high = bounds
        if self.rules.betting == Betting.FIXED_LIMIT and amount != low:
            return f"fixed limit: seat {p} may only bet or raise to {low}, not {amount}"
        if not low <= amount <= high:
            return f"seat {p} may bet or raise to {low}..{high} this round (raise-to totals), not {amount}"
        return None

    # ----------------------------------------------------------------------------------------
    # Internals: flow of the hand

    def _put_in(self, p: int, amount: int) -> int:
        amount = min(amount, self._stacks[p])
        self._stacks[p] -= amount
        self._committed[p] += amount
        self._total[p] += amount
        return amount

    def _post_antes(self) -> None:
        ante = self.rules.ante
        if not ante:
            return
        for p in self._order:
            put = min(ante, self._stacks[p])
            self._stacks[p] -= put
            self._total[p] += put
            self.log.append(_new(Ante, (EventKind.ANTE, p, put, self._stacks[p] == 0)))

    def _deal_street(self, street: int) -> None:
        r = self.rules
        follow = r.follow_the_queen
        deck = self._deck
        log = self.log
        seats = [p for p in self._order if not self._folded[p]]
        for p, face_up, _ in deal_sequence(r, seats, street=street):
            card = deck[self._next_card]
            self._next_card += 1
            if face_up:
                self._up[p].append(card)
                log.append(_new(Deal, (_DEAL, p, card, True)))
                if follow:
                    self._follow_the_queen(card)
            else:
                self._hole[p].append(card)
                log.append(_new(Deal, (_DEAL, p, card, False)))
        # The card after a queen must come in the same dealing round (docs/rules.md).
        if self._queen_pending:
            self._queen_pending = False

    def _follow_the_queen(self, card: Card) -> None:
        before = self._wild
        self._wild, self._queen_pending = next_wild_rank(before, self._queen_pending, card >> 2)
        if self._wild == before:
            return
        self._evaluate = rules_evaluator(self.rules, self.wild_ranks)
        if self._wild == NO_WILD:
            self.log.append(Wild(EventKind.WILD, None, RANKS[before]))
        else:
            self.log.append(Wild(EventKind.WILD, card.rank))

    def _start_round(self) -> None:
        """Open the betting round of ``self.street``, or deal on when nobody can bet."""
        r = self.rules
        n = self.num_players
        folded, stacks = self._folded, self._stacks
        while True:
            self._committed = [0] * n
            self._level = self._full_level = self._last_increment = self._raises = 0
            self._acted_level = [None] * n
            self._bring_in_due = False
            doubled = (r.open_pair_doubles and self.street == 1 and any(
                len(self._up[p]) >= 2 and self._up[p][0] >> 2 == self._up[p][1] >> 2
                for p in range(n) if not folded[p]))
            self._bet = r.bet_size(self.street, doubled=doubled)
            self.log.append(_new(StreetStart, (_STREET, self.street, self._bet)))
            can_act = [p for p in self._order if not folded[p] and stacks[p] > 0]
            if len(can_act) >= 2:
                break
            # At most one player can still act and nobody owes anything: no betting.
            if not self._next_street():
                return
        if self.street == 0 and r.bring_in is not None:
            up = self._up
            # The lowest (highest) first up card; cards order by rank, then suit (clubs low).
            if r.bring_in == Order.LOWEST:
                seat = min((p for p in self._order if not folded[p]), key=lambda p: min(up[p]))
            else:
                seat = max((p for p in self._order if not folded[p]), key=lambda p: max(up[p]))
            seat = self._next_who_can_act(seat)  # an all-in seat passes the duty on
            self.bring_in_seat = seat
            self._bring_in_due = True
        else:
            seat = self._next_who_can_act(self._first_by_showing())
        self._pending = set(can_act)
        self.current_player = seat

    def _first_by_showing(self) -> int:
        """The active seat with the lowest or highest showing hand; ties: first clockwise from
        the dealer's left."""
        best_seat, best = None, None
        lowest = self.rules.first_to_act == Order.LOWEST
        evaluate, up, folded = self._evaluate, self._up, self._folded
        for p in self._order:
            if folded[p]:
                continue
            value = evaluate(up[p])
            if best is None or (value < best if lowest else value > best):
                best_seat, best = p, value
        return best_seat

    def _next_who_can_act(self, seat: int) -> int:
        """``seat`` if it can act, else the first seat after it clockwise that can."""
        n = self.num_players
        for i in range(n):
            q = (seat + i) % n
            if self._can_act(q):
                return q
        raise AssertionError("no seat can act")

    def _after_action(self, p: int) -> None:
        n = self.num_players
        folded = self._folded
        if folded.count(False) == 1:
            self._award_uncontested(folded.index(False))
            return
        if not self._pending:
            if self._next_street():
                self._start_round()
            return
        for i in range(1, n + 1):
            q = (p + i) % n
            if q in self._pending:
                self.current_player = q
                return

    def _next_street(self) -> bool:
        """Deal the next street (True), or show down after the last betting round (False)."""
        if self.street + 1 >= self.rules.num_streets:
            self._showdown()
            return False
        self.street += 1
        self._deal_street(self.street)
        return True

    # ----------------------------------------------------------------------------------------
    # Internals: the end of the hand

    def _award_uncontested(self, winner: int) -> None:
        pot = self.pot
        self._stacks[winner] += pot
        self.pots = [(pot, (winner,))]
        self.log.append(Win(EventKind.WIN, winner, pot, 0, WinReason.UNCONTESTED))
        self._finish(f"seat {winner} wins uncontested")

    def _side_pots(self) -> list[tuple[int, list[int]]]:
        """(amount, contenders) of each pot, from the main pot up
        (docs/rules.md "Antes, stacks, all-in and side pots").

        A pot ends only where a contender's contribution ends (a seat still in that is all-in
        for less than the others): the next pot's contenders are the seats that paid more.
        Folded seats' chips are cut at the same levels and belong to the pot they fall in (the
        top pot for chips above every contender's). So each pot has other contenders than the
        one below it, and with nobody all-in there is exactly one pot.
        """
        totals = self._total
        in_hand = [p for p in self._order if not self._folded[p]]
        levels = sorted(set(totals[p] for p in in_hand if totals[p] > 0))
        pots: list[tuple[int, list[int]]] = []
        previous = 0
        for level in levels:
            amount = sum(min(t, level) - min(t, previous) for t in totals)
            pots.append((amount, [p for p in in_hand if totals[p] >= level]))
            previous = level
        if pots:  # folded seats' chips above the last contender's level are in the top pot
            pots[-1] = (pots[-1][0] + sum(max(t - previous, 0) for t in totals), pots[-1][1])
        return pots

    def _showdown(self) -> None:
        r = self.rules
        self.current_player = None
        values = {}
        for p in self._order:
            if self._folded[p]:
                continue
            cards = self._hole[p] + self._up[p]
            values[p] = self._evaluate(cards)
            self.log.append(Show(EventKind.SHOW, p, tuple(self._hole[p]), values[p]))
        self.hand_values = values
        # Low Chicago: the holder of the lowest face-down spade (ace lowest) among a pot's
        # contenders takes half of that pot.
        chicago_card = {}
        if r.low_chicago:
            for p in values:
                key = min(map(low_chicago_key, self._hole[p]), default=NO_LOW_CHICAGO)
                if key != NO_LOW_CHICAGO:
                    chicago_card[p] = key
        self.pots = []
        for index, (amount, eligible) in enumerate(self._side_pots()):
            if len(eligible) == 1:  # a bet nobody could match goes back to its owner
                self._stacks[eligible[0]] += amount
                self.log.append(Win(EventKind.WIN, eligible[0], amount, index, WinReason.UNCALLED))
                self.pots.append((amount, tuple(eligible)))
                continue
            best = max(values[p] for p in eligible)
            winners = [p for p in eligible if values[p] == best]
            holders = [p for p in eligible if p in chicago_card]
            high_share = amount
            if holders:
                holder = min(holders, key=chicago_card.__getitem__)
                if winners != [holder]:
                    chicago = amount // 2
                    high_share = amount - chicago  # the odd chip stays with the high half
                    self._stacks[holder] += chicago
                    self.log.append(Win(EventKind.WIN, holder, chicago, index, WinReason.LOW_CHICAGO))
            share, odd = divmod(high_share, len(winners))
            for i, p in enumerate(winners):  # winners are in order from the dealer's left
                won = share + (1 if i < odd else 0)
                self._stacks[p] += won
                self.log.append(Win(EventKind.WIN, p, won, index, WinReason.BEST_HAND, best))
            self.pots.append((amount, tuple(winners)))
        self._finish("showdown")

    def _finish(self, how: str) -> None:
        self.current_player = None
        self._pending = set()
        self.payoffs = tuple(s - s0 for s, s0 in zip(self._stacks, self._start_stacks))
        self.log.append(End(EventKind.END, how))
