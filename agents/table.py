"""Strategy tables: agents that play a stored strategy of a small heads-up stud game.

``arena/exact.py`` solves games small enough to enumerate (preset ``soko_mini``) and saves
strategies in this format; ``cfr:PATH`` (a CFR+ average strategy) and ``br:PATH`` (a best
response, one action per information set) load them.

**Format** (one ``.npz``). ``meta``: JSON with the rules (``game`` preset name and
``rules``, the fields changed from it), ``seqs`` (every betting node as its list of action ids
from the start of the hand), ``legal`` (the legal action ids at each node), ``round`` (0 or 1) and ``kind``
(``"probabilities"`` or ``"actions"``). Per node ``i`` an array ``n{i}`` indexed by
``[public cards, own face-down card]``: ``(.., .., len(legal))`` probabilities, or the index of
the chosen action in ``legal`` (int8, -1 where the table says nothing).

**Indices.** Cards are local indices ``0 .. 4 * len(deck_ranks) - 1`` (the deck in card order).
The public cards of round 0 are the up cards ``(u0, u1)`` of seats 0 and 1, of round 1
``(u0, u1, v0, v1)``, with the button on seat 0; their index is the tuple's rank among all
ordered tuples of distinct cards in lexicographic order (:func:`tuple_index`). A table is for
the button on seat 0, and plays any button by relabelling the seats (the game only depends on
seats through the button).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agents.base import Agent
from envs.actions import CHECK_CALL, FIRST_BET, FOLD
from envs.engine.events import BET_KINDS, EventKind
from envs.engine.game import PlayerView
from envs.engine.rules import Rules, get_rules

__all__ = ["TableAgent", "BatchedTable", "tuple_index", "action_ids", "load_table", "CFRAgent",
           "BestResponseAgent"]


def tuple_index(cards, deck_size: int):
    """The lexicographic rank of an ordered tuple of distinct local card indices among all such
    tuples of its length: an int for one tuple, an int64 array (M,) for an (M, m) array of them
    (a row each: :class:`BatchedTable` ranks every slot's public cards at once).

    >>> tuple_index((0, 1), 4), tuple_index((0, 2), 4), tuple_index((1, 0), 4), tuple_index((3, 2), 4)
    (0, 1, 3, 11)
    >>> tuple_index([(0, 1), (3, 2)], 4).tolist()
    [0, 11]
    """
    rows = np.asarray(cards, dtype=np.int64)
    m = rows.shape[-1]
    # One tuple in plain Python (a decision hand by hand: NumPy's call overhead would double it).
    index = np.zeros(len(rows), dtype=np.int64) if rows.ndim == 2 else 0
    for i in range(m):
        if rows.ndim == 2:
            below = rows[:, i] - (rows[:, :i] < rows[:, i:i + 1]).sum(axis=1)
        else:
            below = int(rows[i]) - sum(1 for d in rows[:i].tolist() if d < rows[i])
        ways = 1
        for j in range(i + 1, m):
            ways *= deck_size - j
        index += below * ways
    return index


def action_ids(log) -> tuple[int, ...]:
    """The betting so far as action ids (0 fold, 1 check/call/bring-in, 2 complete/bet/raise),
    valid for fixed limit, where a bet has one size."""
    out = []
    for e in log:
        kind = e.kind
        if kind == EventKind.FOLD:
            out.append(FOLD)
        elif kind in BET_KINDS:
            out.append(FIRST_BET)
        elif kind in (EventKind.CHECK, EventKind.CALL, EventKind.BRING_IN):
            out.append(CHECK_CALL)
    return tuple(out)


def load_table(path: str | Path) -> tuple[dict, list[np.ndarray]]:
    """(meta, per-node arrays) of a strategy file; a one-line ValueError if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no strategy file at {path}")
    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            arrays = [data[f"n{i}"] for i in range(len(meta["seqs"]))]
    except (OSError, KeyError, ValueError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a strategy table written by arena/exact.py ({exc})") from None
    return meta, arrays


class TableAgent(Agent):
    """Plays a strategy table (see the module docstring) in whichever seat it sits."""

    def __init__(self, *, path: str = "") -> None:
        super().__init__()
        if not path:
            raise ValueError(f"{type(self).__name__} needs a strategy file: cfr:PATH or br:PATH")
        self.path = Path(path)
        meta, self.arrays = load_table(self.path)
        self.meta = meta
        self.rules: Rules = get_rules(meta["game"], **meta["rules"])
        self.deck = [int(c) for c in self.rules.deck]
        self.local = {c: i for i, c in enumerate(self.deck)}
        self.node_of = {tuple(s): i for i, s in enumerate(meta["seqs"])}
        self.legal = [tuple(x) for x in meta["legal"]]
        self.probabilities = meta["kind"] == "probabilities"
        self.randomises = self.probabilities

    def strategy_table(self, rules: Rules) -> TableAgent | None:
        """This agent, when its table is of ``rules`` (``agents.base.Agent.strategy_table``)."""
        return self if rules == self.rules else None

    def _entry(self, view: PlayerView) -> tuple[int, np.ndarray]:
        if view.rules != self.rules or view.num_players != 2:
            raise ValueError(f"{self.path} plays heads-up {self.meta['game']} "
                             f"{self.meta['rules'] or ''}, not {view.rules.name} with {view.num_players}")
        return self._entry_at(action_ids(view.log), view.button, view.up_cards, int(view.hole_cards[0]))

    def _entry_at(self, betting: tuple[int, ...], button: int, up_cards, hole: int) -> tuple[int, np.ndarray]:
        """(node, the table's entry) for the player to act after ``betting`` (action ids), the
        button at ``button``, each seat's face-up cards and the player's face-down card."""
        node = self.node_of.get(betting)
        if node is None:
            raise ValueError(f"{self.path} has no betting node {betting}")
        seats = [(button + k) % 2 for k in range(2)]   # relabelled seat k sits at table seat (b + k) % 2
        up = [up_cards[s] for s in seats]
        rnd = self.meta["round"][node]
        public = [self.local[int(up[s][0])] for s in (0, 1)]
        if rnd == 1:
            public += [self.local[int(up[s][1])] for s in (0, 1)]
        pub = tuple_index(public, len(self.deck))
        return node, self.arrays[node][pub, self.local[hole]]

    def _policy_at(self, node: int, entry: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        out = np.zeros(len(action_mask))
        legal = self.legal[node]
        if self.probabilities:
            probs = np.asarray(entry, dtype=np.float64)
            total = probs.sum()
            probs = probs / total if total > 0 else np.full(len(legal), 1.0 / len(legal))
            out[list(legal)] = probs
        else:
            out[legal[max(int(entry), 0)]] = 1.0
        if np.any(out[np.asarray(action_mask) == 0] > 0):
            raise ValueError(f"{self.path}: the table's actions {legal} at node "
                             f"{self.meta['seqs'][node]} are not the legal ones "
                             f"{np.flatnonzero(action_mask)}")
        return out

    def _choose(self, probs: np.ndarray, uniform: float | None) -> int:
        """The action of ``probs``: the one-hot's for a table of actions, else the draw
        ``uniform`` (in [0, 1)) through the cumulative probabilities."""
        if not self.probabilities:
            return int(np.argmax(probs))
        cumulative = np.cumsum(probs)
        return int(min(np.searchsorted(cumulative, uniform * cumulative[-1], side="right"), len(probs) - 1))

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        return self._policy_at(*self._entry(view), action_mask)

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        probs = self.policy(view, action_mask)
        return self._choose(probs, self.rng.random() if self.probabilities else None)

    def batched(self, rules: Rules) -> BatchedTable | None:
        """Its form for many hand slots of the core (``agents.base.Agent.batched``) in hands of
        its table's rules, for this class and its subclasses that decide as it does."""
        decides = all(getattr(type(self), m) is getattr(TableAgent, m)
                      for m in ("act", "policy", "_entry", "_entry_at", "_policy_at", "_choose"))
        return BatchedTable(self) if decides and rules == self.rules else None


class BatchedTable:
    """A :class:`TableAgent` deciding in many hand slots of an ``envs.batched.BatchedGame`` at
    once (``agents.base.BatchedPolicy``): per slot the betting node from the game's action ids
    (``BatchedGame.betting_ids``) and the cards from the core's hands (``BatchedGame.cards``),
    then the table's entry, as :meth:`TableAgent.act` on a reference copy of the hand, with the
    nodes, indices and draws computed for all the slots at once. A table of actions (``br:``)
    makes the same decisions; a table of probabilities draws one uniform per slot from ``rng``."""

    observation_features = None   # it reads the core's hands, not observation rows

    def __init__(self, table: TableAgent) -> None:
        self.table = t = table
        self._deck_size = D = len(t.deck)
        self._local = np.full(max(t.deck) + 1, -1, dtype=np.int64)   # card id -> local index
        self._local[t.deck] = np.arange(D)
        # A betting sequence as one number (ids + 1 in base 4, so the length counts too), and
        # the table's nodes sorted by it; None when a sequence is too long for int64.
        seqs = t.meta["seqs"]
        longest = max((len(q) for q in seqs), default=0)
        self._longest = longest if longest <= 31 else None
        if self._longest is not None:
            padded = np.array([list(q) + [0] * (longest - len(q)) for q in seqs], dtype=np.int64)
            codes = _betting_codes(padded.reshape(len(seqs), longest), np.array([len(q) for q in seqs]))
            self._order = np.argsort(codes)
            self._codes = codes[self._order]
        self._round = np.asarray(t.meta["round"], dtype=np.int64)
        width = max((len(x) for x in t.legal), default=1)
        self._legal = np.array([list(x) + [-1] * (width - len(x)) for x in t.legal], dtype=np.int64)
        self._count = np.array([len(x) for x in t.legal], dtype=np.int64)
        # A table of actions: every node's entries in one int8 array (13 MB for soko_mini), rows
        # [public index, own card] from each node's start. Probabilities are read node by node.
        if not t.probabilities:
            self._start = np.cumsum([0] + [a.size for a in t.arrays])[:-1]
            self._stride = np.array([a.shape[1] for a in t.arrays], dtype=np.int64)
            self._entries = np.concatenate([a.reshape(-1) for a in t.arrays])

    def act_slots(self, game, slots, *, rng: np.random.Generator, stream=None) -> np.ndarray:
        t = self.table
        if game.num_players != 2:
            raise ValueError(f"{t.path} plays heads-up, not at {game.num_players} seats")
        slots = np.asarray(slots, dtype=np.int64)
        uniforms = rng.random(len(slots)) if t.probabilities else None
        if self._longest is None:
            return self._act_each(game, slots, uniforms)
        out = np.empty(len(slots), dtype=np.int64)
        if not len(slots):
            return out
        counts, ids = game.betting_ids(slots)
        width = min(self._longest, ids.shape[1])
        if (counts > width).any():                    # a sequence the table cannot have
            bad = int(slots[np.argmax(counts > width)])
            raise ValueError(f"{t.path} has no betting node {game.betting(bad)}")
        codes = _betting_codes(ids[:, :width], counts)
        at = np.minimum(np.searchsorted(self._codes, codes), len(self._codes) - 1)
        if (self._codes[at] != codes).any():
            bad = int(slots[np.argmax(self._codes[at] != codes)])
            raise ValueError(f"{t.path} has no betting node {game.betting(bad)}")
        nodes = self._order[at]
        button, hole, up = game.cards(slots)
        rows = np.arange(len(slots))
        seat = game.current_player[slots]
        first = [(button + k) % 2 for k in range(2)]   # relabelled seat k sits at table seat (b + k) % 2
        public = [self._local[up[rows, first[s], 0]] for s in (0, 1)]
        later = [self._local[up[rows, first[s], 1]] for s in (0, 1)]
        mine = self._local[hole[rows, seat, 0]]
        D = self._deck_size
        pub0 = tuple_index(np.stack(public, axis=1), D)
        pub1 = tuple_index(np.stack(public + later, axis=1), D) if (self._round[nodes] == 1).any() else pub0
        pub = np.where(self._round[nodes] == 1, pub1, pub0)
        masks = game.action_mask[slots]
        legal, count = self._legal[nodes], self._count[nodes]
        if t.probabilities:
            entry = np.zeros(legal.shape)
            for node in np.unique(nodes).tolist():
                pick = np.flatnonzero(nodes == node)
                entry[pick, :count[pick[0]]] = t.arrays[node][pub[pick], mine[pick]]
            total = entry.sum(axis=1, keepdims=True)
            uniform = (np.arange(legal.shape[1])[None, :] < count[:, None]) / count[:, None]
            probs = np.where(total > 0, entry / np.where(total > 0, total, 1.0), uniform)
            cumulative = np.cumsum(probs, axis=1)
            draw = (cumulative <= (uniforms * cumulative[:, -1])[:, None]).sum(axis=1)
            pick = np.minimum(draw, count - 1)
            used = probs > 0
        else:
            entry = self._entries[self._start[nodes] + pub * self._stride[nodes] + mine]
            pick = np.maximum(entry.astype(np.int64), 0)
            used = np.arange(legal.shape[1])[None, :] == pick[:, None]
        out[:] = legal[rows, pick]
        illegal = used & (masks[rows[:, None], np.maximum(legal, 0)] == 0) & (legal >= 0)
        if illegal.any():
            k = int(np.argmax(illegal.any(axis=1)))
            node = int(nodes[k])
            raise ValueError(f"{t.path}: the table's actions {t.legal[node]} at node "
                             f"{t.meta['seqs'][node]} are not the legal ones {np.flatnonzero(masks[k])}")
        return out

    def _act_each(self, game, slots, uniforms) -> np.ndarray:
        """Slot by slot, through :meth:`TableAgent._entry_at` (a table with betting too long
        to number)."""
        t = self.table
        out = np.empty(len(slots), dtype=np.int64)
        for i, slot in enumerate(slots.tolist()):
            state = game.state(slot)
            seat = state["current_player"]
            node, entry = t._entry_at(game.betting(slot), state["button"], state["up_cards"],
                                      int(state["hole_cards"][seat][0]))
            out[i] = t._choose(t._policy_at(node, entry, game.action_mask[slot]),
                               None if uniforms is None else uniforms[i])
        return out


def _betting_codes(ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each row's first ``counts`` action ids as one number: the ids + 1 as base-4 digits, so
    sequences of different lengths differ (up to 31 ids fit int64)."""
    L = ids.shape[1]
    digits = np.where(np.arange(L)[None, :] < counts[:, None], ids.astype(np.int64) + 1, 0)
    return digits @ (4 ** np.arange(L, dtype=np.int64))


class CFRAgent(TableAgent):
    """``cfr:PATH``: a CFR+ average strategy saved by ``arena/exact.py``."""


class BestResponseAgent(TableAgent):
    """``br:PATH``: a best response saved by ``python -m arena.exploit --method exact``."""
