"""The observation encoder: one flat float32 vector laid out as named pieces.

The layout depends only on the rules (never on the table size: seats are padded to
``rules.max_players``), so one policy can sit at any table of a game. :func:`build_layout`
declares the pieces, OpenSpiel-observer style, and each declaration is the whole of a piece:
its place (the order of the list), size, meaning, scale and how it is written. The encoder
derives everything else from that list, so adding a piece is adding one entry.
``Layout.table()`` prints the index table shown in :mod:`envs.stud_env`.

A piece is written one of four ways (see :class:`Piece`):

- ``state=f``: ``f(game, current_player, raise_to_amounts)`` gives its values (per-seat pieces in
  absolute seat order, one value per seated player), rewritten whenever the game moves on,
  then multiplied by the piece's ``scale`` and clipped at 1;
- ``hand=f``: the same for values fixed for the whole hand, ``f(game)``, written once;
- ``observer=f``: ``f(view, encoder, game, seat, hole_cards)`` writes the observer's own
  values into ``view``, the piece's slice of the new observation;
- neither: folded in from the log by ``ObservationEncoder._catch_up`` (cards and the betting
  history; a new one of these needs a line there, since it reads new events).

``private=True`` pieces are zero unless the observer is to act; ``hidden=True`` (face-down
cards) are kept for every seat but only the owner's are gathered.

Conventions
-----------
- A card is one-hot at ``4 * rank + suit`` (ranks ``2..A`` = 0..12, suits ``c d h s`` = 0..3),
  the engine's card index.
- "Relative seat" ``r`` is seat ``(observer + r) % num_players``: slot 0 is the observer, slot 1
  the next seat clockwise, and so on; slots from ``num_players`` up are padding (all zero).
- Chip amounts are scaled to [0, 1] (clipped): stacks by the table's chips (the sum of the
  starting stacks); what one seat puts in (``to_call``, bet sizes, ``committed``,
  ``total_committed``) by the most one seat can put into a hand (its largest starting stack,
  or less under limit betting: ante + one bet and ``max_raises`` raises of the big bet in
  every round, twice that in spread limit); the pot by that times the number of players.
- Counts (raises this round, the betting history) are divided by ``1 + max_raises`` and
  clipped at 1.

Optional pieces
---------------
``build_layout(rules, features=...)`` (and ``ObservationEncoder(rules, features=...)``) appends
the pieces of :data:`FEATURES` asked for, after every other piece and in that order, so the
default layout never changes: ``hand_class`` (the category of the observer's own cards),
``showing_class`` (each relative seat's face-up category) and ``win_probability``
(:func:`envs.engine.equity.win_probability`, once per seat and log position; its Monte-Carlo
deals come from a counter-based generator keyed by the visible cards,
:func:`envs.engine.equity.sample_deals`, that the compiled core draws identically).

The hand-strength functions behind them are the encoder's argument (a :class:`HandStrength`):
pure Python by default (:data:`REFERENCE_STRENGTH`), or the compiled core's, the same values a
few hundred times faster (``envs.batched.CORE_STRENGTH``; ``envs.backends.make_encoder`` picks
it for the envs and agents). This module imports no compiled code.

>>> build_layout("soko", features=["win_probability", "hand_class"]).features
('hand_class', 'win_probability')

Only the observer's own face-down cards are encoded: the encoder keeps the table in absolute
seat order and gathers each observation through a per-observer index array that reaches no
other seat's face-down cards, so nothing in it depends on them.

>>> from envs.engine.game import Game
>>> enc = ObservationEncoder("soko")
>>> enc.layout.size
606
>>> g = Game("soko", 2, deck="Ah 2c Kd 3c", button=0, seed=0)
>>> obs = enc.encode(g, 1)
>>> view = enc.layout.unpack(obs)
>>> [i for i in range(52) if view["hole_cards"][i]]   # Ah = 4 * 12 + 2
[50]
>>> [i for i in range(52) if view["up_cards"][i]], [i - 52 for i in range(52, 104) if view["up_cards"][i]]
([45], [4])
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Any, Callable, NamedTuple

import numpy as np

from envs.actions import FIRST_BET, legal_mask, num_actions
from envs.engine.cards import RANKS
from envs.engine.equity import win_probability
from envs.engine.game import BET_KINDS, Game
from envs.engine.hands import Category, evaluator
from envs.engine.rules import (
    NO_LOW_CHICAGO,
    QUEEN,
    SPADE,
    Betting,
    Rules,
    get_rules,
    hand_options,
    low_chicago_key,
    rules_evaluator,
)

CALL_KINDS = frozenset(("call", "bring_in"))  # what the history counts as calls
LOG_PIECES = frozenset(("hole_cards", "up_cards", "chicago_up", "history"))
"""The pieces ``ObservationEncoder._catch_up`` writes from log events."""
SCALES = ("one", "pot", "seat", "table", "big_bet", "count")
"""What a state piece's chips or counts are divided by (see :func:`chip_scales`)."""

FEATURES = {
    "hand_class": "made-hand category of the observer's own cards (face-down and face-up, wild cards in "
                  "force)",
    "showing_class": "made-hand category of each relative seat's face-up cards (wild cards in force)",
    "win_probability": "observer's expected share of the pot at showdown against uniformly random unseen "
                       "cards, nobody folding",
}
"""The optional pieces (off by default; ``build_layout(rules, features=...)``), after every other
piece in this order. They put hand strength, which the network would otherwise have to learn
from rewards over one-hot cards, in the observation."""
CATEGORIES = len(Category)
WIN_SAMPLES = 64
"""Deals ``win_probability`` draws when the unseen cards can fall in more than ``WIN_EXACT`` ways."""
WIN_EXACT = 2000
"""``win_probability`` scores every way the unseen cards can fall when there are at most this many."""
WIN_CACHE = 20_000
"""Values an encoder keeps (by visible card state) before it starts its ``win_probability`` cache over."""

State = Callable[[Game, "int | None", "tuple[int, ...] | None"], Any]
Observer = Callable[[np.ndarray, "ObservationEncoder", Game, int, tuple], None]


class Piece(NamedTuple):
    """One named piece of the flat observation: ``obs[start:start + size]``.

    ``seats``: a per-relative-seat piece has ``seats`` (the game's maximum players) rows of
    ``size // seats`` values, seat-major; 0 for a piece about the table or the observer. The
    rest says how the piece is written (see the module docstring).
    """

    name: str
    start: int
    size: int
    doc: str
    seats: int = 0
    state: State | None = None
    hand: Callable[[Game], Any] | None = None
    scale: str = "one"
    private: bool = False
    observer: Observer | None = None
    hidden: bool = False

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def width(self) -> int:
        """Values per seat (the whole size for a piece that is not per seat)."""
        return self.size // self.seats if self.seats else self.size


def piece(name: str, size: int, doc: str, **how) -> Piece:
    """A piece declaration for :class:`Layout` (its start is given by its place in the list)."""
    return Piece(name, -1, size, doc, **how)


class Layout:
    """Named pieces over one flat vector, in order and without gaps.

    ``rules``: the rules :func:`build_layout` made it for; such a layout pickles as that call
    (its writers are local functions), any other as its pieces.
    """

    def __init__(self, pieces: list[Piece | tuple[str, int, str]], *, rules: Rules | None = None,
                 features: tuple[str, ...] = ()) -> None:
        self.rules = rules
        self.features = tuple(features)
        out: list[Piece] = []
        start = 0
        for p in pieces:
            p = piece(*p) if not isinstance(p, Piece) else p
            if p.seats and p.size % p.seats:
                raise ValueError(f"piece {p.name!r}: size {p.size} is not a whole number of rows for "
                                 f"{p.seats} seats")
            if p.scale not in SCALES:
                raise ValueError(f"piece {p.name!r}: scale {p.scale!r} is not one of {', '.join(SCALES)}")
            if (p.state is not None) + (p.hand is not None) + (p.observer is not None) > 1:
                raise ValueError(f"piece {p.name!r}: give one of state=, hand= or observer=")
            out.append(p._replace(start=start))
            start += p.size
        self.pieces: tuple[Piece, ...] = tuple(out)
        self.size = start
        self._by_name = {p.name: p for p in self.pieces}
        if len(self._by_name) != len(self.pieces):
            raise ValueError("observation piece names must be unique")

    def __reduce__(self):
        if self.rules is not None:
            return build_layout, (self.rules, self.features)
        return Layout, (list(self.pieces),)

    def __getitem__(self, name: str) -> Piece:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no observation piece {name!r}; pieces are {', '.join(self._by_name)}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.pieces)

    def slice(self, name: str) -> slice:
        p = self[name]
        return slice(p.start, p.stop)

    def unpack(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Views of ``obs`` by piece name (for tests, debugging and hand-written agents)."""
        if obs.shape[-1] != self.size:
            raise ValueError(f"observation has {obs.shape[-1]} values, the layout {self.size}")
        return {p.name: obs[..., p.start:p.stop] for p in self.pieces}

    def table(self) -> str:
        """The index table as Markdown (the one the env docstring shows)."""
        lines = ["| Index | Piece | Size | Meaning |", "|---|---|---|---|"]
        for p in self.pieces:
            where = str(p.start) if p.size == 1 else f"{p.start}-{p.stop - 1}"
            lines.append(f"| {where} | `{p.name}` | {p.size} | {p.doc} |")
        return "\n".join(lines)


@functools.cache
def one_hot(size: int, index: int | None) -> tuple[float, ...]:
    """``size`` floats, 1.0 at ``index`` (all zeros for None)."""
    return tuple(float(i == index) for i in range(size))


def _pot_odds(game: Game, current: int | None, sizes) -> tuple[float]:
    owed = game.to_call
    return (owed / (game.pot + owed) if owed else 0.0,)


def _write_wild_cards(view: np.ndarray, encoder: ObservationEncoder, game: Game, seat: int, hole) -> None:
    """The visible wild cards: every face-up card of a wild rank and the observer's own
    face-down ones."""
    wild = game.wild_rank
    ranks = [] if wild is None else [RANKS.index(wild)]
    if game.rules.queens_wild:
        ranks.append(QUEEN)
    up_any = encoder._up_any
    for k in ranks:
        view[4 * k:4 * k + 4] = up_any[4 * k:4 * k + 4]
        for c in hole:
            if c >> 2 == k:
                view[c] = 1.0


def _write_chicago_hole(view: np.ndarray, encoder: ObservationEncoder, game: Game, seat: int, hole) -> None:
    view[min(map(low_chicago_key, hole), default=NO_LOW_CHICAGO)] = 1.0


def check_features(features) -> tuple[str, ...]:
    """The optional pieces asked for, in layout order; an unknown name is a one-line ValueError.

    >>> check_features(["win_probability", "hand_class"])
    ('hand_class', 'win_probability')
    >>> check_features(["hand_strength"])  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: unknown observation feature 'hand_strength'; the features are hand_class, showing_class,
    win_probability
    """
    if features is None:
        return ()
    if isinstance(features, str):
        features = (features,)
    names = list(features)
    for name in names:
        if name not in FEATURES:
            raise ValueError(f"unknown observation feature {name!r}; the features are {', '.join(FEATURES)}")
    return tuple(name for name in FEATURES if name in names)


def _category(value):
    return value >> 20  # HandValue: category << 20 plus tie-break ranks (ints or an int array)


def _write_hand_class(view: np.ndarray, encoder: ObservationEncoder, game: Game, seat: int, hole) -> None:
    _one_hot_class(view, rules_evaluator(game.rules, game.wild_ranks), hole, game.up_cards(seat))


def _one_hot_class(view: np.ndarray, evaluate, hole, up) -> None:
    if hole or up:
        view[_category(int(evaluate((*hole, *up))))] = 1.0


def _hand_classes(encoder: ObservationEncoder, game: Game, seat: int, holes) -> np.ndarray:
    """The ``hand_class`` piece of ``seat`` holding each face-down card list of ``holes``: one
    ``encoder.strength.evaluate_rows`` call when the lists are as long as each other."""
    out = np.zeros((len(holes), CATEGORIES), dtype=np.float32)
    up = game.up_cards(seat)
    if len({len(hole) for hole in holes}) > 1:
        evaluate = rules_evaluator(game.rules, game.wild_ranks)
        for row, hole in zip(out, holes):
            _one_hot_class(row, evaluate, hole, up)
        return out
    k = len(holes[0]) if holes else 0
    rows = np.empty((len(holes), k + len(up)), dtype=np.int64)
    rows[:, :k] = holes
    rows[:, k:] = up
    if rows.size:
        values = encoder.strength.evaluate_rows(rows, **hand_options(game.rules, game.wild_ranks))
        out[np.arange(len(holes)), _category(values)] = 1.0
    return out


def _showing_classes(game: Game, current, sizes) -> tuple[float, ...]:
    values: tuple[float, ...] = ()
    for seat in range(game.num_players):
        up = game.up_cards(seat)
        values += one_hot(CATEGORIES, _category(int(game.showing_value(seat))) if up else None)
    return values


def _write_win_probability(view: np.ndarray, encoder: ObservationEncoder, game: Game, seat: int,
                           hole) -> None:
    # At the end of the hand it is the share the seat won (every card that decided it is known;
    # no policy acts on it, so no simulation is spent on it).
    if game.is_over:
        view[0] = (game.payoffs[seat] + game.total_committed[seat]) / game.pot if game.pot else 0.0
        return
    view[0] = win_probabilities(encoder, game, seat, [hole])[0]


def win_probabilities(encoder: ObservationEncoder, game: Game, seat: int, holes) -> list[float]:
    """The ``win_probability`` piece of ``seat`` holding each face-down card list of ``holes``
    (the hand not over), as ``encoder`` writes it: local best response asks it for every card
    the other player may hold, and ``encoder.strength`` computes the ones not cached in one call."""
    # One computation per visible card state (what the value depends on: the seat, its
    # face-down cards, the street, the button, who folded and every face-up card), kept across
    # hands: the env and a tournament may encode one spot more than once, and local best
    # response asks the same cards again after each betting action it considers. Kept by the
    # public part of that state, then by face-down cards (one lookup of the public part for
    # local best response's 40-odd cards).
    public = (seat, game.street, game.button, game.folded,
              tuple(game.up_cards(s) for s in range(game.num_players)))
    cache = encoder._win_cache
    known = cache.get(public)
    if known is None:
        if encoder._win_cached > WIN_CACHE:
            cache.clear()
            encoder._win_cached = 0
        known = cache[public] = {}
    keys = [tuple(hole) for hole in holes]
    out = [known.get(key) for key in keys]
    missing = [i for i, value in enumerate(out) if value is None]
    if not missing:
        return out
    values = encoder.strength.win_probabilities(game, seat, [holes[i] for i in missing], samples=WIN_SAMPLES,
                                                max_exact=WIN_EXACT)
    encoder._win_cached += len(missing)
    for i, value in zip(missing, values):
        out[i] = known[keys[i]] = value
    return out


def _win_probability_rows(encoder: ObservationEncoder, game: Game, seat: int, holes) -> np.ndarray:
    return np.array(win_probabilities(encoder, game, seat, holes), dtype=np.float32)[:, None]


def reference_win_probabilities(game: Game, seat: int, holes, *, samples: int = WIN_SAMPLES,
                                max_exact: int = WIN_EXACT) -> list[float]:
    """:func:`envs.engine.equity.win_probability` of ``seat`` holding each face-down card list of
    ``holes`` in turn (as long as its real one; the hand not over), in pure Python."""
    view = game.view(seat)
    return [win_probability(view if tuple(hole) == view.hole_cards else
                            dataclasses.replace(view, hole_cards=tuple(hole)),
                            samples=samples, max_exact=max_exact) for hole in holes]


def reference_evaluate_rows(cards, **options) -> np.ndarray:
    """The hand value (``envs.engine.hands.evaluator(**options)``) of each row of an (N, k)
    integer array of card ids, 1 <= k <= 7, as int64 (N,), in pure Python."""
    evaluate = evaluator(**options)
    return np.array([int(evaluate(row)) for row in np.asarray(cards)], dtype=np.int64)


class HandStrength(NamedTuple):
    """The hand-strength functions an encoder values its optional pieces with: the encoder's
    argument, so that it needs no compiled code. :data:`REFERENCE_STRENGTH` is pure Python;
    ``envs.batched.CORE_STRENGTH`` gives the same values from the compiled core
    (``tests/test_core_features.py`` holds the two equal)."""

    win_probabilities: Callable[..., list[float]]
    """``f(game, seat, holes, *, samples, max_exact)``: as :func:`reference_win_probabilities`."""
    evaluate_rows: Callable[..., np.ndarray]
    """``f(cards, **hand_options)``: as :func:`reference_evaluate_rows`."""


REFERENCE_STRENGTH = HandStrength(reference_win_probabilities, reference_evaluate_rows)
"""The pure-Python hand strength (the default of :class:`ObservationEncoder`)."""

OBSERVER_BATCHES = {"hand_class": _hand_classes, "win_probability": _win_probability_rows}
"""Observer pieces with a form for many face-down card lists at once: ``f(encoder, game, seat,
holes)`` gives one row of the piece per list of ``holes`` (the hand not over), the values its
observer writes for each (local best response asks every card the other player may hold)."""


def build_layout(rules: Rules | str, features=()) -> Layout:
    """The observation layout of a game: pieces present only when the rules have them, then the
    optional ``features`` (names of :data:`FEATURES`; none by default)."""
    r = get_rules(rules)
    features = check_features(features)
    n, rounds, sizes = r.max_players, r.num_streets, num_actions(r) - FIRST_BET
    no_sizes = (0,) * sizes
    wild_slots = {rank: one_hot(14, RANKS.index(rank)) for rank in RANKS} | {None: one_hot(14, 13)}
    queens_wild = (float(r.queens_wild),)
    pieces = [
        piece("hole_cards", 52, "own face-down cards (one-hot by card)", hidden=True),
        piece("up_cards", n * 52, f"face-up cards of each relative seat ({n} x 52, seat-major)", seats=n),
    ]
    if r.follow_the_queen:
        pieces += [
            piece("wild_rank", 14, "wild rank in force (2..A), last slot: nothing is wild",
                  state=lambda g, p, s: wild_slots[g.wild_rank]),
            piece("queens_wild", 1, "1 when queens are wild (option queens_wild)",
                  hand=lambda g: queens_wild),
            piece("wild_cards", 52, "visible cards (own face-down and all face-up) that are wild now",
                  observer=_write_wild_cards),
        ]
    if r.low_chicago:
        pieces += [
            piece("chicago_hole", 14, "lowest face-down spade held (A, 2, ..., K), last slot: none",
                  observer=_write_chicago_hole),
            piece("chicago_up", 13, "spades seen face up (A, 2, ..., K): none of them can win Low Chicago"),
        ]
    pieces += [
        piece("pot", 1, "chips in the pot (antes included)", state=lambda g, p, s: (g.pot,), scale="pot"),
        piece("to_call", 1, "chips the observer must add to call (0 when not its turn)",
              state=lambda g, p, s: (g.to_call,), scale="seat", private=True),
        piece("pot_odds", 1, "to_call / (pot + to_call)", state=_pot_odds, private=True),
        piece("raise_to_amounts", sizes, f"raise-to total of action id {FIRST_BET}+i when offered, else 0",
              state=lambda g, p, s: no_sizes if s is None else s + no_sizes[len(s):], scale="seat",
              private=True),
        piece("bet_size", 1, "this round's bet size / big bet", state=lambda g, p, s: (g.bet_size,),
              scale="big_bet"),
        piece("raises", 1, "bets and raises made this round / (1 + max_raises)",
              state=lambda g, p, s: (g.raises_this_round,), scale="count"),
        piece("street", rounds, "betting round, one-hot", state=lambda g, p, s: one_hot(rounds, g.street)),
        piece("seated", n, "relative seat is at the table (0: padding)", seats=n,
              hand=lambda g: one_hot(1, 0) * g.num_players),
        piece("to_act", n, "relative seat is to act", seats=n,
              state=lambda g, p, s: one_hot(g.num_players, p)),
        piece("button", n, "relative seat has the button", seats=n,
              hand=lambda g: one_hot(g.num_players, g.button)),
        piece("stack", n, "chips behind, per relative seat", seats=n, state=lambda g, p, s: g.stacks,
              scale="table"),
        piece("committed", n, "chips put in this betting round, per relative seat", seats=n,
              state=lambda g, p, s: g.committed, scale="seat"),
        piece("total_committed", n, "chips put in this hand (antes included), per relative seat", seats=n,
              state=lambda g, p, s: g.total_committed, scale="seat"),
        piece("folded", n, "relative seat has folded", seats=n, state=lambda g, p, s: g.folded),
        piece("all_in", n, "relative seat is all-in", seats=n, state=lambda g, p, s: g.all_in),
        piece("history", n * rounds * 2, f"per relative seat and street ({n} x {rounds} x 2, seat-major): "
                                         "bets/completions/raises, calls (bring-in included)", seats=n),
    ]
    optional = {
        "hand_class": piece("hand_class", CATEGORIES, f"optional: {FEATURES['hand_class']}, one-hot "
                            "(high card, pair, four-straight, four-flush, two pair, trips, straight, flush, "
                            "full house, quads, straight flush, five of a kind)", observer=_write_hand_class),
        "showing_class": piece("showing_class", n * CATEGORIES, f"optional: {FEATURES['showing_class']}, "
                               f"one-hot ({n} x {CATEGORIES}, seat-major)", seats=n, state=_showing_classes),
        "win_probability": piece("win_probability", 1, f"optional: {FEATURES['win_probability']} (exact "
                                 f"on the last street, else {WIN_SAMPLES} seeded deals; 0 after folding; "
                                 "at the end, the share won)",
                                 observer=_write_win_probability),
    }
    pieces += [optional[name] for name in features]
    return Layout(pieces, rules=r, features=features)


def seat_chip_bound(rules: Rules, stacks) -> int:
    """The most chips one seat can put into a hand: its stack, or less under limit betting."""
    most = max(stacks)
    if rules.betting.is_limit:
        per_round = ((1 + rules.max_raises) * rules.big_bet
                     * (2 if rules.betting == Betting.SPREAD_LIMIT else 1))
        most = min(most, rules.ante + rules.num_streets * per_round)
    return max(most, 1)


def chip_scales(rules: Rules, stacks) -> dict[str, float]:
    """The factor of each scale name for a hand with these starting stacks (see the module
    docstring): ``pot`` the pot's most, ``seat`` one seat's most, ``table`` the table's chips,
    ``big_bet`` the big bet, ``count`` ``1 + max_raises``; ``one`` leaves a value as it is."""
    seat = seat_chip_bound(rules, stacks)
    return {"one": 1.0, "pot": 1.0 / min(len(stacks) * seat, sum(stacks)), "seat": 1.0 / seat,
            "table": 1.0 / sum(stacks), "big_bet": 1.0 / rules.big_bet, "count": 1.0 / (1 + rules.max_raises)}


class ObservationEncoder:
    """Encodes a :class:`Game` for one seat into the flat layout of its rules.

    The encoder follows one game at a time in a *table* array that holds each piece the
    layout names for the table as it is: a per-seat or hidden piece as one row per seat in
    absolute seat order, the state pieces first (so they are rewritten with one struct call
    and scaled in one pass), then the log pieces, then a constant zero; every piece is
    written through its view of that array. The log pieces are folded in incrementally from
    new log events and the state pieces rewritten when the game moves on, so encoding costs
    the same however long the hand has run. An observation is one gather from the table
    through a per-observer index array (rotating seats to the observer, padding to the
    maximum players, taking only its own hidden cards, zeroing private pieces unless it is
    to act), then its observer pieces are written into their views of it. A new
    :class:`Game` object (or a shorter log) starts over.

    ``layout``: another layout of these rules (default :func:`build_layout` with ``features``,
    the optional pieces to add). ``strength``: the functions the hand-strength pieces
    (``win_probability``, and ``hand_class`` for many face-down cards at once) are computed
    with: the pure-Python :data:`REFERENCE_STRENGTH` by default, or the compiled core's
    ``envs.batched.CORE_STRENGTH`` (the same values, a few hundred times faster).
    """

    def __init__(self, rules: Rules | str, layout: Layout | None = None, *, features=(),
                 strength: HandStrength = REFERENCE_STRENGTH) -> None:
        self.rules = r = get_rules(rules)
        self.strength = strength
        if layout is not None and features:
            raise ValueError("give the encoder a layout or features, not both")
        self.layout = lay = build_layout(r, features) if layout is None else layout
        self.features = getattr(lay, "features", ())
        self.size = lay.size
        self.max_players = r.max_players
        self.rounds = r.num_streets
        self.num_actions = num_actions(r)
        self.num_sizes = self.num_actions - FIRST_BET
        for p in lay:
            if p.state is None and p.hand is None and p.observer is None and p.name not in LOG_PIECES:
                raise ValueError(f"piece {p.name!r} has no writer: give it state=, hand= or observer=, "
                                 f"or fold it in from the log in ObservationEncoder._catch_up (which writes "
                                 f"{', '.join(sorted(LOG_PIECES))})")
            if p.seats and p.seats != r.max_players:
                raise ValueError(f"piece {p.name!r} has {p.seats} seats; the rules seat {r.max_players}")
        self._states = tuple(p.state for p in lay if p.state is not None)
        self._hand_pieces = tuple(p for p in lay if p.hand is not None)
        self._observers = tuple((slice(p.start, p.stop), p.observer) for p in lay if p.observer is not None)
        self._inv_raises = 1.0 / (1 + r.max_raises)
        self._tables: dict[int, tuple] = {}
        self._scales: dict[tuple[int, ...], np.ndarray] = {}  # state scales per starting stacks
        self._game: Game | None = None
        self._win_cache: dict = {}   # win_probabilities: public card state -> face-down cards -> value
        self._win_cached = 0         # values in it

    def __getstate__(self) -> dict:
        # Pickle and deepcopy: the rules and the layout; the per-game buffers (struct and
        # memoryview objects do not pickle) start over from the log.
        return {"rules": self.rules, "layout": self.layout, "strength": self.strength}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["rules"], state["layout"], strength=state.get("strength", REFERENCE_STRENGTH))

    # ------------------------------------------------------------------------------------
    # The table array and the gather indices, per table size

    def _table(self, n: int) -> tuple:
        """The table array for ``n`` players (reused hand after hand), a flat view of each
        piece in it (seat-major rows), its state struct and per-observer index arrays (cached)."""
        if n in self._tables:
            return self._tables[n]
        lay = self.layout
        at, size, state_size = {}, 0, 0
        for p in sorted((p for p in lay if p.observer is None), key=lambda p: p.state is None):
            at[p.name] = size
            size += n * p.width if p.seats or p.hidden else p.size
            if p.state is not None:
                state_size = size
        zero = size  # a constant 0.0
        size += 1
        state = struct.Struct(f"={state_size}f") if self._states else None  # float32, no padding
        indices = []
        for o in range(n):
            idx = np.full(lay.size, zero, dtype=np.intp)  # observer pieces and seat padding: 0.0
            for p in lay:
                if p.observer is not None:
                    continue
                w = p.width
                if p.seats:
                    for r in range(n):
                        row = at[p.name] + (o + r) % n * w
                        idx[p.start + r * w:p.start + (r + 1) * w] = range(row, row + w)
                else:
                    row = at[p.name] + (o * w if p.hidden else 0)
                    idx[p.start:p.stop] = range(row, row + w)
            not_to_act = idx.copy()
            for p in lay:
                if p.private:
                    not_to_act[p.start:p.stop] = zero  # only the player to act owes
            indices.append((not_to_act, idx))
        src = np.zeros(size, dtype=np.float32)
        views = {name: src[start:start + (n * lay[name].width if lay[name].seats or lay[name].hidden
                                          else lay[name].size)] for name, start in at.items()}
        self._tables[n] = (src, memoryview(src).cast("B"), views, state, src[:state_size], indices)
        return self._tables[n]

    def start(self, game: Game) -> None:
        """Follow ``game`` from its first event (called automatically for a new game)."""
        if game.rules is not self.rules and game.rules != self.rules:
            raise ValueError(f"this encoder is for {self.rules.name} rules; the game plays {game.rules.name}")
        n = game.num_players
        src, self._src_bytes, views, self._state_struct, self._state_view, self._index = self._table(n)
        src.fill(0.0)
        self._src = src
        self._game = game
        self._n = n
        self._pos = 0
        self._state_pos = -1  # log length when the state pieces were last written
        self._street = 0
        stacks = game.starting_stacks
        scale = self._scales.get(stacks)
        if scale is None:
            factor = chip_scales(self.rules, stacks)
            scale = self._scales[stacks] = np.array(
                [factor[p.scale] for p in self.layout if p.state is not None
                 for _ in range(n * p.width if p.seats else p.size)], dtype=np.float32)
        self._state_scale = scale
        for p in self._hand_pieces:
            view = views[p.name]
            view[:] = p.hand(game)
            if p.scale != "one":
                np.minimum(view * np.float32(chip_scales(self.rules, stacks)[p.scale]), 1.0, out=view)
        # The log pieces, written by _catch_up (one row per absolute seat, seat-major).
        self._hole_cards = views["hole_cards"]
        self._up_cards = views["up_cards"]
        self._history = views["history"]
        self._chicago_up = views.get("chicago_up")
        self._up_any = np.zeros(52, dtype=np.float32)  # every face-up card

    def _catch_up(self, game: Game) -> None:
        log = game.log
        if game is not self._game or len(log) < self._pos:
            self.start(game)
        pos = self._pos
        if pos == len(log):
            return
        up_any = self._up_any
        hole_cards, up_cards, history, chicago_up = (self._hole_cards, self._up_cards, self._history,
                                                     self._chicago_up)
        street = self._street
        per = self.rounds * 2
        inc = self._inv_raises
        for e in log[pos:]:
            kind = e.kind
            if kind == "deal":
                card = e.card
                if e.up:
                    up_cards[e.seat * 52 + card] = 1.0
                    up_any[card] = 1.0
                    if chicago_up is not None and card & 3 == SPADE:
                        chicago_up[low_chicago_key(card)] = 1.0
                else:
                    hole_cards[e.seat * 52 + card] = 1.0
            elif kind in BET_KINDS:
                i = e.seat * per + street * 2
                history[i] = min(history[i] + inc, 1.0)
            elif kind in CALL_KINDS:
                i = e.seat * per + street * 2 + 1
                history[i] = min(history[i] + inc, 1.0)
            elif kind == "street":
                street = e.street
        self._street = street
        self._pos = len(log)

    # ------------------------------------------------------------------------------------

    def encode(self, game: Game, seat: int, sizes: tuple[int, ...] | None = None, *,
               observers: bool = True) -> np.ndarray:
        """The observation of ``seat`` (a new float32 array of ``layout.size``).

        ``sizes``: ``game.raise_to_amounts()`` when ``seat`` is to act and the caller has it already.
        ``observers=False`` leaves the pieces written from the seat's face-down cards (the
        observer pieces: ``hand_class``, ``win_probability``, ...) unwritten, for a caller that
        writes them for other cards (local best response).
        """
        self._catch_up(game)
        current = game.current_player
        if self._state_pos != self._pos:  # the state moved on (every action logs an event)
            if current is not None and sizes is None:
                sizes = game.raise_to_amounts()
            self._write_state(game, current, sizes)
            self._state_pos = self._pos
        obs = self._src.take(self._index[seat][current == seat])
        if self._observers and observers:
            hole = game.hole_cards(seat)
            for where, write in self._observers:
                write(obs[where], self, game, seat, hole)
        return obs

    def observe(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """``(observation, action_mask)`` of ``seat``; the mask is :func:`envs.actions.action_mask`'s
        (its :func:`~envs.actions.legal_mask`), sharing one ``raise_to_amounts()`` call with the
        observation."""
        if game.current_player == seat:
            sizes = game.raise_to_amounts()
            return (self.encode(game, seat, sizes),
                    legal_mask(self.num_actions, game.can_fold(), len(sizes)).copy())
        return self.encode(game, seat), np.zeros(self.num_actions, dtype=np.int8)

    def _write_state(self, game: Game, current: int | None, sizes) -> None:
        # Chips and counts as they are, in one struct call, then one scaling and clipping pass
        # (the scales of start()).
        if not self._states:
            return
        if current is None:
            sizes = None
        values: list = []
        for state in self._states:
            values += state(game, current, sizes)
        self._state_struct.pack_into(self._src_bytes, 0, *values)
        view = self._state_view
        np.multiply(view, self._state_scale, out=view)
        np.minimum(view, 1.0, out=view)
