"""A slow, obviously-correct reference hand evaluator for the tests.

Written independently of ``envs/engine/hands.py`` and compared against it on many random hands
(tests/test_hands.py). It follows ``docs/rules.md`` literally and prefers brute force to
cleverness:

- 5..7 cards: every five-card subset is scored and the best one wins.
- 1..4 cards (a showing hand): the cards are scored as they are, with only the categories that
  many cards allow (no straight, flush or full house below five cards; four-flush and
  four-straight need four cards and ``canadian=True``).
- A wild card is tried as every possible substitute. Two independent paths, whose best is the
  hand's value:

  * rank path (every category that ignores suits: high card .. five of a kind, straight,
    four-straight): each wild becomes every rank, duplicates of held cards allowed (that is
    how five of a kind happens);
  * suit path (flush, straight flush, four-flush): all the suited cards are of one suit and
    each wild becomes a card of that suit that the hand does not already hold (no two equal
    cards in a flush), except that with ``double_ace_flush`` a wild may be the ace of the suit
    even if that ace is held (A-A-9-5-2 flush).

  Results are memoized on the rank multiset (rank path) and the suited ranks (suit path), which
  keeps thousands of random seven-card hands with one or two wild ranks fast enough for tests.

Score format (the contract): ``category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5``
with ``r_i = rank_index + 1`` and 0 for an empty slot.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations, combinations_with_replacement

from envs.engine.cards import RANKS, parse_cards

# Category numbers, copied from the contract (deliberately not imported from hands.py).
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

CATEGORY_NAMES = {
    HIGH_CARD: "HIGH_CARD", ONE_PAIR: "ONE_PAIR", FOUR_STRAIGHT: "FOUR_STRAIGHT",
    FOUR_FLUSH: "FOUR_FLUSH", TWO_PAIR: "TWO_PAIR", THREE_OF_A_KIND: "THREE_OF_A_KIND",
    STRAIGHT: "STRAIGHT", FLUSH: "FLUSH", FULL_HOUSE: "FULL_HOUSE",
    FOUR_OF_A_KIND: "FOUR_OF_A_KIND", STRAIGHT_FLUSH: "STRAIGHT_FLUSH",
    FIVE_OF_A_KIND: "FIVE_OF_A_KIND",
}

ACE = 12  # rank index of the ace


def score(category: int, ranks: tuple[int, ...] | list[int]) -> int:
    """Pack a category and up to five tie-break rank indices (high to low) into a score."""
    assert len(ranks) <= 5
    value = category << 20
    for slot, rank in enumerate(ranks):
        value |= (rank + 1) << (16 - 4 * slot)
    return value


def category_of(value: int) -> int:
    return value >> 20


def tie_break_ranks(value: int) -> tuple[int, ...]:
    """The tie-break rank indices of a score, empty slots dropped."""
    nibbles = [(value >> (16 - 4 * slot)) & 15 for slot in range(5)]
    return tuple(n - 1 for n in nibbles if n)


# --- helpers on plain rank indices ----------------------------------------------------------


def _straight_top(ranks: tuple[int, ...]) -> int | None:
    """Top rank index if the five ranks are five distinct consecutive ranks (A-2-3-4-5 too)."""
    distinct = sorted(set(ranks))
    if len(distinct) != 5 or len(ranks) != 5:
        return None
    if distinct[4] - distinct[0] == 4:
        return distinct[4]
    if distinct == [0, 1, 2, 3, ACE]:  # the wheel: the five is the top card
        return 3
    return None


def _four_straight_top(ranks: tuple[int, ...], ace_low: bool) -> int | None:
    """Top rank index if the four ranks are four distinct consecutive ranks, else None.

    J-Q-K-A is the highest, A-2-3-4 the lowest (only when ace_low), no wrap-around.
    """
    distinct = sorted(set(ranks))
    if len(distinct) != 4 or len(ranks) != 4:
        return None
    if distinct[3] - distinct[0] == 3:
        return distinct[3]
    if ace_low and distinct == [0, 1, 2, ACE]:
        return 2  # A-2-3-4: the four is the top card
    return None


def _desc(ranks) -> list[int]:
    return sorted(ranks, reverse=True)


@lru_cache(maxsize=None)
def _score_concrete_ranks(ranks: tuple[int, ...], canadian: bool, ace_low: bool) -> int:
    """Best score of k concrete ranks (1..5, duplicates allowed), suit categories excluded.

    Every category that applies is scored and the maximum taken, so there is no precedence
    logic to get wrong.
    """
    k = len(ranks)
    counts = Counter(ranks)
    # groups: (count, rank) biggest group first, higher rank first among equal groups
    groups = sorted(((c, r) for r, c in counts.items()), reverse=True)
    pattern = tuple(c for c, _ in groups)
    candidates = [score(HIGH_CARD, _desc(ranks))] if pattern[0] == 1 else []

    if pattern[0] == 5:
        candidates.append(score(FIVE_OF_A_KIND, [groups[0][1]]))
    if pattern[0] == 4:
        quad = groups[0][1]
        candidates.append(score(FOUR_OF_A_KIND, [quad] + _desc(r for r in ranks if r != quad)))
    if k == 5 and pattern == (3, 2):
        candidates.append(score(FULL_HOUSE, [groups[0][1], groups[1][1]]))
    if pattern[0] == 3 and pattern[1:2] != (2,):
        trips = groups[0][1]
        candidates.append(
            score(THREE_OF_A_KIND, [trips] + _desc(r for r in ranks if r != trips))
        )
    if pattern[:2] == (2, 2):
        high, low = sorted((groups[0][1], groups[1][1]), reverse=True)
        candidates.append(
            score(TWO_PAIR, [high, low] + _desc(r for r in ranks if r not in (high, low)))
        )
    if pattern[0] == 2 and pattern[1:2] != (2,):
        pair = groups[0][1]
        candidates.append(score(ONE_PAIR, [pair] + _desc(r for r in ranks if r != pair)))
    if k == 5:
        top = _straight_top(ranks)
        if top is not None:
            candidates.append(score(STRAIGHT, [top]))
    if canadian and k >= 4:
        for four_positions in combinations(range(k), 4):
            four = tuple(ranks[i] for i in four_positions)
            top = _four_straight_top(four, ace_low)
            if top is None:
                continue
            fifth = [ranks[i] for i in range(k) if i not in four_positions]
            candidates.append(score(FOUR_STRAIGHT, [top] + fifth))
    return max(candidates)


@lru_cache(maxsize=None)
def _rank_path(natural_ranks: tuple[int, ...], wilds: int, canadian: bool, ace_low: bool) -> int:
    """Best suit-free score: each wild tried as every rank (duplicates of held cards allowed)."""
    best = -1
    for substitutes in combinations_with_replacement(range(13), wilds):
        ranks = tuple(sorted(natural_ranks + substitutes))
        best = max(best, _score_concrete_ranks(ranks, canadian, ace_low))
    return best


@lru_cache(maxsize=None)
def _wild_suit_substitutes(
    held: tuple[int, ...], wilds: int, double_ace_flush: bool
) -> tuple[tuple[int, ...], ...]:
    """Every choice of ranks (of the flush suit) that ``wilds`` wild cards can stand for.

    A wild is a card of the suit that is not already held and not another wild's card; with
    double_ace_flush it may also be the ace of the suit even if held.
    """
    choices = []
    for substitutes in combinations_with_replacement(range(13), wilds):
        taken = Counter(held) + Counter(substitutes)
        if all(count == 1 or (double_ace_flush and rank == ACE) for rank, count in taken.items()):
            choices.append(substitutes)
    return tuple(choices)


@lru_cache(maxsize=None)
def _flush_path(held: tuple[int, ...], wilds: int, double_ace_flush: bool) -> int:
    """Best flush or straight flush from ``held`` suited ranks plus wilds (five cards in all)."""
    assert len(held) + wilds == 5
    best = -1
    for substitutes in _wild_suit_substitutes(held, wilds, double_ace_flush):
        ranks = tuple(sorted(held + substitutes))
        top = _straight_top(ranks)
        if top is not None:
            best = max(best, score(STRAIGHT_FLUSH, [top]))
        best = max(best, score(FLUSH, _desc(ranks)))
    return best


@lru_cache(maxsize=None)
def _four_flush_path(
    held: tuple[int, ...], wilds: int, fifth: tuple[int, ...], double_ace_flush: bool
) -> int:
    """Best four-flush: ``held`` suited ranks plus wilds make the four, ``fifth`` the rest."""
    assert len(held) + wilds == 4
    best = -1
    for substitutes in _wild_suit_substitutes(held, wilds, double_ace_flush):
        best = max(best, score(FOUR_FLUSH, _desc(held + substitutes) + list(fifth)))
    return best


def _score_cards(
    cards: tuple[int, ...], wild: frozenset[int], canadian: bool, double_ace_flush: bool,
    ace_low: bool,
) -> int:
    """Score 1..5 cards (as card indices) taken together, no subset selection."""
    k = len(cards)
    naturals = [c for c in cards if (c >> 2) not in wild]
    wilds = k - len(naturals)
    natural_ranks = tuple(sorted(c >> 2 for c in naturals))
    best = _rank_path(natural_ranks, wilds, canadian, ace_low)
    for suit in range(4):
        held = tuple(sorted(c >> 2 for c in naturals if c & 3 == suit))
        others = tuple(c >> 2 for c in naturals if c & 3 != suit)
        if k == 5 and len(held) + wilds == 5:
            best = max(best, _flush_path(held, wilds, double_ace_flush))
        if canadian and k >= 4 and len(held) + wilds == 4:
            # exactly four of the suit (wilds included); the fifth card, if any, is off-suit
            best = max(best, _four_flush_path(held, wilds, others, double_ace_flush))
    return best


def reference_evaluate(
    cards,
    *,
    canadian: bool = False,
    wild_ranks=(),
    double_ace_flush: bool = False,
    ace_low_four_straight: bool = True,
) -> int:
    """Score of the best hand in ``cards`` (1..7 cards) per the engine contract, as an int."""
    parsed = parse_cards(cards)
    if not 1 <= len(parsed) <= 7:
        raise ValueError(f"a hand has 1 to 7 cards, not {len(parsed)}")
    if isinstance(wild_ranks, str):
        wild_ranks = (wild_ranks,)
    wild = set()
    for rank in wild_ranks:
        if not isinstance(rank, str) or len(rank) != 1 or rank.upper() not in RANKS:
            raise ValueError(f"unknown wild rank {rank!r}")
        wild.add(RANKS.index(rank.upper()))
    wild = frozenset(wild)
    indices = tuple(int(c) for c in parsed)
    if len(indices) <= 5:
        subsets = [indices]
    else:
        subsets = combinations(indices, 5)
    return max(
        _score_cards(subset, wild, canadian, double_ace_flush, ace_low_four_straight)
        for subset in subsets
    )
