"""Luck correction: a chance-node control variate for tournament results (in the spirit of
AIVAT / MIVAT), computed by the referee, who sees every card.

Every card dealt is a chance event. Just before it, the card is uniform over the cards not yet
dealt (the deck is a uniformly random permutation, and nothing the agents do can see or change
the cards still in it). For a *value* ``v_i(state)`` of each seat, the correction of a hand is

    correction_i = sum over cards dealt of  v_i(after) - mean over c of v_i(after, had c been dealt)

where the mean runs over every card that could have been dealt there. Each term has mean zero
given everything before it, so ``result_i - correction_i`` has the same expectation as the
result, whatever the agents do and whatever ``v`` is; a good ``v`` only makes the variance
smaller. The values here sum to zero over the seats, so the corrections do too.

The value is the seat's share of the pot at showdown times the pot, ``v_i = share_i * pot -
committed_i`` (the committed chips cancel in the correction), where the share is the seat's
equity judged from the cards dealt so far: its mean share over the ways the cards still to
come to the seats in the hand could fall, assuming nobody folds: over every remaining card
when one card is still to come, otherwise over ``samples`` completions of the deal drawn with
a generator seeded from the chance node (the same draws for every candidate card, which keeps
the noise of the draws out of the correction as far as possible). The stake is the pot plus
``growth`` bets per seat in the hand for each betting round still to come.

**Decision terms.** An agent whose action probabilities are known (``Agent.policy``: the random
agent) is a chance player too: at each of its decisions, with probabilities ``p(a)`` over the
legal actions, the term is ``v_i(after the action played) - sum over a of p(a) v_i(after a)``,
again zero-mean given the state whatever ``v`` is (pass ``policies`` per seat). The shares
there are those of the cards dealt so far (the last card's share row); an action's chips go to
the pot and to the seat's committed chips, and each seat in the hand is charged its own
``growth`` bets for the later rounds (so ``v`` still sums to zero); a fold gives the folder no
share and the others its share in proportion. The hand is replayed for the legal actions at
each decision, which costs CPU (measured in docs/results.md).

**Fitted coefficients.** ``v`` above is a guess (equity times a guessed stake, and the value
after a decision does not know how the agents play on), so subtracting the terms with weight 1
is not the best use of them. :meth:`LuckCorrector.features` keeps them apart per hand: the card
terms per betting round, the decision terms, and per round the known policy's own coin flips
(folded less its probability of folding, bet or raised less its probability of that: mean zero
for the same reason). :func:`control` then subtracts the linear combination of a match's
features that leaves the least variance, with coefficients fitted by least squares on the
other nine tenths of the groups (cross-fitting: the estimate stays unbiased). The half-widths
with fitted and with unit weights are compared in docs/results.md.

Folded seats have no share. Follow the Bitch: the wild rank after a candidate card follows the
engine's rule (a face-up queen ends it; the next face-up card of the same dealing round names
the new one), and completions replay the rule over the cards still to come. Low Chicago: the
lowest face-down spade among the seats in the hand takes half the pot (unless it also holds
the winning high hand). Side pots are ignored: ``v`` need not be the exact payoff, so this only
costs a little variance reduction in rare all-in hands, never bias.

>>> from envs.engine.game import Game
>>> g = Game("soko", 2, deck="Ah 2c Kd 3c", seed=0)
>>> g.check_or_call(); g.fold()          # seat 0 brings in, seat 1 folds
>>> c = LuckCorrector(g.rules).corrections(g)   # chips to take off each seat's payoff
>>> bool(c[1] > 0), bool(abs(c.sum()) < 1e-12)  # Ah Kd against 2c 3c was lucky; zero-sum
(True, True)
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from envs.actions import CHECK_CALL, FIRST_BET, FOLD, action_mask, policy_probabilities
from envs.engine.cards import DECK
from envs.engine.game import ACTION_KINDS, BET_KINDS, Game
from envs.engine.hands import evaluate_batch
from envs.engine.rules import (
    NO_LOW_CHICAGO,
    NO_WILD,
    QUEEN,
    Rules,
    deal_order,
    deal_sequence,
    deck_mask,
    hand_options,
    low_chicago_key,
    next_wild_rank,
    rules_evaluator,
    wild_ranks,
)

__all__ = ["LuckCorrector", "ChanceNode", "DecisionNode", "chance_nodes", "decision_nodes",
           "control", "feature_names", "feature_count", "value_columns", "warm_up"]

_PUT_IN = ("ante", "bring_in", "complete", "bet", "raise", "call")


@dataclass
class ChanceNode:
    """The state just before one card is dealt (as the referee sees it) and the card."""

    seat: int
    up: bool
    card: int
    hole_cards: list[list[int]]
    up_cards: list[list[int]]
    folded: list[bool]
    total_committed: list[int]   # chips each seat has put in so far
    dealt: np.ndarray            # bool (52,): cards already dealt (folded hands' included)
    wild: int                    # followed wild rank index, -1 for none
    pending: bool                # a face-up queen came this dealing round: the next up card names
    street: int
    order: tuple[int, ...] = field(default=())  # seats clockwise from the dealer's left

    @property
    def pot(self) -> int:
        return sum(self.total_committed)


def chance_nodes(game) -> list[ChanceNode]:
    """Every card dealt in ``game`` (finished or not), with the state before it, from its log."""
    n = game.num_players
    follow = game.rules.follow_the_queen
    hole = [[] for _ in range(n)]
    up = [[] for _ in range(n)]
    folded = [False] * n
    total = [0] * n
    dealt = ~deck_mask(game.rules)  # cards outside a short deck count as dealt: never candidates
    wild, pending, street = NO_WILD, False, -1
    order = deal_order(game.button, n)
    nodes = []
    for e in game.log:
        kind = e.kind
        if kind in _PUT_IN:
            total[e.seat] += e.amount
        elif kind == "fold":
            folded[e.seat] = True
        elif kind == "street":
            pending = False  # a queen dealt last in its round names no wild rank (docs/rules.md)
            street = e.street
        elif kind == "deal":
            card = int(e.card)
            nodes.append(ChanceNode(e.seat, e.up, card, [list(h) for h in hole], [list(u) for u in up],
                                    list(folded), list(total), dealt.copy(), wild, pending,
                                    street + 1, order))
            dealt[card] = True
            if e.up:
                up[e.seat].append(card)
                if follow:
                    wild, pending = next_wild_rank(wild, pending, card >> 2)
            else:
                hole[e.seat].append(card)
    return nodes


@dataclass
class DecisionNode:
    """One decision of a seat whose agent's policy is known: the state before it (as the
    referee sees it), the legal actions with the chips each puts in and their probabilities."""

    seat: int
    node: int                    # index of the last card dealt before it (in chance_nodes order)
    total_committed: list[int]   # chips each seat has put in so far
    folded: list[bool]
    street: int                  # the betting round (0: the first)
    actions: np.ndarray          # the legal action ids (envs.actions), ascending
    chips: np.ndarray            # chips each of them puts in (fold: 0)
    probs: np.ndarray            # the policy's probability of each of them
    chosen: int                  # index (into ``actions``) of the action played


def decision_nodes(game, policies) -> list[DecisionNode]:
    """The decisions in ``game``'s log whose seat has a known policy.

    ``policies[seat]``: None (not known) or a callable ``(view, action_mask) -> probabilities
    over the action ids or None`` (:meth:`agents.base.Agent.policy`). The hand is replayed from
    its deck and log, so every decision's legal actions and view are the ones the agent saw."""
    if policies is None or all(p is None for p in policies):
        return []
    n = game.num_players
    replay = Game(game.rules, n, deck=list(game.deck), button=game.button,
                  stacks=game.starting_stacks, seed=0)
    total = [0] * n
    folded = [False] * n
    deals, street = 0, -1
    out = []
    for e in game.log:
        kind = e.kind
        if kind == "deal":
            deals += 1
        elif kind == "street":
            street = e.street
        elif kind in ACTION_KINDS:
            p = e.seat
            policy = policies[p]
            if policy is not None and deals:
                mask = action_mask(replay)
                probs = policy_probabilities(policy, replay, p, mask)
                if probs is not None:
                    ids = np.flatnonzero(mask)
                    probs = np.asarray(probs, dtype=float)[ids]
                    if abs(probs.sum() - 1.0) > 1e-9 or (probs < 0).any():
                        raise ValueError(f"seat {p}'s policy is not a distribution over the "
                                         f"legal ids {ids.tolist()}: {probs.tolist()}")
                    sizes = replay.raise_to_amounts()
                    to_call, have, put = replay.to_call, replay.stacks[p], replay.committed[p]
                    chips = np.array([0 if a == FOLD else to_call if a < FIRST_BET
                                      else min(sizes[a - FIRST_BET] - put, have) for a in ids.tolist()])
                    if kind == "fold":
                        chosen = FOLD
                    elif kind in BET_KINDS:
                        chosen = FIRST_BET + sizes.index(e.round_total)
                    else:
                        chosen = CHECK_CALL
                    out.append(DecisionNode(p, deals - 1, list(total), list(folded), street, ids,
                                            chips, probs, int(np.searchsorted(ids, chosen))))
            replay.play_logged(e)
        if kind in _PUT_IN:
            total[e.seat] += e.amount
        elif kind == "fold":
            folded[e.seat] = True
    return out


class LuckCorrector:
    """Computes the luck correction of finished hands under ``rules`` (see the module doc)."""

    def __init__(self, rules: Rules, *, samples: int = 24, growth: float = 0.5, seed: int = 0,
                 batch_rows: int = 64, core: bool = True) -> None:
        self.rules = rules
        # Rules without a followed wild rank or Low Chicago: each node scored by the compiled
        # core (envs.batched.luck_node_shares), the same rows and floats as the NumPy form here.
        self.core = core and not rules.follow_the_queen and not rules.low_chicago
        self.samples = samples
        self.seed = seed
        self.growth = growth
        self.batch_rows = batch_rows  # fewer rows are scored one by one (no batch tables built)
        self._evals: dict[int, object] = {}

    # -----------------------------------------------------------------------------------------

    def _stake(self, node: ChanceNode, active: int) -> float:
        """The chips the share is of: the pot now plus ``growth`` bets per seat in the hand for
        every betting round still to come (the one after this card included)."""
        r = self.rules
        later = sum(r.bet_size(t) for t in range(node.street, r.num_streets))
        return node.pot + self.growth * active * later

    def _eval(self, wild: int):
        f = self._evals.get(wild)
        if f is None:
            f = self._evals[wild] = rules_evaluator(self.rules, wild_ranks(self.rules, wild))
        return f

    # -----------------------------------------------------------------------------------------

    def corrections(self, game, *, from_first_action: bool = False,
                    policies=None) -> np.ndarray:
        """Chips to subtract from each seat's payoff of ``game`` (float, sums to zero).

        ``from_first_action``: leave out the cards dealt before anyone acted. For duplicate
        deals, where every seating of a deal is played, those terms are the same in every
        seating for the same seat, so they add up to zero over a group for every agent: the
        group results do not change, and the most expensive terms are not computed.

        ``policies``: per seat, None or the agent's :meth:`~agents.base.Agent.policy`; the
        decisions of seats whose policy is known get decision terms (see :meth:`decision_terms`).
        """
        features = self.features(game, from_first_action=from_first_action, policies=policies)
        return features[:, :value_columns(self.rules)].sum(axis=1)

    def features(self, game, *, from_first_action: bool = False, policies=None) -> np.ndarray:
        """The hand's control variates per seat, (seats, ``3 * rounds + 1``), each of mean zero
        whatever the agents do (``from_first_action`` and ``policies`` as in :meth:`corrections`),
        named by :func:`feature_names` (which counts rounds from 1). With ``R`` betting rounds:

        * columns ``0 .. R-1``, ``cards t``: the chance terms of the cards dealt in round ``t``
          (before its betting), in chips;
        * column ``R``, ``decisions``: the decision terms of the seats whose policy is known, in
          chips;
        * columns ``R+1+2t`` and ``R+2+2t``, ``fold t`` and ``raise t``: the seat's own coin
          flips in betting round ``t`` (its policy known): over its decisions there, whether it
          folded less the probability it had of folding, and whether it bet or raised less the
          probability of that.

        :meth:`corrections` is the sum of the first ``R + 1`` columns; :func:`control` fits how
        much of each column to take off a match's results."""
        n = game.num_players
        only = None
        if from_first_action:
            deals = before = 0
            for e in game.log:
                if e.kind == "deal":
                    deals += 1
                elif e.kind in ACTION_KINDS and before == 0:
                    before = deals
            only = list(range(before, deals)) if before else None
        nodes, chance, decisions = self._compute(game, only, policies)
        rounds = self.rules.num_streets
        out = np.zeros((n, feature_count(self.rules)))
        for node, term in zip(nodes, chance):
            out[:, node.street] += term
        for d, term in decisions:
            out[:, rounds] += term
            played = d.actions[d.chosen]
            fold, bet = d.actions == FOLD, d.actions >= FIRST_BET
            out[d.seat, rounds + 1 + 2 * d.street] += (played == FOLD) - d.probs[fold].sum()
            out[d.seat, rounds + 2 + 2 * d.street] += (played >= FIRST_BET) - d.probs[bet].sum()
        return out

    def terms(self, game, only: list[int] | None = None) -> list[np.ndarray]:
        """The correction of each card dealt in ``game`` (per seat), in deal order; ``only``:
        just the cards with these indices (0: the first card dealt)."""
        _, chance, _ = self._compute(game, only, None)
        return chance if only is None else [chance[i] for i in only]

    def decision_terms(self, game, policies) -> list[tuple[DecisionNode, np.ndarray]]:
        """The correction of each decision of a seat whose policy is known (per seat), in play
        order.

        At a decision with probabilities ``p(a)`` over the legal actions, the term is
        ``v(after the action played) - sum over a of p(a) v(after a)`` for every seat's value
        ``v`` (the one of the chance nodes, with the equity shares of the cards dealt so far):
        its mean given the state is zero, so the agent's own coin flips come out of the result
        without bias. The chips an action puts in go to the pot (the stake) and to the seat's
        committed chips; a fold gives the folder no share and the others its share in
        proportion (heads-up: the other seat takes the pot)."""
        return self._compute(game, [], policies)[2]

    def _compute(self, game, only, policies):
        """(chance nodes; their terms, zero outside ``only``; (decision, term) pairs)."""
        n = game.num_players
        nodes = chance_nodes(game)
        decisions = decision_nodes(game, policies)
        rows_needed = {d.node for d in decisions}
        out = [np.zeros(n) for _ in nodes]
        todo, info = [], []
        for i, node in enumerate(nodes):
            active = [p for p in node.order if not node.folded[p]]
            if len(active) < 2:
                continue
            term = only is None or i in only
            if term or i in rows_needed:
                cands = np.flatnonzero(~node.dealt)
                actual = int(np.searchsorted(cands, node.card))
                # Only the share row of the card dealt is needed when its term is left out.
                todo.append((node, active, cands, None if term else actual))
                info.append((i, actual))
        shares = self._exact_all(todo) if todo else []
        rows = {}
        for (i, actual), (node, active, cands, keep), share in zip(info, todo, shares):
            row = np.zeros(n)
            if keep is None:
                out[i][active] = self._stake(node, len(active)) * (share[actual] - share.mean(axis=0))
                row[active] = share[actual]
            else:
                row[active] = share[0]
            rows[i] = row
        dec = []
        for d in decisions:
            row = rows.get(d.node)
            dec.append((d, np.zeros(n) if row is None else self._decision_term(d, row)))
        return nodes, out, dec

    def _decision_term(self, d: DecisionNode, share: np.ndarray) -> np.ndarray:
        """``v(after the action played) - sum over a of p(a) v(after a)`` (per seat).

        ``v_i = share_i * stake - committed_i - growth * later`` for a seat in the hand (its own
        bets still to come), ``-committed_i`` for a folded one, with ``stake`` the pot plus
        ``growth`` bets per seat in the hand for every later betting round: it sums to zero."""
        r = self.rules
        g = self.growth
        later = sum(r.bet_size(t) for t in range(d.street + 1, r.num_streets))
        total = np.asarray(d.total_committed, dtype=float)
        inhand = ~np.asarray(d.folded)
        values = np.empty((len(d.actions), len(total)))
        for j, (a, c) in enumerate(zip(d.actions.tolist(), d.chips.tolist())):
            live = inhand.copy()
            spent = total
            if a == FOLD:
                live[d.seat] = False
            else:
                spent = total.copy()
                spent[d.seat] += c
            s = np.where(live, share, 0.0)
            mass = s.sum()
            s = s / mass if mass > 0 else live / live.sum()
            k = int(live.sum())
            growth = g * later if k >= 2 else 0.0
            values[j] = s * (spent.sum() + growth * k) - spent - growth * live
        return values[d.chosen] - d.probs @ values

    @staticmethod
    def _high_shares(values: np.ndarray) -> np.ndarray:
        win = values == values.max(axis=1, keepdims=True)
        return win / win.sum(axis=1, keepdims=True)

    # -----------------------------------------------------------------------------------------
    # Equity over the cards still to come

    def _future_slots(self, node: ChanceNode, active: list[int]) -> list[tuple[int, bool, bool]]:
        """(seat, face up, last card of its dealing round) for every card still to come to
        ``active`` seats after the node's card, in deal order, assuming nobody folds."""
        held = {p: len(node.hole_cards[p]) + len(node.up_cards[p]) for p in active}
        held[node.seat] += 1
        slots = deal_sequence(self.rules, active, held=held)
        return [(s, up, i + 1 == len(slots) or slots[i + 1][2] != t)
                for i, (s, up, t) in enumerate(slots)]

    def _node_rows(self, node: ChanceNode, active: list[int], cands: np.ndarray,
                   keep: int | None = None):
        """Rows to score for one node: (hands per active seat (rows, cards), final wild per row,
        lowest face-down spade per row and seat, rows per candidate). ``keep``: only the rows
        of candidate ``cands[keep]`` (the same rows as when every candidate is scored)."""
        r = self.rules
        follow = r.follow_the_queen
        k = len(cands)
        sel = np.arange(k) if keep is None else np.array([keep])
        slots = self._future_slots(node, active)
        f = len(slots)
        if f == 0:
            fill = np.zeros((len(sel), 1, 0), dtype=np.int64)
        elif f == 1:
            # every remaining card for the one slot left: D[i, m] = cands without cands[i]
            m = np.arange(k - 1)
            fill = cands[m[None, :] + (m[None, :] >= sel[:, None])][:, :, None]
        else:
            perm = self._draws(node, k, f)                                       # (S, F+1)
            # For candidate i: the first F draws, with i (when drawn) replaced by draw F+1.
            first = perm[None, :, :f]
            fill = cands[np.where(first == sel[:, None, None], perm[None, :, f:], first)]
        per = fill.shape[1]
        rows = len(sel) * per
        fill = fill.reshape(rows, f)
        cand = np.repeat(cands[sel], per)
        # The wild rank at the end: replay the rule over the candidate and the cards to come.
        wild = np.full(rows, node.wild, dtype=np.int64)
        pend = np.full(rows, node.pending)
        if follow:
            def step(cards, up):
                nonlocal wild, pend
                if not up:
                    return
                wild, pend = next_wild_rank(wild, pend, cards >> 2)
            step(cand, node.up)
            # the node's own dealing round may end right after it
            if not slots or (slots and self._round_ends_at_node(node, active)):
                pend = np.zeros(rows, dtype=bool)
            for j, (s, up, last) in enumerate(slots):
                step(fill[:, j], up)
                if last:
                    pend = np.zeros(rows, dtype=bool)
        hands = []
        chicago = r.low_chicago
        low = np.full((rows, len(active)), NO_LOW_CHICAGO, dtype=np.int64) if chicago else None
        for a, p in enumerate(active):
            known = node.hole_cards[p] + node.up_cards[p]
            mine = p == node.seat
            cols = [j for j, (q, _, _) in enumerate(slots) if q == p]
            h = np.empty((rows, len(known) + mine + len(cols)), dtype=np.int64)
            h[:, :len(known)] = known
            at = len(known)
            if mine:
                h[:, at] = cand
                at += 1
            if cols:
                h[:, at:] = fill[:, cols]
            hands.append(h)
            if chicago:
                downs = [np.broadcast_to(np.array(node.hole_cards[p], dtype=np.int64),
                                         (rows, len(node.hole_cards[p])))]
                if mine and not node.up:
                    downs.append(cand[:, None])
                downs += [fill[:, j:j + 1] for j in cols if not slots[j][1]]
                d = np.concatenate(downs, axis=1)
                spade = low_chicago_key(d)
                if spade.shape[1]:
                    low[:, a] = spade.min(axis=1)
        return hands, wild, low, per

    def _draws(self, node: ChanceNode, k: int, f: int) -> np.ndarray:
        """The completions of a node with ``f >= 2`` cards to come: (samples, f + 1) indices into
        its ``k`` candidates, seeded by the node (the same draws for every candidate)."""
        from envs import _stud_core

        key = zlib.crc32(np.packbits(node.dealt).tobytes() + bytes([node.seat, node.up]))
        rng = np.random.default_rng([self.seed, key])
        # argsort(draws, axis=1)[:, :f + 1], by a selection in the core (the draws are distinct)
        return _stud_core.smallest_k(rng.random((self.samples, k)), f + 1)

    def _core_shares(self, node: ChanceNode, active: list[int], cands: np.ndarray,
                     keep: int | None) -> np.ndarray:
        """One node's shares (K or 1, active) scored by the core: :meth:`_node_rows` and the
        scoring after it, without the rows in Python."""
        from envs.batched import luck_node_shares

        slots = self._future_slots(node, active)
        place = {p: a for a, p in enumerate(active)}
        k = len(cands)
        perm = self._draws(node, k, len(slots)) if len(slots) > 1 else None
        return luck_node_shares([node.hole_cards[p] + node.up_cards[p] for p in active], place[node.seat],
                                cands, np.arange(k) if keep is None else [keep],
                                [place[s] for s, _, _ in slots], perm,
                                **hand_options(self.rules, wild_ranks(self.rules, node.wild)))

    def _round_ends_at_node(self, node: ChanceNode, active: list[int]) -> bool:
        """Whether the node's card is the last of its dealing round."""
        held = len(node.hole_cards[node.seat]) + len(node.up_cards[node.seat])
        index = 0
        for t, street in enumerate(self.rules.streets):
            index += len(street.cards)
            if held < index:
                return held == index - 1 and node.seat == active[-1]
        return True

    def _exact_all(self, nodes: list[tuple[ChanceNode, list[int], np.ndarray, int | None]]
                   ) -> list[np.ndarray]:
        """Shares per candidate (K, active) for every (node, active, candidates, keep), scoring
        all rows in a few batches (or each node in the core); ``keep``: just candidate ``keep``
        (1, active)."""
        if self.core:
            return [self._core_shares(*t) for t in nodes]
        built = [self._node_rows(*t) for t in nodes]
        # One batch per (card count, wild rank): every seat's hand of every node.
        chunks: dict[tuple[int, int], list[np.ndarray]] = {}
        where = []
        follow = self.rules.follow_the_queen
        wsets = []
        for hands, wild, _, _ in built:
            places = []
            wset = np.unique(wild).tolist() if follow else [int(wild[0])]
            wsets.append(wset)
            sels = [np.flatnonzero(wild == w) if len(wset) > 1 else None for w in wset]
            for h in hands:
                for w, sel in zip(wset, sels):
                    part = h if sel is None else h[sel]
                    lst = chunks.setdefault((h.shape[1], w), [])
                    places.append(((h.shape[1], w), len(lst), sel))
                    lst.append(part)
            where.append(places)
        scored = {}
        for (ncards, w), parts in chunks.items():
            x = np.concatenate(parts) if len(parts) > 1 else parts[0]
            vals = self._score(x, w)
            offs = np.cumsum([0] + [len(q) for q in parts])
            scored[(ncards, w)] = [vals[offs[i]:offs[i + 1]] for i in range(len(parts))]
        out = []
        for (hands, wild, low, per), places, wset in zip(built, where, wsets):
            rows = len(wild)
            values = np.empty((rows, len(hands)), dtype=np.int64)
            it = iter(places)
            for a in range(len(hands)):
                for _ in wset:
                    key, i, sel = next(it)
                    if sel is None:
                        values[:, a] = scored[key][i]
                    else:
                        values[sel, a] = scored[key][i]
            share = self._high_shares(values)
            if self.rules.low_chicago:
                share = _apply_chicago(share, values, low)
            out.append(share.reshape(-1, per, len(hands)).mean(axis=1))
        return out

    def _score(self, cards: np.ndarray, wild: int) -> np.ndarray:
        """Hand values of the rows of ``cards`` under the followed wild rank ``wild``.

        ``evaluate_batch`` builds tables per configuration (about two seconds for seven cards
        with a wild rank); until a configuration has scored ``BUILD_AFTER`` rows one by one (or
        :func:`warm_up` built it) its rows go through ``evaluator`` instead: the same values."""
        n = cards.shape[1]
        key = (self.rules.canadian_hands, self.rules.queens_wild, self.rules.double_ace_flush,
               self.rules.ace_low_four_straight, wild, n)
        if key not in _BUILT and 5 <= n <= 7 and len(cards) >= self.batch_rows:
            done = _LAZY_ROWS.get(key, 0) + len(cards)
            _LAZY_ROWS[key] = done
            if done >= BUILD_AFTER or (n == 5 and wild < 0):  # plain five-card tables are cheap
                _BUILT.add(key)
        if key in _BUILT and len(cards) >= self.batch_rows:
            return evaluate_batch(cards, **hand_options(self.rules, wild_ranks(self.rules, wild)))
        f = self._eval(wild)
        return np.fromiter((int(f([DECK[c] for c in row])) if row else -1 for row in cards.tolist()),
                           dtype=np.int64, count=len(cards))


_BUILT: set[tuple] = set()
_LAZY_ROWS: dict[tuple, int] = {}
BUILD_AFTER = 100_000
"""Rows a configuration scores one by one before its batch tables are built."""


def warm_up(rules: Rules) -> None:
    """Build the batch evaluator tables the "exact" kind needs under ``rules`` (every wild rank
    Follow the Bitch can bring), so that forked workers inherit them instead of each building
    them again. Nothing to build where the compiled core scores the nodes (``LuckCorrector.core``:
    no followed wild rank, no Low Chicago): the tables would go unused, and Soko's took 0.4 s."""
    n = rules.cards_per_player
    corrector = LuckCorrector(rules)
    if not 5 <= n <= 7 or corrector.core:
        return
    row = np.tile(np.arange(n, dtype=np.int64) * 4, (64, 1))  # distinct cards
    for wild in (range(-1, 13) if rules.follow_the_queen else (NO_WILD,)):
        if wild != QUEEN:
            _BUILT.add((rules.canadian_hands, rules.queens_wild, rules.double_ace_flush,
                        rules.ace_low_four_straight, wild, n))
            corrector._score(row, wild)


def _apply_chicago(high: np.ndarray, values: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Shares under Low Chicago from high shares, values and each seat's lowest face-down spade
    (``NO_LOW_CHICAGO``: none); the arrays are (rows, seats)."""
    lowest = low.min(axis=1, keepdims=True)
    has = lowest[:, 0] < NO_LOW_CHICAGO
    holder = np.argmin(low, axis=1)  # spades are unique, so one holder
    rows = np.arange(len(low))
    sole = (high[rows, holder] == 1.0)
    split = has & ~sole
    out = high.copy()
    out[split] *= 0.5
    out[rows[split], holder[split]] += 0.5
    return out


def feature_names(rules: Rules) -> list[str]:
    """Names of :meth:`LuckCorrector.features`' columns (betting rounds counted from 1)."""
    rounds = range(1, rules.num_streets + 1)
    return ([f"cards {t}" for t in rounds] + ["decisions"]
            + [f"{what} {t}" for t in rounds for what in ("fold", "raise")])


def feature_count(rules: Rules) -> int:
    """How many columns :meth:`LuckCorrector.features` has: ``3 * rounds + 1``."""
    return 3 * rules.num_streets + 1


def value_columns(rules: Rules) -> int:
    """How many leading columns of the features are chip terms (cards per round, decisions),
    the ``values`` of :func:`control`; their sum is :meth:`LuckCorrector.corrections`."""
    return rules.num_streets + 1


FOLDS = 10
"""Folds of the cross-fitting in :func:`control`."""
GROUPS_PER_TERM = 20
"""Groups :func:`control` needs per fitted coefficient (intercept included) to fit them."""


def control(results: np.ndarray, features: np.ndarray, values: int) -> tuple[np.ndarray, int]:
    """A match's group results less their control variates, with fitted coefficients.

    ``results`` (groups, positions): each position's result per group; ``features`` (groups,
    positions, columns): the :meth:`LuckCorrector.features` of each position's agent averaged
    over the group's hands, in the same unit; the first ``values`` columns are the chance and
    decision terms, which sum to zero over the positions. Every column has mean zero, so
    ``result - x @ b`` keeps the mean for any fixed ``b``; least squares picks the ``b`` that
    leaves the least variance. The coefficients of the groups in fold ``k`` (group index mod
    :data:`FOLDS`) are fitted on the other folds only (cross-fitting), so a group's own result
    never sets how much is taken off it, and the estimate stays unbiased.

    The regressors are every position's columns (a position's result depends on the others'
    coin flips too), less what is redundant: the last position's first ``values`` columns
    (minus the sum of the others') and columns that never vary. Every position is fitted on the
    same regressors, so results that sum to zero over the positions still do. With fewer than
    :data:`GROUPS_PER_TERM` groups per coefficient the coefficients are fixed instead: 1 on the
    position's own first ``values`` columns, which is :meth:`LuckCorrector.corrections`.
    Returns the adjusted results and the number of fitted regressors (0: fixed).
    """
    groups, n, _ = features.shape
    cols = ([features[:, j, :values] for j in range(n - 1)]
            + [features[:, j, values:] for j in range(n)])
    x = np.concatenate(cols, axis=1)
    x = x[:, np.ptp(x, axis=0) > 1e-12]
    p = x.shape[1]
    if groups < GROUPS_PER_TERM * (p + 1) or groups < FOLDS:
        return results - features[:, :, :values].sum(axis=2), 0
    fold = np.arange(groups) % FOLDS
    out = np.empty(results.shape)
    for k in range(FOLDS):
        test = fold == k
        train = ~test
        design = np.column_stack([np.ones(int(train.sum())), x[train]])
        coef = np.linalg.lstsq(design, results[train], rcond=None)[0]  # (1 + p, positions)
        out[test] = results[test] - x[test] @ coef[1:]
    return out, p
