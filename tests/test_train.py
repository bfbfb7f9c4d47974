"""Training end to end on configs/smoke.yaml: the run folder, TensorBoard tags, checkpoints that
survive a crash, --resume, and the trained model in a tournament. About 30 s on 2 cores."""

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from train.config import load_config

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "configs" / "smoke.yaml"


def smoke(tmp_path, *overrides):
    return load_config(SMOKE, overrides=[f"run.out_dir={tmp_path}", *overrides])


def tb_tags(folder: Path) -> dict[str, list[int]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = {t: [e.step for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}
    tags.update({t: [e.step for e in acc.Tensors(t)] for t in acc.Tags()["tensors"]})
    return tags


def test_the_smoke_run_writes_its_folder(smoke_run):
    cfg, run_dir = smoke_run
    assert run_dir.name.startswith("smoke__s0__")
    for name in ("config.yaml", "command.txt", "git_commit.txt", "final_model.zip", "eval.csv"):
        assert (run_dir / name).is_file(), name
    assert load_config(run_dir / "config.yaml") == cfg
    assert (run_dir / "command.txt").read_text() == "python train/ppo.py --config configs/smoke.yaml\n"
    commit = (run_dir / "git_commit.txt").read_text().split()[0]
    assert commit == "unknown" or len(commit) == 40
    checkpoints = sorted((run_dir / "checkpoints").glob("ckpt_*.zip"))
    assert 1 <= len(checkpoints) <= cfg.run.keep_checkpoints
    assert all(p.with_suffix(".json").is_file() for p in checkpoints)
    snapshots = sorted((run_dir / "snapshots").glob("snapshot_*.zip"))
    assert 1 <= len(snapshots) <= cfg.opponents.self_play.keep


def test_the_smoke_run_logs_the_tags(smoke_run):
    cfg, run_dir = smoke_run
    assert [p.name for p in (run_dir / "tb").iterdir() if p.is_dir()] == []   # no SB3 PPO_1 folder
    tags = tb_tags(run_dir / "tb")
    expected = ["rollout/ep_rew_mean", "train/loss", "train/entropy_loss", "time/fps",   # SB3's own
                "eval/bb100_vs_random", "eval/bb100_vs_random_ci95_low", "eval/bb100_vs_random_ci95_high",
                "eval/bb100_vs_call", "eval/bb100_vs_field", "poker/fold_rate", "poker/showdown_rate",
                "poker/aggression", "poker/vpip", "selfplay/pool_size", "config/text_summary",
                "time/env_share", "time/update_share"]
    for tag in expected:
        assert tag in tags, tag
    assert tags["config/text_summary"] == [0]
    assert max(tags["rollout/ep_rew_mean"]) == cfg.run.total_timesteps


def test_the_time_shares_are_shares_of_the_wall_time(smoke_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, run_dir = smoke_run
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    env = [e.value for e in acc.Scalars("time/env_share")]
    update = [e.value for e in acc.Scalars("time/update_share")]
    assert len(env) == len(update) >= 2
    assert all(0 < e < 1 and 0 <= u < 1 and e + u < 1 for e, u in zip(env, update))
    assert update[0] == 0 and max(update) > 0   # the first rollout has no update before it


def test_the_timed_env_counts_its_steps_resets_and_masks(monkeypatch):
    import time

    from stable_baselines3.common.vec_env import DummyVecEnv

    from envs.single_agent import SingleAgentEnv
    from train.vec import TimedVecEnv

    venv = TimedVecEnv(DummyVecEnv([lambda: SingleAgentEnv("soko")]))
    slow = venv.venv.step_wait

    def step_wait():
        time.sleep(0.02)
        return slow()
    monkeypatch.setattr(venv.venv, "step_wait", step_wait)
    venv.reset()
    before = venv.seconds
    for _ in range(5):
        mask = venv.env_method("action_masks")[0]
        venv.step(np.array([int(np.flatnonzero(mask)[0])]))
    assert 0.1 <= venv.seconds - before < 1.0


def test_evaluations_do_not_change_what_a_run_learns(smoke_run, tmp_path):
    """An evaluation loads the learner's checkpoint; the load must leave the global generators
    (PPO's minibatch shuffles and action draws) as they were, so the weights are the same with
    evaluations or without."""
    import torch
    from sb3_contrib import MaskablePPO

    from train.ppo import main

    cfg, run_dir = smoke_run
    assert cfg.eval.every
    quiet = main(smoke(tmp_path, "eval.every=0"), progress=False)
    with_eval = MaskablePPO.load(str(run_dir / "final_model.zip"), device="cpu").policy.state_dict()
    without = MaskablePPO.load(str(quiet / "final_model.zip"), device="cpu").policy.state_dict()
    assert all(torch.equal(with_eval[k], without[k]) for k in with_eval)


def test_training_collects_cycles_less_often_and_puts_the_thresholds_back(tmp_path, monkeypatch):
    """learn runs with the cycle collector's first threshold at 20,000; the process's thresholds
    are as they were once main returns."""
    import gc

    from sb3_contrib import MaskablePPO

    from train.ppo import main

    seen = []
    learn = MaskablePPO.learn

    def recording(self, *args, **kwargs):
        seen.append(gc.get_threshold())
        return learn(self, *args, **kwargs)

    monkeypatch.setattr(MaskablePPO, "learn", recording)
    before = gc.get_threshold()
    main(smoke(tmp_path, "eval.every=0"), progress=False)
    assert seen == [(20_000, *before[1:])]
    assert gc.get_threshold() == before


def test_exploitability_evaluations_are_logged_and_change_nothing_learned(smoke_run, tmp_path):
    """A local best response at every evaluation and a learned one (trained by a separate
    program, kept in the run folder) at step 0 and the first evaluation past each br_every: their
    TensorBoard curves are there, and the weights are those of the run without them."""
    import torch
    import yaml
    from sb3_contrib import MaskablePPO

    from train.ppo import main

    base, plain = smoke_run
    br_config = yaml.safe_load((REPO / "configs" / "best_response.yaml").read_text())
    br_config["ppo"].update(n_envs=2, n_steps=128, batch_size=128, net_arch=[16])
    (tmp_path / "br.yaml").write_text(yaml.safe_dump(br_config))
    cfg = smoke(tmp_path, "eval.lbr_hands=20", "eval.br_steps=256", "eval.br_every=1000", "eval.br_hands=20",
                f"eval.br_config={tmp_path / 'br.yaml'}", "eval.at_start=true")
    run_dir = main(cfg, progress=False)
    tags = tb_tags(run_dir / "tb")
    evaluations = tags["eval/bb100_vs_field"]
    assert evaluations == [0, base.eval.every, base.run.total_timesteps]
    assert tags["eval/lbr_bb100"] == evaluations
    assert tags["eval/br_bb100"] == tags["eval/br_bb100_ci95_low"] == [0, base.run.total_timesteps]
    assert (sorted(p.name for p in (run_dir / "best_responses").iterdir())
            == ["at_0", f"at_{base.run.total_timesteps}"])
    result = json.loads(
        (run_dir / "best_responses" / f"at_{base.run.total_timesteps}" / "results.json").read_text())
    assert result["steps"] == 256 and result["match"]["hands"] == 20
    low, high = result["ci95"]
    assert low <= result["exploitability_bb_per_100"] <= high
    assert Path(result["best_response_agent"].removeprefix("ppo:")).is_file()
    with_them = MaskablePPO.load(str(run_dir / "final_model.zip"), device="cpu").policy.state_dict()
    without = MaskablePPO.load(str(plain / "final_model.zip"), device="cpu").policy.state_dict()
    assert all(torch.equal(with_them[k], without[k]) for k in with_them)


def test_a_card_planes_policy_trains_loads_and_plays(tmp_path):
    """ppo.features_extractor=card_planes: the model reads the card blocks through the planes
    (agents/networks.py), joins its own pool as snapshots and is evaluated mid-run (a torch
    forward pass), is saved, and plays as a ppo: agent."""
    import torch

    from agents.networks import CardPlanes, card_blocks
    from agents.registry import make_agent
    from agents.trained import TorchActor
    from arena.match import play_match
    from envs.observation import build_layout
    from train.ppo import main

    cfg = smoke(tmp_path, "ppo.features_extractor=card_planes",
                "env.observation_features=[hand_class,win_probability]")
    run_dir = main(cfg, progress=False)
    assert len(list((run_dir / "snapshots").glob("snapshot_*.zip"))) >= 1
    agent = make_agent(f"ppo:{run_dir / 'final_model.zip'}")
    assert isinstance(agent.actor, TorchActor)
    extractor = agent.actor.policy.features_extractor
    assert isinstance(extractor, CardPlanes) and extractor.blocks == 9   # own face-down + 8 seats' face-up
    assert play_match("soko", [agent, "call"], hands=20, seed=1).hands == 20
    # The card columns reach the network only through the planes: the features of an
    # observation are the planes' outputs, then every non-card column as it is.
    layout = build_layout("soko", ["hand_class", "win_probability"])
    assert card_blocks(layout) == list(range(0, 468, 52))
    obs = torch.rand(3, layout.size)
    out = extractor(obs)
    rest = [c for c in range(layout.size) if c >= 468]
    assert torch.equal(out[:, -len(rest):], obs[:, rest])
    changed = obs.clone()
    changed[:, 5] += 1.0          # a card column
    assert not torch.equal(extractor(changed)[:, :-len(rest)], out[:, :-len(rest)])
    # A snapshot taken in memory (a copy of the network, not a deep copy of the training policy)
    # plays as the saved model does, and keeps its weights while the model trains on.
    from sb3_contrib import MaskablePPO

    from agents.trained import PPOAgent

    model = MaskablePPO.load(str(run_dir / "final_model.zip"), device="cpu")
    snapshot = PPOAgent.from_model(model, name="snap")
    rng = np.random.default_rng(0)
    observations = rng.random((20, layout.size), dtype=np.float32)
    mask = np.ones(model.action_space.n, dtype=bool)
    before = [snapshot.probabilities(o, mask) for o in observations]
    for o, p in zip(observations, before):
        np.testing.assert_allclose(agent.probabilities(o, mask), p, rtol=1e-6)
    with torch.no_grad():
        for param in model.policy.parameters():
            param.add_(1.0)
    for o, p in zip(observations, before):
        np.testing.assert_array_equal(snapshot.probabilities(o, mask), p)


def test_eval_csv_has_a_row_per_baseline_and_the_field(smoke_run):
    cfg, run_dir = smoke_run
    with (run_dir / "eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    opponents = [r["opponent"] for r in rows]
    assert opponents[:3] == ["random", "call", "field"]
    assert int(rows[-1]["timesteps"]) == cfg.run.total_timesteps
    for r in rows:
        assert float(r["ci95_low"]) <= float(r["bb100"]) <= float(r["ci95_high"])


def test_the_final_model_plays_a_tournament_as_a_ppo_agent(smoke_run):
    from agents.registry import make_agent
    from arena.match import play_match

    _, run_dir = smoke_run
    spec = f"ppo:{run_dir / 'final_model.zip'}"
    agent = make_agent(spec)
    result = play_match("soko", [spec, "tag"], hands=20, seed=3)
    assert result.hands == 20
    assert set(result.bb_per_100) == {spec, "tag"}
    assert agent.name == spec


def test_resume_continues_the_step_count_in_the_same_tensorboard_run(smoke_run, tmp_path):
    import shutil

    from train.config import config_from_dict, read_yaml
    from train.ppo import main

    cfg, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    data = read_yaml(run_dir / "config.yaml")
    data["run"]["total_timesteps"] = cfg.run.total_timesteps + 512
    main(config_from_dict(data), resume=run_dir, command=["python", "train/ppo.py", "--resume", str(run_dir)],
         progress=False)
    steps = tb_tags(run_dir / "tb")["rollout/ep_rew_mean"]
    assert max(steps) == cfg.run.total_timesteps + 512
    assert steps == sorted(set(steps))                      # one curve, continuing
    assert [p.name for p in (run_dir / "tb").iterdir() if p.is_dir()] == []
    assert (run_dir / "command.txt").read_text().count("\n") == 2
    state = json.loads(max((run_dir / "checkpoints").glob("ckpt_*.json"),
                           key=lambda p: int(p.stem.split("_")[1])).read_text())
    assert state["timesteps"] == cfg.run.total_timesteps + 512
    assert state["pool"]["snapshots"]                        # the self-play pool came back


def test_resume_unpickles_nothing_from_the_run_folder(smoke_run, tmp_path):
    """A run folder from someone else: every pickle in its checkpoints' ``data`` creates a
    file when decoded (``MaskablePPO.load`` would: tests/test_agent_file.py). ``--resume`` goes
    on from the newest one, with its step count and update count, and the file never appears
    (the weights it goes on from: tests/test_resume_exact.py)."""
    import shutil

    from sb3_contrib import MaskablePPO

    from tests.test_agent_file import _craft
    from train.config import config_from_dict, read_yaml
    from train.ppo import main

    cfg, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    marker = tmp_path / "pwned.txt"
    for ckpt in (run_dir / "checkpoints").glob("ckpt_*.zip"):
        _craft(ckpt, ckpt.with_suffix(".tmp"), marker, where="data").replace(ckpt)
    data = read_yaml(run_dir / "config.yaml")
    data["run"]["total_timesteps"] = cfg.run.total_timesteps + 512
    main(config_from_dict(data), resume=run_dir, command=["python"], progress=False)
    assert not marker.exists()
    done = MaskablePPO.load(run_dir / "final_model.zip")   # written by the resumed run: trusted here
    first = MaskablePPO.load(original / "final_model.zip")
    assert done.num_timesteps == cfg.run.total_timesteps + 512
    rollouts = 512 // (cfg.ppo.n_steps * cfg.ppo.n_envs)
    assert done._n_updates == first._n_updates + rollouts * cfg.ppo.n_epochs


def test_ctrl_c_leaves_a_loadable_checkpoint_and_resume_finishes(tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO

    import train.callbacks
    from train.callbacks import latest_checkpoint
    from train.ppo import main

    cfg = smoke(tmp_path, "eval.every=0", "opponents.self_play.every=256")
    calls = {"n": 0}
    original = train.callbacks.PokerStats._on_rollout_end

    def interrupt(self):
        original(self)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(train.callbacks.PokerStats, "_on_rollout_end", interrupt)
    with pytest.raises(KeyboardInterrupt):
        main(cfg, command=["python"], progress=False)
    (run_dir,) = tmp_path.iterdir()
    path, state = latest_checkpoint(run_dir / "checkpoints")
    assert state["timesteps"] == 3 * cfg.ppo.n_steps * cfg.ppo.n_envs
    assert MaskablePPO.load(path).num_timesteps == state["timesteps"]
    assert not (run_dir / "final_model.zip").exists()
    monkeypatch.setattr(train.callbacks.PokerStats, "_on_rollout_end", original)
    main(cfg, resume=run_dir, command=["python"], progress=False)
    assert MaskablePPO.load(run_dir / "final_model.zip").num_timesteps == cfg.run.total_timesteps


def test_a_crash_during_a_save_keeps_the_previous_checkpoint(smoke_run, tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO

    from envs.files import atomic_write_bytes
    from train.callbacks import latest_checkpoint

    _, run_dir = smoke_run
    path, state = latest_checkpoint(run_dir / "checkpoints")
    target = tmp_path / path.name
    target.write_bytes(path.read_bytes())

    def crash(*args):
        raise OSError("disk pulled out")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"half a zip")
    monkeypatch.undo()
    assert MaskablePPO.load(target).num_timesteps == state["timesteps"]


def test_snapshots_play_like_the_policy_they_copy(smoke_run):
    """A snapshot file, loaded as training reloads it, plays as sb3 says the policy it copies
    does; one taken in memory from the model plays the same."""
    from sb3_contrib import MaskablePPO

    from agents.trained import NumpyActor, PPOAgent

    _, run_dir = smoke_run
    path = sorted((run_dir / "snapshots").glob("snapshot_*.zip"))[-1]
    model = MaskablePPO.load(path, device="cpu")
    loaded = PPOAgent(path=str(path.with_suffix("")))    # the suffix may be left out
    in_memory = PPOAgent.from_model(model, name=path.stem)
    assert isinstance(loaded.actor, NumpyActor) and isinstance(in_memory.actor, NumpyActor)
    rng = np.random.default_rng(0)
    n = model.action_space.n
    for _ in range(50):
        obs = rng.random(model.observation_space.shape, dtype=np.float32)
        mask = rng.random(n) < 0.6
        mask[1] = True
        expected, _ = model.predict(obs, deterministic=True, action_masks=mask)
        assert loaded.choose(obs, mask) == in_memory.choose(obs, mask) == int(expected)
        np.testing.assert_array_equal(loaded.probabilities(obs, mask), in_memory.probabilities(obs, mask))


def test_pool_weights_split_between_baselines_and_snapshots():
    from train.opponents import build_pool, pool_weights

    assert pool_weights({"random": 1, "tag": 1}, snapshots=0, self_play_weight=0.5) == [0.5, 0.5]
    pool, weights = build_pool({"random": 1, "call": 0, "tag": 3}, [], self_play_weight=0.3, seed=0)
    assert pool[0] == "random" and len(pool) == 2 and weights == [0.25, 0.75]


def test_the_local_best_response_joins_the_pool_against_the_newest_snapshot(smoke_run):
    from agents.trained import PPOAgent
    from arena.lbr import LBRAgent
    from train.opponents import build_pool, pool_weights

    _, run_dir = smoke_run
    old, new = (PPOAgent(path=str(run_dir / "final_model.zip")).clone(name=name) for name in ("old", "new"))
    # No snapshot yet: no response to one; the baselines keep every hand.
    pool, weights = build_pool({"random": 1, "tag": 1}, [], self_play_weight=0.2, lbr_weight=0.3, seed=0)
    assert len(pool) == 2 and weights == [0.5, 0.5]
    pool, weights = build_pool({"random": 1, "tag": 1}, [old, new], self_play_weight=0.2, lbr_weight=0.3,
                               seed=0, lbr_samples=7)
    assert weights == pytest.approx([0.25, 0.25, 0.1, 0.1, 0.3])
    lbr = pool[-1]
    assert isinstance(lbr, LBRAgent) and lbr.target.name == "new" and lbr.samples == 7
    assert pool_weights({"tag": 1}, snapshots=1, self_play_weight=0.0, lbr_weight=0.25) == [0.75, 0.0, 0.25]
    # Given the env's rules, the response's target policy is built once: on the core for this
    # MLP model (the batched env plays it for every slot at once, arena.lbr.BatchedLBR), and
    # with lbr_engine="python" the reference one (its encoder), which the copies the batched env
    # plays hand by hand share.
    import copy

    from envs.engine.rules import get_rules

    pool, _ = build_pool({"tag": 1}, [new], self_play_weight=0.2, lbr_weight=0.3, seed=0,
                         rules=get_rules("soko"))
    assert pool[-1].uses_core(get_rules("soko")) and pool[-1]._core is not None and pool[-1]._policy is None
    pool, _ = build_pool({"tag": 1}, [new], self_play_weight=0.2, lbr_weight=0.3, seed=0,
                         rules=get_rules("soko"), lbr_engine="python")
    assert pool[-1]._policy is not None and copy.copy(pool[-1])._policy is pool[-1]._policy
    # lbr_win_samples: the deals of the snapshot's win_probability as the response models it, in
    # its core target policy and in the batched env's form of it (the default: the piece's own).
    from arena.lbr import BatchedLBR
    from envs.batched import BatchedGame
    from envs.observation import WIN_SAMPLES

    game = BatchedGame(get_rules("soko"), 2, 2)
    for asked, used in ((16, 16), (None, WIN_SAMPLES)):
        pool, _ = build_pool({"tag": 1}, [new], self_play_weight=0.2, lbr_weight=0.3, seed=0,
                             rules=get_rules("soko"), lbr_win_samples=asked)
        assert pool[-1].win_samples == asked and pool[-1]._core.win_samples == used
        assert BatchedLBR(pool[-1], game).core.win_samples == used


def test_lbr_keep_answers_each_of_the_newest_snapshots(smoke_run):
    from agents.trained import PPOAgent
    from arena.lbr import LBRAgent
    from train.opponents import build_pool, pool_weights

    _, run_dir = smoke_run
    a, b, c = (PPOAgent(path=str(run_dir / "final_model.zip")).clone(name=name) for name in "abc")
    # Two of three snapshots answered, newest first, sharing the lbr share; the responses' streams
    # differ, and the newest one's is the stream lbr_keep 1 gives it (the same pool as before).
    pool, weights = build_pool({"tag": 1}, [a, b, c], self_play_weight=0.3, lbr_weight=0.4, seed=5,
                               lbr_keep=2)
    assert weights == pytest.approx([0.3, 0.1, 0.1, 0.1, 0.2, 0.2])
    assert [type(x) for x in pool[-2:]] == [LBRAgent, LBRAgent]
    assert [x.target.name for x in pool[-2:]] == ["c", "b"]
    one, one_weights = build_pool({"tag": 1}, [a, b, c], self_play_weight=0.3, lbr_weight=0.4, seed=5)
    assert one_weights == pytest.approx([0.3, 0.1, 0.1, 0.1, 0.4]) and one[-1].target.name == "c"
    draws = [x.rng.integers(1 << 30, size=4).tolist() for x in (pool[-2], pool[-1], one[-1])]
    assert draws[0] == draws[2] and draws[0] != draws[1]
    # Fewer snapshots than lbr_keep: each one answered, and the share still whole.
    pool, weights = build_pool({"tag": 1}, [a], self_play_weight=0.3, lbr_weight=0.4, seed=5, lbr_keep=3)
    assert weights == pytest.approx([0.3, 0.3, 0.4]) and pool[-1].target.name == "a"
    assert pool_weights({"tag": 1}, snapshots=2, self_play_weight=0.2, lbr_weight=0.6, lbrs=2) == \
        pytest.approx([0.2, 0.1, 0.1, 0.3, 0.3])


def test_a_linear_entropy_schedule_falls_from_ent_coef_to_its_end(tmp_path):
    from sb3_contrib import MaskablePPO

    from train.ppo import main

    cfg = smoke(tmp_path, "ppo.ent_coef=0.05", "ppo.ent_schedule=linear", "ppo.ent_coef_end=0.01",
                "eval.every=0", "opponents.self_play.every=0")
    run_dir = main(cfg, progress=False)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    logged = [(e.step, e.value) for e in acc.Scalars("train/ent_coef")]
    rollout = cfg.ppo.n_steps * cfg.ppo.n_envs
    # One value per rollout, set at its start: 0.05 at step 0, then 0.04 less per 1536 steps.
    assert len(logged) == cfg.run.total_timesteps // rollout
    for k, (step, value) in enumerate(logged):
        assert value == pytest.approx(0.05 - 0.04 * k * rollout / cfg.run.total_timesteps, rel=1e-6)
    model = MaskablePPO.load(run_dir / "final_model.zip")
    assert model.ent_coef == pytest.approx(logged[-1][1])


def test_an_unknown_entropy_schedule_is_refused(tmp_path):
    from train.config import ConfigError

    with pytest.raises(ConfigError, match="ent_schedule"):
        smoke(tmp_path, "ppo.ent_schedule=cosine")


def test_an_evaluation_at_a_refresh_takes_the_refreshs_exploitability(tmp_path, monkeypatch):
    # At a step where the pool has just made the exact best response to the learner's sampling
    # policy, eval/exploitability is that response's value (no second pass over the tree), and
    # it is the exploitability of the snapshot of that step computed afresh; an evaluation at a
    # step without a refresh computes its own.
    import arena.exact
    from agents.registry import make_agent
    from arena.exact import agent_strategy, bb_per_100, build_tree, exploitability
    from envs.engine.rules import get_rules
    from train.ppo import main

    asked = []
    real = arena.exact.agent_strategy
    monkeypatch.setattr(arena.exact, "agent_strategy",
                        lambda tree, agent, seat=None: asked.append(agent.name) or real(tree, agent, seat))
    overrides = ["env.game=soko_mini", "env.rules={deck_ranks: KA}", "opponents.self_play.exact_br=0.6",
                 "opponents.self_play.weight=0.2", "opponents.self_play.keep=10", "eval.every=1024",
                 "eval.exploitability=true", "eval.deterministic=false", "eval.lbr_hands=0",
                 "eval.at_start=true", "run.total_timesteps=2048"]
    run_dir = main(smoke(tmp_path, *overrides), command=["test"], progress=False)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    logged = {e.step: e.value for e in acc.Scalars("eval/exploitability")}
    assert 0 in logged and 1024 in logged
    refreshes = [a for a in asked if a.startswith("learner_")]
    assert refreshes and "learner_1024" in refreshes
    # The evaluations' own passes: at step 0 (no refresh there) and wherever no refresh was.
    own = len(asked) - len(refreshes)
    assert own == len([s for s in logged if f"learner_{s}" not in refreshes]) >= 1
    tree = build_tree(get_rules("soko_mini", deck_ranks="KA"))
    snapshot = make_agent(f"ppo:{run_dir / 'snapshots' / 'snapshot_1024.zip'},deterministic=false")
    fresh = bb_per_100(tree, exploitability(tree, agent_strategy(tree, snapshot))[0])
    assert logged[1024] == pytest.approx(fresh, rel=1e-5)


def test_exact_best_responses_to_snapshots_join_the_pool_and_survive_a_resume(tmp_path):
    # opponents.self_play.exact_br: at each snapshot the exact best response (arena.exact) to the
    # learner's sampling policy joins the pool; it wins its exact value against the policy it
    # answers, the newest exact_br_keep stay, and a resume reloads the same tables.
    from agents.registry import make_agent
    from agents.table import BestResponseAgent
    from arena.exact import agent_strategy, best_response, build_tree, profile_value
    from envs.engine.rules import get_rules
    from train.callbacks import OpponentPool, read_checkpoint_state
    from train.ppo import main

    overrides = ["env.game=soko_mini", "env.rules={deck_ranks: KA}", "opponents.self_play.exact_br=0.6",
                 "opponents.self_play.exact_br_keep=2", "opponents.self_play.weight=0.2",
                 "opponents.self_play.keep=3", "eval.every=0", "run.total_timesteps=2048"]
    cfg = smoke(tmp_path, *overrides)
    run_dir = main(cfg, command=["test"], progress=False)
    tables = sorted((run_dir / "snapshots").glob("br_*.npz"), key=lambda p: int(p.stem[3:]))
    assert [int(p.stem[3:]) for p in tables] == [1024, 1536]   # snapshots at 512, 1024, 1536: the newest two
    rules = get_rules("soko_mini", deck_ranks="KA")
    tree = build_tree(rules)
    target = make_agent(f"ppo:{run_dir / 'snapshots' / 'snapshot_1536.zip'},deterministic=false")
    strategy = agent_strategy(tree, target)
    response = agent_strategy(tree, BestResponseAgent(path=str(tables[-1])))
    assert best_response(tree, strategy, 0)[0] == pytest.approx(profile_value(tree, response, strategy),
                                                                abs=1e-5)
    assert best_response(tree, strategy, 1)[0] == pytest.approx(-profile_value(tree, strategy, response),
                                                                abs=1e-5)

    state = read_checkpoint_state(sorted((run_dir / "checkpoints").glob("*.json"))[-1])
    assert [b["path"] for b in state["pool"]["best_responses"]] == [p.name for p in tables]

    class Pools:   # the VecEnv side of set_pool: one pool for every hand
        num_envs = 1
        unwrapped = property(lambda self: self)

        def get_attr(self, name, indices=None):
            return [rules]

        def set_opponents(self, pool, weights):
            self.pool, self.weights = pool, weights

    venv = Pools()
    pool = OpponentPool(cfg, venv, run_dir / "snapshots")
    assert pool.restore(state["pool"]) == []
    assert [p.name for _, p, _ in pool.best_responses] == [p.name for p in tables]
    # baselines 0.2 (random, call, raise, tag), three snapshots 0.2, two responses 0.6.
    assert venv.weights == pytest.approx([0.05] * 4 + [0.2 / 3] * 3 + [0.3, 0.3])
    assert [a.path.name for a in venv.pool[-2:]] == [p.name for p in tables]


def test_learned_best_responses_to_snapshots_join_the_pool_and_survive_a_resume(tmp_path, monkeypatch):
    # opponents.self_play.learned_br: at each snapshot a policy trained against that snapshot's
    # sampling policy alone joins the pool as an agent file; the newest learned_br_keep stay (the
    # older folders are deleted), and a resume reloads the same files with the same weights.
    import arena.exploit
    from agents.registry import make_agent
    from train.callbacks import OpponentPool, read_checkpoint_state
    from train.ppo import main

    asked = []
    real = arena.exploit.train_best_response
    monkeypatch.setattr(arena.exploit, "train_best_response",
                        lambda game, spec, folder, **kw: asked.append((game, spec, kw["steps"]))
                        or real(game, spec, folder, **kw))
    overrides = ["env.game=soko_mini", "env.rules={deck_ranks: KA}", "opponents.self_play.learned_br=0.5",
                 "opponents.self_play.learned_br_steps=256", "opponents.self_play.learned_br_keep=2",
                 "opponents.self_play.weight=0.2", "opponents.self_play.keep=3", "eval.every=0",
                 "run.total_timesteps=2048"]
    cfg = smoke(tmp_path, *overrides)
    run_dir = main(cfg, command=["test"], progress=False)
    snaps = run_dir / "snapshots"
    assert [(g, spec, steps) for g, spec, steps in asked] == [
        ("soko_mini", f"ppo:{snaps / f'snapshot_{t}.safetensors'},deterministic=false", 256)
        for t in (512, 1024, 1536)]
    kept = sorted(p.name for p in snaps.glob("learned_br_*"))
    assert kept == ["learned_br_1024", "learned_br_1536"]   # the newest two
    assert sorted(p.name for p in (snaps / "learned_br_1536").iterdir()) == ["best_response.safetensors"]

    state = read_checkpoint_state(sorted((run_dir / "checkpoints").glob("*.json"))[-1])
    assert [b["path"] for b in state["pool"]["best_responses"]] == [
        f"{k}/best_response.safetensors" for k in kept]

    class Pools:   # the VecEnv side of set_pool: one pool for every hand
        num_envs = 1
        unwrapped = property(lambda self: self)

        def get_attr(self, name, indices=None):
            from envs.engine.rules import get_rules
            return [get_rules("soko_mini", deck_ranks="KA")]

        def set_opponents(self, pool, weights):
            self.pool, self.weights = pool, weights

    venv = Pools()
    pool = OpponentPool(cfg, venv, snaps)
    assert pool.restore(state["pool"]) == []
    # baselines 0.3 (random, call, raise, tag), three snapshots 0.2, two responses 0.5.
    assert venv.weights == pytest.approx([0.075] * 4 + [0.2 / 3] * 3 + [0.25, 0.25])
    responses = venv.pool[-2:]
    assert [a.path.parent.name for a in responses] == kept
    assert all(a.deterministic for a in responses)   # a best response plays its best action
    obs = np.random.default_rng(0).random((3, responses[0].obs_size)).astype(np.float32)
    fresh = make_agent(f"ppo:{snaps / 'learned_br_1536' / 'best_response.safetensors'}")
    assert np.array_equal(responses[1].actor.logits_batch(obs), fresh.actor.logits_batch(obs))
    # A response that left the pool stays while a checkpoint lists it; an unlisted folder goes.
    (snaps / "learned_br_9").mkdir()
    pool.checkpoint_dir = run_dir / "checkpoints"
    pool.best_responses = pool.best_responses[-1:]
    pool.prune()
    assert sorted(p.name for p in snaps.glob("learned_br_*")) == kept


def _eval_values(run_dir: Path) -> dict[tuple[str, int], float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    return {(t, e.step): e.value for t in acc.Tags()["scalars"]
            if t.startswith("eval/") and not t.endswith("seconds") for e in acc.Scalars(t)}


def _eval_table(run_dir: Path) -> list[list[str]]:
    with (run_dir / "eval.csv").open() as f:
        return [row[:-1] for row in csv.reader(f)]   # (all but the seconds)


def test_background_evaluations_log_what_in_process_ones_do(smoke_run, tmp_path):
    """eval.background plays the hands in a second process while training goes on: the same
    eval.csv rows and TensorBoard values at the same steps (the local best response's too), and
    the same weights."""
    import torch
    from sb3_contrib import MaskablePPO

    from train.ppo import main

    runs = {bg: main(smoke(tmp_path / bg, "eval.lbr_hands=20", "eval.at_start=true",
                           f"eval.background={bg}"), progress=False) for bg in ("false", "true")}
    tables = {bg: _eval_table(run) for bg, run in runs.items()}
    assert len(tables["true"]) == 1 + 3 * 3 and tables["true"] == tables["false"]
    values = {bg: _eval_values(run) for bg, run in runs.items()}
    assert ("eval/lbr_bb100", 768) in values["true"] and values["true"] == values["false"]
    weights = [MaskablePPO.load(str(run / "final_model.zip"), device="cpu").policy.state_dict()
               for run in runs.values()]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not list((runs["true"] / "checkpoints").glob("eval_model*"))   # dropped once played
    # Nothing of the background process outlives the run: a manager thread still running at
    # exit can race Python's exit hook into an "OSError: Bad file descriptor" traceback.
    assert not _executor_threads()


def _executor_threads() -> list:
    import threading
    from concurrent.futures.process import _ExecutorManagerThread

    return [t for t in threading.enumerate() if isinstance(t, _ExecutorManagerThread)]


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities (os.nice) here")
def test_the_background_evaluation_plays_at_a_lower_priority_than_training(tmp_path):
    """Its process yields the CPU to training's threads (the same numbers, less wall time)."""
    from train.callbacks import EVAL_NICENESS, Evaluation

    evaluation = Evaluation(smoke(tmp_path, "eval.background=true"), tmp_path)
    try:
        mine = os.nice(0)
        theirs = evaluation._executor().submit(os.nice, 0).result(timeout=120)
    finally:
        evaluation.close()
    assert theirs == min(mine + EVAL_NICENESS, 19) and (theirs > mine or mine == 19)


def test_closing_the_evaluation_ends_one_under_way_at_once(tmp_path):
    """An evaluation still being played when training stops (Ctrl-C, an error) is dropped: its
    process is ended, not waited for, and no thread of it is left behind."""
    import time
    from concurrent.futures.process import BrokenProcessPool

    from train.callbacks import Evaluation

    evaluation = Evaluation(smoke(tmp_path, "eval.background=true"), tmp_path)
    executor = evaluation._executor()
    job = executor.submit(time.sleep, 120)
    while not executor._processes:
        time.sleep(0.05)
    processes, thread = list(executor._processes.values()), executor._executor_manager_thread
    evaluation._pending = (512, job, {}, None, None)
    start = time.perf_counter()
    evaluation.close()
    assert time.perf_counter() - start < 30
    assert job.done() and not any(p.is_alive() for p in processes) and not thread.is_alive()
    assert evaluation._pending is None and evaluation._background is None
    # ended while running, or cancelled before it began
    assert job.cancelled() or isinstance(job.exception(timeout=0), BrokenProcessPool)


def test_luck_corrected_evaluations_are_the_tournaments_luck_corrected_matches(smoke_run):
    """eval.luck_correction plays each baseline match as the tournament code does with the luck
    correction (the same numbers as play_match on the learner's seats), which are not the plain
    match's: the evaluation's curve can be read at its level, not only as a trend."""
    import dataclasses

    from agents.registry import make_agent
    from arena.match import play_match
    from train.callbacks import LEARNER, play_evaluation

    cfg, run_dir = smoke_run
    spec = f"ppo:{run_dir / 'final_model.zip'}"
    corrected = dataclasses.replace(cfg, eval=dataclasses.replace(cfg.eval, luck_correction=True))
    plain_rows, _ = play_evaluation(cfg, spec)
    rows, values = play_evaluation(corrected, spec)
    assert [r[0] for r in rows] == [*cfg.eval.baselines, "field"]
    for (opponent, hands, est, _), (_, _, plain, _) in zip(rows[:-1], plain_rows):
        learner = make_agent(spec)
        learner.name = LEARNER
        want = play_match(cfg.env.game, [learner, opponent], hands=cfg.eval.hands, seed=cfg.run.seed + 1,
                          engine=cfg.eval.engine, luck_correction=True).estimates[LEARNER]
        assert hands == cfg.eval.hands and (est.mean, est.low, est.high) == (want.mean, want.low, want.high)
        assert values[f"eval/bb100_vs_{opponent}"] == est.mean
    assert any(r[2].mean != p[2].mean for r, p in zip(rows[:-1], plain_rows))


def test_a_resume_plays_again_the_evaluation_its_checkpoint_left_under_way(tmp_path):
    """A checkpoint taken while its step's evaluation was still being played in the background
    (the run stopped before the row was written) resumes by playing that evaluation first."""
    from train.callbacks import read_checkpoint_state
    from train.ppo import main

    run_dir = main(smoke(tmp_path, "eval.background=true"), progress=False)
    full = _eval_table(run_dir)
    # ckpt_1024 becomes the newest, taken (as if) while an evaluation at 1024 was under way.
    for suffix in (".zip", ".json"):
        (run_dir / "checkpoints" / f"ckpt_1536{suffix}").unlink()
    (run_dir / "final_model.zip").unlink()
    state = read_checkpoint_state(run_dir / "checkpoints" / "ckpt_1024.json")
    assert state["evaluation"] == {"last_timesteps": 768, "br_mark": 768, "submitted": 768}
    state["evaluation"]["submitted"] = 1024
    (run_dir / "checkpoints" / "ckpt_1024.json").write_text(json.dumps(state))
    from train.ppo import cli

    assert cli(["--resume", str(run_dir), "--no-progress"]) == 0
    rows = _eval_table(run_dir)
    steps = [int(r[0]) for r in rows[1:]]
    assert steps == sorted(steps) and steps.count(1024) == 3       # random, call, field at 1024
    assert [r for r in rows if r[0] != "1024"] == full              # the rest as the first run's


def test_a_new_run_starts_from_init_from_and_refuses_another_network(smoke_run, tmp_path, monkeypatch):
    # run.init_from: a new run's network (policy and value) is the model zip's, read without
    # unpickling; a zip of another network is refused in one line naming the option.
    import torch

    import train.ppo as ppo
    from agents.agent_file import zip_state
    from train.config import ConfigError
    from train.ppo import _init_weights, _new_model, main, training_env

    _, source_run = smoke_run
    source = source_run / "final_model.zip"
    cfg = smoke(tmp_path, "run.total_timesteps=512", "eval.every=0", f"run.init_from={source}")
    saved = zip_state(source)
    started = []

    def record(model, path):
        _init_weights(model, path)
        started.append({k: v.clone() for k, v in model.policy.state_dict().items()})

    monkeypatch.setattr(ppo, "_init_weights", record)
    main(cfg, command=["test"], progress=False)
    assert len(started) == 1 and started[0].keys() == saved.keys()
    assert all(torch.equal(started[0][k], saved[k]) for k in saved)

    other = smoke(tmp_path, "ppo.net_arch=[4]")
    venv = training_env(other)
    try:
        small = _new_model(other, venv, 0)
        small.save(tmp_path / "small.zip")
        refused = r"^run.init_from .*small.zip: not a model of this run's network"
        with pytest.raises(ConfigError, match=refused):
            _init_weights(_new_model(cfg, venv, 0), tmp_path / "small.zip")
    finally:
        venv.close()
    with pytest.raises(ConfigError, match="run.init_from must be a model zip that exists"):
        smoke(tmp_path, f"run.init_from={tmp_path / 'none.zip'}")


def test_warm_learned_responses_start_from_the_one_before(tmp_path, monkeypatch):
    # opponents.self_play.learned_br_warm: the first learned best response starts fresh, each
    # later one from the newest before it (its zip, kept beside its agent file).
    import arena.exploit
    from train.ppo import main

    asked = []
    real = arena.exploit.train_best_response
    monkeypatch.setattr(arena.exploit, "train_best_response",
                        lambda game, spec, folder, **kw: asked.append((Path(folder).name, kw["overrides"]))
                        or real(game, spec, folder, **kw))
    cfg = smoke(tmp_path, "env.game=soko_mini", "env.rules={deck_ranks: KA}",
                "opponents.self_play.learned_br=0.5", "opponents.self_play.learned_br_steps=256",
                "opponents.self_play.learned_br_warm=true", "opponents.self_play.weight=0.2",
                "eval.every=0", "run.total_timesteps=1536")
    run_dir = main(cfg, command=["test"], progress=False)
    snaps = run_dir / "snapshots"
    assert len(asked) >= 2
    assert asked[0][1] == []
    for (before, _), (name, overrides) in zip(asked, asked[1:]):
        assert overrides == [f"run.init_from={snaps / before / 'best_response.zip'}"], name
    newest = snaps / asked[-1][0]
    assert sorted(p.name for p in newest.iterdir()) == ["best_response.safetensors", "best_response.zip"]
