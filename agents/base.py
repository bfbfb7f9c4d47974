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

**Capabilities.** The arena and the training env never ask an agent what class it is; they ask
what it can do (docs/architecture.md "Capabilities"), through these members of :class:`Agent`,
each "cannot" by default:

- :meth:`Agent.batched`: a form that decides for many hand slots of the compiled core at once
  (the batched training env's opponents); without one an agent plays hand by hand there;
- :meth:`Agent.blind_policy`: its policy when it depends on the legal ids alone (local best
  response learns nothing from its actions; the exact solver writes it from the legal ids);
- :attr:`Agent.observation_features`: it decides from the observation vector of
  ``envs.observation`` with these optional pieces (a trained network: local best response asks
  it for every candidate card in one pass, the training env writes that seat's observation);
- :meth:`Agent.strategy_table`: a stored strategy of the exact solver's tree;
- :meth:`Agent.share_estimator`: a policy computed from the distribution of an equity estimate
  (the exact solver computes it once per card situation);
- :meth:`Agent.core_network`: its policy as a plain MLP that the compiled core runs (local
  best response computes the target's policy over its range in the core);
- :meth:`Agent.batched_follower`: a form that plays every hand slot of one core game at once
  and follows each hand's actions as they are played (local best response's range), for the
  batched training env;
- :meth:`Agent.recipe`: what rebuilds the agent in another process without pickling it (its
  spec, by default), for Ray workers (``arena.cluster``).

A capability that rests on how a class decides (its compiled port, the shape of its policy)
belongs to that class, not to its subclasses, which may decide otherwise: such methods answer
"cannot" for a subclass unless it defines its own.

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
from typing import Any, Protocol

import numpy as np

from envs.actions import CHECK_CALL, FIRST_BET, FOLD, choose_action
from envs.engine.game import ACTION_KINDS, Game, PlayerView

__all__ = ["Agent", "BatchedPolicy", "choose_action", "legal_ids", "FOLD", "CHECK_CALL", "FIRST_BET"]


class BatchedPolicy(Protocol):
    """An agent's decisions for many hand slots of an ``envs.batched.BatchedGame`` at once
    (:meth:`Agent.batched`; ``train/batched_vec.py`` plays its opponents through these)."""

    observation_features: tuple[str, ...] | None
    """The observation pieces it reads from ``game.observations`` (the env has the core write
    the acting seat's row), or None: it reads none (the masks, or the core's own hands)."""

    def act_slots(self, game: Any, slots: np.ndarray, *, rng: np.random.Generator,
                  stream: np.random.Generator) -> np.ndarray:
        """Action ids (int64) for the player to act in each of ``slots``. ``rng``: the env's
        generator, for any random draws; ``stream``: a generator of this pool entry's own (the
        equity agent's simulation keys), so that its draws do not shift the others'."""


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

    # ---- Capabilities (the module docstring): what arena/ and train/ may ask -----------------

    observation_features: tuple[str, ...] | None = None
    """The optional pieces (``envs.observation.FEATURES``) of the observation vector this agent
    decides from (``()``: the plain layout), or None: it decides from the view (the default).
    Such an agent also gives ``probabilities_with_ones`` and ``probabilities_with_values``
    (its policy for many candidate face-down cards in one pass; ``agents.trained.PPOAgent``)."""

    def batched(self, rules) -> BatchedPolicy | None:
        """This agent's :class:`BatchedPolicy` for hands of ``rules``, the same decisions as
        :meth:`act` for many hand slots at once, or None (the default): the batched training
        env then plays it hand by hand on a reference copy of each hand."""
        return None

    def blind_policy(self, action_mask: np.ndarray) -> np.ndarray | None:
        """The probabilities of :meth:`policy` in every spot with this mask, when they depend on
        the legal ids alone (not on the cards, the board or the betting), or None (the default)."""
        return None

    def strategy_table(self, rules) -> Any | None:
        """The strategy table this agent plays for ``rules`` (``agents.table.TableAgent``: per
        node of the exact solver's tree, ``node_of``, ``arrays`` and ``probabilities``), or None."""
        return None

    def share_estimator(self) -> Any | None:
        """An object whose ``deal_shares(view)`` and ``estimate_at_least_of(units)`` give this
        agent's policy through ``agents.equity.decision_chances`` (the equity agent), or None."""
        return None

    def core_network(self) -> tuple[list, bool] | None:
        """``(layers, deterministic)`` when this agent's policy is the masked softmax (the argmax
        when ``deterministic``) of a plain MLP on its observation vector (layers ``(weight, bias,
        activation name)``, activations None, "Tanh" or "ReLU"), which the compiled core can run
        (local best response's target policy over the range, ``arena.lbr.CoreTargetPolicy``);
        or None (the default)."""
        return None

    def batched_follower(self, game, rules) -> Any | None:
        """A form of this agent that plays in every hand slot of the core game ``game``
        (``envs.batched.BatchedGame`` of ``rules``) at once and is told every action before it
        is played (``arena.lbr.BatchedLBR``: ``observe``, ``act``, ``hands``), or None (the
        default). Unlike :meth:`batched` it keeps state across a hand."""
        return None

    def recipe(self) -> str | tuple | None:
        """What rebuilds this agent in another process without pickling it: the spec it was
        made from (the default; ``agents.registry.make_agent`` sets ``spec``), a tuple that
        ``arena.cluster.build_agent`` knows, or None when there is no such thing."""
        spec = getattr(self, "spec", None)
        return spec if isinstance(spec, str) else None

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
