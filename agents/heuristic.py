"""Baseline agents, each a few clear rules. They read only the :class:`PlayerView`.

**random** picks uniformly among the legal action ids: folding (when it is offered), checking
or calling, and every bet or raise size on offer are equally likely.

**call** is a calling station: it always checks or calls (and posts the bring-in), never folds
and never bets or raises.

**raise** is a maniac: it bets or raises the smallest size on offer whenever it may (completing
the bring-in too), and calls only when the raise cap or an all-in leaves no raise.

**tag** plays tight-aggressive by a strength tier read from the cards it can see. Its own cards
(face down and face up) are valued with the game's ranking, counting the wild ranks in force in
Follow the Bitch and the four-flush and four-straight in Soko (``envs.engine.hands.evaluate``:
with fewer than five cards this is the showing hand, so pairs and trips count early). A hand
reaches *raise* (tier 3), *call* (tier 2) or *give up* (tier 1) by per-street thresholds in
:data:`TAG_THRESHOLDS`; an open draw (one card short of a flush, straight, four-flush or
four-straight, wild cards filling gaps, with cards still to come) is worth at least *call*. If
an opponent still in the hand already shows, on its face-up cards alone, a hand as good as all
of tag's cards, the tier drops by one. With Low Chicago, holding the ace of spades face down
(the lowest spade: half of every pot it contests) is worth at least *call*, and one tier more.
Tier 3 bets or raises (the smallest size on offer, the middle one outside fixed limit), tier 2
checks or calls, tier 1 checks when free and folds otherwise. When the bring-in is due it
completes with tier 3 and posts the bring-in otherwise. Its options ``raise_shift`` and
``call_shift`` move the bars up (tighter) or down (looser) by ranks, for variants of tag.

The Monte-Carlo **equity** agent lives in :mod:`agents.equity`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.base import CHECK_CALL, FIRST_BET, FOLD, Agent, legal_ids
from envs.actions import random_action
from envs.engine.cards import Card
from envs.engine.game import PlayerView
from envs.engine.hands import Category, HandValue
from envs.engine.rules import Betting, Rules, low_chicago_key, rules_evaluator

__all__ = ["RandomAgent", "CallAgent", "RaiseAgent", "TagAgent", "BatchedTag", "BatchedRandom", "BatchedCall",
           "BatchedRaise", "hand_value", "draw_gap", "TAG_THRESHOLDS", "pick_bet"]


class RandomAgent(Agent):
    """Uniform over the legal action ids (``envs.actions.random_action``, which the training
    env's built-in ``"random"`` opponent plays too)."""

    randomises = True

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        return random_action(action_mask, self.rng)

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """Uniform over the legal ids: what :meth:`act` draws from."""
        return self._uniform(action_mask)

    @staticmethod
    def _uniform(action_mask: np.ndarray) -> np.ndarray:
        legal = np.asarray(action_mask) != 0
        return legal / legal.sum()

    def blind_policy(self, action_mask: np.ndarray) -> np.ndarray | None:
        return self._uniform(action_mask) if type(self) is RandomAgent else None

    def batched(self, rules: Rules) -> BatchedRandom | None:
        return BatchedRandom() if type(self) is RandomAgent else None


class CallAgent(Agent):
    """Calling station: always checks or calls."""

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        return CHECK_CALL

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """A one-hot on :meth:`act`'s choice (for exact best responses)."""
        return _one_hot(self.act(view, action_mask), action_mask)

    def blind_policy(self, action_mask: np.ndarray) -> np.ndarray | None:
        return _one_hot(CHECK_CALL, action_mask) if type(self) is CallAgent else None

    def batched(self, rules: Rules) -> BatchedCall | None:
        return BatchedCall() if type(self) is CallAgent else None


class RaiseAgent(Agent):
    """Maniac: bets or raises (smallest size) whenever it may, else checks or calls."""

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        return self._choice(action_mask)

    @staticmethod
    def _choice(action_mask: np.ndarray) -> int:
        return FIRST_BET if len(action_mask) > FIRST_BET and action_mask[FIRST_BET] else CHECK_CALL

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """A one-hot on :meth:`act`'s choice (for exact best responses)."""
        return _one_hot(self.act(view, action_mask), action_mask)

    def blind_policy(self, action_mask: np.ndarray) -> np.ndarray | None:
        return _one_hot(self._choice(action_mask), action_mask) if type(self) is RaiseAgent else None

    def batched(self, rules: Rules) -> BatchedRaise | None:
        return BatchedRaise() if type(self) is RaiseAgent else None


class BatchedRandom:
    """:class:`RandomAgent` for many hand slots of an ``envs.batched.BatchedGame`` at once
    (``agents.base.BatchedPolicy``): uniform over each slot's legal ids, one ``rng`` draw each."""

    observation_features = None

    def act_slots(self, game, slots, *, rng: np.random.Generator, stream=None) -> np.ndarray:
        legal = game.action_mask[slots].astype(bool)
        nth = (rng.random(len(slots)) * legal.sum(axis=1)).astype(np.int64)
        return (np.cumsum(legal, axis=1) <= nth[:, None]).sum(axis=1)


class BatchedCall:
    """:class:`CallAgent` for many hand slots at once: check or call."""

    observation_features = None

    def act_slots(self, game, slots, *, rng=None, stream=None) -> np.ndarray:
        return np.full(len(slots), CHECK_CALL, dtype=np.int64)


class BatchedRaise:
    """:class:`RaiseAgent` for many hand slots at once: the smallest bet or raise when offered,
    else check or call."""

    observation_features = None

    def act_slots(self, game, slots, *, rng=None, stream=None) -> np.ndarray:
        if game.num_actions > FIRST_BET:
            return np.where(game.action_mask[slots, FIRST_BET] != 0, FIRST_BET, CHECK_CALL)
        return np.full(len(slots), CHECK_CALL, dtype=np.int64)


def _one_hot(action: int, action_mask: np.ndarray) -> np.ndarray:
    out = np.zeros(len(action_mask))
    out[action] = 1.0
    return out


def pick_bet(action_mask: np.ndarray, *, large: bool = False) -> int | None:
    """The bet/raise id to use: the smallest size, or the middle one (``large``) when several
    sizes are offered; None when no bet or raise is legal."""
    bets = legal_ids(action_mask)
    bets = bets[bets >= FIRST_BET]
    if not len(bets):
        return None
    return int(bets[len(bets) // 2] if large else bets[0])


# ---------------------------------------------------------------------------------------------
# Hand strength from visible cards


def hand_value(cards, rules: Rules, wild_ranks=()) -> HandValue:
    """The value of ``cards`` under ``rules`` (1-4 cards: the showing hand; 5-7: the best five)."""
    return rules_evaluator(rules, tuple(wild_ranks))(tuple(cards))


def draw_gap(cards, wild_ranks=(), *, length: int = 5, ace_low: bool = True) -> tuple[int, int]:
    """How many more cards a flush and a straight of ``length`` cards need, wild cards filling
    gaps: ``(flush_gap, straight_gap)``; 0 means already made.

    >>> from envs.engine.cards import parse_cards
    >>> draw_gap(parse_cards("Ah Kh 7h 2c"))        # three hearts; A-K is three short of a straight
    (2, 3)
    >>> draw_gap(parse_cards("9c Tc Jd 3s"), length=4)
    (2, 1)
    """
    wild = {r for r in wild_ranks}
    natural = [c for c in cards if Card(c).rank not in wild]
    wilds = len(cards) - len(natural)
    suits = [0, 0, 0, 0]
    for c in natural:
        suits[c & 3] += 1
    flush_gap = max(0, length - max(suits) - wilds)
    ranks = {c >> 2 for c in natural}
    if 12 in ranks and ace_low:
        ranks.add(-1)  # the ace also plays low (A-2-3-4-5, and A-2-3-4 in Soko)
    best = 0
    for low in range(-1, 14 - length):
        best = max(best, sum(1 for r in range(low, low + length) if r in ranks))
    straight_gap = max(0, length - best - wilds)
    return flush_gap, straight_gap


@dataclass(frozen=True)
class _Bar:
    """A strength bar: a category, and within it the smallest top rank (0 = any)."""

    category: Category
    top_rank: int = 0  # rank index of the first tie-break card, 0..12

    def met_by(self, value: HandValue) -> bool:
        cat = value.category
        if cat != self.category:
            return cat > self.category
        top = (int(value) >> 16) & 15  # first tie-break rank + 1
        return top - 1 >= self.top_rank

    def shifted(self, ranks: int) -> "_Bar":
        """The bar ``ranks`` top ranks higher (negative: lower), carrying into the next category
        up (or down) past an ace (a deuce); clamped to the weakest and strongest bars."""
        top = max(Category) * 13 + 12
        index = min(top, max(0, int(self.category) * 13 + self.top_rank + ranks))
        return _Bar(Category(index // 13), index % 13)


_R = {r: i for i, r in enumerate("23456789TJQKA")}

# Per game kind and number of own cards: (raise bar, call bar). Soko: five cards, the
# four-flush and four-straight between one pair and two pair; Follow the Bitch: seven cards with
# wild cards, so the bars sit higher.
TAG_THRESHOLDS: dict[str, dict[int, tuple[_Bar, _Bar]]] = {
    "soko": {
        2: (_Bar(Category.ONE_PAIR, _R["7"]), _Bar(Category.HIGH_CARD, _R["J"])),
        3: (_Bar(Category.ONE_PAIR, _R["T"]), _Bar(Category.HIGH_CARD, _R["A"])),
        4: (_Bar(Category.ONE_PAIR, _R["J"]), _Bar(Category.ONE_PAIR, 0)),
        5: (_Bar(Category.ONE_PAIR, _R["Q"]), _Bar(Category.ONE_PAIR, 0)),
    },
    "wild": {
        3: (_Bar(Category.ONE_PAIR, _R["T"]), _Bar(Category.HIGH_CARD, _R["A"])),
        5: (_Bar(Category.THREE_OF_A_KIND, 0), _Bar(Category.ONE_PAIR, _R["J"])),
        7: (_Bar(Category.STRAIGHT, 0), _Bar(Category.THREE_OF_A_KIND, 0)),
    },
}


def _thresholds(rules: Rules, known: int, raise_shift: int = 0, call_shift: int = 0) -> tuple[_Bar, _Bar]:
    table = TAG_THRESHOLDS["wild" if rules.follow_the_queen else "soko"]
    if known not in table:
        # Another deal schedule: use the nearest row at or below this many cards.
        below = [k for k in table if k <= known]
        known = max(below) if below else min(table)
    raise_bar, call_bar = table[known]
    return raise_bar.shifted(raise_shift), call_bar.shifted(call_shift)


class TagAgent(Agent):
    """Tight-aggressive rules on made-hand strength and draws (see the module docstring).

    ``raise_shift`` and ``call_shift`` move the raise and call bars of :data:`TAG_THRESHOLDS` by
    that many ranks, carrying across categories (``tag:raise_shift=2``: a pair of sevens that
    raised now needs nines; negative values loosen), so variants of the same rules can be played
    against (``tag:raise_shift=-3,call_shift=-2`` is looser and more aggressive).

    >>> from envs.engine.rules import get_rules
    >>> _thresholds(get_rules("soko"), 2, raise_shift=9)[0]   # a pair of 7s, 9 ranks up: past the aces
    _Bar(category=<Category.FOUR_STRAIGHT: 2>, top_rank=1)
    """

    def __init__(self, *, raise_shift: int = 0, call_shift: int = 0) -> None:
        super().__init__()
        self.raise_shift = raise_shift
        self.call_shift = call_shift

    def tier(self, view: PlayerView) -> int:
        """3 raise, 2 call, 1 give up (check if free, else fold)."""
        rules = view.rules
        wild = view.wild_ranks
        mine = tuple(view.hole_cards) + tuple(view.up_cards[view.seat])
        value = hand_value(mine, rules, wild)
        raise_bar, call_bar = _thresholds(rules, len(mine), self.raise_shift, self.call_shift)
        tier = 3 if raise_bar.met_by(value) else 2 if call_bar.met_by(value) else 1
        to_come = rules.cards_per_player - len(mine)
        if to_come and tier < 2:
            # An open draw: one card short of a flush-type or straight-type hand (Soko's
            # four-flush and four-straight count), with cards still to come.
            length = 4 if rules.canadian_hands else 5
            flush_gap, straight_gap = draw_gap(
                mine, wild, length=length, ace_low=rules.ace_low_four_straight or not rules.canadian_hands)
            if min(flush_gap, straight_gap) <= 1:
                tier = 2
        # An opponent already showing as much as all our cards make: one tier down.
        for seat, up in enumerate(view.up_cards):
            if seat != view.seat and not view.folded[seat] and up:
                if hand_value(up, rules, wild) >= value:
                    tier -= 1
                    break
        if rules.low_chicago and any(low_chicago_key(c) == 0 for c in view.hole_cards):
            # the lowest spade face down (As): half of every pot it contests
            tier = max(2, tier + 1)
        return max(1, min(3, tier))

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        tier = self.tier(view)
        if tier >= 3:
            bet = pick_bet(action_mask, large=view.rules.betting != Betting.FIXED_LIMIT)
            if bet is not None:
                return bet
            return CHECK_CALL
        if tier == 2 or not action_mask[FOLD]:
            return CHECK_CALL  # check, call, or post the forced bring-in
        return FOLD

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """A one-hot on :meth:`act`'s choice (for exact best responses)."""
        return _one_hot(self.act(view, action_mask), action_mask)

    def batched(self, rules: Rules) -> BatchedTag | None:
        """The core's port (:class:`BatchedTag`) with these bars; none for a subclass."""
        if type(self) is not TagAgent:
            return None
        return BatchedTag(rules, raise_shift=self.raise_shift, call_shift=self.call_shift)


class BatchedTag:
    """:meth:`TagAgent.act` for many hands of an ``envs.batched.BatchedGame`` at once: the
    compiled core's port of the same rules (``src/agents/heuristic.h``),
    given the bars of :data:`TAG_THRESHOLDS` for these rules as data. The training VecEnv
    (``train/batched_vec.py``) plays its ``tag`` opponents with it; ``tests/test_batched_vec.py``
    holds it equal to :class:`TagAgent` on random states of every preset.

    >>> from envs.batched import BatchedGame
    >>> g = BatchedGame("soko", 2, 4)
    >>> g.reset(seeds=range(4))
    >>> BatchedTag("soko").act(g, [0, 1, 2, 3]).shape
    (4,)
    """

    def __init__(self, rules: Rules | str, *, raise_shift: int = 0, call_shift: int = 0) -> None:
        from envs import _stud_core
        from envs.engine.rules import get_rules

        self.rules = rules = get_rules(rules)
        bars = []
        for known in range(8):  # the core ranks at most seven cards
            raise_bar, call_bar = _thresholds(rules, known, raise_shift, call_shift)
            bars.append([int(raise_bar.category), raise_bar.top_rank,
                         int(call_bar.category), call_bar.top_rank])
        self._core = _stud_core.TagPolicy(
            bars, draw_length=4 if rules.canadian_hands else 5,
            ace_low=rules.ace_low_four_straight or not rules.canadian_hands,
            large=rules.betting != Betting.FIXED_LIMIT)

    observation_features = None   # agents.base.BatchedPolicy: it reads the core's hands

    def act(self, game, slots) -> np.ndarray:
        """Tag's action id (int64) in each of ``slots`` of ``game``, hands with a player to act."""
        return self._core.act(game._core, np.asarray(slots, dtype=np.int64))

    def act_slots(self, game, slots, *, rng=None, stream=None) -> np.ndarray:
        """:meth:`act` as an ``agents.base.BatchedPolicy`` (tag draws nothing)."""
        return self.act(game, slots)
