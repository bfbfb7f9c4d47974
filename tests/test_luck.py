"""The luck correction (arena/luck.py): zero mean at every chance node, zero-sum over seats,
the engine's wild rank followed, unbiased and narrower on a real match."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import choose_action
from agents.registry import make_agent
from arena import luck, match
from arena.luck import LuckCorrector, chance_nodes, control, feature_names
from arena.match import play_match
from arena.tournament import luck_default
from envs.actions import action_mask, apply_action
from envs.engine.cards import DECK, parse_cards
from envs.engine.events import ACTION_KINDS
from envs.engine.game import Game
from envs.engine.rules import get_rules


def _play_calls(rules, n, deck, stop_after: int) -> Game:
    """Everyone checks or calls until at least ``stop_after + 1`` cards are dealt (or the end)."""
    g = Game(rules, n, deck=deck, button=0, seed=0)
    while g.current_player is not None and len(chance_nodes(g)) <= stop_after:
        g.check_or_call()
    return g


def _play_agents(rules, agents, seed: int) -> Game:
    """A hand of ``agents`` (seat i: agents[i], button 0) from ``seed``, each agent seeded."""
    g = Game(rules, len(agents), button=0, seed=seed)
    for i, a in enumerate(agents):
        a.reset(seed * len(agents) + i)
    while g.current_player is not None:
        apply_action(g, choose_action(agents[g.current_player], g, action_mask(g)))
    return g


def _deck(text: str) -> list:
    given = list(parse_cards(text))
    return given + [c for c in DECK if c not in given]


def _average_over_cards(rules, n, deck, k, corrector) -> tuple[np.ndarray, int]:
    """The correction of the k-th card dealt, averaged over every card that could be dealt there
    (each swapped into that place of the deck, the play before it unchanged)."""
    base = _play_calls(rules, n, deck, k)
    before = chance_nodes(base)[k]
    total, count = np.zeros(n), 0
    for c in np.flatnonzero(~before.dealt).tolist():
        swapped = list(deck)
        j = swapped.index(DECK[c])
        swapped[k], swapped[j] = swapped[j], swapped[k]
        game = _play_calls(rules, n, swapped, k)
        node = chance_nodes(game)[k]
        assert node.card == c and (node.dealt == before.dealt).all()
        total += corrector.terms(game, only=[k])[0]
        count += 1
    return total / count, count


CASES = [
    # Soko heads-up: the 4th-street card of seat 1 (Kd Kh showing pair is in play), several
    # cards still to come (sampled equity); the last card of the hand (one card to come ->
    # exact enumeration; the last -> showdown shares).
    ("soko", 2, "Ah 2c Kd Kh 9s 9c 7d 3h 5c 5d", 4),
    ("soko", 2, "Ah 2c Kd Kh 9s 9c 7d 3h 5c 5d", 8),
    ("soko", 2, "Ah 2c Kd Kh 9s 9c 7d 3h 5c 5d", 9),
    # Follow the Bitch, three seats: seat 1's up card is a queen (the 7th card dealt), and the
    # card right after it names the wild rank (every candidate a different wild rank).
    ("follow_the_bitch", 3, "2c 3c 4c 5d 6d 7d 8h Qh 9h Ts Js Ks As 2d 3d 4d 5h 6h 7h 8s 9s", 7),
    ("follow_the_bitch", 3, "2c 3c 4c 5d 6d 7d 8h Qh 9h Ts Js Ks As 2d 3d 4d 5h 6h 7h 8s 9s", 8),
    # Low Chicago, heads-up: a face-down card (a spade may take half the pot).
    ("follow_the_bitch_low_chicago", 2, "2s 3c 4d 5h 6c 7d Ah Qs 9c Tc Jd Kd", 6),
]


@pytest.mark.parametrize("game, n, deck, k", CASES)
def test_correction_averages_to_zero_over_every_card_at_a_chance_node(game, n, deck, k):
    rules = get_rules(game)
    corrector = LuckCorrector(rules, samples=6, batch_rows=10 ** 9)  # no batch tables: fast
    mean, count = _average_over_cards(rules, n, _deck(deck), k, corrector)
    assert count == 52 - k
    assert np.abs(mean).max() < 1e-9
    # ... while single cards do move the value (the test would see a wrong average).
    base = _play_calls(rules, n, _deck(deck), k)
    assert np.abs(corrector.terms(base, only=[k])[0]).max() > 1e-3


def test_the_rebuilt_state_has_the_engine_wild_rank_at_every_card():
    """Queens up, a queen last in its dealing round (it names nothing), queen after queen: the
    wild rank before each card is the one the engine's log says."""
    rules = get_rules("follow_the_bitch")
    pending_seen = 0
    for seed in range(40):
        g = Game(rules, 4, button=0, seed=seed)
        while g.current_player is not None:
            g.check_or_call()
        nodes = iter(chance_nodes(g))
        wild = None
        for e in g.log:
            if e.kind == "deal":
                node = next(nodes)
                assert node.wild == (-1 if wild is None else "23456789TJQKA".index(wild))
                pending_seen += node.pending
                if e.up and e.card.rank == "Q":
                    wild = None
            elif e.kind == "wild" and e.rank is not None:
                wild = e.rank
        assert (g.wild_rank is None) == (wild is None)
    assert pending_seen > 0


def test_corrections_sum_to_zero_over_seats_in_every_hand():
    rules = get_rules("follow_the_bitch_low_chicago")
    corrector = LuckCorrector(rules, samples=6, batch_rows=10 ** 9)
    agents = [make_agent(a) for a in ("random", "call", "tag")]
    moved = 0.0
    for seed in range(6):
        g = _play_agents(rules, agents, seed)
        c = corrector.corrections(g)
        assert abs(c.sum()) < 1e-9
        moved += np.abs(c).sum()
    assert moved > 1.0


def test_corrected_agrees_with_raw_and_is_narrower_for_tag_against_random(monkeypatch):
    result = play_match("soko", ["tag", "random"], hands=800, seed=2, luck_correction=True)
    raw, corrected = result.raw_estimates["tag"], result.estimates["tag"]
    assert result.luck_correction and result.luck_fitted > 0  # 400 groups: coefficients fitted
    assert abs(corrected.mean - raw.mean) < raw.half_width
    assert abs(corrected.mean - raw.mean) < corrected.half_width
    assert corrected.half_width < 0.8 * raw.half_width
    # Zero-sum survives the correction.
    assert result.estimates["random"].mean == pytest.approx(-corrected.mean)
    # Fitted coefficients narrow it further than the plain correction (all coefficients 1).
    monkeypatch.setattr(luck, "GROUPS_PER_TERM", 10 ** 6)
    fixed = play_match("soko", ["tag", "random"], hands=800, seed=2, luck_correction=True)
    assert fixed.luck_fitted == 0 and fixed.raw_estimates["tag"].mean == raw.mean  # the same hands
    assert abs(fixed.estimates["tag"].mean - corrected.mean) < corrected.half_width
    assert corrected.half_width < 0.95 * fixed.estimates["tag"].half_width
    # The random agent's decision terms narrow the plain correction further than the chance
    # terms alone.
    monkeypatch.setattr(match, "_known_policy", lambda agent: None)
    chance_only = play_match("soko", ["tag", "random"], hands=800, seed=2, luck_correction=True)
    assert chance_only.raw_estimates["tag"].mean == raw.mean
    assert abs(chance_only.estimates["tag"].mean - fixed.estimates["tag"].mean) < corrected.half_width
    assert fixed.estimates["tag"].half_width < 0.95 * chance_only.estimates["tag"].half_width


def test_on_by_default_without_wild_cards_only():
    assert luck_default(get_rules("soko")) and luck_default(get_rules("soko_nordic"))
    assert not luck_default(get_rules("follow_the_bitch"))


@pytest.mark.parametrize("rules_name,n", [("soko", 2), ("soko", 3)])
def test_duplicate_groups_do_not_need_the_cards_dealt_before_the_first_action(rules_name, n):
    """Over every seating of a deal, the terms of the cards dealt before anyone acts add up to
    zero for each agent, so leaving them out (what the tournament does with duplicate deals)
    gives the same group results."""
    rules = get_rules(rules_name)
    corrector = LuckCorrector(rules)
    agents = [make_agent(spec) for spec in ("tag", "random", "call")[:n]]
    rng = np.random.default_rng(3)
    skipped_something = False
    for _ in range(6):
        deck = rng.permutation(52).tolist()
        full, short = np.zeros(n), np.zeros(n)
        for r in range(n):
            seating = [agents[(s - r) % n] for s in range(n)]  # agent i sits in seat (i + r) % n
            for agent in agents:
                agent.reset(11)
            game = Game(rules, n, deck=deck, button=0, seed=0)
            while game.current_player is not None:
                agent = seating[game.current_player]
                apply_action(game, choose_action(agent, game, action_mask(game)))
            all_terms = corrector.corrections(game)
            later = corrector.corrections(game, from_first_action=True)
            skipped_something |= not np.allclose(all_terms, later)
            for i in range(n):
                full[i] += all_terms[(i + r) % n]
                short[i] += later[(i + r) % n]
        np.testing.assert_allclose(full, short, atol=1e-9)
    assert skipped_something  # the early terms are not zero hand by hand, only over the group


def _skewed(view, mask):
    """A known policy that is not uniform: weights 1, 2, 3... over the legal ids."""
    p = np.cumsum(mask) * mask
    return p / p.sum()


@pytest.mark.parametrize("n", [2, 3])
def test_decision_term_averages_to_zero_over_the_policy_at_a_decision(n):
    """Soko: everyone calls to the second betting round, the first to act there bets, and the
    next seat (known policy) faces fold / call / raise. Each of its actions, the rest of the
    hand checked or called down: the terms weighted by the policy add up to zero."""
    rules = get_rules("soko")
    deck = _deck("Ah 2c Kd Kh 9s 9c 7d 3h 5c 5d 4s 6d 8h Jc Qd")
    corrector = LuckCorrector(rules, samples=6, batch_rows=10 ** 9)

    def prefix():
        g = Game(rules, n, deck=deck, button=0, seed=0)
        while not (g.log[-1].kind == "street" and g.log[-1].street == 1):
            g.check_or_call()
        g.bet_or_raise()
        return g

    seat = prefix().current_player
    policies = [None] * n
    policies[seat] = _skewed
    mask = action_mask(prefix())
    legal = np.flatnonzero(mask)
    assert legal.tolist() == [0, 1, 2]
    p = _skewed(None, mask)
    total, moved = np.zeros(n), 0.0
    flips, names = np.zeros(2), feature_names(rules)
    columns = [names.index("fold 2"), names.index("raise 2")]  # the seat's coin flips, round 2
    for a in legal.tolist():
        g = prefix()
        apply_action(g, a)
        while g.current_player is not None:
            g.check_or_call()
        pairs = corrector.decision_terms(g, policies)
        # the seat's decisions: calls in the first round, then this one
        d, term = [(d, t) for d, t in pairs if d.street == 1][0]
        assert d.seat == seat and d.actions.tolist() == [0, 1, 2]
        assert d.actions[d.chosen] == a
        np.testing.assert_allclose(d.probs, p[legal])
        total += p[a] * term
        moved += np.abs(term).sum()
        assert abs(term.sum()) < 1e-9
        features = corrector.features(g, policies=policies)
        flip = features[seat, columns]
        assert flip.tolist() == pytest.approx([(a == 0) - p[0], (a == 2) - p[2]])
        flips += p[a] * flip
        assert not features[np.arange(n) != seat][:, columns].any()  # only the seat's own
    assert np.abs(total).max() < 1e-9 and np.abs(flips).max() < 1e-12
    assert moved > 1.0  # the single actions do move the value


def test_decision_terms_sum_to_zero_and_replay_the_chips_of_each_action():
    rules = get_rules("follow_the_bitch_low_chicago")
    corrector = LuckCorrector(rules, samples=6, batch_rows=10 ** 9)
    agents = [make_agent(a) for a in ("random", "random", "tag")]
    policies = [agents[0].policy, agents[1].policy, None]
    count, moved = 0, 0.0
    for seed in range(8):
        g = _play_agents(rules, agents, seed)
        actions = iter(e for e in g.log if e.kind in ACTION_KINDS and e.seat in (0, 1))
        for d, term in corrector.decision_terms(g, policies):
            e = next(actions)
            assert d.seat == e.seat and d.chips[d.chosen] == e.amount
            assert abs(term.sum()) < 1e-9
            count += 1
            moved += np.abs(term).sum()
        assert next(actions, None) is None  # every decision of a known policy has a term
        c = corrector.corrections(g, policies=policies)
        assert abs(c.sum()) < 1e-9
        # The features split the correction: cards per round, then the decision terms.
        f = corrector.features(g, policies=policies)
        rounds = rules.num_streets
        assert f.shape == (3, len(feature_names(rules))) == (3, 3 * rounds + 1)
        np.testing.assert_allclose(f[:, :rounds + 1].sum(axis=1), c, atol=1e-9)
        decided = sum(term for _, term in corrector.decision_terms(g, policies))
        np.testing.assert_allclose(f[:, rounds], decided, atol=1e-9)
        np.testing.assert_allclose(f[:, :rounds].sum(axis=1), sum(corrector.terms(g)), atol=1e-9)
    assert count > 20 and moved > 1.0


def _synthetic(groups: int, seed: int):
    """Heads-up group results that depend on mean-zero features: two value columns (zero-sum
    over positions) and two coin-flip columns of position 1."""
    rng = np.random.default_rng(seed)
    features = np.zeros((groups, 2, 4))
    features[:, 0, :2] = rng.normal(size=(groups, 2))
    features[:, 1, :2] = -features[:, 0, :2]
    features[:, 1, 2:] = rng.normal(size=(groups, 2))
    noise = rng.normal(scale=0.1, size=groups)
    y0 = 0.3 + 0.7 * features[:, 0, 0] + 1.5 * features[:, 0, 1] - 2.0 * features[:, 1, 2] + noise
    return np.column_stack([y0, -y0]), features


def test_control_fits_each_column_and_keeps_zero_sum():
    results, features = _synthetic(400, 0)
    adjusted, fitted = control(results, features, 2)
    assert fitted == 4  # position 0's two value columns and position 1's two coin flips
    # What is left is the constant and the noise: the features' part is taken off.
    assert abs(adjusted[:, 0].mean() - 0.3) < 0.03 and adjusted[:, 0].std() < 0.12
    np.testing.assert_allclose(adjusted.sum(axis=1), 0.0, atol=1e-9)
    # The fixed correction (coefficient 1 on the value columns) leaves much more.
    plain = results - features[:, :, :2].sum(axis=2)
    assert plain[:, 0].std() > 5 * adjusted[:, 0].std()


def test_control_fits_a_group_without_its_own_result():
    """Cross-fitting: changing one group's result moves its adjusted result by exactly as much
    and leaves the other groups of its fold as they were."""
    results, features = _synthetic(400, 1)
    before, _ = control(results, features, 2)
    moved = results.copy()
    moved[7] += [5.0, -5.0]
    after, _ = control(moved, features, 2)
    np.testing.assert_allclose(after[7] - before[7], [5.0, -5.0], atol=1e-9)
    same_fold = np.arange(400) % luck.FOLDS == 7 % luck.FOLDS
    same_fold[7] = False
    np.testing.assert_allclose(after[same_fold], before[same_fold], atol=1e-9)
    assert not np.allclose(after[~same_fold][1:], before[~same_fold][1:])  # the others refit


def test_control_falls_back_to_the_plain_correction_on_few_groups():
    results, features = _synthetic(60, 2)  # 4 regressors need 100 groups
    adjusted, fitted = control(results, features, 2)
    assert fitted == 0
    np.testing.assert_allclose(adjusted, results - features[:, :, :2].sum(axis=2))


@pytest.mark.parametrize("game,n,overrides", [("soko", 2, {}), ("soko", 3, {}), ("soko", 6, {}),
                                              ("soko_mini", 2, {}), ("soko_nordic", 4, {}),
                                              ("soko", 2, {"bring_in": "highest"})])
def test_the_core_scores_every_node_as_the_numpy_rows_do(game, n, overrides):
    """Every chance node's shares from the compiled core (envs.batched.luck_node_shares) are the
    NumPy rows' floats: the features of whole hands, folds and showdowns, are equal."""
    rules = get_rules(game, **overrides)
    core, rows = LuckCorrector(rules), LuckCorrector(rules, core=False)
    assert core.core and not rows.core
    agents = [make_agent("random"), make_agent("call"), make_agent("tag")] * 2
    dealt_out = 0   # hands with cards of the last street: every kind of node (sampled, one card left, none)
    for seed in range(16):
        g = _play_agents(rules, agents[seed % 3:seed % 3 + n], seed)
        dealt_out += chance_nodes(g)[-1].street == rules.num_streets - 1
        a, b = core.features(g), rows.features(g)
        assert a.shape == b.shape and np.array_equal(a, b), (seed, a, b)
    assert dealt_out >= 2


def test_wild_cards_that_move_and_low_chicago_keep_the_numpy_rows():
    assert not LuckCorrector(get_rules("follow_the_bitch")).core
    assert not LuckCorrector(get_rules("follow_the_bitch_low_chicago")).core


def test_warm_up_builds_only_the_tables_the_numpy_rows_score_with(monkeypatch):
    """Forked workers inherit the batch tables ``luck.warm_up`` builds; where the core scores
    every node (Soko) there is nothing to build, with a followed wild rank there is."""
    built = []
    monkeypatch.setattr(luck, "_BUILT", set())
    monkeypatch.setattr(LuckCorrector, "_score", lambda self, cards, wild: built.append(wild))
    luck.warm_up(get_rules("soko"))
    assert built == [] and luck._BUILT == set()
    luck.warm_up(get_rules("follow_the_bitch"))
    assert sorted(built) == [w for w in range(-1, 13) if w != luck.QUEEN] and len(luck._BUILT) == 13
