"""soko_mini and the exact solver (arena/exact.py): scripted short-deck hands, a brute-force best
response and profile value from the engine against the vectorised ones, CFR+, the best response
as an agent in a duplicate match, and the exploit CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.registry import check_spec, make_agent
from agents.table import tuple_index
from arena.exact import (
    _Walk,
    agent_strategy,
    best_response,
    build_tree,
    cfr_plus,
    exploitability,
    merge_best,
    profile_value,
    save_table,
    uniform_strategy,
)
from arena.exploit import main as exploit_main
from arena.match import play_match
from envs.actions import action_mask, apply_action
from envs.engine.game import Game
from envs.engine.hands import evaluate
from envs.engine.rules import RULES, get_rules

TINY = get_rules("soko_mini", deck_ranks="KA", max_raises=1)   # 8 cards, one raise a round


# ---------------------------------------------------------------------------------------------
# The rules


def test_deck_ranks_are_checked():
    with pytest.raises(ValueError, match="unknown rank"):
        get_rules("soko_mini", deck_ranks="QKX")
    with pytest.raises(ValueError, match="repeats a rank"):
        get_rules("soko_mini", deck_ranks="QKK")
    with pytest.raises(ValueError, match="needs more than the 4-card deck"):
        get_rules("soko_mini", deck_ranks="A")
    with pytest.raises(ValueError, match="needs more than the 8-card deck"):
        get_rules("soko", deck_ranks="KA")
    assert get_rules("soko_mini", deck_ranks="AK").deck_ranks == "KA"
    assert len(RULES["soko_mini"].deck) == 12 and len(RULES["soko"].deck) == 52


def test_short_deck_deals_only_its_cards():
    with pytest.raises(ValueError, match="2c are not in the soko_mini deck"):
        Game("soko_mini", 2, deck="Ah 2c")
    for seed in range(20):
        g = Game("soko_mini", 2, seed=seed)
        assert {c.rank for c in g.deck} == set("QKA") and len(g.deck) == 12


def test_soko_mini_bring_in_and_three_card_showdown():
    # Seat 1: Kd down, Qh up; seat 0: Ac down, Qc up. Equal ranks: the club brings in (seat 0).
    g = Game("soko_mini", 2, deck="Kd Ac Qh Qc Ks Ad")
    assert g.bring_in_seat == 0 and g.current_player == 0 and g.to_call == 2
    g.check_or_call()                       # seat 0 brings in for 2
    g.bet_or_raise(4)                       # seat 1 completes
    g.check_or_call()                       # seat 0 calls: round 2 at the big bet
    assert g.street == 1 and g.bet_size == 8
    # Up cards Qc Ad (seat 0) and Qh Ks (seat 1): ace high shows more, so seat 1 opens (lowest).
    assert g.current_player == 1
    g.bet_or_raise(8)
    g.check_or_call()
    # Seat 1: K Q K = pair of kings; seat 0: A Q A = pair of aces wins 1 + 4 + 8 = 13.
    assert g.payoffs == (13, -13)
    assert str(g.hand_values[0]) == "Pair of aces"


def test_three_card_ranking():
    order = ["Qc Kd Ah", "Qc Qd Kh", "Qc Qd Ah", "Kc Kd Qh", "Ac Ad Qh", "Ac Ad Kh", "Qc Qd Qh", "Ac Ad Ah"]
    values = [evaluate(h, canadian=True) for h in order]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert evaluate("Qs Kd Ah", canadian=True) == evaluate("Qc Kh As", canadian=True)   # suits never count


def test_soko_mini_env_api():
    import warnings

    from pettingzoo.test import api_test

    from envs import soko_v0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(soko_v0.env(rules="soko_mini"), num_cycles=60)


# ---------------------------------------------------------------------------------------------
# Brute force from the engine


def _brute(tree, strategy, public, seat=None):
    """Sum over every deal with round-0 up cards ``public`` of chance x value for ``seat`` (0 when
    None): with ``seat`` a naive best response (one choice per information set, found by
    enumerating its histories), else both seats play ``strategy``. Payoffs from the engine."""
    rules, C = tree.rules, tree.size
    deck = tree.deck
    deals = []
    for h0 in range(C):
        for h1 in range(C):
            for v0 in range(C):
                for v1 in range(C):
                    if len({*public, h0, h1, v0, v1}) == 6:
                        deals.append((h0, h1, v0, v1))
    total = 1.0
    for i in range(6):
        total *= C - i
    node_of = {n.seq: i for i, n in enumerate(tree.nodes)}
    me = 0 if seat is None else seat

    def game(deal, seq):
        h0, h1, v0, v1 = deal
        order = [h1, h0, public[1], public[0], v1, v0]     # button 0: seat 1 is dealt first
        g = Game(rules, 2, deck=[deck[i] for i in order], seed=0)
        for a in seq:
            apply_action(g, a)
        return g

    def probs(g, deal, seq):
        s = g.current_player
        i = node_of[seq]
        cards = tuple(public) + ((deal[2], deal[3]) if g.street == 1 else ())
        return strategy[i][:, tuple_index(cards, C), deal[s]]

    def solve(seq, items):
        values = {}
        pending = []
        for deal, w in items:
            g = game(deal, seq)
            if g.is_over:
                values[deal] = g.payoffs[me]
            else:
                pending.append((deal, w, g))
        if not pending:
            return values
        legal = np.flatnonzero(action_mask(pending[0][2]))
        child = {}
        for k, a in enumerate(legal):
            child_items = []
            for deal, w, g in pending:
                acts = g.current_player
                p = 1.0 if acts == seat else probs(g, deal, seq)[k]
                child_items.append((deal, w * p))
            child[a] = solve(seq + (int(a),), child_items)
        groups = {}
        for deal, w, g in pending:
            if g.current_player == seat:
                key = (deal[seat], deal[2:] if g.street == 1 else ())
                groups.setdefault(key, []).append((deal, w))
            else:
                pr = probs(g, deal, seq)
                values[deal] = sum(pr[k] * child[a][deal] for k, a in enumerate(legal))
        for members in groups.values():
            best = max(legal, key=lambda a: sum(w * child[a][d] for d, w in members))
            for d, _ in members:
                values[d] = child[best][d]
        return values

    values = solve((), [(d, 1.0) for d in deals])
    if seat is None:
        # Chance x both strategies' reach: walk again with the probabilities of the actions.
        return _expected(tree, strategy, public, deals, game, probs, total)
    return sum(values.values()) / total


def _expected(tree, strategy, public, deals, game, probs, total):
    out = 0.0
    for deal in deals:
        stack = [((), 1.0)]
        while stack:
            seq, p = stack.pop()
            g = game(deal, seq)
            if g.is_over:
                out += p * g.payoffs[0]
                continue
            pr = probs(g, deal, seq)
            for k, a in enumerate(np.flatnonzero(action_mask(g))):
                stack.append((seq + (int(a),), p * pr[k]))
    return out / total


@pytest.fixture(scope="module")
def tiny():
    tree = build_tree(TINY)
    rng = np.random.default_rng(0)
    strategy = [rng.dirichlet(np.ones(s.shape[0]), size=s.shape[1:]).transpose(2, 0, 1).astype(np.float32)
                for s in uniform_strategy(tree)]
    return tree, strategy


def _publics(tree):
    # One round-0 public state of each bring-in seat.
    pubs = tree.pubs[0]
    return [pubs[int(np.flatnonzero(tree.opener[0] == s)[0])].tolist() for s in (0, 1)]


@pytest.mark.parametrize("seat", [0, 1])
def test_best_response_matches_brute_force(tiny, seat):
    tree, strategy = tiny
    root = _Walk(tree, strategy, seat, "best").run()
    for public in _publics(tree)[seat:seat + 1]:   # seat 0 brings in, then seat 1 (keeps it short)
        p = tuple_index(public, tree.size)
        assert root[p].sum() == pytest.approx(_brute(tree, strategy, public, seat), rel=1e-4, abs=1e-7)


def test_profile_value_matches_enumeration(tiny):
    tree, strategy = tiny
    root = _Walk(tree, strategy, 0, "value").run()
    for public in _publics(tree)[1:]:
        p = tuple_index(public, tree.size)
        assert root[p].sum() == pytest.approx(_brute(tree, strategy, public), rel=1e-4, abs=1e-7)
    # Zero sum, and a best response is never worse than the strategy itself.
    v0 = profile_value(tree, strategy)
    v1 = -v0
    assert best_response(tree, strategy, 0)[0] >= v0 - 1e-6
    assert best_response(tree, strategy, 1)[0] >= v1 - 1e-6


def test_cfr_plus_exploitability_falls():
    tree = build_tree(TINY)
    start = exploitability(tree, uniform_strategy(tree))[0]
    average, history = cfr_plus(tree, iterations=40, check_every=10)
    values = [e for _, _, e in history]
    assert values == sorted(values, reverse=True)
    assert exploitability(tree, average)[0] < start / 5


def test_table_agents_and_batched_policies(tiny, tmp_path):
    tree, strategy = tiny
    path = save_table(tree, tmp_path / "s.npz", probabilities=strategy)
    agent = make_agent(f"cfr:{path}")
    back = agent_strategy(tree, agent)
    assert max(np.abs(a - b).max() for a, b in zip(back, strategy)) < 1e-3   # stored as float16
    # The fast paths of call and raise are what policy() says, information set by information set.
    from arena.exact import _view_strategy
    for spec in ("call", "raise"):
        fast = agent_strategy(tree, make_agent(spec))
        slow = uniform_strategy(tree)
        _view_strategy(tree, make_agent(spec), slow, (0, 1))
        for n, a, b in zip(tree.nodes, fast, slow):
            valid = tree.valid[n.round] > 0
            assert np.array_equal(a[:, valid], b[:, valid])
    with pytest.raises(ValueError, match="not a strategy table|no strategy file"):
        check_spec(f"br:{tmp_path / 'missing.npz'}")
    with pytest.raises(ValueError, match="this tournament plays"):
        check_spec(f"cfr:{path}", RULES["soko"])


def test_best_response_agent_wins_its_value_in_a_match(tmp_path):
    rules = get_rules("soko_mini", deck_ranks="KA")
    tree = build_tree(rules)
    target = uniform_strategy(tree)
    value, v0, v1 = exploitability(tree, target)
    _, best0 = best_response(tree, target, 0)
    _, best1 = best_response(tree, target, 1)
    path = save_table(tree, tmp_path / "br.npz", actions=merge_best(tree, best0, best1))
    # A fixed display name: the deals are seeded by the agents' names, which must not carry
    # the temporary path (else the 95% check below fails for 1 path in 20).
    result = play_match(rules, [f"br:{path},name=br", "random"], hands=6000, seed=3)
    estimate = result.estimates[f"br:{path},name=br"]
    expected = 100 * value / rules.big_bet
    assert estimate.low <= expected <= estimate.high, (expected, estimate)


def test_exploit_cli(tmp_path, capsys):
    assert exploit_main(["--game", "follow_the_bitch", "--agent", "call", "--method", "lbr"]) == 2
    assert "wild cards" in capsys.readouterr().err
    assert exploit_main(["--game", "soko_mini", "--agent", "nobody"]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert exploit_main(["--game", "soko_mini", "--agent", "raise", "--out", str(tmp_path),
                         "--name", "x"]) == 0
    data = json.loads((tmp_path / "x" / "results.json").read_text())
    assert data["exploitability_bb_per_100"] > 0 and data["method"] == "exact"
    br = make_agent(data["best_response_agent"])
    assert br.policy is not None


# ---------------------------------------------------------------------------------------------
# The equity agent's strategy, once per card situation


@pytest.fixture(scope="module")
def equity_tiny():
    tree = build_tree(TINY)
    agent = make_agent("equity")
    agent.reset(0)
    return tree, agent_strategy(tree, agent)


def test_equity_fast_path_is_the_per_information_set_policy(equity_tiny):
    # The slow general path (one policy call per information set) on every round-0 node and on
    # three round-1 nodes: a free check or bet, facing a bet (fold, call, raise), facing the cap.
    import dataclasses

    from arena.exact import _view_strategy

    tree, fast = equity_tiny
    seqs = [n.seq for n in tree.nodes if n.round == 0] + [(1, 1), (1, 1, 2), (1, 1, 2, 2)]
    picked = [i for i, n in enumerate(tree.nodes) if n.seq in seqs]
    legal = {tree.nodes[i].legal for i in picked if tree.nodes[i].round == 1}
    assert legal == {(1, 2), (0, 1, 2), (0, 1)}
    sub = dataclasses.replace(tree, nodes=[tree.nodes[i] for i in picked])
    slow = [uniform_strategy(tree)[i] for i in picked]
    _view_strategy(sub, make_agent("equity"), slow, (0, 1))
    mixed = 0
    for i, s in zip(picked, slow):
        n = tree.nodes[i]
        entries = tree.valid[n.round] > 0
        assert np.abs(fast[i][:, entries] - s[:, entries]).max() <= 1e-9, n.seq
        mixed += int(((s[:, entries] > 0.01) & (s[:, entries] < 0.99)).any(axis=0).sum())
    assert mixed > 100   # the decisions are not all one-hot: the chances themselves are compared


def test_equity_fast_path_against_engine_views_and_deterministic(equity_tiny):
    # Independent of the views the exact solver builds: the engine's own game on random deals,
    # replayed down a random line of play; and a differently seeded agent gives the same arrays
    # (every share distribution is exact on this deck).
    tree, fast = equity_tiny
    agent = make_agent("equity")
    agent.reset(1)
    rng = np.random.default_rng(4)
    node_of = {n.seq: i for i, n in enumerate(tree.nodes)}
    deck, C = tree.deck, tree.size
    checked = 0
    for _ in range(60):
        h0, h1, u0, u1, v0, v1 = rng.permutation(C)[:6].tolist()
        g = Game(TINY, 2, deck=[deck[i] for i in (h1, h0, u1, u0, v1, v0)], seed=0)
        seq = ()
        while not g.is_over:
            s = g.current_player
            mask = action_mask(g)
            probs = agent.policy(g.view(s), mask)
            pub = (u0, u1) if g.street == 0 else (u0, u1, v0, v1)
            i = node_of[seq]
            want = fast[i][:, tuple_index(pub, C), (h0, h1)[s]]
            assert np.abs(probs[list(tree.nodes[i].legal)] - want).max() <= 1e-6   # float32 arrays
            checked += 1
            a = int(rng.choice(np.flatnonzero(mask)))
            apply_action(g, a)
            seq += (a,)
    assert checked > 150
    other = make_agent("equity")
    other.reset(99)
    again = agent_strategy(tree, other)
    assert all(np.array_equal(a, b) for a, b in zip(fast, again))


def test_equity_decision_rule_on_arrays_is_the_rule_on_each_entry():
    from agents.equity import decision_chances

    rng = np.random.default_rng(2)
    masks = {"free": np.array([0, 1, 1], dtype=np.int8), "facing": np.array([1, 1, 1], dtype=np.int8),
             "capped": np.array([1, 1, 0], dtype=np.int8)}
    for name, mask in masks.items():
        to_call = 0 if name == "free" else 4
        # Chances of reaching higher bars are lower: raise >= large, and call bars below raise.
        large = rng.random((5, 3))
        at_raise = large + (1 - large) * rng.random((5, 3))
        at_call = at_raise + (1 - at_raise) * rng.random((5, 3))
        probs = decision_chances(mask, to_call=to_call, at_raise=at_raise, at_large=large, at_call=at_call)
        assert probs.shape == (3, 5, 3) and np.allclose(probs.sum(axis=0), 1.0)
        assert np.all(probs[mask == 0] == 0)
        for j in np.ndindex(5, 3):
            one = decision_chances(mask, to_call=to_call, at_raise=float(at_raise[j]),
                                   at_large=float(large[j]), at_call=float(at_call[j]))
            assert np.array_equal(one, probs[(slice(None),) + j])
    # Facing a bet: raise with the chance of reaching the raise bar, call the rest of the chance
    # of reaching the call bar, fold otherwise; free: bet or check.
    assert decision_chances(masks["facing"], to_call=4, at_raise=0.2, at_large=0.1, at_call=0.5) == \
        pytest.approx([0.5, 0.3, 0.2])
    assert decision_chances(masks["free"], to_call=0, at_raise=0.2, at_large=0.1, at_call=1.0) == \
        pytest.approx([0.0, 0.8, 0.2])
    assert decision_chances(masks["capped"], to_call=4, at_raise=0.2, at_large=0.1, at_call=0.5) == \
        pytest.approx([0.5, 0.5, 0.0])


def test_the_average_strategy_is_worth_what_the_mixture_is(tiny):
    # Playing strategy a for the whole hand with chance 0.3 and b with 0.7 is worth, against
    # any opponent and in either seat, what the reach-weighted average strategy is worth.
    from arena.exact import average_strategy, own_reach

    tree, a = tiny
    rng = np.random.default_rng(1)
    b, opponent = ([rng.dirichlet(np.ones(s.shape[0]), size=s.shape[1:]).transpose(2, 0, 1).astype(np.float32)
                    for s in uniform_strategy(tree)] for _ in range(2))
    mixed = average_strategy(tree, [a, b], [0.3, 0.7])
    for seat in (0, 1):
        def value(s):
            return profile_value(tree, s, opponent) if seat == 0 else profile_value(tree, opponent, s)
        assert value(mixed) == pytest.approx(0.3 * value(a) + 0.7 * value(b), rel=1e-4, abs=1e-7)
    # The root is reached with certainty; two actions on, the opener's reach is its chance of
    # the first of them.
    reach = own_reach(tree, a)
    assert np.allclose(reach[0], 1.0)
    paths = [(k, g) for k, (what, j) in enumerate(tree.nodes[0].children) if what == "node"
             for what2, g in tree.nodes[j].children if what2 == "node"]
    assert paths
    for k, g in paths:
        assert np.allclose(reach[g], a[0][k])
    # Mixing a strategy with itself changes nothing.
    same = average_strategy(tree, [a, a])
    valid = [tree.valid[n.round] > 0 for n in tree.nodes]
    assert all(np.allclose(s[:, v], t[:, v], atol=1e-5) for s, t, v in zip(same, a, valid))
