"""The **equity** agent: Monte-Carlo equity from what its seat can see, against pot odds.

The equity itself is :func:`envs.engine.equity.equity` (the engine's, shared with the
observation's optional ``win_probability`` piece): the seat's expected share of the pot at
showdown, assuming nobody folds from here on, over random deals of the cards it cannot see
(with the follow-the-queen wild rank replayed and Low Chicago's half pot; see that module).

**equity** (``equity:samples=300,raise_edge=0.3,call_margin=0.0``): with equity ``e`` and
``n`` players in the hand (a fair share is ``1/n``), it bets or raises when
``e >= 1/n + raise_edge * (1 - 1/n)`` (heads-up: 0.65), otherwise checks when free, calls when
the pot odds pay (``e >= to_call / (pot + to_call) + call_margin``), and folds otherwise. Forced
choices (a single legal id) skip the simulation. Outside fixed limit it bets the middle size on
offer when ``e`` clears the bar by half the remaining margin, else the smallest.

A decision is a function of the view and one key: :meth:`EquityAgent.act` draws the key (an int
in ``[0, 2**63)``) from the agent's generator and calls :meth:`EquityAgent.decide`, whose
estimate is the mean share over ``samples`` deals of ``envs.engine.equity.sample_deals`` seeded
with ``[key]``. :class:`BatchedEquity` makes the same decisions in the compiled core, many hands
at once (the batched training env's equity opponents).

Its :meth:`EquityAgent.policy` is the distribution of that decision over the agent's own
Monte-Carlo draw, for the local and exact best responses (``arena/lbr.py``, ``arena/exact.py``):
each action gets the chance that the estimate from ``samples`` deals lands in its range, with
the chances of a deal's pot shares measured over ``POLICY_DEALS`` deals, or exact where the
unseen cards fall in no more ways (the last street heads-up); the distribution of the estimate
is then exact for those chances. The rule on the chances of reaching its bars is
:func:`decision_chances`, for one view or for arrays of card situations (the exact solver asks
once per seat, round, public cards and face-down card, not per information set). The chances
are themselves estimated, so ``randomises`` stays False: the luck correction never uses this
policy.

>>> from envs.engine.game import Game
>>> g = Game("soko", 2, deck="As 2c Ah 3d Ad 4c", seed=1)  # seat 1: As Ah Ad, seat 0: 2c 3d 4c
>>> g.check_or_call(); g.check_or_call()                   # bring-in, call: 3rd cards dealt
>>> equity(g.view(1), 2000, np.random.default_rng(0)) > 0.85  # three aces against a draw
True
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from agents.base import CHECK_CALL, FOLD, Agent, legal_ids
from agents.heuristic import pick_bet
from envs.engine.equity import SHARE_UNITS, equity, share_units, warm_up
from envs.engine.game import PlayerView
from envs.engine.rules import Rules

__all__ = ["equity", "EquityAgent", "BatchedEquity", "decision_chances", "warm_up", "POLICY_DEALS",
           "KEY_LIMIT"]

KEY_LIMIT = 2**63
"""Keys of :meth:`EquityAgent.decide` are ints in ``[0, KEY_LIMIT)``."""

POLICY_DEALS = 5000
"""Deals over which :meth:`EquityAgent.policy` measures the chances of the pot shares (every
deal, once each, when there are no more)."""


class EquityAgent(Agent):
    """Bets on high Monte-Carlo equity, calls when the pot odds pay, folds otherwise."""

    def __init__(self, *, samples: int = 300, raise_edge: float = 0.3, call_margin: float = 0.0) -> None:
        super().__init__()
        if samples < 1:
            raise ValueError(f"equity: samples must be at least 1, not {samples}")
        if not 0.0 <= raise_edge <= 1.0:
            raise ValueError(f"equity: raise_edge must lie in [0, 1], not {raise_edge}")
        self.samples = samples
        self.raise_edge = raise_edge
        self.call_margin = call_margin
        self.last_equity: float | None = None

    def warm_up(self, rules: Rules) -> None:
        warm_up(rules)

    def _bars(self, view: PlayerView) -> tuple[float, float, float]:
        """The equity needed to bet, to bet the larger size, and to call (when facing a bet)."""
        n = sum(1 for f in view.folded if not f)
        fair = 1.0 / n
        raise_at = fair + self.raise_edge * (1.0 - fair)
        price = view.to_call / (view.pot + view.to_call) if view.to_call else 0.0
        return raise_at, raise_at + (1.0 - raise_at) / 2, price + self.call_margin

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        """:meth:`decide` with a fresh key from the agent's generator (none for a forced choice)."""
        legal = legal_ids(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        return self.decide(view, action_mask, int(self.rng.integers(KEY_LIMIT)))

    def decide(self, view: PlayerView, action_mask: np.ndarray, key: int) -> int:
        """The action id given the key of the simulation: the equity estimate is the mean share
        over ``samples`` deals of ``envs.engine.equity.sample_deals`` seeded with ``[key]``
        (:class:`BatchedEquity` makes the same decision in the compiled core)."""
        legal = legal_ids(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        e = self.last_equity = equity(view, self.samples, key=key)
        raise_at, large_at, call_at = self._bars(view)
        if e >= raise_at:
            bet = pick_bet(action_mask, large=e >= large_at)
            if bet is not None:
                return bet
        if view.to_call == 0 or not action_mask[FOLD]:
            return CHECK_CALL
        return CHECK_CALL if e >= call_at else FOLD

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """The chance of each action id: :meth:`act`'s rule applied to the distribution of its
        estimate (see the module docstring)."""
        legal = legal_ids(action_mask)
        if len(legal) == 1:
            probs = np.zeros(len(action_mask))
            probs[legal[0]] = 1.0
            return probs
        at_least = self._estimate_at_least(view)
        raise_at, large_at, call_at = self._bars(view)
        return decision_chances(action_mask, to_call=view.to_call, at_raise=at_least(raise_at),
                                at_large=at_least(large_at), at_call=at_least(call_at))

    def batched(self, rules: Rules) -> BatchedEquity | None:
        """The core's port (:class:`BatchedEquity`) with these samples and bars; none for a subclass."""
        return BatchedEquity.like(self) if type(self) is EquityAgent else None

    def share_estimator(self) -> EquityAgent | None:
        """This agent: its policy is :func:`decision_chances` of the distribution of its
        estimate (:meth:`deal_shares`, :meth:`estimate_at_least_of`); none for a subclass."""
        return self if type(self) is EquityAgent else None

    def _estimate_at_least(self, view: PlayerView) -> Callable[[float], float]:
        """``bar -> P(act's estimate >= bar)`` at ``view``: :meth:`estimate_at_least_of` the
        pot shares of ``POLICY_DEALS`` deals (every deal, once each, when there are no more)."""
        return self.estimate_at_least_of(self.deal_shares(view))

    def deal_shares(self, view: PlayerView) -> np.ndarray:
        """The seat's pot share (in :data:`SHARE_UNITS`) in each of ``POLICY_DEALS`` random deals
        of the cards it cannot see, or in every deal, once each, when there are no more."""
        return share_units(view, max(POLICY_DEALS, self.samples), self.rng, max_exact=POLICY_DEALS)

    def estimate_at_least_of(self, units: np.ndarray) -> Callable[[float], float]:
        """``bar -> P(act's estimate >= bar)`` when a deal's share (in whole
        :data:`SHARE_UNITS`) has the distribution of ``units``. The estimate is the mean share
        of ``samples`` deals; a deal's share takes a few values, and the sum of ``samples``
        such draws has the distribution of their ``samples``-fold convolution, computed exactly
        on the grid of the values' greatest common divisor. The estimate of each sum is the
        float ``act`` gets. It depends on ``units`` only through its values and their counts."""
        values, counts = np.unique(units, return_counts=True)
        step = int(np.gcd.reduce(values)) or 1
        kernel = np.zeros(int(values.max()) // step + 1)
        kernel[values // step] = counts / len(units)
        total, power, n = np.ones(1), kernel, self.samples   # kernel ** samples by squaring
        while n:
            if n & 1:
                total = np.convolve(total, power)
            n >>= 1
            if n:
                power = np.convolve(power, power)
        estimates = (np.arange(len(total)) * step) / (SHARE_UNITS * self.samples)

        def at_least(bar: float) -> float:
            return float(min(1.0, total[estimates >= bar].sum()))

        return at_least


def decision_chances(action_mask: np.ndarray, *, to_call: int, at_raise, at_large, at_call) -> np.ndarray:
    """The equity agent's decision rule on the chances that its estimate reaches its bars:
    ``at_raise``, ``at_large`` and ``at_call`` are P(estimate >= bar) for the bars of
    :meth:`EquityAgent._bars` (to bet, to bet the larger size, to call), either floats (one
    view: :meth:`EquityAgent.policy`) or arrays of one shape (many card situations sharing the
    mask and ``to_call``: ``arena/exact.py``). Returns the chance of each action id, shape
    ``(len(action_mask), *shape)``. Bets with the chance of reaching the bet bar (the larger
    size above its own bar), else checks when free, else calls when the estimate reaches the
    call bar and folds otherwise."""
    at_raise, at_large, at_call = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64)
                                                        for x in (at_raise, at_large, at_call)))
    probs = np.zeros((len(action_mask),) + at_raise.shape)
    small, large = pick_bet(action_mask), pick_bet(action_mask, large=True)
    bet = np.zeros(at_raise.shape)
    if small is not None:
        bet = at_raise
        above_large = np.minimum(bet, at_large)
        probs[large] += above_large
        probs[small] += bet - above_large
    rest = 1.0 - bet
    if to_call == 0 or not action_mask[FOLD]:
        probs[CHECK_CALL] += rest
    else:
        # Calls when call_at <= estimate (below raise_at when a bet was on offer).
        call = at_call if small is None else np.maximum(0.0, at_call - bet)
        call = np.minimum(call, rest)
        probs[CHECK_CALL] += call
        probs[FOLD] += rest - call
    return probs


class BatchedEquity:
    """:meth:`EquityAgent.decide` for many hands of an ``envs.batched.BatchedGame`` at once: the
    compiled core's port (``src/agents/equity.h``), the same deals
    for the same key, the same float equity, bars and bet sizes. The training VecEnv
    (``train/batched_vec.py``) plays its ``equity`` opponents with it;
    ``tests/test_batched_equity.py`` holds it equal to :meth:`EquityAgent.decide`.

    >>> from envs.batched import BatchedGame
    >>> g = BatchedGame("soko", 2, 4)
    >>> g.reset(seeds=range(4))
    >>> BatchedEquity(samples=100).act(g, [0, 1, 2, 3], keys=[5, 6, 7, 8]).shape
    (4,)
    """

    def __init__(self, *, samples: int = 300, raise_edge: float = 0.3, call_margin: float = 0.0) -> None:
        from envs import _stud_core

        EquityAgent(samples=samples, raise_edge=raise_edge, call_margin=call_margin)  # the same checks
        self.samples, self.raise_edge, self.call_margin = samples, raise_edge, call_margin
        self._core = _stud_core.EquityPolicy(samples=samples, raise_edge=float(raise_edge),
                                             call_margin=float(call_margin))

    @classmethod
    def like(cls, agent: EquityAgent) -> "BatchedEquity":
        """The batched form of ``agent`` (its samples and bars)."""
        return cls(samples=agent.samples, raise_edge=agent.raise_edge, call_margin=agent.call_margin)

    def act(self, game, slots, keys) -> np.ndarray:
        """The equity agent's action id (int64) in each of ``slots`` of ``game`` (hands with a
        player to act), the simulation of slot ``slots[k]`` keyed by ``keys[k]`` (ints in
        ``[0, KEY_LIMIT)``; a forced choice uses none)."""
        return self._core.act(game._core, *self._checked(slots, keys))

    observation_features = None   # agents.base.BatchedPolicy: it reads the core's hands

    def act_slots(self, game, slots, *, rng=None, stream: np.random.Generator) -> np.ndarray:
        """:meth:`act` as an ``agents.base.BatchedPolicy``: one key per slot from ``stream``."""
        return self.act(game, slots, stream.integers(KEY_LIMIT, size=len(slots)))

    def estimates(self, game, slots, keys) -> np.ndarray:
        """The equity (float64) :meth:`act` compares with its bars in each of ``slots``: the
        float ``envs.engine.equity.equity(view, samples, key=key)`` gives."""
        return self._core.estimates(game._core, *self._checked(slots, keys))

    @staticmethod
    def _checked(slots, keys) -> tuple[np.ndarray, np.ndarray]:
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        keys = np.asarray(keys)
        if keys.shape != slots.shape:
            raise ValueError(f"BatchedEquity: one key per slot ({len(slots)} slots), "
                             f"not keys of shape {keys.shape}")
        if keys.size and (keys.dtype.kind not in "iu" or keys.min() < 0 or int(keys.max()) >= KEY_LIMIT):
            raise ValueError("BatchedEquity: keys are ints in [0, 2**63)")
        return slots, keys.astype(np.int64)
