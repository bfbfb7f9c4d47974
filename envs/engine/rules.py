"""The rules of each game as data: one frozen :class:`Rules` value per preset.

Every option in ``docs/rules.md`` is a field here, so a variant is
``dataclasses.replace(RULES["soko"], bring_in="highest")``; nothing is a subclass.

>>> RULES["soko"].bet_size(0), RULES["soko"].bet_size(2)
(4, 8)
>>> RULES["follow_the_bitch"].replace(bring_in="lowest")
Traceback (most recent call last):
...
ValueError: follow_the_bitch: bring_in_amount must be between 1 and small_bet - 1 (3), not 0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from envs.engine.cards import DECK, RANKS, Card
from envs.engine.hands import evaluator


class Betting(StrEnum):
    """The betting structure (option ``betting``)."""

    FIXED_LIMIT = "fixed_limit"
    SPREAD_LIMIT = "spread_limit"
    POT_LIMIT = "pot_limit"
    NO_LIMIT = "no_limit"

    @property
    def is_limit(self) -> bool:
        """Fixed or spread limit: bet sizes come from the round's bet, raises are capped."""
        return self in (Betting.FIXED_LIMIT, Betting.SPREAD_LIMIT)


class Order(StrEnum):
    """Which card or showing hand is picked: options ``bring_in`` and ``first_to_act``."""

    LOWEST = "lowest"
    HIGHEST = "highest"


class BetSize(StrEnum):
    """The bet size of a street's betting round (``Street.bet``)."""

    SMALL = "small"
    BIG = "big"


BETTING_STRUCTURES = tuple(Betting)
UP = True
DOWN = False


def _as_enum(enum: type[StrEnum], value, what: str, *, none_ok: bool = False):
    """``value`` as a member of ``enum`` (plain strings are accepted), or a ValueError naming
    ``what`` and the allowed values."""
    try:
        return enum(value)
    except ValueError:
        allowed = [repr(m.value) for m in enum] + (["None"] if none_ok else [])
        raise ValueError(f"{what} must be {', '.join(allowed[:-1])} or {allowed[-1]}, "
                         f"not {value!r}") from None


@dataclass(frozen=True)
class Street:
    """One dealing round and the betting round after it.

    ``cards`` lists the passes in deal order, ``True`` for a face-up card (one card to every
    active player per pass); ``bet`` is ``"small"`` or ``"big"``: the bet size of the betting
    round that follows.
    """

    cards: tuple[bool, ...]
    bet: BetSize = BetSize.SMALL

    def __post_init__(self) -> None:
        if not self.cards:
            raise ValueError("a street deals at least one card")
        object.__setattr__(self, "bet", _as_enum(BetSize, self.bet, "a street's bet"))


@dataclass(frozen=True)
class Rules:
    """Everything that makes one stud game: deal schedule, ranking, stakes and options.

    Chip amounts are whole chips. Field names match ``docs/rules.md``.
    """

    name: str
    streets: tuple[Street, ...]
    min_players: int = 2
    max_players: int = 8
    # Hand ranking: Soko's four-flush and four-straight between one pair and two pair.
    canadian_hands: bool = False
    ace_low_four_straight: bool = True
    # Wild cards: the face-up card dealt after a face-up queen makes its rank wild.
    follow_the_queen: bool = False
    queens_wild: bool = False
    double_ace_flush: bool = False
    low_chicago: bool = False
    # Betting.
    betting: Betting = Betting.FIXED_LIMIT
    max_raises: int = 3
    ante: int = 1
    bring_in: Order | None = None
    bring_in_amount: int = 0
    small_bet: int = 4
    big_bet: int = 8
    first_to_act: Order = Order.HIGHEST
    open_pair_doubles: bool = False
    spread_sizes: tuple[float, ...] = (1.0, 1.5, 2.0)
    pot_fractions: tuple[float, ...] = (0.5, 1.0)
    starting_stack: int = 0  # 0 means 100 big bets (see ``stack``)
    # The deck: four suits of each of these ranks (a short deck for exactly solvable games).
    deck_ranks: str = RANKS

    def __post_init__(self) -> None:
        def bad(sentence: str) -> ValueError:
            return ValueError(f"{self.name}: {sentence}")

        if not isinstance(self.streets, tuple) or not all(isinstance(s, Street) for s in self.streets):
            raise bad("streets must be a tuple of Street")
        if not self.streets:
            raise bad("a game needs at least one street")
        # The choices are enums; plain strings (configs, keyword arguments) are accepted.
        try:
            object.__setattr__(self, "betting", _as_enum(Betting, self.betting, "betting"))
            if self.bring_in is not None:
                object.__setattr__(self, "bring_in", _as_enum(Order, self.bring_in, "bring_in", none_ok=True))
            object.__setattr__(self, "first_to_act", _as_enum(Order, self.first_to_act, "first_to_act"))
        except ValueError as e:
            raise bad(str(e)) from None
        for name in ("ante", "bring_in_amount", "small_bet", "big_bet", "max_raises", "starting_stack"):
            value = getattr(self, name)
            if type(value) is not int:
                raise bad(f"{name} must be a whole number of chips, not {value!r}")
            if value < 0:
                raise bad(f"{name} must not be negative, not {value}")
        if self.small_bet < 1 or self.big_bet < 1:
            raise bad("small_bet and big_bet must be at least 1 chip")
        if self.big_bet < self.small_bet:
            raise bad(f"big_bet ({self.big_bet}) must not be below small_bet ({self.small_bet})")
        if self.bring_in is None and self.bring_in_amount:
            raise bad(f"bring_in_amount is {self.bring_in_amount} but the game has no bring-in "
                      "(set bring_in='lowest' or 'highest', or bring_in_amount=0)")
        if self.bring_in is not None:
            if not self.streets[0].cards.count(UP):
                raise bad("a bring-in needs a face-up card on the first street")
            if not 0 < self.bring_in_amount < self.small_bet:
                raise bad(f"bring_in_amount must be between 1 and small_bet - 1 "
                          f"({self.small_bet - 1}), not {self.bring_in_amount}")
        if not 2 <= self.min_players <= self.max_players:
            raise bad(f"min_players ({self.min_players}) must be at least 2 and at most "
                      f"max_players ({self.max_players})")
        if not isinstance(self.deck_ranks, str) or not self.deck_ranks:
            raise bad(f"deck_ranks must be a string of ranks from {RANKS}, not {self.deck_ranks!r}")
        unknown = sorted(set(self.deck_ranks) - set(RANKS))
        if unknown:
            raise bad(f"deck_ranks {self.deck_ranks!r} has unknown rank(s) {''.join(unknown)}; "
                      f"ranks are {RANKS}")
        if len(set(self.deck_ranks)) != len(self.deck_ranks):
            raise bad(f"deck_ranks {self.deck_ranks!r} repeats a rank")
        # One spelling per deck (ranks low to high), so equal decks make equal rules.
        object.__setattr__(self, "deck_ranks", "".join(r for r in RANKS if r in self.deck_ranks))
        deck_size = 4 * len(self.deck_ranks)
        if self.max_players * self.cards_per_player > deck_size:
            raise bad(f"{self.max_players} players x {self.cards_per_player} cards needs more than "
                      f"the {deck_size}-card deck; lower max_players or add deck_ranks")
        if not self.spread_sizes or any(not 1.0 <= s <= 2.0 for s in self.spread_sizes):
            raise bad(f"spread_sizes are multiples of the round's bet from 1.0 to 2.0, "
                      f"not {self.spread_sizes}")
        if not self.pot_fractions or any(not 0 < f <= 1.0 for f in self.pot_fractions):
            raise bad(f"pot_fractions must lie in (0, 1], not {self.pot_fractions}")
        if self.open_pair_doubles and len(self.streets) < 2:
            raise bad("open_pair_doubles needs a second betting round")
        if self.queens_wild and not self.follow_the_queen:
            raise bad("queens_wild is part of the follow-the-queen wild cards (follow_the_queen=True)")
        if self.double_ace_flush and not (self.follow_the_queen or self.queens_wild):
            raise bad("double_ace_flush only matters with wild cards (follow_the_queen=True)")
        if self.low_chicago and not any(DOWN in s.cards for s in self.streets):
            raise bad("low_chicago needs face-down cards")

    @property
    def cards_per_player(self) -> int:
        return sum(len(s.cards) for s in self.streets)

    @property
    def deck(self) -> tuple[Card, ...]:
        """The cards of the deck in index order: every suit of each of ``deck_ranks``."""
        return deck_cards(self.deck_ranks)

    @property
    def stack(self) -> int:
        """Each seat's stack when a game is not given stacks: ``starting_stack``, or 100 big bets."""
        return self.starting_stack or 100 * self.big_bet

    @property
    def max_raise_to_amounts(self) -> int:
        """How many different bet/raise sizes can be offered at once (the env's size actions)."""
        if self.betting == Betting.FIXED_LIMIT:
            return 1
        if self.betting == Betting.SPREAD_LIMIT:
            return len(set(self.spread_sizes) | {1.0, 2.0})
        return len(set(self.pot_fractions)) + 2

    @property
    def num_streets(self) -> int:
        return len(self.streets)

    def bet_size(self, street: int, *, doubled: bool = False) -> int:
        """The fixed-limit bet of betting round ``street`` (0-based); ``doubled`` after an open pair."""
        if doubled or self.streets[street].bet == BetSize.BIG:
            return self.big_bet
        return self.small_bet

    def replace(self, **changes) -> Rules:
        """A variant: ``rules.replace(betting="no_limit")``; unknown fields are a clear error."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"unknown rules field(s) {', '.join(unknown)}; fields are "
                             f"{', '.join(f.name for f in dataclasses.fields(self))}")
        return dataclasses.replace(self, **changes)


_SOKO = Rules(
    name="soko",
    streets=(
        Street((DOWN, UP), BetSize.SMALL),
        Street((UP,), BetSize.SMALL),
        Street((UP,), BetSize.BIG),
        Street((UP,), BetSize.BIG),
    ),
    min_players=2,
    max_players=8,
    canadian_hands=True,
    bring_in=Order.LOWEST,
    bring_in_amount=2,
    first_to_act=Order.LOWEST,
    open_pair_doubles=True,
)

_FOLLOW_THE_BITCH = Rules(
    name="follow_the_bitch",
    streets=(
        Street((DOWN, DOWN, UP), BetSize.SMALL),
        Street((DOWN, UP), BetSize.BIG),
        Street((DOWN, UP), BetSize.BIG),
    ),
    min_players=2,
    max_players=7,
    follow_the_queen=True,
    first_to_act=Order.HIGHEST,
)

RULES: dict[str, Rules] = {
    "soko": _SOKO,
    "soko_nordic": dataclasses.replace(_SOKO, name="soko_nordic", bring_in=Order.HIGHEST,
                                       bring_in_amount=2 * _SOKO.ante, first_to_act=Order.HIGHEST),
    "follow_the_bitch": _FOLLOW_THE_BITCH,
    "follow_the_bitch_low_chicago": dataclasses.replace(
        _FOLLOW_THE_BITCH, name="follow_the_bitch_low_chicago", low_chicago=True),
}
"""The presets, keyed by name."""


_SOKO_MINI = dataclasses.replace(
    _SOKO,
    name="soko_mini",
    # Heads-up on 12 cards, 1 down + 1 up then 1 up: small enough to solve exactly (arena/exact.py).
    streets=(Street((DOWN, UP), BetSize.SMALL), Street((UP,), BetSize.BIG)),
    max_players=2,
    open_pair_doubles=False,  # round 2 is played at the big bet anyway
    deck_ranks="QKA",
)
RULES["soko_mini"] = _SOKO_MINI


def get_rules(rules: Rules | str, **overrides) -> Rules:
    """A preset by name (or a Rules value) with field overrides; clear errors for unknown names."""
    if isinstance(rules, str):
        try:
            rules = RULES[rules]
        except KeyError:
            raise ValueError(f"unknown game {rules!r}; presets are {', '.join(RULES)}") from None
    elif not isinstance(rules, Rules):
        raise ValueError(f"rules must be a Rules value or a preset name, not {rules!r}")
    return rules.replace(**overrides) if overrides else rules


def rules_label(rules: Rules) -> str:
    """``follow_the_bitch`` or ``follow_the_bitch (low_chicago=true)``: a preset and what differs.

    >>> rules_label(get_rules("soko", ante=2))
    'soko (ante=2)'
    """
    base = RULES.get(rules.name)
    if base is None or base == rules:
        return rules.name

    def shown(value) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    diff = [f"{f.name}={shown(getattr(rules, f.name))}" for f in dataclasses.fields(rules)
            if f.name != "name" and getattr(rules, f.name) != getattr(base, f.name)]
    return f"{rules.name} ({', '.join(diff)})"


def check_players(rules: Rules, num_players) -> None:
    """Refuse a table the rules do not seat: ``num_players`` must be a whole number (an ``int``)
    from ``rules.min_players`` to ``rules.max_players``. The engine, the envs, the batched core,
    tournaments and training configs all ask this one function.

    >>> check_players(RULES["follow_the_bitch"], 7)
    >>> check_players(RULES["follow_the_bitch"], 8)
    Traceback (most recent call last):
    ...
    ValueError: follow_the_bitch takes 2 to 7 players, not 8
    """
    if type(num_players) is not int or not rules.min_players <= num_players <= rules.max_players:
        raise ValueError(f"{rules.name} takes {rules.min_players} to {rules.max_players} players, "
                         f"not {num_players!r}")


# ---------------------------------------------------------------------------------------------
# Rule facts. Each is written once, here; the game, the observations, the agents and the luck
# correction call these functions. Cards are ints 0..51 (rank index * 4 + suit index); the
# functions that take cards or rank indices accept NumPy integer arrays too.

QUEEN = RANKS.index("Q")
"""The rank index of the queen, the card that wild ranks follow."""
NO_WILD = -1
"""The followed wild rank index when no rank is wild."""
SPADE = 3
"""The suit index of spades (clubs 0, diamonds 1, hearts 2, spades 3)."""
NO_LOW_CHICAGO = 13
"""The Low Chicago key of a card that cannot win it (not a spade): above every spade's key."""


def deck_cards(deck_ranks: str = RANKS) -> tuple[Card, ...]:
    """The cards of a deck of ``deck_ranks`` (every suit), in index order (docs/rules.md "Deck").

    >>> deck_cards("KA")
    (Kc, Kd, Kh, Ks, Ac, Ad, Ah, As)
    """
    return _DECKS.get(deck_ranks) or _DECKS.setdefault(
        deck_ranks, tuple(c for c in DECK if c.rank in deck_ranks))


_DECKS: dict[str, tuple[Card, ...]] = {RANKS: DECK}


def deck_mask(rules: Rules) -> np.ndarray:
    """bool (52,): True for the cards in ``rules``' deck (card-indexed arrays use it to leave the
    others out: they are never dealt)."""
    mask = np.zeros(52, dtype=bool)
    mask[list(rules.deck)] = True
    return mask


def deal_order(button: int, num_players: int) -> tuple[int, ...]:
    """Seats clockwise from the dealer's left (docs/rules.md "Seats and dealing"): the order each pass
    of cards is dealt in, and the order of every tie-break (first to act, odd chips).

    >>> deal_order(2, 4)
    (3, 0, 1, 2)
    """
    return tuple((button + 1 + i) % num_players for i in range(num_players))


def deal_sequence(rules: Rules, seats, *, held=None, street: int | None = None
                  ) -> list[tuple[int, bool, int]]:
    """``(seat, face_up, street)`` for every card still to come to ``seats`` (already in deal
    order, see :func:`deal_order`), in the order the engine deals them: street by street, pass
    by pass, one card to each seat per pass (docs/rules.md "Seats and dealing"), assuming nobody folds.
    ``held[seat]``: cards the seat holds already (default none): its first ``held[seat]``
    cards of the schedule are left out. ``street``: that street's cards only.

    >>> deal_sequence(RULES["soko"], (1, 0), held={1: 2, 0: 1})
    [(0, True, 0), (1, True, 1), (0, True, 1), (1, True, 2), (0, True, 2), (1, True, 3), (0, True, 3)]
    """
    out = []
    index = 0
    for t, passes in enumerate(rules.streets):
        if street is None or t == street:
            for q, face_up in enumerate(passes.cards):
                for s in seats:
                    if held is None or index + q >= held[s]:
                        out.append((s, face_up, t))
        index += len(passes.cards)
    return out


def next_wild_rank(wild, pending, rank):
    """Follow the queen (docs/rules.md "Wild cards, step by step"): the followed wild rank index and whether
    a queen waits for its follower, after a face-up card of rank index ``rank`` is dealt.

    A queen ends the wild rank at once (``NO_WILD``) and the next face-up card names the new
    one; a queen after a queen names nothing. The caller ends a waiting queen (``pending =
    False``) when its dealing round ends, and leaves face-down cards out. Works elementwise on
    NumPy arrays.

    >>> next_wild_rank(NO_WILD, False, QUEEN), next_wild_rank(NO_WILD, True, 7)
    ((-1, True), (7, False))
    """
    queen = rank == QUEEN
    if isinstance(queen, np.ndarray):
        return np.where(queen, NO_WILD, np.where(pending, rank, wild)), queen
    if queen:
        return NO_WILD, True
    return (rank, False) if pending else (wild, False)


def wild_ranks(rules: Rules, wild: int) -> tuple[str, ...]:
    """The ranks that are wild under ``rules`` when the followed wild rank index is ``wild``
    (``NO_WILD``: none): the followed rank, then the queens with option ``queens_wild``."""
    ranks = (RANKS[wild],) if wild != NO_WILD else ()
    return ranks + ("Q",) if rules.queens_wild else ranks


def hand_options(rules: Rules, wild_ranks: tuple[str, ...] = ()) -> dict:
    """The keyword options of ``evaluate``, ``evaluator`` and ``evaluate_batch`` that rank
    hands as ``rules`` does, with ``wild_ranks`` wild."""
    return dict(canadian=rules.canadian_hands, wild_ranks=wild_ranks,
                double_ace_flush=rules.double_ace_flush,
                ace_low_four_straight=rules.ace_low_four_straight)


def rules_evaluator(rules: Rules, wild_ranks: tuple[str, ...] = ()):
    """The hand evaluator of ``rules`` with ``wild_ranks`` wild (cached by ``evaluator``)."""
    return evaluator(**hand_options(rules, wild_ranks))


def low_chicago_key(card):
    """Low Chicago order of a face-down card (docs/rules.md "Low Chicago"): the ace is the lowest
    spade, so As 0, 2s 1, ..., Ks 12; any other card ``NO_LOW_CHICAGO``. The lowest key among
    the contenders' face-down cards takes the Chicago half. Works elementwise on NumPy arrays.

    >>> from envs.engine.cards import parse_cards
    >>> [low_chicago_key(c) for c in parse_cards("As 2s Ks Ah")]
    [0, 1, 12, 13]
    """
    key = ((card >> 2) + 1) % 13
    if isinstance(key, np.ndarray):
        return np.where(card & 3 == SPADE, key, NO_LOW_CHICAGO)
    return key if card & 3 == SPADE else NO_LOW_CHICAGO
