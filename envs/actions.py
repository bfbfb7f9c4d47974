"""Fixed action ids shared by the environments, the agents and the tournament.

``0`` fold, ``1`` check or call (posts the bring-in when that is the choice), ``2, 3, ...`` bet
or raise to the sizes ``Game.raise_to_amounts()`` offers, in ascending order (``2`` is the smallest:
complete, bet or min-raise). The number of ids is fixed per rules (``num_actions``); ids past
the sizes on offer are masked out. The engine decides what is legal; this only names it.

Agents ask for actions through one door, :func:`choose_action`: the tournament and the
single-agent env's opponents both use it (``agents.base`` re-exports it), so an agent plays
the same way wherever it sits. :func:`random_action` is the one uniformly random player.
"""

from __future__ import annotations

import functools

import numpy as np

from envs.engine.game import Game
from envs.engine.rules import Rules

FOLD = 0
CHECK_CALL = 1
FIRST_BET = 2


def action_id(action) -> int:
    """``action`` as a Python ``int``: an ``int`` or a NumPy integer (a 0-d integer array too, as
    ``Discrete.contains`` takes it). Anything else (a float, a string, a bool) is a TypeError, so
    it is never cut to an id: ``int(1.7)`` and ``int("1")`` would both check or call.

    >>> action_id(np.int64(2))
    2
    >>> action_id(1.7)
    Traceback (most recent call last):
    ...
    TypeError: an action id is a whole number (an int or a NumPy integer), not 1.7 (float)
    """
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    raise TypeError(f"an action id is a whole number (an int or a NumPy integer), not {action!r} "
                    f"({type(action).__name__})")


def num_actions(rules: Rules) -> int:
    """Fold, check/call, and one id per bet size the rules can offer at once."""
    return FIRST_BET + rules.max_raise_to_amounts


@functools.cache
def legal_mask(size: int, can_fold: bool, offered: int) -> np.ndarray:
    """The read-only int8 mask of a player to act: fold when ``can_fold``, check/call, and the
    first ``offered`` bet/raise ids (cached: there are few of them)."""
    mask = np.zeros(size, dtype=np.int8)
    mask[FOLD] = can_fold
    mask[CHECK_CALL] = 1
    mask[FIRST_BET:FIRST_BET + offered] = 1
    mask.flags.writeable = False
    return mask


def action_mask(game: Game, size: int | None = None, *, seat: int | None = None,
                sizes: tuple[int, ...] | None = None) -> np.ndarray:
    """int8 mask over the action ids of ``seat`` (default: the player to act); all zeros when
    that seat is not to act or the hand is over. Every mask of the envs comes from here.

    ``size``: ``num_actions(game.rules)`` when the caller has it; ``sizes``: ``game.raise_to_amounts()``
    when the caller has it already.
    """
    size = size or num_actions(game.rules)
    current = game.current_player
    if current is None or (seat is not None and seat != current):
        return np.zeros(size, dtype=np.int8)
    if sizes is None:
        sizes = game.raise_to_amounts()
    return legal_mask(size, game.can_fold(), len(sizes)).copy()


def random_action(action_mask: np.ndarray, rng: np.random.Generator) -> int:
    """A legal id drawn uniformly with one ``rng.random()`` (the ``random`` agent and the
    env's built-in random opponent; one draw per action keeps seeded replays cheap).

    >>> random_action(np.array([0, 1, 1, 0]), np.random.default_rng(0))
    2
    """
    legal = [i for i, ok in enumerate(action_mask.tolist()) if ok]
    return legal[int(rng.random() * len(legal))]


def checked_action(action, action_mask: np.ndarray, *, agent: object, seat: int) -> int:
    """``action`` as an int if ``action_mask`` allows it, else a ValueError naming ``agent``, so
    a broken agent never corrupts a game."""
    action = int(action)
    if not (0 <= action < len(action_mask) and action_mask[action]):
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} at seat {seat} chose illegal action "
                         f"{action}; legal ids: {np.flatnonzero(action_mask).tolist()}")
    return action


def choose_action(agent, game: Game, mask: np.ndarray | None = None) -> int:
    """Ask ``agent`` for the current player's action: ``act_game(game, seat, mask)`` if the agent
    defines it (a policy that encodes the game itself), else ``act(game.view(seat), mask)``.
    An illegal answer is a ValueError (:func:`checked_action`).

    Harnesses re-seed an agent with ``agent.reset(seed)`` before every hand, the seed drawn
    from their own generator; this function draws nothing.
    """
    seat = game.current_player
    if seat is None:
        raise ValueError("the hand is over: nobody is to act")
    if mask is None:
        mask = action_mask(game)
    act_game = getattr(agent, "act_game", None)
    if act_game is not None:
        action = act_game(game, seat, mask)
    else:
        action = agent.act(game.view(seat), mask)
    return checked_action(action, mask, agent=agent, seat=seat)


def policy_probabilities(policy, game: Game, seat: int, mask: np.ndarray):
    """``policy(game.view(seat), mask)`` for a policy callable (``Agent.policy``), or, when it
    is the ``policy`` of an agent that defines ``policy_game(game, seat, mask)``, that: the
    same probabilities without a view (as :func:`choose_action` prefers ``act_game``)."""
    policy_game = getattr(getattr(policy, "__self__", None), "policy_game", None)
    if policy_game is not None and getattr(policy, "__name__", None) == "policy":
        return policy_game(game, seat, mask)
    return policy(game.view(seat), mask)


def is_agent(obj) -> bool:
    """Whether ``obj`` plays through :func:`choose_action` (has ``act`` or ``act_game``)."""
    return callable(getattr(obj, "act", None)) or callable(getattr(obj, "act_game", None))


def apply_action(game: Game, action: int) -> None:
    """Play action id ``action`` for the current player; an illegal id raises ValueError."""
    action = int(action)
    if action == FOLD:
        game.fold()
    elif action == CHECK_CALL:
        game.check_or_call()
    else:
        sizes = game.raise_to_amounts()
        i = action - FIRST_BET
        if not 0 <= i < len(sizes):
            raise ValueError(f"action {action} is not legal now: bet/raise ids are "
                             f"{FIRST_BET}..{FIRST_BET + len(sizes) - 1} (sizes {sizes})"
                             if sizes else f"action {action} is not legal now: no bet or raise is allowed")
        game.bet_or_raise(sizes[i])


def describe_action(game: Game, action: int) -> str:
    """``"fold"``, ``"check"``, ``"call 4"``, ``"bring in 2"``, ``"raise to 12"``...: for logs."""
    if action == FOLD:
        return "fold"
    if action == CHECK_CALL:
        owed = game.to_call
        return f"call {owed}" if owed else "check"
    sizes = game.raise_to_amounts()
    i = action - FIRST_BET
    return f"bet/raise to {sizes[i]}" if 0 <= i < len(sizes) else f"illegal {action}"
