"""Local best response (arena/lbr.py), the learned best response (train/ppo.py --target) and the
exploit CLI's lbr and learned methods."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.base import Agent
from agents.registry import make_agent
from arena.exact import agent_strategy, bb_per_100, build_tree, exploitability
from arena.exploit import main as exploit_main
from arena.lbr import LBRAgent, equity_by_hole
from arena.match import play_match
from envs.actions import CHECK_CALL, FIRST_BET, action_mask, apply_action, choose_action
from envs.engine.cards import parse_cards
from envs.engine.game import Game
from envs.engine.rules import get_rules

TINY = get_rules("soko_mini", deck_ranks="KA", max_raises=1)   # 8 cards, one raise a round


class AceRaiser(Agent):
    """Completes the bring-in (or bets) with probability 0.8 holding an ace face down, else 0.2."""

    randomises = True

    def policy(self, view, action_mask):
        p = 0.8 if view.hole_cards[0].rank == "A" else 0.2
        out = np.zeros(len(action_mask))
        if action_mask[FIRST_BET]:
            out[FIRST_BET], out[CHECK_CALL] = p, 1 - p
        else:
            out[CHECK_CALL] = 1.0
        return out

    def act(self, view, action_mask):
        return int(self.rng.choice(len(action_mask), p=self.policy(view, action_mask)))


def test_range_is_bayes_on_the_targets_policy():
    # Seat 1 (LBR): Ah down, Kd up; seat 0 (the target): 2c down, 3c up, brings in and completes.
    g = Game("soko", 2, deck="Ah 2c Kd 3c", seed=0)
    lbr = LBRAgent(AceRaiser())
    lbr.reset(0)
    assert g.current_player == 0
    g.bet_or_raise()                          # the target completes
    lbr.act(g.view(1), action_mask(g))
    expected = np.zeros(52)
    for c in get_rules("soko").deck:
        expected[int(c)] = 0.8 if c.rank == "A" else 0.2
    expected[[int(c) for c in parse_cards("Ah Kd 3c")]] = 0.0   # LBR sees these
    assert np.allclose(lbr.range, expected)


def test_equity_by_hole_on_the_last_street_is_exact():
    rules = get_rules("soko")
    mine = [int(c) for c in parse_cards("As Ah Ad Kc Kd")]      # a full house
    their_up = [int(c) for c in parse_cards("2c 3c 4c 5c")]
    candidates = np.array([int(c) for c in parse_cards("6c 7d Ac")])
    eq = equity_by_hole(rules, mine, their_up, candidates, to_come=(0, 0), samples=10,
                        rng=np.random.default_rng(0), unseen=candidates)
    assert eq.tolist() == [0.0, 1.0, 0.0]   # 2-6 and A-5 straight flushes beat the full house;
                                            # 7d: a four-flush


def test_the_true_card_stays_in_the_range_of_a_deterministic_target():
    target = make_agent("tag")
    for seed in range(30):
        g = Game("soko", 2, seed=seed)
        lbr = LBRAgent(target, samples=50)
        lbr.reset(seed)
        while g.current_player is not None:
            seat = g.current_player
            if seat == 1:
                apply_action(g, choose_action(lbr, g, action_mask(g)))
                assert lbr.range[int(g.hole_cards(0)[0])] > 0
            else:
                apply_action(g, choose_action(target, g, action_mask(g)))


@pytest.mark.parametrize("target", ["call", "random"])
def test_lbr_is_below_the_exact_exploitability_on_soko_mini(target):
    rules = get_rules("soko_mini")
    tree = build_tree(rules)
    exact = bb_per_100(tree, exploitability(tree, agent_strategy(tree, make_agent(target)))[0])
    est = play_match(rules, [LBRAgent(target), target], hands=600, seed=1).estimates[f"lbr:{target}"]
    assert est.low <= exact
    assert est.mean > 0.5 * exact   # and not far below it against these


def test_lbr_is_below_the_exact_exploitability_of_tag_on_a_tiny_deck():
    tree = build_tree(TINY)
    exact = bb_per_100(tree, exploitability(tree, agent_strategy(tree, make_agent("tag")))[0])
    est = play_match(TINY, [LBRAgent("tag"), "tag"], hands=600, seed=2).estimates["lbr:tag"]
    assert est.low <= exact and est.high > 0


@pytest.mark.parametrize("target", ["call", "raise"])
def test_lbr_beats_call_and_raise_at_soko(target):
    est = play_match("soko", [LBRAgent(target, samples=50), target], hands=200, seed=0,
                     luck_correction=True).estimates[f"lbr:{target}"]
    assert est.low > 20


def test_lbr_refuses_games_it_cannot_play():
    g = Game("follow_the_bitch", 2, seed=0)
    with pytest.raises(ValueError, match="wild cards"):
        LBRAgent("call").act(g.view(g.current_player), action_mask(g))
    g = Game("soko", 2, seed=0)

    class Secretive(Agent):
        name = "secretive"

        def act(self, view, action_mask):
            return 1

    lbr = LBRAgent(Secretive())
    with pytest.raises(ValueError, match="does not give its action probabilities"):
        while g.current_player is not None:
            apply_action(g, choose_action(lbr if g.current_player == 1 else lbr.target, g, action_mask(g)))


def test_ppo_batch_probabilities_match_its_policy(tmp_path):
    from train.config import load_config
    from train.ppo import main

    cfg = load_config("configs/smoke.yaml", overrides=[f"run.out_dir={tmp_path}", "eval.every=0",
                                                      "opponents.self_play.every=0"])
    run = main(cfg, command=["test"], progress=False)
    for deterministic in (True, False):
        agent = make_agent(f"ppo:{run / 'final_model.zip'},deterministic={str(deterministic).lower()}")
        g = Game("soko", 2, seed=3)
        from envs.observation import ObservationEncoder

        encoder = ObservationEncoder("soko")
        obs = encoder.encode(g, g.current_player)
        hole = encoder.layout.slice("hole_cards")
        card = int(np.flatnonzero(obs[hole])[0])
        obs[hole] = 0.0
        mask = action_mask(g)
        batch = agent.probabilities_with_ones(obs, np.array([hole.start + card, hole.start + card]), mask)
        assert np.allclose(batch[0], agent.policy(g.view(g.current_player), mask), atol=1e-6)
        # LBR against the model: the true card stays in the range when the model is deterministic
        if deterministic:
            lbr = LBRAgent(agent, samples=30)
            for seed in range(10):
                g = Game("soko", 2, seed=seed)
                lbr.reset(seed)
                while g.current_player is not None:
                    if g.current_player == 1:
                        apply_action(g, choose_action(lbr, g, action_mask(g)))
                        assert lbr.range[int(g.hole_cards(0)[0])] > 0
                    else:
                        apply_action(g, choose_action(agent, g, action_mask(g)))


def test_exploit_cli_lbr_and_learned(tmp_path, capsys):
    assert exploit_main(["--game", "soko", "--agent", "call", "--method", "lbr", "--hands", "40",
                         "--samples", "30", "--out", str(tmp_path), "--name", "l", "--no-progress"]) == 0
    data = json.loads((tmp_path / "l" / "results.json").read_text())
    assert data["method"] == "lbr" and data["lower_bound"] and len(data["ci95"]) == 2
    assert data["match"]["hands"] == 40
    assert "at least" in capsys.readouterr().out
    assert exploit_main(["--game", "soko_mini", "--agent", "call", "--method", "learned", "--steps", "512",
                         "--hands", "40", "--out", str(tmp_path), "--name", "b", "--no-progress",
                         "--set", "ppo.n_envs=2", "--set", "ppo.batch_size=128",
                         "--set", "ppo.n_steps=128"]) == 0
    data = json.loads((tmp_path / "b" / "results.json").read_text())
    assert data["method"] == "learned" and data["best_response_agent"].startswith("ppo:")
    assert data["steps"] == 512 and data["match"]["hands"] == 40


def test_exploit_cli_deals_do_not_follow_the_run_folder(tmp_path):
    """The same weights in two run folders (whose names a ppo model is shown by) meet the same
    deals: the CLI names its target ``target`` unless the spec names it, so the numbers are the
    same, and the same as with ``name=target``; a name given still picks the deals."""
    import shutil

    from agents.agent_file import FINAL_AGENT
    from agents.registry import champion_path

    champion = champion_path("soko")
    for run in ("soko_ppo__s0__20260101-120000", "soko_ppo__s0__20260102-080000"):
        (tmp_path / run).mkdir()
        shutil.copy(champion, tmp_path / run / FINAL_AGENT)

    def exploit(spec: str, name: str) -> dict:
        assert exploit_main(["--game", "soko", "--agent", spec, "--method", "lbr", "--hands", "40",
                             "--samples", "20", "--out", str(tmp_path / "out"), "--name", name,
                             "--no-progress"]) == 0
        return json.loads((tmp_path / "out" / name / "results.json").read_text())

    a = exploit(f"ppo:{tmp_path / 'soko_ppo__s0__20260101-120000' / FINAL_AGENT}", "a")
    b = exploit(f"ppo:{tmp_path / 'soko_ppo__s0__20260102-080000'}", "b")
    named = exploit(f"ppo:{tmp_path / 'soko_ppo__s0__20260101-120000'},name=target", "t")
    other = exploit(f"ppo:{tmp_path / 'soko_ppo__s0__20260101-120000'},name=other", "o")
    assert a["agent"].endswith(FINAL_AGENT) and b["agent"].endswith("20260102-080000")  # as given
    assert a["match"] == b["match"] == named["match"]        # its agents, hands and every estimate
    assert a["match"]["agents"] == ["lbr:target", "target"]
    assert a["ci95"] == b["ci95"] == named["ci95"]
    assert other["match"]["agents"] == ["lbr:other", "other"]
    assert other["exploitability_bb_per_100"] != a["exploitability_bb_per_100"]   # other deals


def test_match_spec_adds_the_name_to_any_spelling_of_a_spec():
    from agents.registry import parse_spec
    from arena.exploit import match_spec

    for spec, options in [("tag", {}), ("tag:", {}), (" call ", {}), ("equity:samples=50", {"samples": 50}),
                          ("ppo:runs/x/final_model.zip", {"path": "runs/x/final_model.zip"})]:
        assert parse_spec(match_spec(spec))[1] == {**options, "name": "target"}
    assert match_spec("tag:name=mine") == "tag:name=mine"


def test_exploit_cli_errors_are_one_line(capsys):
    assert exploit_main(["--game", "follow_the_bitch", "--agent", "call", "--method", "lbr"]) == 2
    err = capsys.readouterr().err
    assert "wild cards" in err and err.count("\n") == 1
    assert exploit_main(["--game", "soko", "--agent", "call", "--method", "learned", "--hands", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_train_target_errors_are_one_line_exit_2(capsys):
    from train.ppo import cli

    assert cli(["--config", "configs/best_response.yaml", "--target", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'nobody'" in err and err.count("\n") == 1
    assert cli(["--config", "configs/best_response.yaml", "--target", "tag",
                "--set", "eval.lbr_hands=-1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        cli(["--resume", "runs/x", "--target", "tag"])
    assert exc.value.code == 2


def test_target_replaces_the_opponents():
    from train.checks import load_checked_config
    from train.config import ConfigError, load_config

    cfg = load_config("configs/soko_ppo.yaml", target="tag")
    assert cfg.opponents.baselines == {"tag": 1.0}
    assert cfg.opponents.self_play.every == 0 and cfg.eval.baselines == ["tag"]
    with pytest.raises(ConfigError, match="exact for heads-up soko_mini only"):
        load_checked_config("configs/soko_ppo.yaml", overrides=["eval.exploitability=true"])
    with pytest.raises(ConfigError, match="eval.lbr_hands: local best response needs"):
        load_checked_config("configs/follow_the_bitch_ppo.yaml", overrides=["eval.lbr_hands=10"])
    # The training LBR's cheaper model of its target is the core's: a network the core runs.
    assert load_checked_config("configs/soko_ppo.yaml", overrides=["opponents.self_play.lbr_win_samples=16"])
    with pytest.raises(ConfigError, match="lbr_win_samples needs the core .* not card_planes"):
        load_checked_config("configs/soko_ppo.yaml", overrides=["opponents.self_play.lbr_win_samples=16",
                                                                "ppo.features_extractor=card_planes"])
    with pytest.raises(ConfigError, match="lbr_win_samples must be null or at least 1, not 0"):
        load_checked_config("configs/soko_ppo.yaml", overrides=["opponents.self_play.lbr_win_samples=0"])


@pytest.mark.parametrize("activation", ["tanh", "elu"])
def test_the_batched_target_policy_with_features_is_the_card_by_card_one(activation, tmp_path):
    # A ppo model with hand-strength features: each candidate card changes its hand_class and
    # win_probability too; one batched pass must give what its policy gives card by card.
    from arena.lbr import _TargetPolicy
    from envs.observation import FEATURES
    from envs.single_agent import SingleAgentEnv
    from tests.helpers import random_ppo_agent

    env = SingleAgentEnv("soko", num_players=2, observation_features=tuple(FEATURES))
    agent = random_ppo_agent(env, activation, features=FEATURES, scale=0.3, name="featured")
    assert agent.features == tuple(FEATURES)
    assert type(agent.actor).__name__ == {"tanh": "NumpyActor", "elu": "TorchActor"}[activation]
    rules = get_rules("soko")
    batched, by_card = _TargetPolicy(agent, rules), _TargetPolicy(agent, rules)
    assert batched.encoder is not None
    by_card.encoder = None  # the card-by-card path: the policy of each replayed view
    rng = np.random.default_rng(2)
    for seed in range(4):
        g = Game("soko", 2, seed=seed)
        while g.current_player is not None:
            seat = g.current_player
            seen = {int(c) for s in range(2) for c in g.up_cards(s)}
            candidates = np.array([c for c in range(52) if c not in seen])
            expected = by_card(g, seat, candidates)
            got = batched(g, seat, candidates)
            assert np.allclose(got, expected, atol=1e-6), (seed, g.street)
            assert (got.std(axis=0) > 0).any()  # the cards make a difference
            apply_action(g, int(rng.choice(np.flatnonzero(action_mask(g)))))


def test_lbr_reads_the_equity_agents_policy_card_by_card():
    # Last street, seat 0 to act with Kh 9h 5c 3s up against Ks Qc 8d 2c: holding 9d (a pair)
    # the equity agent bets, holding 4d (king high, behind) it checks; LBR's range update
    # sees exactly that through equity's policy.
    from arena.lbr import _TargetPolicy
    from envs.engine.cards import parse_cards

    g = Game("soko", 2, deck="7d Ad Ks Kh Qc 9h 8d 5c 2c 3s", button=0, seed=0)
    while g.street < 3:
        g.check_or_call()
    assert g.current_player == 0 and g.to_call == 0
    candidates = np.array([int(c) for c in parse_cards("9d 4d")])
    probs = _TargetPolicy(make_agent("equity"), g.rules)(g, 0, candidates)
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert probs[0, 2] > 0.95 and probs[1, 1] > 0.95


@pytest.mark.parametrize("game", ["soko", "soko_mini"])
def test_the_roll_outs_are_scored_as_every_hand_scored_one_by_one(game):
    # equity_by_hole's shares come from one core call (envs.batched.showdown_shares); they must
    # be the floats of scoring every hand with evaluate_rows and averaging over the rows that
    # can follow each candidate.
    from envs.batched import evaluate_rows, showdown_shares
    from envs.engine.rules import hand_options

    rules = get_rules(game)
    options = hand_options(rules)
    rng = np.random.default_rng(3)
    deck = np.array([int(c) for c in rules.deck])
    for trial in range(30):
        cards = rng.permutation(deck)
        mine_known = int(rng.integers(1, 3))
        mine_n = int(rng.integers(0, rules.cards_per_player - mine_known + 1))
        theirs_up = int(rng.integers(0, rules.cards_per_player - 1 - mine_n + 1))
        theirs_n = rules.cards_per_player - 1 - theirs_up - (0 if trial % 3 else int(rng.integers(0, 2)))
        theirs_n = max(0, min(theirs_n, rules.cards_per_player - 1 - theirs_up))
        mine, their_up = cards[:mine_known], cards[mine_known:mine_known + theirs_up]
        unseen = np.sort(cards[mine_known + theirs_up:])
        k = mine_n + theirs_n   # 0: the last street, rows of nothing to come
        future = unseen[np.argsort(rng.random((40, len(unseen))), axis=1)[:, :k]]
        candidates = unseen.copy()
        if trial % 5 == 0 and k:       # a candidate every row deals: no row can follow it
            dealt = future == unseen[0]
            future[dealt] = future[:, :1][dealt.any(axis=1)].ravel()  # (a row's cards stay distinct)
            future[:, 0] = unseen[0]
        S, C = len(future), len(candidates)
        me = evaluate_rows(np.column_stack([np.tile(mine, (S, 1)), future[:, :mine_n]]), **options)
        theirs = np.empty((S, C, 1 + len(their_up) + theirs_n), dtype=np.int64)
        theirs[:, :, 0] = candidates[None, :]
        theirs[:, :, 1:1 + len(their_up)] = their_up
        theirs[:, :, 1 + len(their_up):] = future[:, None, mine_n:]
        valid = ~(future[:, :, None] == candidates[None, None, :]).any(axis=1)
        them = np.zeros((S, C), dtype=np.int64)
        them[valid] = evaluate_rows(theirs[valid], **options)
        share = (me[:, None] > them) + 0.5 * (me[:, None] == them)
        expected = (share * valid).sum(axis=0) / np.maximum(valid.sum(axis=0), 1)
        got = showdown_shares(mine, their_up, candidates, future, mine_n, **options)
        assert np.array_equal(got, expected), trial
        if trial % 5 == 0 and k:
            assert got[0] == 0.0
    with pytest.raises(ValueError, match="card ids are 0..51"):
        showdown_shares([0], [1], [2], np.array([[52]]), 1)
    with pytest.raises(ValueError, match="at most 7 cards"):
        showdown_shares(list(range(7)), [], [40], np.array([[41]]), 1)
    # A card twice is no deal (the evaluator would score a hand that cannot exist).
    for mine, their_up, candidates, future in [([0, 0], [1], [2], [[3]]), ([0], [1], [2], [[1]]),
                                               ([0], [1], [0], [[3]]), ([0], [1], [2], [[3, 3]])]:
        with pytest.raises(ValueError, match="repeated|already seen"):
            showdown_shares(mine, their_up, candidates, np.array(future), 1)


def test_too_few_hands_for_an_interval_say_so(tmp_path, capsys):
    """Two LBR hands (one deal) leave no interval: the line says so instead of [nan, nan], and
    results.json (strict JSON) has null bounds."""
    code = exploit_main(["--game", "soko", "--agent", "call", "--method", "lbr", "--hands", "1",
                         "--samples", "5", "--out", str(tmp_path), "--name", "few"])
    out = capsys.readouterr().out
    assert code == 0 and "nan" not in out
    assert "no interval (too few hands: give --hands more) (lbr; 2 hands" in out
    data = json.loads((tmp_path / "few" / "results.json").read_text(),
                      parse_constant=lambda word: pytest.fail(f"{word} in results.json"))
    assert data["ci95"] == [None, None] and isinstance(data["exploitability_bb_per_100"], float)
