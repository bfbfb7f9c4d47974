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

>>> from envs.engine.game import Game
>>> g = Game("soko", 2, deck="As 2c Ah 3d Ad 4c", seed=1)  # seat 1: As Ah Ad, seat 0: 2c 3d 4c
>>> g.check_or_call(); g.check_or_call()                   # bring-in, call: 3rd cards dealt
>>> equity(g.view(1), 2000, np.random.default_rng(0)) > 0.85  # three aces against a draw
True
"""

from __future__ import annotations

import numpy as np

from agents.base import CHECK_CALL, FOLD, Agent, legal_ids
from agents.heuristic import pick_bet
from envs.engine.equity import equity, warm_up
from envs.engine.game import PlayerView
from envs.engine.rules import Rules

__all__ = ["equity", "EquityAgent", "warm_up"]


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

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        legal = legal_ids(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        e = self.last_equity = equity(view, self.samples, self.rng)
        n = sum(1 for f in view.folded if not f)
        fair = 1.0 / n
        raise_at = fair + self.raise_edge * (1.0 - fair)
        if e >= raise_at:
            bet = pick_bet(action_mask, large=e >= raise_at + (1.0 - raise_at) / 2)
            if bet is not None:
                return bet
        if view.to_call == 0 or not action_mask[FOLD]:
            return CHECK_CALL
        price = view.to_call / (view.pot + view.to_call)
        return CHECK_CALL if e >= price + self.call_margin else FOLD
