"""Hand values: the best five-card hand, Canadian hands, wild cards, showing hands.

:func:`evaluate` ranks 5 to 7 cards as the best five-card hand, or 1 to 4 up cards as a
showing hand (only the categories that many cards allow). It knows the Canadian hands of Soko
(four-flush, four-straight) and wild cards (Follow the Bitch): wilds are handled by analysis of
rank and suit counts, never by trying substitutions.

A :class:`HandValue` is an ``int``: ``category << 20`` plus up to five tie-break ranks in
4-bit slots (rank index + 1, so 0 means "no card"). Higher is better; equal values split.

>>> str(evaluate("Ah Kh Qh 9h 2c", canadian=True))
'Four-flush, ace high'
>>> evaluate("9c Tc Jc Qd 2s", canadian=True) > evaluate("As Ad 4c 7d 9h", canadian=True)
True
>>> str(evaluate("Ah 9h 5h 2h 7c Kd Ks", wild_ranks=("7",)))
'Flush, ace high'
>>> evaluate("Ah 9h 5h 2h 7c Kd Ks", wild_ranks=("7",)).ranks
('A', 'K', '9', '5', '2')

How it is fast: a card's code packs its rank as a base-5 digit (counts per rank stay below 5),
its suit as counts, and the card itself in three bits, so the sum of a hand's codes holds its
rank multiset, its suit counts and its cards. The non-flush value depends on the rank multiset
alone and is cached per multiset; one AND of the sum with a fixed mask keeps the rank digits
and the bits that a repeated card or a suit that may flush (or four-flush) would set, so a
plain hand is one dict look-up, and the rarer hands take a second path.
The batch path does the same with numpy tables (see :func:`evaluate_batch`).
"""

from __future__ import annotations

import enum
import itertools
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from envs.engine.cards import RANK_NAMES, RANK_PLURALS, RANKS, Card, parse_cards


class Category(enum.IntEnum):
    """Hand categories, weakest first (the Canadian hands sit between one pair and two pair)."""

    HIGH_CARD = 0
    ONE_PAIR = 1
    FOUR_STRAIGHT = 2
    FOUR_FLUSH = 3
    TWO_PAIR = 4
    THREE_OF_A_KIND = 5
    STRAIGHT = 6
    FLUSH = 7
    FULL_HOUSE = 8
    FOUR_OF_A_KIND = 9
    STRAIGHT_FLUSH = 10
    FIVE_OF_A_KIND = 11


_CATEGORY_SHIFT = 20
_ACE = 12


class HandValue(int):
    """A hand's strength: an ordered, hashable int with a category and a readable ``str()``."""

    __slots__ = ()

    @property
    def category(self) -> Category:
        return Category(int(self) >> _CATEGORY_SHIFT)

    @property
    def ranks(self) -> tuple[str, ...]:
        """The tie-break ranks, most significant first (``('K', 'Q', '9', '4', '2')``)."""
        value = int(self)
        out = []
        for shift in (16, 12, 8, 4, 0):
            slot = (value >> shift) & 15
            if slot:
                out.append(RANKS[slot - 1])
        return tuple(out)

    def __str__(self) -> str:
        cat = self.category
        r = self.ranks
        if cat is Category.HIGH_CARD:
            return f"{RANK_NAMES[r[0]].capitalize()} high" if r else "No cards"
        if cat is Category.ONE_PAIR:
            return f"Pair of {RANK_PLURALS[r[0]]}"
        if cat is Category.FOUR_STRAIGHT:
            return f"Four-straight, {RANK_NAMES[r[0]]} high"
        if cat is Category.FOUR_FLUSH:
            return f"Four-flush, {RANK_NAMES[r[0]]} high"
        if cat is Category.TWO_PAIR:
            return f"Two pair, {RANK_PLURALS[r[0]]} and {RANK_PLURALS[r[1]]}"
        if cat is Category.THREE_OF_A_KIND:
            return f"Three {RANK_PLURALS[r[0]]}"
        if cat is Category.STRAIGHT:
            return f"Straight, {RANK_NAMES[r[0]]} high"
        if cat is Category.FLUSH:
            return f"Flush, {RANK_NAMES[r[0]]} high"
        if cat is Category.FULL_HOUSE:
            return f"Full house, {RANK_PLURALS[r[0]]} over {RANK_PLURALS[r[1]]}"
        if cat is Category.FOUR_OF_A_KIND:
            return f"Four {RANK_PLURALS[r[0]]}"
        if cat is Category.STRAIGHT_FLUSH:
            return "Royal flush" if r[0] == "A" else f"Straight flush, {RANK_NAMES[r[0]]} high"
        return f"Five {RANK_PLURALS[r[0]]}"

    def __repr__(self) -> str:
        return f"HandValue({str(self)!r})"


def _score(category: Category, ranks: Sequence[int]) -> int:
    """Pack a category and up to five rank indices (most significant first) into an int."""
    value = int(category) << _CATEGORY_SHIFT
    shift = 16
    for r in ranks[:5]:
        value |= (r + 1) << shift
        shift -= 4
    return value


# ---------------------------------------------------------------------------------------------
# Analysis of counts: the rules of the categories, written once. Everything else caches these.

# Straight windows, best first: (top rank, ranks in the window). A-2-3-4-5 is the lowest.
_STRAIGHTS = tuple((top, tuple(range(top - 4, top + 1))) for top in range(_ACE, 3, -1)) + (
    (3, (_ACE, 0, 1, 2, 3)),
)
# Four-straight windows, best first: J-Q-K-A highest, A-2-3-4 lowest (optional), no wrap.
_FOUR_STRAIGHTS = tuple((top, tuple(range(top - 3, top + 1))) for top in range(_ACE, 2, -1))
_FOUR_STRAIGHT_ACE_LOW = (2, (_ACE, 0, 1, 2))


_STRAIGHT_MASKS = tuple((top, sum(1 << r for r in window)) for top, window in _STRAIGHTS)


def _nonflush_score(counts: Sequence[int], wilds: int, k: int, canadian: bool,
                    ace_low_four_straight: bool) -> int:
    """Best score among the categories that need no suits, for natural rank counts + wilds.

    ``counts[r]`` counts the non-wild cards of rank index r; ``k`` is how many cards the hand
    uses (5, or fewer for a showing hand). Each category uses every wild where it helps most;
    a category that would leave a wild unused is always beaten by a higher one, so kickers are
    drawn from natural cards only.
    """
    present = [r for r in range(12, -1, -1) for _ in range(counts[r])]  # high to low
    have = sum(1 << r for r in range(13) if counts[r])
    most, second = sorted(counts, reverse=True)[:2]

    def others(*used: int) -> list[int]:
        return [r for r in present if r not in used]

    if k >= 5:
        for r in range(12, -1, -1):
            if counts[r] + wilds >= 5:
                return _score(Category.FIVE_OF_A_KIND, (r,))
        if wilds >= 5:
            return _score(Category.FIVE_OF_A_KIND, (_ACE,))
    if k >= 4:
        for r in range(12, -1, -1):
            if counts[r] + wilds >= 4:
                return _score(Category.FOUR_OF_A_KIND, [r] + others(r)[: k - 4])
    # A full house is possible at all only if the two most frequent ranks can make one.
    if k >= 5 and max(0, 3 - most) + max(0, 2 - second) <= wilds:
        for t in range(12, -1, -1):
            need_t = max(0, 3 - counts[t])
            if need_t > wilds:
                continue
            for p in range(12, -1, -1):
                if p != t and need_t + max(0, 2 - counts[p]) <= wilds:
                    return _score(Category.FULL_HOUSE, (t, p))
    if k >= 5:
        for top, window in _STRAIGHT_MASKS:
            if (window & ~have).bit_count() <= wilds:
                return _score(Category.STRAIGHT, (top,))
    if k >= 3:
        for r in range(12, -1, -1):
            if counts[r] + wilds >= 3:
                return _score(Category.THREE_OF_A_KIND, [r] + others(r)[: k - 3])
    best = -1
    if k >= 4:
        pairs = [r for r in range(12, -1, -1) if counts[r] >= 2]
        if len(pairs) >= 2 and wilds == 0:
            return _score(Category.TWO_PAIR, pairs[:2] + others(*pairs[:2])[: k - 4])
        if canadian:
            windows = _FOUR_STRAIGHTS + ((_FOUR_STRAIGHT_ACE_LOW,) if ace_low_four_straight else ())
            for top, window in windows:
                missing = sum(1 for r in window if not counts[r])
                if missing > wilds:
                    continue
                rest = list(present)
                for r in window:
                    if r in rest:
                        rest.remove(r)
                fifth = ([_ACE] if wilds > missing else []) + rest
                best = max(best, _score(Category.FOUR_STRAIGHT, [top] + fifth[: k - 4]))
    if best >= 0:
        return best
    if k >= 2:
        for r in range(12, -1, -1):
            if counts[r] + wilds >= 2:
                return _score(Category.ONE_PAIR, [r] + others(r)[: k - 2])
    if wilds:
        return _score(Category.HIGH_CARD, [_ACE])
    return _score(Category.HIGH_CARD, present[:k])


def _flush_score(suited: int, wilds: int, k: int, fifth: int, *, canadian: bool,
                 double_ace_flush: bool) -> int:
    """Best score of one suit's cards (rank bitmask ``suited``) with ``wilds``: straight flush,
    flush, or (Canadian) four-flush; -1 if none. ``fifth`` is the best natural card outside the
    suit (rank index, -1 if none), the four-flush's fifth card."""
    have = [r for r in range(12, -1, -1) if suited >> r & 1]
    if k >= 5 and len(have) + wilds >= 5:
        for top, window in _STRAIGHTS:
            if sum(1 for r in window if not suited >> r & 1) <= wilds:
                return _score(Category.STRAIGHT_FLUSH, (top,))
        return _score(Category.FLUSH, _suited_ranks(have, wilds, 5, double_ace_flush))
    if canadian and k >= 4 and len(have) + wilds == 4:
        four = _suited_ranks(have, wilds, 4, double_ace_flush)
        return _score(Category.FOUR_FLUSH, four + ([fifth] if k >= 5 and fifth >= 0 else []))
    return -1


def _suited_ranks(have: list[int], wilds: int, size: int, double_ace_flush: bool) -> list[int]:
    """The best ``size`` ranks of a flush: natural cards plus wilds standing for the best ranks
    the suit lacks (or for aces, held or not, under ``double_ace_flush``)."""
    if double_ace_flush:
        stand_ins = [_ACE] * wilds
    else:
        stand_ins = [r for r in range(12, -1, -1) if r not in have][:wilds]
    return sorted(have + stand_ins, reverse=True)[:size]


# ---------------------------------------------------------------------------------------------
# The per-call path.

_RANK_BITS = 32  # bits 0-30: the rank multiset, one base-5 digit per rank
_RANK_MASK = (1 << _RANK_BITS) - 1
_SUIT_BITS = 32  # bits 32-95: 16 per suit, the suit's count three times: x1, x3 and x7
_SUIT_AREA = (1 << 64) - 1
_CARD_BITS = 96  # from here on: three bits per card, at 3 * card index (rank-major)
_AT_LEAST = {1: 0b111, 2: 0b110, 3: 0b11 << 7, 4: 0b100, 5: 1 << 14}
"""Per suit field, the bits of which one is set exactly when the suit has at least n cards
(n = 1..5): a count of 0-7 read as is (1, 2, 4 are powers of two), times 3 (3 * 3 = 9 is the
first multiple of 3 from 8) or times 7 (7 * 5 = 35 is the first multiple of 7 from 32)."""
_DUPS = sum(0b110 << (_CARD_BITS + 3 * i) for i in range(52))
"""The upper two bits of every card's three: set only by a card given two to seven times."""
_SUIT_CARDS = tuple(sum(1 << 3 * (4 * r + s) for r in range(13)) for s in range(4))
"""Per suit, the low bits of its cards' three (in the card field shifted down)."""
_CODE = {card: 5 ** (card >> 2) + ((1 | 3 << 4 | 7 << 9) << (_SUIT_BITS + 16 * (card & 3)))
         + (1 << (_CARD_BITS + 3 * card)) for card in map(Card, range(52))}
"""A card's code: its rank as a base-5 digit, its suit as counts, and its own three bits. The
sum of a hand's codes holds the rank multiset, the suit counts (so whether a suit holds at
least n cards is one AND) and the cards; a card given twice shows in its upper bits. Nothing
carries between fields for up to seven cards (a rank digit carries only for five equal ranks,
which only a repeated card makes, and that shows)."""
_CODE_OF = _CODE.__getitem__
_NEVER = 99
_JUST_CARDS = {Card}
_HAND_VALUES: dict[int, HandValue] = {}
"""Flush-type HandValues by score, made once (a new HandValue costs more than a look-up)."""


def _suit_mask(need: int) -> int:
    """The bits of a code sum of which one is set when some suit has ``need`` or more cards."""
    if need >= _NEVER:
        return 0
    per_suit = _AT_LEAST[max(need, 1)]  # every hand has a suit with at least one card
    return sum(per_suit << (_SUIT_BITS + 16 * s) for s in range(4))


def _suit_ranks(cards: int) -> int:
    """The 13-bit rank mask of clubs in a card field (shifted down)."""
    return sum(1 << r for r in range(13) if cards >> (12 * r) & 1)


class _Table:
    """Lazily filled caches for one configuration of the evaluator."""

    __slots__ = ("canadian", "wild", "wild_bits", "double_ace_flush", "ace_low", "by_ranks",
                 "fast_mask", "plain", "flushes", "flush_value", "batch")

    def __init__(self, canadian: bool, wild: frozenset[int], double_ace_flush: bool, ace_low: bool):
        self.canadian = canadian
        self.wild = wild
        self.wild_bits = sum(1 << (3 * (4 * r + s)) for r in wild for s in range(4))
        self.double_ace_flush = double_ace_flush
        self.ace_low = ace_low
        # rank-multiset code -> (best non-flush HandValue, the bits of a code sum that send
        # the hand to the second look: a suit that may flush, or a repeated card)
        self.by_ranks: dict[int, tuple[HandValue, int]] = {}
        # The per-call path looks a hand up by its code sum ANDed with fast_mask: the rank
        # code, plus the bits of a suit with as many cards as a flush-type hand needs without
        # wilds (a four-flush, or a flush), plus those of a repeated card. A plain hand (most
        # hands) finds its HandValue; a hand with wild cards finds (HandValue, suit mask), as
        # each wild lowers the suit count worth a second look; anything else misses.
        self.fast_mask = _RANK_MASK | _suit_mask(4 if canadian else 5) | _DUPS
        self.plain: dict[int, HandValue | tuple[HandValue, int]] = {}
        self.flushes: dict[int, int] = {}
        self.flush_value = self._make_flush_value()
        self.batch: dict[int, object] = {}

    def rank_entry(self, rank_code: int) -> tuple[HandValue, int]:
        counts = [(rank_code // 5 ** r) % 5 for r in range(13)]
        wilds = sum(counts[r] for r in self.wild)
        for r in self.wild:
            counts[r] = 0
        n = sum(counts) + wilds
        k = min(n, 5)
        value = HandValue(_nonflush_score(counts, wilds, k, self.canadian, self.ace_low))
        # The smallest suit count (wild cards included, so it errs towards looking) at which
        # the suits may matter: a flush needs five cards, a four-flush four.
        if self.canadian and k >= 4:
            need = 4 - wilds
        elif k >= 5:
            need = 5 - wilds
        else:
            need = _NEVER
        entry = (value, _suit_mask(need) | _DUPS)
        self.by_ranks[rank_code] = entry
        self.plain[rank_code] = (value, _suit_mask(need)) if wilds else value
        return entry

    def _make_flush_value(self):
        """``flush_value(key, n, value, hits)``: raise ``value`` to the best flush-type hand
        of the ``n`` cards whose code sum is ``key`` (no card repeated); ``hits`` is ``key``
        ANDed with a suit mask, so its suit fields flag the suits that may flush. A closure
        over this configuration, as it runs for every hand with four or five suited cards."""
        flushes = self.flushes
        wild_bits = self.wild_bits
        natural_bits = ~wild_bits
        canadian = self.canadian
        double_ace_flush = self.double_ace_flush
        base = 4 if canadian else 5
        suit_cards = _SUIT_CARDS
        below = tuple((1 << 16 * s) - 1 for s in range(4))  # the suit fields under suit s
        card_bits = _CARD_BITS
        suit_bits = _SUIT_BITS
        suit_area = _SUIT_AREA
        hand_values = _HAND_VALUES

        def flush_value(key: int, n: int, value: HandValue, hits: int) -> HandValue:
            natural = key >> card_bits
            if wild_bits:
                wilds = (natural & wild_bits).bit_count()
                natural &= natural_bits
            else:
                wilds = 0
            k = 5 if n >= 5 else n
            threshold = base - wilds
            tag = (wilds << 3 | k) << 160  # the cache key: the suit's cards, wilds and k
            best = value
            hits = (hits >> suit_bits) & suit_area
            while hits:
                s = (hits.bit_length() - 1) >> 4  # the highest suit left
                hits &= below[s]
                suited = natural & suit_cards[s]
                count = suited.bit_count()
                if count < threshold:  # the suit count took in wild cards
                    continue
                flush_key = suited >> 3 * s | tag  # as clubs: every suit shares the entry
                score = flushes.get(flush_key)
                if score is None:
                    score = flushes[flush_key] = _flush_score(
                        _suit_ranks(flush_key), wilds, k, -1, canadian=canadian,
                        double_ace_flush=double_ace_flush)
                if count == threshold and canadian and k >= 5:
                    # A four-flush: its fifth card is the best natural card of the other
                    # suits, in the last tie-break slot (rank-major: the highest bit is best).
                    score |= ((natural ^ suited).bit_length() + 11) // 12  # rank index + 1, or 0
                if score > best:
                    best = score
            if best is value:
                return value
            return hand_values.get(best) or hand_values.setdefault(best, HandValue(best))

        return flush_value

    def checked(self, cards) -> HandValue:
        """The slow path: validate everything, fill the caches, then answer."""
        cards = parse_cards(cards)
        if not 1 <= len(cards) <= 7:
            raise ValueError(f"a hand has 1 to 7 cards, not {len(cards)}")
        key = sum(map(_CODE_OF, cards))
        value, mask = self.by_ranks.get(key & _RANK_MASK) or self.rank_entry(key & _RANK_MASK)
        if key & mask:  # no repeated card (parse_cards refuses them): a suit may flush
            return self.flush_value(key, len(cards), value, key & mask)
        return value

    def make_fast(self):
        """The per-call evaluator of this configuration: a closure over its caches.

        Only Cards take the fast path (True or 1.0 would find a code too: they equal a Card);
        anything else, and any hand that is not plainly valid, goes through :meth:`checked`,
        which accepts what :func:`parse_cards` accepts and raises on the rest."""
        C = _CODE
        by_ranks = self.by_ranks
        plain = self.plain
        fast_mask = self.fast_mask
        flush_value = self.flush_value
        checked = self.checked
        card_type = Card
        pair_type = tuple
        rank_mask = _RANK_MASK
        dups = _DUPS
        suits_only = ~_DUPS
        just_cards = _JUST_CARDS
        code_of = _CODE_OF

        def evaluate_hand(cards) -> HandValue:
            match cards:  # a list or tuple of 5 or 7 (never a str: no sequence pattern takes one)
                case (a, b, c, d, e):
                    if not type(a) is type(b) is type(c) is type(d) is type(e) is card_type:
                        return checked(cards)
                    key = C[a] + C[b] + C[c] + C[d] + C[e]
                    n = 5
                case (a, b, c, d, e, f, g):
                    if not (type(a) is type(b) is type(c) is type(d) is type(e) is type(f) is type(g)
                            is card_type):
                        return checked(cards)
                    key = C[a] + C[b] + C[c] + C[d] + C[e] + C[f] + C[g]
                    n = 7
                case _:
                    try:
                        n = len(cards)  # before iterating: an iterator goes to checked() whole
                        if not 1 <= n <= 7 or set(map(type, cards)) != just_cards:
                            return checked(cards)
                    except TypeError:
                        return checked(cards)
                    key = sum(map(code_of, cards))
            try:
                value = plain[key & fast_mask]
            except KeyError:  # a repeated card, a suit that may flush, or new ranks
                entry = by_ranks.get(key & rank_mask)
                if entry is None or key & dups:
                    return checked(cards)
                value, mask = entry
                mask &= suits_only
                # Hands of these ranks with this suit (or suits) that may flush: straight to
                # the second look next time (at most four such entries per rank multiset).
                plain[key & fast_mask] = (value, mask)
                hits = key & mask
                return flush_value(key, n, value, hits) if hits else value
            if type(value) is pair_type:  # wild cards: fewer suited cards may flush
                value, mask = value
                hits = key & mask
                if hits:
                    return flush_value(key, n, value, hits)
            return value

        return evaluate_hand


_TABLES: dict[object, _Table] = {}
_EVALUATORS: dict[object, object] = {}


def _table_for(canadian: bool, wild_ranks: object, double_ace_flush: bool,
               ace_low_four_straight: bool) -> _Table:
    if isinstance(wild_ranks, str):
        wild_ranks = (wild_ranks,) if len(wild_ranks) == 1 else tuple(wild_ranks.replace(",", " ").split())
    wild = set()
    for rank in wild_ranks:
        if not isinstance(rank, str) or rank.upper() not in RANKS or len(rank) != 1:
            raise ValueError(f"unknown wild rank {rank!r}: expected rank characters from {RANKS}")
        wild.add(RANKS.index(rank.upper()))
    canonical = (bool(canadian), frozenset(wild), bool(double_ace_flush), bool(ace_low_four_straight))
    table = _TABLES.get(canonical)
    if table is None:
        table = _TABLES[canonical] = _Table(*canonical)
        _EVALUATORS[canonical] = table.make_fast()
    return table


def evaluator(*, canadian: bool = False, wild_ranks: Iterable[str] = (), double_ace_flush: bool = False,
              ace_low_four_straight: bool = True):
    """The evaluator of one configuration, a function ``cards -> HandValue``: the same answers
    as :func:`evaluate` with these options, without looking the options up on every call.

    >>> soko = evaluator(canadian=True)
    >>> str(soko("Kc 9c 5c 2c 7d"))
    'Four-flush, king high'
    """
    table = _table_for(canadian, wild_ranks, double_ace_flush, ace_low_four_straight)
    fast = _EVALUATORS[(table.canadian, table.wild, table.double_ace_flush, table.ace_low)]
    try:  # remember the options as given too, so evaluate() finds them in one look-up
        _EVALUATORS[canadian, wild_ranks, double_ace_flush, ace_low_four_straight] = fast
    except TypeError:  # an unhashable wild_ranks (a list): evaluate() comes here each time
        pass
    return fast


def evaluate(cards: Sequence[Card] | str, *, canadian: bool = False, wild_ranks: Iterable[str] = (),
             double_ace_flush: bool = False, ace_low_four_straight: bool = True) -> HandValue:
    """The value of 5 to 7 cards (best five) or of 1 to 4 up cards (a showing hand).

    ``canadian`` adds the four-flush and four-straight (Soko); ``wild_ranks`` lists the ranks
    that are wild (``("9",)``; a tuple is fastest); ``double_ace_flush`` lets a wild in a flush
    be an ace the hand already holds; ``ace_low_four_straight`` admits A-2-3-4 as the lowest
    four-straight. Raises ``ValueError`` for malformed or duplicate cards, an unknown wild rank,
    or a hand of 0 or more than 7 cards. For many hands under one configuration,
    :func:`evaluator` saves the look-up of the options.
    """
    # Without wild cards and extra options (the common calls), two identity tests find the
    # evaluator; () is the default, and CPython has one empty tuple.
    if wild_ranks is _NO_WILDS and double_ace_flush is False and ace_low_four_straight is True:
        if canadian is True:
            return _CANADIAN(cards)
        if canadian is False:
            return _STANDARD(cards)
    try:
        fast = _EVALUATORS[canadian, wild_ranks, double_ace_flush, ace_low_four_straight]
    except (KeyError, TypeError):
        fast = evaluator(canadian=canadian, wild_ranks=wild_ranks, double_ace_flush=double_ace_flush,
                         ace_low_four_straight=ace_low_four_straight)
    return fast(cards)


_NO_WILDS = ()
_STANDARD = evaluator()
_CANADIAN = evaluator(canadian=True)


# ---------------------------------------------------------------------------------------------
# The batch path: numpy tables keyed by rank multisets, for Monte-Carlo equity.

_POW5 = np.array([5 ** r for r in range(13)], dtype=np.int64)


def _multiset_ids(size: int) -> tuple[np.ndarray, np.ndarray]:
    """For ordered tuples of ``size`` ranks: (id of the rank multiset per tuple, base-5 code per id)."""
    combos = np.array(list(itertools.product(range(13), repeat=size)), dtype=np.int64).reshape(-1, size)
    codes = _POW5[combos].sum(axis=1)
    unique, ids = np.unique(codes, return_inverse=True)
    return ids.astype(np.int32), unique


class _Batch:
    """numpy tables for hands of ``n`` cards under one configuration."""

    def __init__(self, table: _Table, n: int):
        self.n = n
        self.head = n - 4  # the first 1-3 cards index one table, the last four another
        head_ids, head_codes = _multiset_ids(self.head)
        tail_ids, tail_codes = _multiset_ids(4)
        self.head_ids, self.tail_ids = head_ids, tail_ids
        self.tail_size = len(tail_codes)
        combined = (head_codes[:, None] + tail_codes[None, :]).ravel()
        unique, inverse = np.unique(combined, return_inverse=True)
        digits = (unique[:, None] // _POW5[None, :]) % 5
        # A rank dealt five times carries into the next base-5 digit, so its digits no longer
        # add up to n: such combinations cannot be dealt and keep the value -1.
        valid = digits.sum(axis=1) == n
        values = np.full(len(unique), -1, dtype=np.int64)
        wild_counts = np.zeros(len(unique), dtype=np.int8)
        wild = sorted(table.wild)
        for i in np.flatnonzero(valid):
            code = int(unique[i])
            entry = table.by_ranks.get(code) or table.rank_entry(code)
            values[i] = int(entry[0])
            wild_counts[i] = sum(int(digits[i, r]) for r in wild)
        self.values = values[inverse].astype(np.int32)  # scores fit in 24 bits
        self.wilds = wild_counts[inverse]
        self.flush = _flush_table(table.canadian, table.double_ace_flush)
        card_suit = np.arange(52) & 3
        card_rank = np.arange(52) >> 2
        is_wild = np.isin(card_rank, wild)
        self.is_wild = is_wild
        self.suit_code = np.where(is_wild, 0, 1 << (3 * card_suit)).astype(np.int32)
        counts = (np.arange(1 << 12)[:, None] >> (3 * np.arange(4))[None, :]) & 7
        threshold = 4 if table.canadian else 5
        self.maybe_flush = (counts.max(axis=1)[None, :] + np.arange(8)[:, None]) >= threshold
        self.canadian = table.canadian


_FLUSH_TABLES: dict[tuple[bool, bool], np.ndarray] = {}


def _flush_table(canadian: bool, double_ace_flush: bool) -> np.ndarray:
    """Flush-type scores of a five-card hand per (wild count, natural suited-rank mask), -1
    where there is none; a four-flush's fifth card is added by the caller. Which ranks are
    wild does not enter, so every wild rank shares one table."""
    key = (canadian, double_ace_flush)
    table = _FLUSH_TABLES.get(key)
    if table is None:
        table = np.full((8, 1 << 13), -1, dtype=np.int64)
        threshold = 4 if canadian else 5
        for mask in range(1 << 13):
            count = mask.bit_count()
            for w in range(max(0, threshold - count), 8 - count):
                table[w, mask] = _flush_score(mask, w, 5, -1, canadian=canadian,
                                              double_ace_flush=double_ace_flush)
        _FLUSH_TABLES[key] = table
    return table


def evaluate_batch(cards: np.ndarray, *, canadian: bool = False, wild_ranks: Iterable[str] = (),
                   double_ace_flush: bool = False, ace_low_four_straight: bool = True) -> np.ndarray:
    """Scores (int64) of many hands at once: ``cards`` is an integer array (N, n), n in 5..7,
    of card indices 0..51; row i scores as ``int(evaluate(cards[i], ...))``.

    Duplicate cards within a row are not checked here (the caller deals them from a deck)."""
    cards = np.asarray(cards)
    if cards.ndim != 2 or not 5 <= cards.shape[1] <= 7:
        raise ValueError(f"evaluate_batch takes an (N, 5..7) array of card indices, not shape {cards.shape}")
    if not np.issubdtype(cards.dtype, np.integer):
        raise ValueError(f"evaluate_batch takes integer card indices, not {cards.dtype}")
    if cards.size and (cards.min() < 0 or cards.max() > 51):
        raise ValueError("card indices must be 0..51")
    table = _table_for(canadian, tuple(wild_ranks), double_ace_flush, ace_low_four_straight)
    n = cards.shape[1]
    batch = table.batch.get(n)
    if batch is None:
        batch = table.batch[n] = _Batch(table, n)
    if len(cards) <= _CHUNK:
        return _evaluate_rows(batch, cards)
    # numpy lets go of the GIL in these loops, so chunks on threads use every core.
    chunks = [cards[i:i + _CHUNK] for i in range(0, len(cards), _CHUNK)]
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:
        return np.concatenate(list(pool.map(lambda c: _evaluate_rows(batch, c), chunks)))


_CHUNK = 1 << 16
_THREADS = max(1, min(4, os.cpu_count() or 1))


def _evaluate_rows(batch: _Batch, cards: np.ndarray) -> np.ndarray:
    n = cards.shape[1]
    columns = [cards[:, j].astype(np.int32) for j in range(n)]  # contiguous, one per card
    ranks = [c >> 2 for c in columns]
    head = ranks[0]
    for j in range(1, batch.head):
        head = head * 13 + ranks[j]
    tail = ((ranks[-4] * 13 + ranks[-3]) * 13 + ranks[-2]) * 13 + ranks[-1]
    index = batch.head_ids[head] * batch.tail_size + batch.tail_ids[tail]
    values = batch.values[index].astype(np.int64)
    wilds = batch.wilds[index]
    suit_code = batch.suit_code
    suit_sum = suit_code[columns[0]]
    for c in columns[1:]:
        suit_sum = suit_sum + suit_code[c]
    rows = np.flatnonzero(batch.maybe_flush[wilds, suit_sum])
    if rows.size:
        sub = cards[rows].astype(np.int64)
        sub_rank = sub >> 2
        sub_suit = sub & 3
        natural = ~batch.is_wild[sub]
        sub_wilds = wilds[rows].astype(np.int64)
        best = values[rows]
        bits = np.left_shift(1, sub_rank)
        for s in range(4):
            in_suit = natural & (sub_suit == s)
            mask = np.where(in_suit, bits, 0).sum(axis=1)
            score = batch.flush[sub_wilds, mask]
            if batch.canadian:
                fifth = np.where(natural & ~in_suit, sub_rank + 1, 0).max(axis=1)
                four = (score >> _CATEGORY_SHIFT) == Category.FOUR_FLUSH
                score = np.where(four & (fifth > 0), score | fifth, score)
            best = np.maximum(best, score)
        values[rows] = best
    return values
