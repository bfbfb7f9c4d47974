"""Agents: legal actions only, no peeking at other seats' face-down cards, the spec registry,
the equity estimate against the engine's own showdowns, and tag's rules on scripted hands."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agents.base import Agent, choose_action, game_from_view
from agents.equity import equity
from agents.heuristic import TagAgent
from agents.registry import canonical_spec, check_spec, display_name, make_agent, parse_spec
from envs.actions import action_mask, apply_action
from envs.engine.cards import parse_cards
from envs.engine.game import Game
from envs.engine.hands import evaluate
from envs.engine.rules import RULES
from tests.helpers import cards_in, deal, hidden_from

BASELINES = ["random", "call", "raise", "tag", "equity:samples=8"]

# Variants that share the evaluator's tables (the equity agent builds one per wild rank).
SOKO_VARIANTS = [RULES["soko"], RULES["soko_nordic"], RULES["soko"].replace(betting="no_limit"),
                 RULES["soko"].replace(betting="spread_limit")]
FTB_VARIANTS = [RULES["follow_the_bitch"], RULES["follow_the_bitch_low_chicago"],
                RULES["follow_the_bitch"].replace(betting="pot_limit")]
# Only the cheap agents also play the wild-card variants with their own evaluator tables.
FTB_EXTRA = [RULES["follow_the_bitch"].replace(queens_wild=True, double_ace_flush=True)]


def play_random_hands(spec: str, variants, hands: int, seed: int) -> int:
    """Random tables (2-5 seats, some short stacks) where ``spec`` holds most seats and the
    random agent the rest; every action goes through choose_action, which refuses illegal ids.
    Returns how many decisions ``spec`` made."""
    rng = np.random.default_rng(seed)
    agent, other = make_agent(spec), make_agent("random")
    decisions = 0
    for hand in range(hands):
        rules = variants[hand % len(variants)]
        n = int(rng.integers(2, 6))
        stacks = [int(rng.choice([rules.stack, int(rng.integers(5, 60))])) for _ in range(n)]
        game = Game(rules, n, stacks=stacks, button=int(rng.integers(n)), seed=int(rng.integers(2 ** 31)))
        mine = [s == 0 or rng.random() < 0.6 for s in range(n)]
        agent.reset(int(rng.integers(2 ** 31)))
        other.reset(int(rng.integers(2 ** 31)))
        while not game.is_over:
            seat = game.current_player
            mask = action_mask(game)
            who = agent if mine[seat] else other
            action = choose_action(who, game, mask)
            assert mask[action], f"{who.name} chose illegal {action} in\n{game.history()}"
            decisions += mine[seat]
            apply_action(game, action)
        assert sum(game.payoffs) == 0
    return decisions


@pytest.mark.parametrize("spec", BASELINES)
def test_baselines_only_return_legal_actions_in_soko(spec):
    assert play_random_hands(spec, SOKO_VARIANTS, 1000, seed=1) > 1000


@pytest.mark.parametrize("spec", BASELINES)
def test_baselines_only_return_legal_actions_in_follow_the_bitch(spec):
    variants = FTB_VARIANTS + ([] if spec.startswith("equity") else FTB_EXTRA)
    assert play_random_hands(spec, variants, 1000, seed=2) > 1000


# ---------------------------------------------------------------------------------------------
# No agent can read another seat's face-down cards


@pytest.fixture(scope="module")
def ppo_spec(tmp_path_factory) -> str:
    """A freshly initialised MaskablePPO checkpoint for Soko, three seats."""
    from sb3_contrib import MaskablePPO

    from envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv("soko", num_players=3)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu")
    path = tmp_path_factory.mktemp("ppo") / "model.zip"
    model.save(str(path))
    return f"ppo:{path},deterministic=false"


def _twin(game: Game, actions: list[int], seat: int, rng) -> Game:
    """The same hand so far, except that every other seat's face-down cards are swapped for
    cards nobody has been dealt."""
    deck = [int(c) for c in game.deck]
    dealt = sum(len(game.hole_cards(s)) + len(game.up_cards(s)) for s in range(game.num_players))
    hidden = [deck.index(int(c)) for c in hidden_from(game, seat)]
    undealt = list(range(dealt, 52))
    for i, j in zip(hidden, rng.choice(undealt, size=len(hidden), replace=False)):
        deck[i], deck[j] = deck[j], deck[i]
    twin = Game(game.rules, game.num_players, stacks=game.starting_stacks, button=game.button,
                deck=deck, seed=0)
    for a in actions:
        apply_action(twin, a)
    assert all(set(twin.hole_cards(s)).isdisjoint(game.hole_cards(s))
               for s in range(game.num_players) if s != seat and game.hole_cards(s))
    return twin


def check_no_peeking(spec: str, games, hands: int, seed: int) -> int:
    """At every decision of ``spec`` in random hands, the same choice (same seed) whatever the
    other seats' face-down cards are, and a view that holds none of them."""
    rng = np.random.default_rng(seed)
    agent, other = make_agent(spec), make_agent("random")
    checked = 0
    for hand in range(hands):
        rules = games[hand % len(games)]
        n = int(rng.integers(2, 5))
        game = Game(rules, n, button=int(rng.integers(n)), seed=int(rng.integers(2 ** 31)))
        actions: list[int] = []
        while not game.is_over:
            seat = game.current_player
            view = game.view(seat)
            assert cards_in(view).isdisjoint(hidden_from(game, seat))
            twin = _twin(game, actions, seat, rng)
            assert twin.view(seat) == view
            s = int(rng.integers(2 ** 31))
            agent.reset(s)
            a = choose_action(agent, game)
            agent.reset(s)
            assert choose_action(agent, twin) == a, f"{spec} changed its action when hidden cards changed"
            checked += 1
            if rng.random() < 0.5:
                other.reset(s)
                a = choose_action(other, game)
            apply_action(game, a)
            actions.append(a)
    return checked


@pytest.mark.parametrize("spec", BASELINES)
def test_no_builtin_agent_reads_other_seats_face_down_cards(spec):
    games = [RULES["soko"], RULES["follow_the_bitch_low_chicago"]]
    assert check_no_peeking(spec, games, 60, seed=3) > 200


def test_ppo_agent_reads_no_other_seats_face_down_cards(ppo_spec):
    assert check_no_peeking(ppo_spec, [RULES["soko"]], 30, seed=4) > 100


def test_ppo_agent_acts_from_a_view_alone(ppo_spec):
    agent = make_agent(ppo_spec)
    game = Game("soko", 3, seed=5)
    while not game.is_over:
        mask = action_mask(game)
        agent.reset(7)
        a = agent.act(game.view(game.current_player), mask)
        agent.reset(7)
        assert mask[a] and a == choose_action(agent, game, mask)
        apply_action(game, a)


def test_game_from_view_looks_the_same_to_the_seat():
    rng = np.random.default_rng(6)
    for hand in range(60):
        rules = [RULES["soko"], RULES["follow_the_bitch_low_chicago"]][hand % 2]
        n = int(rng.integers(2, 6))
        stacks = [int(rng.choice([rules.stack, int(rng.integers(3, 40))])) for _ in range(n)]  # all-ins
        game = Game(rules, n, stacks=stacks, button=int(rng.integers(n)), seed=hand)
        while not game.is_over:
            seat = int(rng.integers(game.num_players))
            view = game.view(seat)
            replayed = game_from_view(view)
            assert replayed.view(seat) == view
            assert set(replayed.hole_cards(seat)) == set(game.hole_cards(seat))
            mask = action_mask(game)
            apply_action(game, int(rng.choice(np.flatnonzero(mask))))


# ---------------------------------------------------------------------------------------------
# The registry


def test_specs_make_the_named_agents():
    for spec in ["random", "call", "raise", "tag", "equity", "equity:samples=50,raise_edge=0.2"]:
        agent = make_agent(spec)
        assert isinstance(agent, Agent) and agent.name == spec
    assert make_agent("equity:samples=50,call_margin=0.05").call_margin == 0.05
    assert parse_spec("ppo:runs/a/final_model.zip") == ("ppo", {"path": "runs/a/final_model.zip"})
    assert parse_spec("ppo:path=x.zip,deterministic=no") == ("ppo", {"path": "x.zip", "deterministic": False})


@pytest.mark.parametrize("spec, words", [
    ("tight", ["unknown agent 'tight'", "random, call, raise, tag, equity, ppo"]),
    ("equity:sample=5", ["unknown option 'sample'", "samples (int, default 300)"]),
    ("equity:samples=many", ["samples='many'", "whole number"]),
    ("equity:samples=0", ["samples must be at least 1"]),
    ("tag:aggressive=1", ["unknown option 'aggressive' for agent 'tag'", "raise_shift (int, default 0)"]),
    ("call:aggressive=1", ["unknown option 'aggressive' for agent 'call'", "valid options: none"]),
    ("tag:raise_shift=1.5", ["raise_shift='1.5'", "whole number"]),
    ("ppo", ["needs path", "ppo:PATH"]),
    ("ppo:x.zip,greedy=1", ["unknown option 'greedy'", "deterministic (bool, default: as its training run"]),
    ("", ["non-empty"]),
    ("champion,deterministic=false", ["options follow a colon", "champion:deterministic=false"]),
    ("equity,samples=5", ["options follow a colon", "equity:samples=5"]),
])
def test_bad_specs_are_clear_errors(spec, words):
    with pytest.raises(ValueError) as info:
        check_spec(spec)
        make_agent(spec)
    for w in words:
        assert w in str(info.value)


def test_check_spec_finds_missing_and_broken_checkpoints(tmp_path):
    with pytest.raises(ValueError, match=f"^agent 'ppo:{tmp_path}/missing.zip': no model at "
                                         f"{tmp_path}/missing.zip: no such file or folder$"):
        check_spec(f"ppo:{tmp_path}/missing.zip")
    (tmp_path / "m.zip").write_bytes(b"")
    with pytest.raises(ValueError, match=f"{tmp_path}/m.zip is not a model: neither an agent file"):
        check_spec(f"ppo:{tmp_path}/m.zip")
    with pytest.raises(ValueError, match=f"{tmp_path}/m.zip is not a model"):
        check_spec(f"ppo:{tmp_path}/m")  # SB3 adds .zip itself: the same file
    with pytest.raises(ValueError,
                       match=f"^agent 'ppo:{tmp_path}': {tmp_path} is a folder without final_model.zip$"):
        check_spec(f"ppo:{tmp_path}")


def test_check_spec_reads_the_model_and_compares_it_with_the_game(ppo_spec):
    path = ppo_spec[4:].split(",")[0]
    check_spec(ppo_spec)                                   # a model: fine without rules
    check_spec(ppo_spec, RULES["soko"])
    with pytest.raises(ValueError) as info:
        check_spec(ppo_spec, RULES["follow_the_bitch"])
    assert str(info.value) == (f"agent {ppo_spec!r}: {path} was trained for soko or soko_nordic, "
                               f"observation 606; this tournament plays follow_the_bitch, 590")


def test_display_names_are_short_and_name_overrides_them():
    assert (display_name("ppo:runs/soko_ppo__s0__20260101-120000/final_model.zip")
            == "soko_ppo__s0__20260101-120000")
    assert display_name("ppo:/abs/runs/r1/checkpoints/ckpt_512.zip,deterministic=false") == "r1/ckpt_512"
    assert display_name("ppo:runs/r1/final_model.zip,name=mine") == "mine"
    assert display_name("equity:samples=50,name=eq50") == "eq50" and display_name(" tag ") == "tag"
    agent = make_agent("equity:samples=50,name=eq50")        # name= is not a constructor option
    assert agent.samples == 50


def test_canonical_specs_resolve_ppo_paths(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    (run / "final_model.zip").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    want = f"ppo:{run / 'final_model.zip'},deterministic=false"
    for spec in ["ppo:run/final_model.zip,deterministic=false", f"ppo:{run},deterministic=false",
                 "ppo:./run/final_model,deterministic=no,name=x"]:
        assert canonical_spec(spec) == want


def test_an_agent_object_is_named_as_its_spec_however_the_path_is_spelt(tmp_path, monkeypatch):
    # The deals of a match follow the display names (arena.match.MatchPlan.key): an agent made
    # from a spec, and a local best response to it, must not carry the path's spelling into them.
    from arena.lbr import LBRAgent

    run = tmp_path / "soko_ppo__s0__20260101-120000"
    run.mkdir()
    (run / "final_model.zip").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    spellings = [f"ppo:{run.name}", f"ppo:{run.name}/final_model.zip", f"ppo:{run}/final_model.zip"]
    agents = [make_agent(spec) for spec in spellings]
    assert {display_name(a) for a in agents} == {run.name}
    assert {display_name(LBRAgent(a)) for a in agents} == {f"lbr:{run.name}"}
    named = make_agent("tag")
    named.name = "tight"                                   # renamed after it was made: the name wins
    assert display_name(named) == "tight" and display_name(make_agent("tag")) == "tag"


# ---------------------------------------------------------------------------------------------
# Equity


def test_equity_is_exact_on_the_last_street_of_soko():
    # Both hands are complete; only seat 0's face-down card is unknown to seat 1.
    deck = deal(2, 0, {1: "Kd 9h 9c 4s 2d", 0: "7c Ah Qs 5h 3c"})
    game = Game("soko", 2, deck=deck, seed=0)
    while game.street < 3:
        game.check_or_call()
    view = game.view(1)
    mine = evaluate(parse_cards("Kd 9h 9c 4s 2d"), canadian=True)
    seen = set(parse_cards("Kd 9h 9c 4s 2d Ah Qs 5h 3c"))
    wins = []
    for c in range(52):
        if c not in seen:
            theirs = evaluate(parse_cards([c, "Ah", "Qs", "5h", "3c"]), canadian=True)
            wins.append(1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
    exact = float(np.mean(wins))
    assert abs(equity(view, 20000, np.random.default_rng(0)) - exact) < 0.012


def _engine_equity(game: Game, actions: list[int], seat: int, completions: int, rng) -> float:
    """Reference: deal the unseen cards at random, replay the hand, check it down and read the
    seat's share of the pot from the engine's own showdown (wild cards, Low Chicago and all)."""
    deck = [int(c) for c in game.deck]
    visible = {int(c) for c in game.hole_cards(seat)}
    for s in range(game.num_players):
        visible.update(int(c) for c in game.up_cards(s))
    free = [i for i, c in enumerate(deck) if c not in visible]
    free_cards = np.array([deck[i] for i in free])
    pot = game.pot
    committed = game.total_committed[seat]
    shares = []
    for _ in range(completions):
        order = list(deck)
        for i, c in zip(free, rng.permutation(free_cards)):
            order[i] = int(c)
        g = Game(game.rules, game.num_players, stacks=game.starting_stacks, button=game.button,
                 deck=order, seed=0)
        for a in actions:
            apply_action(g, a)
        while not g.is_over:
            g.check_or_call()
        shares.append((g.payoffs[seat] + committed) / pot)
    return float(np.mean(shares))


def _state_at_round_start(rules, n: int, street: int, seed: int, want=lambda g: True):
    """A hand at the start of betting round ``street`` (nobody owes): in every round before it
    the first player bets (or completes) and everyone calls, so the pot is a round number."""
    for s in itertools.count(seed):
        game = Game(rules, n, seed=s)
        actions = []
        while game.street < street and not game.is_over:
            action = 2 if game.raises_this_round == 0 and game.raise_to_amounts() else 1
            actions.append(action)
            apply_action(game, action)
        if not game.is_over and want(game):
            assert game.to_call == 0
            return game, actions


@pytest.mark.parametrize("rules, n, street, want", [
    (RULES["soko"], 2, 1, None),
    (RULES["soko"], 3, 2, None),
    (RULES["follow_the_bitch"], 2, 1, lambda g: g.wild_rank is not None),
    (RULES["follow_the_bitch"], 3, 1, None),
    # An even pot (ante 2) so the Low Chicago half is exactly half: the engine gives an odd chip
    # to the high half, which a 3-chip pot would turn into a third.
    (RULES["follow_the_bitch_low_chicago"].replace(ante=2), 3, 1, None),
    (RULES["follow_the_bitch_low_chicago"], 2, 2,
     lambda g: any(c & 3 == 3 for c in g.hole_cards(g.current_player))),
])
def test_equity_agrees_with_the_engines_showdowns(rules, n, street, want):
    game, actions = _state_at_round_start(rules, n, street, seed=10 * n + street,
                                          want=want or (lambda g: True))
    seat = game.current_player
    rng = np.random.default_rng(1)
    reference = _engine_equity(game, actions, seat, 2500, rng)
    estimate = equity(game.view(seat), 6000, rng)
    assert abs(estimate - reference) < 0.035, (estimate, reference, game.history())


# ---------------------------------------------------------------------------------------------
# Tag on scripted hands


def _tag_action(rules, n, hands, script=(), **options):
    game = Game(rules, n, deck=deal(n, 0, hands), seed=0)
    for token in script:
        apply_action(game, token)
    return choose_action(TagAgent(**options), game)


def test_tag_thresholds_move_with_its_shift_options():
    # Seat 0 shows the 2c and brings in; seat 1 is to act with two cards.
    sevens = {1: "7s 7h", 0: "8d 2c"}
    assert _tag_action("soko", 2, sevens, [1]) == 2                     # a pair of 7s completes
    assert _tag_action("soko", 2, sevens, [1], raise_shift=1) == 1      # needs 8s now: calls
    assert _tag_action("soko", 2, {1: "8s 8h", 0: "9d 2c"}, [1], raise_shift=1) == 2
    jack = {1: "Jh 3d", 0: "8d 2c"}
    assert _tag_action("soko", 2, jack, [1]) == 1                       # jack high calls
    assert _tag_action("soko", 2, jack, [1], call_shift=1) == 0         # needs a queen: folds
    assert _tag_action("soko", 2, {1: "Th 3d", 0: "8d 2c"}, [1], call_shift=-1) == 1
    assert _tag_action("soko", 2, {1: "Th 3d", 0: "8d 2c"}, [1]) == 0


def test_tag_bars_carry_across_categories_and_clamp():
    from agents.heuristic import _Bar
    from envs.engine.hands import Category

    pair_of_sevens = _Bar(Category.ONE_PAIR, 5)
    assert pair_of_sevens.shifted(8) == _Bar(Category.FOUR_STRAIGHT, 0)
    assert pair_of_sevens.shifted(-6) == _Bar(Category.HIGH_CARD, 12)
    assert pair_of_sevens.shifted(-100) == _Bar(Category.HIGH_CARD, 0)
    assert pair_of_sevens.shifted(1000) == _Bar(max(Category), 12)


def test_tag_completes_with_a_pair_of_aces_and_folds_trash_to_a_completion():
    # Soko: seat 0 shows the 2c and brings in; seat 1 holds As Ah.
    assert _tag_action("soko", 2, {1: "As Ah", 0: "7d 2c"}, [1]) == 2
    # Seat 0 holds 7d 2c against a completion and an ace showing: fold.
    assert _tag_action("soko", 2, {1: "Ks Ah", 0: "7d 2c"}, [1, 2]) == 0


def test_tag_counts_wild_cards_and_the_ace_of_spades_in_low_chicago():
    # Follow the Bitch: seat 1's queen up, then seat 2's nine up: nines are wild. Seat 2 holds
    # two nines and a king: three kings with the wild cards; it shows the best hand (a wild
    # card), so it acts first, and bets.
    hands = {1: "2c 3d Qh", 2: "9c Kh 9d", 0: "4c 7h 5s"}
    game = Game("follow_the_bitch", 3, deck=deal(3, 0, hands), seed=0)
    assert game.wild_rank == "9" and game.current_player == 2
    assert choose_action(TagAgent(), game) == 2
    # Low Chicago: the As face down (half of the pot) lifts tag's ace high from a call to a
    # raise against a bet; without Low Chicago it only calls, and with the 2s it folds.
    def against_a_bet(rules, hole):
        hands = {1: hole + " 7c", 2: "Kd Kc Ah", 0: "4c 8h 5d"}
        game = Game(rules, 3, deck=deal(3, 0, hands), seed=0)
        apply_action(game, 2)  # seat 2 (the ace showing) bets
        while game.current_player != 1:
            apply_action(game, 1)
        return choose_action(TagAgent(), game)

    assert against_a_bet("follow_the_bitch_low_chicago", "As 3d") == 2
    assert against_a_bet("follow_the_bitch", "As 3d") == 1
    assert against_a_bet("follow_the_bitch_low_chicago", "2s 3d") == 0


def test_docstring_examples():
    import doctest

    import agents.base
    import agents.equity
    import agents.heuristic
    import agents.registry

    for module in (agents.base, agents.equity, agents.heuristic, agents.registry):
        failed, _ = doctest.testmod(module)
        assert not failed, module.__name__


def test_random_policy_is_uniform_over_the_legal_ids_it_draws_from():
    agent = make_agent("random")
    # Deterministic agents give a one-hot of their choice (for exact best responses) but do not
    # randomise, so the luck correction leaves them out.
    tag, g = make_agent("tag"), Game("soko", 2, seed=0)
    one_hot = tag.policy(g.view(g.current_player), action_mask(g))
    assert one_hot[tag.act(g.view(g.current_player), action_mask(g))] == 1.0 and one_hot.sum() == 1.0
    assert agent.randomises and not tag.randomises
    rng = np.random.default_rng(0)
    seen_masks = set()
    for seed in range(30):
        game = Game("soko", 3, seed=seed)
        while game.current_player is not None:
            mask = action_mask(game)
            view = game.view(game.current_player)
            p = agent.policy(view, mask)
            legal = np.flatnonzero(mask)
            assert p.shape == mask.shape and p.sum() == pytest.approx(1.0)
            np.testing.assert_allclose(p[legal], 1.0 / len(legal))
            assert (p[mask == 0] == 0).all()
            if tuple(mask) not in seen_masks:  # its draws: exactly the legal ids, evenly
                seen_masks.add(tuple(mask))
                draws = []
                for s in range(300):
                    agent.reset(s)
                    draws.append(agent.act(view, mask))
                counts = np.bincount(draws, minlength=len(mask))
                assert set(np.flatnonzero(counts)) == set(legal)
                assert np.abs(counts / 300 - p).max() < 0.1
            apply_action(game, int(rng.choice(legal)))
    assert len(seen_masks) >= 2


def test_the_equity_agents_policy_is_the_distribution_of_its_decision():
    # Where the estimate from 30 deals may fall on either side of a bar (a policy mixed between
    # 0.15 and 0.85), act's choices over 600 seeds follow the policy within 0.08 (about 4
    # standard errors). Checked at the spot itself: a view follows its game.
    agent, other = make_agent("equity:samples=30"), make_agent("equity:samples=30")
    agent.reset(0)
    rng = np.random.default_rng(0)
    checked = 0
    for hand in range(400):
        g = Game("soko", 2, seed=int(rng.integers(1 << 30)))
        while g.current_player is not None and checked < 3:
            mask = action_mask(g)
            view = g.view(g.current_player)
            probs = agent.policy(view, mask)
            assert probs.sum() == pytest.approx(1.0) and np.all(probs[mask == 0] == 0)
            if 0.15 < probs.max() < 0.85:
                counts = np.zeros(len(mask))
                for s in range(600):
                    other.reset(s)
                    counts[other.act(view, mask)] += 1
                assert np.abs(counts / 600 - probs).max() < 0.08, (counts / 600, probs)
                checked += 1
            apply_action(g, int(rng.choice(np.flatnonzero(mask))))
        if checked == 3:
            break
    assert checked == 3


def test_the_equity_agents_policy_is_one_hot_when_every_deal_gives_the_same_share():
    g = Game("soko", 2, deck="As 2c Ah 3d Ad 4c Ac 5h Ks 7d", button=0, seed=0)
    agent = make_agent("equity")
    while g.current_player is not None:
        mask = action_mask(g)
        view = g.view(g.current_player)
        probs = agent.policy(view, mask)
        if g.current_player == 1 and g.street >= 1:   # seat 1's aces win every deal
            assert probs.max() == 1.0 and probs[0] == 0.0
        apply_action(g, agent.act(view, mask))
