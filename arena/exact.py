"""Exact game-theoretic values of a small heads-up stud game (preset ``soko_mini``).

The only private information is each player's one face-down card; everything else (the up
cards, the betting) is public. So the game is a tree of *public* states, and at each of them
every quantity is an array over the private cards: ``[public cards, own face-down card]``
(``Tree``). Rounds: round 0 after the hole card and one up card each, public cards ``(u0,
u1)``; round 1 after one more up card each, ``(u0, u1, v0, v1)`` (seat numbers with the button
on seat 0, see ``agents/table.py`` for the indices). The betting tree (action ids from the
start of the hand) has the same shape for every deal; the deal only decides which seat opens
each round (bring-in, lowest showing hand) and so who is to act and who folded. Terminal
values come from the engine itself (replayed on one deal of each kind), the opener of every
round from the engine on every deal, so no rule is written twice.

* :func:`best_response` -- an exact best response to a strategy (a target agent's
  probabilities, :func:`agent_strategy`), per seat, and its value.
* :func:`profile_value` -- the exact expected payoff of a strategy profile.
* :func:`cfr_plus` -- CFR+ (alternating updates, regret floors at zero, linearly weighted
  average), vectorised over the tree with NumPy; the average strategy is saved as a
  ``cfr:PATH`` table (``agents/table.py``).
* :func:`exploitability` -- OpenSpiel's convention: the mean of the two best-response values,
  here in chips per hand (``bb_per_100`` converts: big bets per 100 hands).

Chance is exact: all ordered deals of the six cards (two hole cards, four up cards) are equally
likely, and values are sums over them divided by their number.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from envs.actions import action_mask, apply_action, num_actions
from envs.engine.game import Game
from envs.engine.rules import Rules, deal_order, deal_sequence, get_rules, rules_evaluator
from envs.files import atomic_write_bytes, make_folder

DTYPE = np.float32
"""Reaches, values and strategies: single precision halves the memory traffic of every pass;
totals are summed in double precision."""

__all__ = ["Tree", "build_tree", "agent_strategy", "best_response", "profile_value", "cfr_plus",
           "exploitability", "bb_per_100", "save_table", "uniform_strategy", "own_reach", "average_strategy"]


@dataclass
class Node:
    seq: tuple[int, ...]
    round: int
    role: int                      # 0: the round's opener acts, 1: the other seat
    legal: tuple[int, ...]
    # per legal action: ("node", i) / ("fold", j) / ("showdown", j) / ("next", i)
    children: list = field(default_factory=list)


@dataclass
class Tree:
    """The public tree of a heads-up game with one hole card each and two up-card rounds."""

    rules: Rules
    deck: tuple                    # the cards, local index -> Card
    nodes: list[Node]
    pubs: list[np.ndarray]         # per round: (n_pub, 2 or 4) local card indices
    valid: list[np.ndarray]        # per round: (n_pub, C) float, 1 where the hole card is not public
    opener: list[np.ndarray]       # per round: (n_pub,) the seat that opens the round
    kind: list[np.ndarray]         # per round: (n_pub,) index of the deal's kind (opener pattern)
    fold_pay: dict                 # terminal j -> (kinds,) payoff of seat 0
    stake: dict                    # terminal j -> (kinds,) chips each seat has in at a showdown
    showdown_sign: np.ndarray      # (n_pub1, R, R): sign(value of seat 0 - value of seat 1) by hole rank
    weight: list[float]            # per round: chance weight of a (public, hole, hole) entry
    next_round_root: int = 0

    def __post_init__(self) -> None:
        # Per seat: sign(my value - the other's) by (public, my hole rank, its hole rank).
        self.signs = (self.showdown_sign.astype(DTYPE), -self.showdown_sign.transpose(0, 2, 1).astype(DTYPE))
        diagonal = np.repeat(np.diagonal(self.showdown_sign, axis1=1, axis2=2), 4, axis=1).astype(DTYPE)
        # (n_pub, C): the sign when both hold cards of my card's rank
        self.self_signs = (diagonal, -diagonal)

    @property
    def size(self) -> int:
        return len(self.deck)

    @property
    def block(self) -> int:
        """Round-1 public states per round-0 public state."""
        return (self.size - 2) * (self.size - 3)

    def actor(self, node: Node) -> np.ndarray:
        opener = self.opener[node.round]
        return opener if node.role == 0 else 1 - opener


def _deal(rules: Rules, deck, public, holes) -> list:
    """The deck order (top first) that deals ``holes[s]`` face down and the public cards
    ``public`` (u0, u1[, v0, v1]) face up, button on seat 0."""
    up = {0: [public[0]] + list(public[2:3]), 1: [public[1]] + list(public[3:4])}
    taken = set(public) | set(holes)
    spare = iter(i for i in range(len(deck)) if i not in taken)
    out = []
    for seat, face_up, street in deal_sequence(rules, deal_order(0, 2)):
        if face_up:
            out.append(up[seat].pop(0) if up[seat] else next(spare))
        else:
            out.append(holes[seat])
    return [deck[i] for i in out]


def _holes_for(public, size: int) -> tuple[int, int]:
    free = [i for i in range(size) if i not in public]
    return free[0], free[1]


def build_tree(rules: Rules | str = "soko_mini") -> Tree:
    """The public tree of ``rules`` (heads-up, one hole card, one up card then one more)."""
    rules = get_rules(rules)
    shape = [s.cards for s in rules.streets]
    if shape != [(False, True), (True,)] or rules.min_players > 2 or rules.betting != "fixed_limit":
        raise ValueError(f"{rules.name}: exact solving needs heads-up fixed limit with streets "
                         "1 down + 1 up, then 1 up (as soko_mini)")
    if rules.follow_the_queen or rules.low_chicago:
        raise ValueError(f"{rules.name}: exact solving does not handle wild cards or Low Chicago")
    deck = rules.deck
    C = len(deck)
    R = C // 4
    # Public card tuples in lexicographic order (agents.table.tuple_index ranks them).
    pub0 = np.array([(a, b) for a in range(C) for b in range(C) if a != b], dtype=np.int16)
    pub1 = np.array([(a, b, c, d) for a, b in pub0.tolist() for c in range(C) for d in range(C)
                     if len({a, b, c, d}) == 4], dtype=np.int16)
    valid = []
    for pubs in (pub0, pub1):
        v = np.ones((len(pubs), C), dtype=DTYPE)
        v[np.arange(len(pubs))[:, None], pubs] = 0.0
        valid.append(v)
    # The openers, from the engine: the bring-in seat, and who acts first in round 1 after
    # bring-in + call.
    open0 = np.zeros(len(pub0), dtype=np.int8)
    for i, p in enumerate(pub0.tolist()):
        g = Game(rules, 2, deck=_deal(rules, deck, p, _holes_for(p, C)), seed=0)
        open0[i] = g.current_player
    open1 = np.zeros(len(pub1), dtype=np.int8)
    for i, p in enumerate(pub1.tolist()):
        g = Game(rules, 2, deck=_deal(rules, deck, p, _holes_for(p, C)), seed=0)
        g.check_or_call()
        g.check_or_call()
        open1[i] = g.current_player
    kind1 = (2 * np.repeat(open0, len(pub1) // len(pub0)) + open1).astype(np.int8)
    kinds = sorted(set(kind1.tolist()))
    # The betting tree, from one deal of each kind; every kind must give the same shape.
    trees = {}
    for k in kinds:
        p = pub1[int(np.flatnonzero(kind1 == k)[0])].tolist()
        trees[k] = _enumerate(rules, _deal(rules, deck, p, _holes_for(p, C)))
    first = trees[kinds[0]]
    for k in kinds[1:]:
        if [(n[0], n[1], n[2], n[3]) for n in trees[k][0]] != [(n[0], n[1], n[2], n[3]) for n in first[0]]:
            raise ValueError(f"{rules.name}: the betting tree depends on the cards; not solvable here")
    nodes = [Node(seq, rnd, role, legal) for seq, rnd, role, legal in first[0]]
    index = {n.seq: i for i, n in enumerate(nodes)}
    fold_pay, stake = {}, {}
    terminal_of: dict = {}
    for k in kinds:
        for seq, what, pay, total in trees[k][1]:
            j = terminal_of.setdefault(seq, len(terminal_of))
            if what == "fold":
                fold_pay.setdefault(j, np.zeros(4))[k] = pay
            else:
                if total[0] != total[1]:
                    raise ValueError("a showdown with unequal stakes: not handled")
                stake.setdefault(j, np.zeros(4))[k] = total[0]
    for n in nodes:
        for a in n.legal:
            seq = n.seq + (a,)
            if seq in index:
                child = nodes[index[seq]]
                n.children.append(("next" if child.round > n.round else "node", index[seq]))
            else:
                j = terminal_of[seq]
                n.children.append(("fold" if j in fold_pay else "showdown", j))
    # Showdown signs by hole rank: three-card hands only rank by their ranks (no flush or
    # straight with three cards), so one suit per rank stands for all.
    evaluate = rules_evaluator(rules)
    value = {}

    def val(ranks):
        key = tuple(sorted(ranks))
        if key not in value:
            value[key] = int(evaluate([deck[4 * r + s] for s, r in enumerate(ranks)]))
        return value[key]

    rank1 = pub1 // 4
    sign = np.zeros((len(pub1), R, R), dtype=np.int8)
    for i, (a, b, c, d) in enumerate(rank1.tolist()):
        v0 = [val((h, a, c)) for h in range(R)]
        v1 = [val((h, b, d)) for h in range(R)]
        sign[i] = np.sign(np.subtract.outer(v0, v1))
    deals = 1.0
    for i in range(6):
        deals *= C - i
    open1_kind = kind1
    open0_kind = kind1.reshape(len(pub0), -1)[:, 0]   # round 0 only depends on the bring-in seat
    tree = Tree(rules, deck, nodes, [pub0, pub1], valid, [open0, open1], [open0_kind, open1_kind],
                fold_pay, stake, sign, [(C - 4) * (C - 5) / deals, 1.0 / deals])
    return tree


def _enumerate(rules: Rules, deck) -> tuple[list, list]:
    """(nodes, terminals) of the betting tree on one deal: nodes as (seq, round, role, legal),
    terminals as (seq, "fold"/"showdown", payoff of seat 0, total_committed)."""
    nodes, terminals = [], []
    openers = {}

    def replay(seq):
        g = Game(rules, 2, deck=deck, seed=0)
        for a in seq:
            apply_action(g, a)
        return g

    stack = [()]
    while stack:
        seq = stack.pop()
        g = replay(seq)
        if g.is_over:
            what = "fold" if any(g.folded) else "showdown"
            terminals.append((seq, what, g.payoffs[0], g.total_committed))
            continue
        rnd = g.street
        openers.setdefault(rnd, g.current_player)
        role = 0 if g.current_player == openers[rnd] else 1
        legal = tuple(int(i) for i in np.flatnonzero(action_mask(g)))
        nodes.append((seq, rnd, role, legal))
        for a in reversed(legal):
            stack.append(seq + (a,))
    nodes.sort(key=lambda n: (len(n[0]), n[0]))
    return nodes, terminals


# ---------------------------------------------------------------------------------------------
# Walking the tree


class _Walk:
    """One backward pass over the tree for ``seat``: counterfactual values (opponent's reach
    times chance, own reach left out) at every public state and own hole card.

    ``mode``: ``"value"`` (own nodes: the strategy's mean), ``"best"`` (own nodes: the best
    action; ``best[node]`` records it) or ``"cfr"`` (as value, and regrets and average
    strategy are updated at own nodes)."""

    def __init__(self, tree: Tree, strategy: list, seat: int, mode: str, *, regrets=None,
                 average=None, weight: float = 1.0) -> None:
        self.tree, self.strategy, self.seat, self.mode = tree, strategy, seat, mode
        self.regrets, self.average, self.weight = regrets, average, weight
        self.best: dict[int, np.ndarray] = {}
        self._actor = [(tree.actor(n) == seat)[:, None] for n in tree.nodes]

    def run(self) -> np.ndarray:
        t = self.tree
        reach = [t.valid[0].copy(), t.valid[0].copy()]
        return self.node(0, reach)

    def node(self, i: int, reach: list[np.ndarray]) -> np.ndarray:
        t = self.tree
        n = t.nodes[i]
        mine = self._actor[i]                    # (n_pub, 1): this seat acts here
        sigma = self.strategy[i]                 # (A, n_pub, C) over the actor's card
        me, opp = self.seat, 1 - self.seat
        one = DTYPE(1.0)
        opp_reach = reach[opp] * np.where(mine, one, sigma)
        own_reach = reach[me] * np.where(mine, sigma, one) if self.mode == "cfr" else None
        v = np.empty(sigma.shape, dtype=DTYPE)
        for k, (what, j) in enumerate(n.children):
            child_reach = [None, None]
            child_reach[opp] = opp_reach[k]
            child_reach[me] = own_reach[k] if own_reach is not None else reach[me]
            v[k] = self.child(n, what, j, child_reach)
        if self.mode == "best":
            # v.argmax(axis=0) and v.max(axis=0) (the first best on ties), action by action:
            # numpy reduces a short leading axis slowly (argmax was a third of a best response).
            own = v[0].copy()
            choice = np.zeros(own.shape, dtype=np.int8)
            for k in range(1, len(v)):
                choice[v[k] > own] = k
                np.maximum(own, v[k], out=own)
            self.best[i] = choice
        else:
            own = (sigma * v).sum(axis=0)
        out = np.where(mine, own, v.sum(axis=0))
        if self.mode == "cfr":
            regret = self.regrets[i]
            regret += np.where(mine, v - own, DTYPE(0))
            np.maximum(regret, 0, out=regret)
            self.average[i] += np.where(mine, DTYPE(self.weight) * own_reach, DTYPE(0))
        return out

    def child(self, n: Node, what: str, j: int, reach: list[np.ndarray]) -> np.ndarray:
        t = self.tree
        me, opp = self.seat, 1 - self.seat
        if what == "node":
            return self.node(j, reach)
        if what == "next":
            K, C = t.block, t.size
            expanded = [np.repeat(r, K, axis=0) * t.valid[1] for r in reach]
            v = self.node(j, expanded)
            return v.reshape(-1, K, C).sum(axis=1)
        rnd = n.round
        if what == "fold":
            pay = (t.fold_pay[j][t.kind[rnd]] * ((1 if me == 0 else -1) * t.weight[rnd])).astype(DTYPE)
            r = reach[opp]
            return pay[:, None] * (r.sum(axis=1, keepdims=True) - r) * t.valid[rnd]
        # Showdown: each seat has `stake` in; the better hand wins the other's, ties split.
        stake = t.stake[j][t.kind[1]]
        R = t.size // 4
        suits = reach[opp].reshape(len(reach[opp]), R, 4)
        by_rank = suits[:, :, 0] + suits[:, :, 1] + suits[:, :, 2] + suits[:, :, 3]   # (n_pub, R)
        sign = t.signs[me]
        # (sign * by_rank[:, None, :]).sum(axis=2), term by term (a short last axis is slow to
        # reduce, and this keeps its order of additions).
        ahead = sign[:, :, 0] * by_rank[:, None, 0]
        for r in range(1, R):
            ahead += sign[:, :, r] * by_rank[:, None, r]
        v = np.repeat(ahead, 4, axis=1)                                      # (n_pub, C)
        # The other seat cannot hold my card: take out its term (equal ranks need not tie, the
        # up cards differ).
        v -= t.self_signs[me] * reach[opp]
        return v * (stake * t.weight[1]).astype(DTYPE)[:, None] * t.valid[1]


def uniform_strategy(tree: Tree) -> list[np.ndarray]:
    """Every legal action equally likely, at every node."""
    return [np.full((len(n.legal), len(tree.pubs[n.round]), tree.size), 1.0 / len(n.legal), dtype=DTYPE)
            for n in tree.nodes]


def best_response(tree: Tree, strategy: list[np.ndarray], seat: int) -> tuple[float, dict[int, np.ndarray]]:
    """(value in chips per hand, best action index per node) of ``seat``'s best response to
    ``strategy`` (only the other seat's entries are read)."""
    walk = _Walk(tree, strategy, seat, "best")
    return float(walk.run().sum(dtype=np.float64)), walk.best


def profile_value(tree: Tree, strategy: list[np.ndarray], other: list[np.ndarray] | None = None) -> float:
    """Seat 0's expected chips per hand when seat 0 plays ``strategy`` and seat 1 ``other``
    (default: ``strategy`` too)."""
    if other is not None:
        strategy = [np.where(tree.actor(n)[:, None] == 0, s, o)
                    for n, s, o in zip(tree.nodes, strategy, other)]
    return float(_Walk(tree, strategy, 0, "value").run().sum(dtype=np.float64))


def exploitability(tree: Tree, strategy: list[np.ndarray]) -> tuple[float, float, float]:
    """(exploitability, best-response value of seat 0, of seat 1), chips per hand; OpenSpiel's
    convention: the mean of the two best-response values against ``strategy``."""
    v0, _ = best_response(tree, strategy, 0)
    v1, _ = best_response(tree, strategy, 1)
    return (v0 + v1) / 2, v0, v1


def own_reach(tree: Tree, strategy: list[np.ndarray]) -> list[np.ndarray]:
    """Per node, the chance that the seat acting there plays the actions leading to it under
    ``strategy``, by public state and its own face-down card (``(n_pub, C)``; the other seat's
    actions and chance left out)."""
    out: list[np.ndarray | None] = [None] * len(tree.nodes)

    def visit(i: int, reach: list[np.ndarray]) -> None:
        n = tree.nodes[i]
        actor = tree.actor(n)[:, None]
        out[i] = np.where(actor == 0, reach[0], reach[1])
        for k, (what, j) in enumerate(n.children):
            if what not in ("node", "next"):
                continue
            sigma = strategy[i][k]
            child = [np.where(actor == s, reach[s] * sigma, reach[s]) for s in (0, 1)]
            if what == "next":
                child = [np.repeat(r, tree.block, axis=0) for r in child]
            visit(j, child)

    ones = np.ones_like(tree.valid[0], dtype=DTYPE)
    visit(0, [ones, ones.copy()])
    return out


def average_strategy(tree: Tree, strategies: list[list[np.ndarray]],
                     weights: list[float] | None = None) -> list[np.ndarray]:
    """The behaviour strategy of a mixture: play ``strategies[k]`` for the whole hand with
    chance ``weights[k]`` (default equal). At each information set its actions are the
    strategies' weighted by how likely each reaches it (Kuhn's theorem: the mixture and this
    average have the same value against anything), uniform where none does.

    >>> tree = build_tree("soko_mini")
    >>> u = uniform_strategy(tree)
    >>> bool(np.allclose(average_strategy(tree, [u, u])[3], u[3]))
    True
    """
    weights = [1.0] * len(strategies) if weights is None else list(weights)
    totals = [np.zeros(s.shape, dtype=np.float64) for s in strategies[0]]
    mass = [np.zeros(s.shape[1:], dtype=np.float64) for s in strategies[0]]
    for w, strategy in zip(weights, strategies):
        for i, r in enumerate(own_reach(tree, strategy)):
            totals[i] += w * r * strategy[i]
            mass[i] += w * r
    return [np.where(m > 0, t / np.where(m > 0, m, 1.0), 1.0 / len(t)).astype(DTYPE)
            for t, m in zip(totals, mass)]


def bb_per_100(tree: Tree, chips: float) -> float:
    """Chips per hand in big bets per 100 hands."""
    return 100.0 * chips / tree.rules.big_bet


def _regret_matching(regret: np.ndarray) -> np.ndarray:
    total = regret.sum(axis=0)
    uniform = DTYPE(1.0 / regret.shape[0])
    return np.where(total > 0, regret / np.where(total > 0, total, DTYPE(1)), uniform)


def normalise(average: list[np.ndarray]) -> list[np.ndarray]:
    return [_regret_matching(a) for a in average]


def cfr_plus(tree: Tree, *, iterations: int = 1000, target_bb_per_100: float | None = None,
             check_every: int = 10, seconds: float | None = None,
             progress: Callable[[int, float, float], None] | None = None) -> tuple[list[np.ndarray], list]:
    """CFR+ with alternating updates and a linearly weighted average strategy. Stops after
    ``iterations``, or once the average strategy's exploitability (checked every
    ``check_every`` iterations) is below ``target_bb_per_100``, or after ``seconds``.
    Returns (average strategy, [(iteration, seconds, exploitability bb/100), ...])."""
    shapes = [(len(n.legal), len(tree.pubs[n.round]), tree.size) for n in tree.nodes]
    regrets = [np.zeros(s, dtype=DTYPE) for s in shapes]
    average = [np.zeros(s, dtype=DTYPE) for s in shapes]
    history = []
    start = time.perf_counter()
    for t in range(1, iterations + 1):
        for seat in (0, 1):
            strategy = [_regret_matching(r) for r in regrets]
            _Walk(tree, strategy, seat, "cfr", regrets=regrets, average=average, weight=float(t)).run()
        if t % check_every == 0 or t == iterations:
            e = bb_per_100(tree, exploitability(tree, normalise(average))[0])
            elapsed = time.perf_counter() - start
            history.append((t, elapsed, e))
            if progress:
                progress(t, elapsed, e)
            if target_bb_per_100 is not None and e < target_bb_per_100:
                break
            if seconds is not None and elapsed > seconds:
                break
    return normalise(average), history


# ---------------------------------------------------------------------------------------------
# Strategies of agents


def agent_strategy(tree: Tree, agent, seat: int | None = None) -> list[np.ndarray]:
    """The agent's action probabilities at every node where ``seat`` acts (both seats when
    None), as ``tree``'s strategy arrays; other entries are uniform. The agent is asked what it
    can do (``agents.base`` "Capabilities"): the table itself for a strategy table of this tree
    (``cfr``/``br``), the legal ids alone for a blind policy (random, call, raise), batched
    forward passes over the tree for a network (``ppo``, any network, with or without
    observation features: :func:`_ppo_batched_strategy`), its estimate's distribution once per
    card situation for a share estimator (``equity``,
    :func:`_equity_strategy`), else ``agent.policy(view, mask)`` for every information set
    (slow but general)."""
    strategy = uniform_strategy(tree)
    seats = (0, 1) if seat is None else (seat,)
    table = agent.strategy_table(tree.rules)
    if table is not None:
        _table_strategy(tree, table, strategy, seats)
        return strategy
    if _blind_strategy(tree, agent, strategy, seats):   # what their act() does, without views
        return strategy
    if callable(getattr(agent, "probabilities_from_logits", None)) and hasattr(agent, "actor"):
        _ppo_batched_strategy(tree, agent, strategy, seats)   # a network: batched over the tree
        return strategy
    estimator = agent.share_estimator()
    if estimator is not None:
        _equity_strategy(tree, estimator, strategy, seats)
        return strategy
    _view_strategy(tree, agent, strategy, seats)
    return strategy


def _blind_strategy(tree: Tree, agent, strategy, seats) -> bool:
    """Write ``agent.blind_policy`` (a policy of the legal ids alone) at every node; False,
    writing nothing, when the agent has none."""
    per_node = []
    for n in tree.nodes:
        mask = np.zeros(num_actions(tree.rules), dtype=np.int8)
        mask[list(n.legal)] = 1
        probs = agent.blind_policy(mask)
        if probs is None:
            return False
        per_node.append(np.asarray(probs)[list(n.legal)])
    for i, (n, probs) in enumerate(zip(tree.nodes, per_node)):
        mine = np.isin(tree.actor(n), seats)[:, None]
        for k in range(len(n.legal)):
            strategy[i][k] = np.where(mine, DTYPE(probs[k]), strategy[i][k])
    return True


def _table_strategy(tree, agent, strategy, seats) -> None:
    for i, n in enumerate(tree.nodes):
        j = agent.node_of[n.seq]
        entries = agent.arrays[j]
        mine = np.isin(tree.actor(n), seats)[:, None]
        if agent.probabilities:
            probs = _regret_matching(np.moveaxis(entries.astype(np.float64), -1, 0))
        else:
            probs = np.moveaxis(np.eye(len(n.legal))[np.maximum(entries, 0)], -1, 0)
        strategy[i] = np.where(mine, probs, strategy[i]).astype(DTYPE)


def _node_games(tree: Tree):
    """Per node and deal kind: the engine's game at that node on one deal of that kind."""
    t = tree
    out = {}
    for kind in sorted(set(t.kind[1].tolist())):
        p = t.pubs[1][int(np.flatnonzero(t.kind[1] == kind)[0])].tolist()
        deck = _deal(t.rules, t.deck, p, _holes_for(p, t.size))
        for i, n in enumerate(t.nodes):
            g = Game(t.rules, 2, deck=deck, seed=0)
            for a in n.seq:
                apply_action(g, a)
            out[i, kind] = g
    return out


def _equity_strategy(tree: Tree, agent, strategy, seats) -> None:
    """The ``equity`` agent's policy, the distribution of its estimate computed once per seat,
    round, public cards and hole card instead of once per information set: what it sees only
    changes per round, and the betting enters its decision only through the bars (players in,
    pot, to call) and the mask, the same for every deal of a node and kind. Each node then
    applies ``agents.equity.decision_chances`` to arrays of the chances of reaching its bars.

    Exact (and deterministic) when every share distribution is (at most ``POLICY_DEALS``
    deals of the unseen cards; ``soko_mini``: 504 in round 0, 7 in round 1); otherwise each
    card situation's measured distribution serves every node of its round."""
    from agents.equity import POLICY_DEALS, decision_chances

    t = tree
    games = _node_games(t)
    C = t.size
    if math.perm(C - 3, 3) > POLICY_DEALS:   # round 0's unseen: the other hole card, two up cards
        warnings.warn(f"equity on a {C}-card deck: its round-0 share chances are measured over "
                      f"{POLICY_DEALS} deals, not exact")
    for rnd in (0, 1):
        nodes = [i for i, n in enumerate(t.nodes) if n.round == rnd and len(n.legal) > 1]
        if not nodes:
            continue
        kinds = _round_kinds(t, rnd)
        for s in seats:
            # The chance distribution of act's estimate per (public, hole), as an index into
            # the distinct distributions (few: they depend on the deal shares' counts only).
            which = np.full((len(t.pubs[rnd]), C), -1, dtype=np.int64)
            estimates, index = [], {}
            for kind in sorted(set(kinds.tolist())):
                sel = np.flatnonzero(kinds == kind)
                for p, h, view in _views(t, games[nodes[0], kind].view(s), rnd, sel):
                    units = agent.deal_shares(view)
                    values, counts = np.unique(units, return_counts=True)
                    key = (values.tobytes(), counts.tobytes())
                    if key not in index:
                        index[key] = len(estimates)
                        estimates.append(agent.estimate_at_least_of(units))
                    which[p, h] = index[key]
            for i in nodes:
                n = t.nodes[i]
                mask = np.zeros(num_actions(t.rules), dtype=np.int8)
                mask[list(n.legal)] = 1
                actor = t.actor(n)
                for kind in sorted(set(kinds.tolist())):
                    sel = np.flatnonzero((actor == s) & (kinds == kind))
                    if not len(sel):
                        continue
                    view = games[i, kind].view(s)
                    bars = agent._bars(view)
                    # P(estimate >= bar) per distinct distribution, then per (public, hole).
                    at_bars = np.array([[at_least(bar) for bar in bars] for at_least in estimates])
                    chances = at_bars[which[sel]]                        # (m, C, 3)
                    valid = which[sel] >= 0
                    probs = decision_chances(mask, to_call=view.to_call, at_raise=chances[..., 0],
                                             at_large=chances[..., 1], at_call=chances[..., 2])
                    block = strategy[i][:, sel]
                    strategy[i][:, sel] = np.where(valid, probs[list(n.legal)], block)


def _info_set_decks(tree: Tree, rnd: int, pub: np.ndarray, hole: np.ndarray, actor: np.ndarray) -> np.ndarray:
    """(M, deck size) deck orders (card ids, top first, button on seat 0) that deal public
    state ``pub[m]`` of round ``rnd`` face up and hole card ``hole[m]`` (local indices) to seat
    ``actor[m]``: one hand per information set. The other seat's hole card (which its
    observation does not show) and, in round 0, the next up cards are the lowest cards still
    free; the undealt rest follows in card order."""
    t = tree
    C, M = t.size, len(pub)
    rows = np.arange(M)
    taken = np.zeros((M, C), dtype=bool)
    public = t.pubs[rnd][pub].astype(np.int64)                       # (M, 2 or 4): u0, u1[, v0, v1]
    taken[rows[:, None], public] = True
    taken[rows, hole] = True
    holes = np.empty((M, 2), dtype=np.int64)
    holes[rows, actor] = hole
    holes[rows, 1 - actor] = other = np.argmin(taken, axis=1)        # the lowest free card
    taken[rows, other] = True
    up = [list(public[:, s::2].T) for s in (0, 1)]                   # per seat: its up cards in deal order
    position = np.full((M, C), C, dtype=np.int64)                    # deal position; C: not dealt
    for k, (seat, face_up, _) in enumerate(deal_sequence(t.rules, deal_order(0, 2))):
        if not face_up:
            card = holes[:, seat]
        elif up[seat]:
            card = up[seat].pop(0)
        else:
            card = np.argmin(taken, axis=1)                          # a later up card (round 0)
            taken[rows, card] = True
        position[rows, card] = k
    order = np.argsort(position * C + np.arange(C), axis=1)          # the dealt cards, then the rest
    return np.array([int(c) for c in t.deck])[order]


def _core_observations(tree: Tree, features, seq: tuple[int, ...], decks: np.ndarray,
                       actors: np.ndarray) -> np.ndarray:
    """(M, observation) the observation of seat ``actors[m]``, to act after the betting ``seq``
    in the hand dealt from ``decks[m]``, with the optional pieces ``features``: the compiled core
    plays every hand at once and encodes only at the end (``envs.batched.BatchedGame``, the
    training env's encoder)."""
    from envs.batched import BatchedGame

    game = BatchedGame(tree.rules, 2, len(decks), auto_reset=False, observations=True,
                       observation_features=features)
    game.set_observed_seats(np.zeros_like(game.observed_seats))   # no encoding on the way
    game.reset(decks=decks)
    for a in seq:
        game.step(np.full(len(decks), a, dtype=np.int64))
    if not np.array_equal(game.current_player, actors):
        raise RuntimeError(f"betting {seq}: the core's player to act is not the exact tree's")
    game.set_observed_seats(np.ones_like(game.observed_seats))    # the seat to act's, now
    return game.observations.copy()


def _ppo_batched_strategy(tree: Tree, agent, strategy, seats, *, rows: int = 8192, checks: int = 64,
                          threads: int | None = None) -> None:
    """A ``ppo`` agent's policy at every information set of ``seats``, any network and any
    observation features, batched over the tree.

    Per round and role (the opener to act or the other seat): the compiled core deals one hand
    per information set (:func:`_info_set_decks`) and encodes its observations, features
    included, at the round's first node of that role (:func:`_core_observations`). At the
    other nodes the cards' part (cards, hand classes, win probability: nobody has folded at a
    decision) is the same and only the betting's differs, by deal kind: that difference comes
    from the core on one information set per kind, and ``checks`` more information sets per
    node are encoded there in full to hold the sum to it. The observations depend on the tree
    and the pieces only, not on the network, so they are kept (:func:`_observation_plan`) for
    the next agent of the same tree and pieces (the training pool's exact best responses ask
    every few thousand steps). The network's linear start (``actor.linear_input``) maps the
    cards' part once and each node's betting part apart, so a node costs one pass of the rest
    of the network over a batch of at most ``rows`` information sets as columns, the legal
    actions' logits only (``actor.logit_columns``), then the agent's softmax down the columns
    (1.4-1.6x as fast as rows over the tree: the reductions over a few actions run along
    contiguous rows). The batches are shared out to ``threads`` threads (default: one per core;
    NumPy and the core release the GIL while they work)."""
    from concurrent.futures import ThreadPoolExecutor

    t = tree
    actor = agent.actor
    workers = threads or os.cpu_count() or 1
    jobs = _observation_plan(t, tuple(agent.features), tuple(seats), rows, checks, workers)

    def run(job) -> None:
        nodes, betting, part, pub, hole, at, cards = job
        cards = np.ascontiguousarray(actor.linear_input(cards).T)    # (width, rows): one column a set
        bounds = np.flatnonzero(np.diff(at[part])) + 1               # where the next kind starts
        segments = list(zip(np.r_[0, bounds], np.r_[bounds, cards.shape[1]]))
        x = np.empty_like(cards)
        for i in nodes:
            n = t.nodes[i]
            step = actor.linear_input(betting[i]) + actor.input_bias
            for a, b in segments:
                np.add(cards[:, a:b], step[at[part][a]][:, None], out=x[:, a:b])
            legal = sorted(n.legal)
            probs = agent.probabilities_from_logit_columns(actor.logit_columns(x, legal))
            strategy[i][:, pub[part], hole[part]] = probs

    with _one_blas_thread(), ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(run, jobs):
            pass


def _observation_plan(tree: Tree, features: tuple[str, ...], seats: tuple[int, ...], rows: int, checks: int,
                      threads: int) -> list[tuple]:
    """The batches of :func:`_ppo_batched_strategy` with their observations: per round, role
    and batch of at most ``rows`` information sets, ``(nodes, betting, part, pub, hole, at,
    cards)``, ``cards`` the observations (float32) at the role's first node and ``betting[i]``
    node ``i``'s betting part by deal kind. The tree keeps the newest one (a featured plan of
    ``soko_mini`` is about 170 MB); a tree made from it (``dataclasses.replace``) starts without."""
    from concurrent.futures import ThreadPoolExecutor

    key = (features, seats, rows, checks)
    kept = tree.__dict__.get("_observation_plan")
    if kept is not None and kept[0] == key:
        return kept[1]
    t = tree
    jobs = []
    for rnd in (0, 1):
        pubs, holes = np.nonzero(t.valid[rnd] > 0)                   # every information set of the round
        kinds = _round_kinds(t, rnd)
        for role in (0, 1):
            nodes = [i for i, n in enumerate(t.nodes) if n.round == rnd and n.role == role]
            opener = t.opener[rnd].astype(np.int64)
            acting = opener if role == 0 else 1 - opener
            keep = np.isin(acting[pubs], seats)
            # By deal kind, so that each kind's rows of a batch are one slice.
            order = np.argsort(kinds[pubs[keep]], kind="stable")
            pub, hole = pubs[keep][order], holes[keep][order]
            if not nodes or not len(pub):
                continue
            acts, kind = acting[pub], kinds[pub]
            decks = _info_set_decks(t, rnd, pub, hole, acts)
            # The betting part of every node by kind, and the check that the sum is the whole.
            labels, first = np.unique(kind, return_index=True)
            sample = np.union1d(first, np.linspace(0, len(pub) - 1, checks).astype(np.int64))
            at = np.searchsorted(labels, kind)                       # each information set's kind
            ref = t.nodes[nodes[0]].seq
            ref_obs = _core_observations(t, features, ref, decks[sample], acts[sample])
            rep = np.searchsorted(sample, first)                     # the kinds' rows in the sample
            betting = {}
            for i in nodes:
                obs = _core_observations(t, features, t.nodes[i].seq, decks[sample], acts[sample])
                betting[i] = obs[rep] - ref_obs[rep]                  # (kinds, observation)
                if np.abs(ref_obs + betting[i][at[sample]] - obs).max() > 1e-6:
                    raise RuntimeError(f"betting {t.nodes[i].seq}: the observation is not the cards' part "
                                       "plus the betting's by deal kind")
            for start in range(0, len(pub), rows):
                jobs.append((nodes, betting, slice(start, start + rows), pub, hole, at, ref, decks, acts))

    def encode(job) -> tuple:
        nodes, betting, part, pub, hole, at, ref, decks, acts = job
        cards = _core_observations(t, features, ref, decks[part], acts[part])
        return nodes, betting, part, pub, hole, at, cards

    with ThreadPoolExecutor(max_workers=threads) as pool:
        plan = list(pool.map(encode, jobs))
    tree.__dict__["_observation_plan"] = (key, plan)
    return plan


@contextlib.contextmanager
def _one_blas_thread():
    """NumPy's BLAS on one thread for the duration (``agents.trained.limit_blas_threads``): the
    batches already run on a thread per core, and its own threads would only contend for the
    cores (on a busy 2-core machine they made the batched ppo policy half as slow again)."""
    from agents.trained import limit_blas_threads

    limiter = limit_blas_threads(1)
    try:
        yield
    finally:
        limiter.restore_original_limits()


def _view_strategy(tree: Tree, agent, strategy, seats) -> None:
    """Any agent with a policy: one call per information set, on views made from one replayed
    game per node and deal kind with the cards swapped in (:func:`_views`)."""
    t = tree
    games = _node_games(t)
    for i, n in enumerate(t.nodes):
        actor = t.actor(n)
        kinds = _round_kinds(t, n.round)
        mask = np.zeros(num_actions(t.rules), dtype=np.int8)
        mask[list(n.legal)] = 1
        for s in seats:
            for kind in sorted(set(kinds.tolist())):
                sel = np.flatnonzero((actor == s) & (kinds == kind))
                for p, h, v in _views(t, games[i, kind].view(s), n.round, sel):
                    probs = agent.policy(v, mask)
                    if probs is None:
                        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} does not give its "
                                         "action probabilities (Agent.policy): no exact best response")
                    strategy[i][:, p, h] = np.asarray(probs)[list(n.legal)]


def _round_kinds(tree: Tree, rnd: int) -> np.ndarray:
    """(n_pub,) the deal kind of each public state of round ``rnd`` (round 0: its bring-in)."""
    return tree.kind[rnd] if rnd == 1 else tree.kind[1].reshape(len(tree.pubs[0]), -1)[:, 0]


def _views(tree: Tree, view, rnd: int, sel: np.ndarray):
    """``(public index, hole card, view)`` for each public state of round ``rnd`` in ``sel``
    and each hole card its seat may hold there: ``view`` (of a game at a node of that round,
    on one deal of the public states' kind) with the cards swapped in."""
    import dataclasses

    from envs.engine.events import EventKind

    t = tree
    s = view.seat
    pubs = t.pubs[rnd]
    log = list(view.log)
    deals = [k for k, e in enumerate(log) if e.kind == EventKind.DEAL]
    up_at = [k for k in deals if log[k].up]
    hole_at = [k for k in deals if not log[k].up and log[k].seat == s][0]
    for p in sel.tolist():
        pc = [t.deck[c] for c in pubs[p]]
        up = ((pc[0],) + tuple(pc[2:3]), (pc[1],) + tuple(pc[3:4]))
        base_log = list(log)
        seen = {0: 0, 1: 0}
        for k in up_at:
            e = log[k]
            base_log[k] = e._replace(card=up[e.seat][seen[e.seat]])
            seen[e.seat] += 1
        for h in np.flatnonzero(t.valid[rnd][p]).tolist():
            card = t.deck[h]
            base_log[hole_at] = log[hole_at]._replace(card=card)
            yield p, h, dataclasses.replace(view, hole_cards=(card,), up_cards=up, log=tuple(base_log))


# ---------------------------------------------------------------------------------------------
# Saving strategies as agents


def save_table(tree: Tree, path: str | Path, *, probabilities: list[np.ndarray] | None = None,
               actions: dict[int, np.ndarray] | None = None, compress: bool = True) -> Path:
    """Write a strategy table (``agents/table.py``): ``probabilities`` (a cfr: agent, float16)
    or ``actions`` (a br: agent, the chosen index per node; nodes missing say nothing).
    ``compress=False`` writes the arrays as they are (a ``soko_mini`` br table: 12.9 MB instead
    of 1.1 MB, written in 0.05 s instead of 1.5 s on a loaded machine; training's refreshes
    write so)."""
    path = Path(path)
    make_folder(path.parent)
    meta = {"game": tree.rules.name, "rules": rules_overrides(tree.rules),
            "seqs": [list(n.seq) for n in tree.nodes], "legal": [list(n.legal) for n in tree.nodes],
            "round": [n.round for n in tree.nodes],
            "kind": "probabilities" if probabilities is not None else "actions"}
    arrays = {}
    for i, n in enumerate(tree.nodes):
        if probabilities is not None:
            arrays[f"n{i}"] = np.moveaxis(probabilities[i], 0, -1).astype(np.float16)
        else:
            shape = (len(tree.pubs[n.round]), tree.size)
            arrays[f"n{i}"] = actions.get(i, np.full(shape, -1, dtype=np.int8)).astype(np.int8)
    buffer = io.BytesIO()   # then written whole (a table read back mid-write would be cut)
    (np.savez_compressed if compress else np.savez)(buffer, meta=json.dumps(meta), **arrays)
    return atomic_write_bytes(path, buffer.getvalue())


def rules_overrides(rules: Rules) -> dict:
    """The fields in which ``rules`` differ from its preset (a table replays them)."""
    import dataclasses

    preset = get_rules(rules.name)
    out = {}
    for f in dataclasses.fields(rules):
        value = getattr(rules, f.name)
        if value != getattr(preset, f.name):
            if not isinstance(value, (int, float, str, bool)):
                raise ValueError(f"a strategy table cannot record a changed {f.name}")
            out[f.name] = value
    return out


def merge_best(tree: Tree, best0: dict, best1: dict) -> dict[int, np.ndarray]:
    """One table from the two seats' best responses: at each node the acting seat's choice."""
    out = {}
    for i, n in enumerate(tree.nodes):
        actor = tree.actor(n)[:, None]
        out[i] = np.where(actor == 0, best0[i], best1[i]).astype(np.int8)
    return out
