"""A match's hands played on the compiled core, every hand of a chunk at once (``engine="batched"``).

:func:`arena.match.play_match` and tournaments play each hand on a reference ``Game`` by
default. With ``engine="batched"`` (or ``"auto"`` when it applies) the same deals, the same
seatings and the same per-agent seeds go to one ``envs.batched.BatchedGame`` of many slots,
slot ``(group, rotation)`` a hand: every step, each agent decides for all the slots where it is
to act at once (its batched form, ``Agent.batched``, or its batched follower,
``Agent.batched_follower``: the core's local best response). The agents say what they can do;
nothing here asks for a class.

What is the same as the reference, and what is not:

- The deck of every hand, the button (seat 0), the seating of every rotation: the same, so
  agents that decide deterministically (``call``, ``raise``, ``tag``, a deterministic ``ppo``
  model, a local best response with its hand's seed) play the same hands to the same result
  (``tests/test_batched_play.py`` holds it, hand for hand).
- Agents that draw at random (``random``, a sampling ``ppo`` model, ``equity``'s simulation
  keys) draw from the same distributions but other streams: a chunk's generator, seeded by
  the match's seed, key and the chunk's groups, and one per agent for simulation keys. The
  numbers do not depend on the worker count (chunks hold at most :data:`CHUNK_SLOTS` hands,
  whatever the workers), but they are not the reference engine's draws.
- The luck correction and hand histories read a reference ``Game`` of the hand: the core
  keeps each hand's actions (``play_groups(..., logs=...)``) and the match replays them on a
  ``Game`` of the same deck (``arena.match``), with no agent asked to decide again; a known
  policy's decision terms ask it for its probabilities there, as on the reference engine.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from agents.base import Agent
from envs.engine.rules import Rules

__all__ = ["CHUNK_SLOTS", "ENGINES", "unsupported", "play_groups"]

ENGINES = ("reference", "batched", "auto")
CHUNK_SLOTS = 2048   # hands per core batch (whole groups): fixed, so the draws do not depend on workers


def _forms(agents: Sequence[Any], rules: Rules, n: int, game=None) -> tuple[list, list, str | None]:
    """Each agent's batched form and batched follower in ``game`` (a ``BatchedGame`` of ``n``
    seats; a one-slot one is made to ask when None), at most one of them not None, and why the
    agents cannot play together (``n`` at a table) on the core, or None."""
    from envs.batched import BatchedGame

    forms, followers, reads = [], [], set()
    for agent in agents:
        if not isinstance(agent, Agent):
            return [], [], f"{agent!r} is not an agent"
        form = agent.batched(rules)
        follower = None
        if form is None:
            if game is None:
                game = BatchedGame(rules, n, 1, auto_reset=False)
            follower = agent.batched_follower(game, rules)
            if follower is None:
                return [], [], f"{agent.name!r} has no batched form (Agent.batched, Agent.batched_follower)"
        elif form.observation_features is not None:
            reads.add(tuple(form.observation_features))
        forms.append(form)
        followers.append(follower)
    if len(reads) > 1:
        pieces = ", ".join(str(list(r)) for r in sorted(reads))
        why = f"the agents read observations with different pieces ({pieces})"
        return [], [], why + ": one core game encodes one layout"
    return forms, followers, None


def unsupported(agents: Sequence[Any], rules: Rules, n: int) -> str | None:
    """Why these agents (made) cannot play matches of ``rules`` at ``n`` seats on the core, or
    None if they can (observation pieces: all the agents that read them must read the same)."""
    return _forms(agents, rules, n)[2]


def play_groups(rules: Rules, agents: Sequence[Agent], deals: Sequence[tuple[list, np.ndarray]],
                rng: np.random.Generator, streams: Sequence[np.random.Generator],
                logs: list | None = None, threads: int = 1) -> np.ndarray:
    """Chips won per (group, rotation, position) for the groups of ``deals``, each a group's
    ``(decks, agent_seeds)`` as ``arena.match.group_deal`` gives them (a deck per rotation; the
    seed of position ``i`` in rotation ``r`` at ``[r, i]``). Rotation ``r`` seats the agent at
    table position ``i`` in seat ``(i + r) % n``, the button on seat 0. ``rng``: the random draws
    of the agents' batched forms; ``streams``: position ``i``'s simulation keys. ``logs``: an
    empty list to receive each hand's action ids in the order played, hand ``group * n +
    rotation`` at that index (``envs.actions`` ids: ``apply_action`` replays them). ``threads``:
    the core game's threads (each step's hands, the core agents' decisions and the local best
    response's work split over them; the same values for any count)."""
    from envs.batched import BatchedGame

    n = len(agents)
    forms, _, reason = _forms(agents, rules, n)
    if reason:
        raise ValueError(f"cannot play on the core: {reason}")
    reading = [f is not None and f.observation_features is not None for f in forms]
    features = next((tuple(f.observation_features) for f, r in zip(forms, reading) if r), ())
    slots = len(deals) * n
    game = BatchedGame(rules, n, slots, auto_reset=False, observations=any(reading),
                       observation_features=features, keep_betting=True,   # strategy tables read it
                       threads=threads)
    followers = [None if f is not None else a.batched_follower(game, rules) for a, f in zip(agents, forms)]
    rotation = np.tile(np.arange(n), len(deals))                        # slot -> rotation
    position = (np.arange(n)[None, :] - rotation[:, None]) % n          # (slot, seat) -> table position
    decks = [[int(c) for c in decks[r]] for decks, _ in deals for r in range(n)]
    game.reset(decks=decks, buttons=np.zeros(slots, dtype=np.int64))
    if any(reading):
        game.set_observed_seats(np.array(reading)[position])
    for i, follower in enumerate(followers):
        if follower is not None:
            for slot in range(slots):
                follower.start(slot, int((i + rotation[slot]) % n))
                follower.seed(slot, int(deals[slot // n][1][rotation[slot], i]))
    chips = np.zeros((slots, n), dtype=np.int64)    # by seat
    actions = np.full(slots, -1, dtype=np.int64)
    if logs is not None:
        logs[:] = [[] for _ in range(slots)]
    while True:
        current = game.current_player
        live = np.flatnonzero(current >= 0)
        if not len(live):
            break
        seats = current[live]
        who = position[live, seats]
        actions[:] = -1
        for i in np.unique(who).tolist():
            pick = who == i
            rows = live[pick]
            if followers[i] is not None:
                actions[rows] = followers[i].act(rows, seats[pick], game.action_mask[rows])
            else:
                actions[rows] = forms[i].act_slots(game, rows, rng=rng, stream=streams[i])
        for i, follower in enumerate(followers):   # the others' actions, before they are played
            if follower is not None:
                pick = who != i
                follower.observe(live[pick], seats[pick], actions[live[pick]])
        if logs is not None:
            for slot, action in zip(live.tolist(), actions[live].tolist()):
                logs[slot].append(action)
        game.step(actions)
        done = np.flatnonzero(game.dones)
        chips[done] = game.payoffs[done]
    # chips[g, r, i]: position i's result, in seat (i + r) % n.
    by_position = np.take_along_axis(chips, (np.arange(n)[None, :] + rotation[:, None]) % n, axis=1)
    return by_position.reshape(len(deals), n, n)
