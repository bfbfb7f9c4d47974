"""Monte-Carlo and exact equity from what one seat can see (pure: NumPy and the engine).

:func:`equity` deals the cards the seat cannot see (the deck minus its own face-down cards and
every face-up card on the table, folded hands' included) at random, many times over: into the
face-down cards the opponents still in the hand already hold, and into every card still to
come on later streets, in the order the engine deals them (passes from the dealer's left,
active seats only). Each completed deal is scored with ``envs.engine.hands.evaluate_batch``,
vectorized over the samples (a wild rank seen only a few times so far is scored card by card
until it is worth building its batch tables; see :func:`_score`). The result is the seat's
expected share of the pot at showdown, assuming nobody folds from here on (ties split).

Follow the Bitch: the wild rank at showdown is the one in force at the end of the hand
(docs/rules.md), so each deal replays the follow-the-queen rule over the face-up cards still to
come, in deal order, starting from the wild rank in force now; deals are then grouped by their
final wild rank, one ``evaluate_batch`` call per group. Low Chicago: half of the pot goes to the
lowest face-down spade among the hands still in (ace lowest), so a deal's share is half its
high share plus half its Chicago share, or its whole high share when nobody holds a face-down
spade.

Two users: the **equity** agent (``agents.equity``: :func:`equity` with a ``key`` it draws
from its own generator, so a decision is a function of the key, and the compiled core's
``EquityPolicy`` makes the same one) and the observation's
optional ``win_probability`` piece (``envs.observation``), which uses :func:`win_probability`:
every deal when there are few (the last street), else deals from a small counter-based
generator (:func:`sample_deals`) keyed by the visible cards. That function is the
specification of the compiled core's copy (``src/engine/equity.h``):
both draw the same deals from the same visible state and sum whole-number shares
(:data:`SHARE_UNITS`), so the two give the same float64, bit for bit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from envs.engine.cards import RANKS, Card
from envs.engine.game import PlayerView
from envs.engine.hands import evaluate, evaluate_batch
from envs.engine.rules import (
    NO_LOW_CHICAGO,
    NO_WILD,
    QUEEN,
    Rules,
    deal_order,
    deal_sequence,
    deck_mask,
    hand_options,
    low_chicago_key,
    next_wild_rank,
    wild_ranks,
)

__all__ = ["equity", "share_units", "win_probability", "visible_seed", "sample_deals", "warm_up",
           "BUILD_AFTER", "SHARE_UNITS"]

_CARDS = tuple(Card(i) for i in range(52))
_BUILT: set[tuple] = set()          # configurations whose batch tables exist in this process
_LAZY_ROWS: dict[tuple, int] = {}   # rows scored one by one so far, per configuration
BUILD_AFTER = 50_000
"""Rows a configuration may score one at a time before its batch tables are built."""
SHARE_UNITS = 1_441_440
"""A pot in whole units: 2 * lcm(1..16), so the share of any of up to 16 tied winners, halved
by Low Chicago, is a whole number of units, and a sum of shares is exact in any order."""
GOLDEN = 0x9E3779B97F4A7C15
"""splitmix64's increment (2**64 / the golden ratio)."""


def _score(cards: np.ndarray, rules: Rules, wild_ranks: tuple[str, ...]) -> np.ndarray:
    """Hand values of the rows of ``cards`` with ``evaluate_batch``.

    Building the batch tables of one configuration costs about two seconds for seven cards
    with a wild rank, and Follow the Bitch has thirteen wild configurations. Until a
    configuration has needed ``BUILD_AFTER`` rows (or one call brings 4096 rows or more), its
    few rows are scored one at a time with ``evaluate`` instead (the same values; the engine's
    tests hold the two evaluators equal). :func:`warm_up` builds everything at once. Hands of
    fewer than five cards (``soko_mini`` deals three) have no batch tables: always one at a time."""
    key = (rules.canadian_hands, wild_ranks, rules.double_ace_flush, rules.ace_low_four_straight,
           cards.shape[1])
    options = hand_options(rules, wild_ranks)
    if key not in _BUILT:
        rows = _LAZY_ROWS.get(key, 0) + len(cards)
        if (rows < BUILD_AFTER and len(cards) < 4096) or not 5 <= cards.shape[1] <= 7:
            _LAZY_ROWS[key] = rows
            return np.fromiter((evaluate([_CARDS[c] for c in row], **options) for row in cards.tolist()),
                               dtype=np.int64, count=len(cards))
        _BUILT.add(key)
    return evaluate_batch(cards, **options)


def warm_up(rules: Rules) -> None:
    """Build the evaluator tables :func:`equity` will need under ``rules`` (every wild rank that
    can come up in Follow the Bitch), so forked worker processes inherit them."""
    row = np.arange(rules.cards_per_player, dtype=np.int64)[None, :] * 4  # distinct ranks
    if not 5 <= row.shape[1] <= 7:
        return
    followed = range(-1, 13) if rules.follow_the_queen else (NO_WILD,)
    for w in followed:
        if w != QUEEN:
            wild = wild_ranks(rules, w) if rules.follow_the_queen else ()
            _BUILT.add((rules.canadian_hands, wild, rules.double_ace_flush,
                        rules.ace_low_four_straight, row.shape[1]))
            _score(row, rules, wild)


def _draw(pool: np.ndarray, need: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` rows of ``need`` distinct cards from ``pool``, each row a uniformly random
    ordered draw: the first ``need`` cards of a random permutation (argsort of uniform keys)."""
    return pool[np.argsort(rng.random((samples, len(pool))), axis=1)[:, :need]]


def _mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function, elementwise on uint64 arrays (arithmetic modulo 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def sample_deals(pool: np.ndarray, need: int, samples: int, seed: list[int]) -> np.ndarray:
    """``samples`` rows of ``need`` distinct cards from ``pool`` (ascending card indices), drawn by
    a counter-based generator that the compiled core implements the same way:

    - the key folds ``seed`` (non-negative ints) into 64 bits: ``key = mix64(key + GOLDEN + x)``
      for each ``x`` in turn, from ``key = 0`` (``mix64``: splitmix64's output function);
    - draw ``j`` of sample ``s`` uses ``u``, the top 32 bits of ``mix64(key + GOLDEN * c)`` with
      counter ``c = s * need + j + 1`` (splitmix64's ``c``-th output from ``key``);
    - each sample is a partial Fisher-Yates shuffle of ``pool``: position ``j`` swaps with
      position ``j + (u * (len(pool) - j) >> 32)``, and the row is the first ``need`` cards.

    (The multiply-shift index is biased by under 52 / 2**32, far below the sampling noise.)

    >>> sample_deals(np.arange(10), 3, 2, [7, 1]).shape
    (2, 3)
    >>> bool((sample_deals(np.arange(52), 5, 4, [1]) == sample_deals(np.arange(52), 5, 4, [1])).all())
    True
    """
    key = np.zeros(1, dtype=np.uint64)
    for x in seed:
        key = _mix64(key + np.uint64(GOLDEN) + np.uint64(x))
    counters = np.arange(1, samples * need + 1, dtype=np.uint64).reshape(samples, need)
    u = _mix64(key + counters * np.uint64(GOLDEN)) >> np.uint64(32)
    deck = np.tile(np.asarray(pool, dtype=np.int64), (samples, 1))
    rows = np.arange(samples)
    for j in range(need):
        k = j + ((u[:, j] * np.uint64(len(pool) - j)) >> np.uint64(32)).astype(np.intp)
        picked = deck[rows, k]
        deck[rows, k] = deck[rows, j]
        deck[rows, j] = picked
    return deck[:, :need]


@dataclass(frozen=True)
class _Deal:
    """Where each random card goes: column layout of one sample."""

    seats: tuple[int, ...]                       # active seats, in deal order
    future: tuple[tuple[int, bool, int], ...]    # (seat, face_up, street) per card still to come
    hidden: tuple[tuple[int, int], ...]          # (opponent seat, count of face-down cards held)


@lru_cache(maxsize=4096)
def _deal_layout(rules: Rules, num_players: int, button: int, street: int,
                 active: tuple[int, ...], me: int, hidden_counts: tuple[int, ...]) -> _Deal:
    order = tuple(s for s in deal_order(button, num_players) if s in active)
    future = tuple(x for x in deal_sequence(rules, order) if x[2] > street)
    hidden = tuple((s, hidden_counts[s]) for s in order if s != me)
    return _Deal(order, future, hidden)


class _Spot(NamedTuple):
    """What a seat knows: the hands still in, where unseen cards go, the known cards, the pool."""

    active: tuple[int, ...]
    layout: _Deal
    known: list[int]
    pool: np.ndarray
    need: int


def _spot(view: PlayerView) -> _Spot:
    rules = view.rules
    me = view.seat
    n = view.num_players
    active = tuple(s for s in range(n) if not view.folded[s])
    hidden_counts = [0] * n
    for event in view.log:
        if event.kind == "deal" and not event.up:
            hidden_counts[event.seat] += 1
    layout = _deal_layout(rules, n, view.button, view.street, active, me, tuple(hidden_counts))

    seen = ~deck_mask(rules)  # cards outside a short deck are never dealt
    known = [int(c) for c in view.hole_cards]
    for s in active:
        known.extend(int(c) for c in view.up_cards[s])
    seen[known] = True
    for s in range(n):
        if view.folded[s]:
            seen[[int(c) for c in view.up_cards[s]]] = True
    pool = np.flatnonzero(~seen)
    need = len(layout.future) + sum(k for _, k in layout.hidden)
    if need > len(pool):
        raise ValueError(f"cannot deal {need} unseen cards from {len(pool)}")
    return _Spot(active, layout, known, pool, need)


def equity(view: PlayerView, samples: int, rng: np.random.Generator | None = None, *,
           key: int | None = None) -> float:
    """The seat's expected share of the pot at showdown against random unseen cards: the mean
    share over ``samples`` deals, drawn with ``rng``, or, given ``key`` (an int in
    ``[0, 2**63)``) instead, by :func:`sample_deals` seeded with ``[key]``, so that one key
    always gives the same float (the equity agent's decisions; the compiled core's
    ``EquityPolicy`` draws the same deals).

    >>> from envs.engine.game import Game
    >>> g = Game("soko", 2, deck="As 2c Ah 3d Ad 4c", seed=1)  # seat 1: As Ah Ad, seat 0: 2c 3d 4c
    >>> g.check_or_call(); g.check_or_call()                   # bring-in, call: 3rd cards dealt
    >>> equity(g.view(1), 2000, np.random.default_rng(0)) > 0.85  # three aces against a draw
    True
    >>> equity(g.view(1), 100, key=7) == equity(g.view(1), 100, key=7)
    True
    """
    return _mean_share(share_units(view, samples, rng, key=key))


def share_units(view: PlayerView, samples: int, rng: np.random.Generator | None = None, *, max_exact: int = 0,
                key: int | None = None) -> np.ndarray:
    """The seat's share of the pot in each of ``samples`` random deals of the unseen cards, in
    :data:`SHARE_UNITS` (int64; :func:`equity` is their mean over ``SHARE_UNITS``; the equity
    agent's ``policy`` uses their spread), or in every deal, once each, when the unseen cards
    fall in at most ``max_exact`` ways. The deals come from ``rng``, or from
    :func:`sample_deals` seeded with ``[key]`` (exactly one of the two). The last seat in gets
    the whole pot without a draw."""
    if (rng is None) == (key is None):
        raise ValueError("share_units: give either rng or key, not both or neither")
    if key is not None and not 0 <= key < 2**63:
        raise ValueError(f"share_units: key must be an int in [0, 2**63), not {key!r}")
    if samples < 1:
        raise ValueError(f"share_units: samples must be at least 1, not {samples}")
    if sum(1 for f in view.folded if not f) == 1:
        return np.full(samples, SHARE_UNITS, dtype=np.int64)
    spot = _spot(view)
    drawn = _every_deal(spot, max_exact)
    if drawn is None:
        if key is None:
            drawn = _draw(spot.pool, spot.need, samples, rng)  # (samples, need)
        else:
            drawn = sample_deals(spot.pool, spot.need, samples, [int(key)])
    return _share_units(view, spot, drawn)


def _every_deal(spot: _Spot, max_exact: int) -> np.ndarray | None:
    """Every ordered deal of the unseen cards (one row each), or None past ``max_exact`` ways."""
    need = spot.need
    if math.perm(len(spot.pool), need) > max_exact:
        return None
    if not need:
        return np.empty((1, 0), dtype=np.int64)
    return np.array(list(itertools.permutations(spot.pool.tolist(), need)), dtype=np.int64)


def visible_seed(view: PlayerView) -> list[int]:
    """The seed of :func:`win_probability`'s deals: exactly the cards and seats the estimate
    depends on, as ints: the seat, the button (the deal order of the cards to come), its own
    face-down cards, every seat's face-up cards and who folded. So it is the same at every
    decision of a betting round (the estimate does not jitter while nobody's cards change), a
    replay of the view (``agents.base.game_from_view``) gives the same seed, and the other
    seats' face-down cards never enter it."""
    out = [view.seat, view.button, *map(int, view.hole_cards), 52]
    for s, up in enumerate(view.up_cards):
        out += [*map(int, up), 53 + int(view.folded[s])]
    return out


def win_probability(view: PlayerView, *, samples: int = 64, max_exact: int = 2000) -> float:
    """:func:`equity`, exact or deterministic: the seat's expected share of the pot at showdown
    against uniformly random unseen cards, assuming nobody folds from here on (0 for a seat that
    has folded, 1 for the last seat in).

    When the unseen cards can fall in at most ``max_exact`` ways (heads-up Soko on the last
    street: the opponent's one face-down card, 43 ways), every way is scored; otherwise
    ``samples`` deals are drawn by :func:`sample_deals` keyed by :func:`visible_seed`, so the
    same visible cards always get the same number. The mean is a sum of whole-number shares
    (:data:`SHARE_UNITS`) divided once: the compiled core (``envs.batched.win_probability``)
    gives the same float64.

    >>> from envs.engine.game import Game
    >>> g = Game("soko", 2, deck="7d Ad Ks Kh Qc 9h 8d 5c 2c 3s", button=0, seed=0)
    >>> while g.street < 3:                  # check and call down to the last street
    ...     g.check_or_call()
    >>> g.hole_cards(0), g.up_cards(0), g.up_cards(1)
    ((Ad,), (Kh, 9h, 5c, 3s), (Ks, Qc, 8d, 2c))
    >>> win_probability(g.view(0)) == 29 / 43  # seat 1 wins with a K, Q, 8, 2 or A in the hole: 14 of 43
    True
    """
    if view.folded[view.seat]:
        return 0.0
    if sum(1 for f in view.folded if not f) == 1:
        return 1.0
    spot = _spot(view)
    drawn = _every_deal(spot, max_exact)
    if drawn is None:
        drawn = sample_deals(spot.pool, spot.need, samples, visible_seed(view))
    return _mean_share(_share_units(view, spot, drawn))


def _mean_share(units: np.ndarray) -> float:
    """The mean of shares given in :data:`SHARE_UNITS`, as a fraction of the pot: one exact
    integer sum and one correctly rounded division."""
    return int(units.sum()) / (SHARE_UNITS * len(units))


def _share_units(view: PlayerView, spot: _Spot, drawn: np.ndarray) -> np.ndarray:
    """The seat's share of the pot in each deal of ``drawn`` (one row of unseen cards each), in
    :data:`SHARE_UNITS` (int64)."""
    rules = view.rules
    me = view.seat
    active, layout, known = spot.active, spot.layout, spot.known
    samples, need = drawn.shape

    # Every card of every final hand as a column of `table`: the known cards first (the same
    # in every sample), then the drawn ones. Per seat: face-down cards, then face-up cards.
    base = len(known)
    down_cols: dict[int, list[int]] = {s: [] for s in active}
    up_cols: dict[int, list[int]] = {s: [] for s in active}
    col = 0
    down_cols[me].extend(range(len(view.hole_cards)))
    col = len(view.hole_cards)
    for s in active:
        k = len(view.up_cards[s])
        up_cols[s].extend(range(col, col + k))
        col += k
    for col, (s, up, _street) in enumerate(layout.future):
        (up_cols if up else down_cols)[s].append(base + col)
    col = base + len(layout.future)
    for s, k in layout.hidden:
        down_cols[s].extend(range(col, col + k))
        col += k
    table = np.empty((samples, base + need), dtype=np.int64)
    table[:, :base] = known
    table[:, base:] = drawn
    columns = np.array([down_cols[s] + up_cols[s] for s in active])  # (players, cards)
    hands = table[:, columns].transpose(1, 0, 2)  # (players, samples, cards)
    players, _, size = hands.shape

    # The wild rank at showdown: replay follow-the-queen over the face-up cards to come.
    if rules.follow_the_queen:
        followed = RANKS.index(view.wild_rank) if view.wild_rank else NO_WILD
        wild = np.full(samples, followed, dtype=np.int64)
        street = None
        pending = np.zeros(samples, dtype=bool)
        for col, (s, up, t) in enumerate(layout.future):
            if t != street:  # a queen's follower must come in the same dealing round
                street, pending = t, np.zeros(samples, dtype=bool)
            if not up:
                continue
            wild, pending = next_wild_rank(wild, pending, drawn[:, col] >> 2)
        scores = np.empty((players, samples), dtype=np.int64)
        for w in np.unique(wild):
            rows = np.flatnonzero(wild == w)
            flat = hands[:, rows, :].reshape(-1, size)
            scores[:, rows] = _score(flat, rules, wild_ranks(rules, int(w))).reshape(players, -1)
    else:
        scores = _score(hands.reshape(-1, size), rules, tuple(view.wild_ranks)).reshape(players, samples)

    i = active.index(me)
    best = scores.max(axis=0)
    winners = scores == best
    high = np.where(winners[i], SHARE_UNITS // winners.sum(axis=0), 0)  # ties split
    if rules.low_chicago:
        keys = []
        for s in active:
            key = low_chicago_key(table[:, down_cols[s]])
            keys.append(key.min(axis=1) if key.shape[1] else np.full(samples, NO_LOW_CHICAGO))
        keys = np.stack(keys)
        lowest = keys.min(axis=0)
        chicago = (keys[i] == lowest) & (lowest < NO_LOW_CHICAGO)
        share = np.where(lowest < NO_LOW_CHICAGO, high // 2 + chicago * (SHARE_UNITS // 2), high)
    else:
        share = high
    return share
