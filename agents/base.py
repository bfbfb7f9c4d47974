"""The one agent interface used by the tournament, by the training env's opponents and by
trained policies.

An agent sees a hand only through :class:`~envs.engine.game.PlayerView` (``game.view(seat)``):
its own face-down cards, every face-up card, the stacks, the pot and the betting so far, with
other seats' face-down cards removed from the log. It answers with a legal action id from
``envs.actions`` (0 fold, 1 check/call, 2.. bet or raise sizes ascending) given the action mask.
An agent whose action probabilities are known may say so through :meth:`Agent.policy`.

Randomness comes from a ``numpy.random.Generator`` that the harness seeds through
:meth:`Agent.reset` before each hand, so a tournament gives the same result for any number of
worker processes.

A policy that needs more than the view to encode its input (a trained network with the env's
observation encoder) may also define ``act_game(game, seat, action_mask)``; harnesses call
:func:`choose_action` (``envs.actions.choose_action``, the one dispatch the tournament and the
training env share), which prefers ``act_game`` when an agent has it. Such an agent must only
read what ``seat`` may see; ``tests/test_agents.py`` checks every registered agent for that.

>>> from envs.engine.game import Game
>>> class AlwaysCall(Agent):
...     def act(self, view, action_mask):
...         return 1
>>> g = Game("soko", 2, seed=0)
>>> choose_action(AlwaysCall(), g)
1
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from envs.actions import CHECK_CALL, FIRST_BET, FOLD, choose_action
from envs.engine.game import ACTION_KINDS, Game, PlayerView

__all__ = ["Agent", "choose_action", "legal_ids", "FOLD", "CHECK_CALL", "FIRST_BET"]


class Agent(ABC):
    """Chooses actions from what one seat may see.

    Subclasses implement :meth:`act`. ``name`` is the spec string that made the agent (set by
    ``agents.registry.make_agent``); ``rng`` is the agent's generator, re-seeded by
    :meth:`reset`.
    """

    name: str = "agent"
    randomises: bool = False
    """True when :meth:`act` draws from :meth:`policy` (a known distribution that is not a
    one-hot): the luck correction (``arena/luck.py``) uses only such agents' policies, to take
    their coin flips out of results. A deterministic agent may still give its policy (a
    one-hot), for exact best responses (``arena/exact.py``)."""

    def __init__(self) -> None:
        self._seed: int | np.random.SeedSequence | None = 0
        self._rng: np.random.Generator | None = None

    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Re-seed the agent's generator; the harness calls this before every hand."""
        # The generator is built on first use: seeding one costs more than a whole hand of a
        # cheap agent, and agents such as `call` never draw.
        self._seed = seed
        self._rng = None

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._rng

    @abstractmethod
    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        """A legal action id (``action_mask[id] == 1``) for ``view.seat``, which is to act."""

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray | None:
        """The probabilities with which :meth:`act` picks each action id in this spot (an array
        the length of ``action_mask``, zero on illegal ids, summing to one), or None when they
        are not known (the default). The luck correction (``arena/luck.py``) uses a known policy
        to take the agent's own coin flips out of tournament results; it must be exactly the
        distribution ``act`` draws from, or the correction is biased."""
        return None

    def warm_up(self, rules) -> None:
        """Build any lookup tables the agent needs for ``rules`` (called once per tournament,
        before worker processes start, so they share the work). Default: nothing."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def legal_ids(action_mask: np.ndarray) -> np.ndarray:
    """The legal action ids, ascending."""
    return np.flatnonzero(action_mask)


def game_from_view(view: PlayerView) -> Game:
    """A game that looks to ``view.seat`` exactly like the one ``view`` came from.

    The deal and the betting are replayed from the view's log; the other seats' face-down
    cards, which the view does not hold, are stand-ins (unseen cards in index order). So
    ``game_from_view(view).view(view.seat) == view``, and whatever is computed from the
    replayed game cannot depend on the real hidden cards. Policies whose encoder needs a
    :class:`Game` use this when they are only given a view.
    """
    seen = {int(c) for c in view.hole_cards}
    for up in view.up_cards:
        seen.update(int(c) for c in up)
    stand_ins = iter(int(c) for c in view.rules.deck if int(c) not in seen)
    deck = []
    for event in view.log:
        if event.kind == "deal":
            deck.append(int(event.card) if event.card is not None else next(stand_ins))
    stacks = tuple(s + t for s, t in zip(view.stacks, view.total_committed))
    game = Game(view.rules, view.num_players, stacks=stacks, button=view.button, deck=deck, seed=0)
    for event in view.log:
        if event.kind in ACTION_KINDS:
            game.play_logged(event)
    return game
