"""Fixed action ids shared by the environments, the agents and the tournament.

``0`` fold, ``1`` check or call (posts the bring-in when that is the choice), ``2, 3, ...`` bet
or raise to the sizes ``Game.bet_sizes()`` offers, in ascending order (``2`` is the smallest:
complete, bet or min-raise). The number of ids is fixed per rules (``num_actions``); ids past
the sizes on offer are masked out. The engine decides what is legal; this only names it.
"""

from __future__ import annotations

import functools

import numpy as np

from envs.engine.game import Game
from envs.engine.rules import Rules

FOLD = 0
CHECK_CALL = 1
FIRST_BET = 2


def num_actions(rules: Rules) -> int:
    """Fold, check/call, and one id per bet size the rules can offer at once."""
    return FIRST_BET + rules.max_bet_sizes


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

    ``size``: ``num_actions(game.rules)`` when the caller has it; ``sizes``: ``game.bet_sizes()``
    when the caller has it already.
    """
    size = size or num_actions(game.rules)
    current = game.current_player
    if current is None or (seat is not None and seat != current):
        return np.zeros(size, dtype=np.int8)
    if sizes is None:
        sizes = game.bet_sizes()
    return legal_mask(size, game.can_fold(), len(sizes)).copy()


def apply_action(game: Game, action: int) -> None:
    """Play action id ``action`` for the current player; an illegal id raises ValueError."""
    action = int(action)
    if action == FOLD:
        game.fold()
    elif action == CHECK_CALL:
        game.check_or_call()
    else:
        sizes = game.bet_sizes()
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
    sizes = game.bet_sizes()
    i = action - FIRST_BET
    return f"bet/raise to {sizes[i]}" if 0 <= i < len(sizes) else f"illegal {action}"
