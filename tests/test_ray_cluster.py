"""Ray on a cluster of two nodes on this machine (``ray.cluster_utils.Cluster``, one CPU each): a
tournament and a local best response played by Ray actors equal the one-process results bit
for bit; a two-trial sweep of configs/smoke.yaml finishes with its summary, each trial a normal
run; and when the node running a trial is lost mid-run, the trial resumes from its checkpoint
on another node and ends with the weights of an uninterrupted run. Each cluster is shut down
after its tests; every wait is bounded. About 3 minutes on 2 cores."""

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402  (after the skip: ray is optional)

from tests.test_resume_exact import policy_weights  # noqa: E402
from tests.test_train import SMOKE, smoke  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO), "RAY_DEDUP_LOGS": "0"}


def wait_for(condition, seconds: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the sweep ended (code {proc.returncode}) before {what}: "
                                 f"{proc.stdout.read()[-3000:]}")
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def two_nodes():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes(timeout=60)
    try:
        yield cluster
    finally:
        cluster.shutdown()


def sweep(out: Path, address: str, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "train.sweep", "--config", str(SMOKE), "--address", address,
           "--out", str(out), *args]
    return subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def test_a_tournament_and_a_local_best_response_on_the_cluster_equal_one_process(two_nodes):
    from agents.registry import make_agent
    from arena.exploit import lower_bound
    from arena.lbr import LBRAgent
    from arena.tournament import TournamentConfig, run_tournament

    cfg = dict(game="soko", agents=["tag", "random", "call"], hands=120, seed=5, progress=False, write=False)
    local = run_tournament(TournamentConfig(workers=1, **cfg))
    on_ray = run_tournament(TournamentConfig(ray=two_nodes.address, **cfg))
    assert len(local.matches) == len(on_ray.matches) == 3
    for a, b in zip(local.matches, on_ray.matches):
        assert a.agents == b.agents
        assert np.array_equal(a.group_results, b.group_results)
        assert np.array_equal(a.raw_group_results, b.raw_group_results)
    assert local.ranking() == on_ray.ranking()

    target = make_agent("tag")
    runs = [lower_bound("soko", LBRAgent(target, samples=10), target, hands=24, seed=3, **kw)
            for kw in ({"workers": 1}, {"ray": two_nodes.address})]
    assert runs[0]["match"] == runs[1]["match"]
    assert runs[0]["exploitability_bb_per_100"] == runs[1]["exploitability_bb_per_100"]


def test_a_two_trial_sweep_of_the_smoke_config_finishes_with_its_summary(two_nodes, tmp_path, smoke_run):
    proc = sweep(tmp_path / "sweep", two_nodes.address, "--seeds", "0", "1")
    try:
        out, _ = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, out[-3000:]
    folder = tmp_path / "sweep"
    rows = list(csv.DictReader((folder / "summary.csv").open()))
    field = [r for r in rows if r["metric"] == "eval/bb100_vs_field"]
    assert len(field) == 1 and field[0]["point"] == "base" and field[0]["seeds"] == "2"
    per_seed = dict(item.split(":") for item in field[0]["per_seed"].split())
    assert set(per_seed) == {"0", "1"}
    low, mean, high = float(field[0]["ci95_low"]), float(field[0]["mean"]), float(field[0]["ci95_high"])
    assert low <= mean <= high
    assert mean == pytest.approx(sum(float(v) for v in per_seed.values()) / 2, abs=1e-3)
    assert "wins on eval/bb100_vs_field" in (folder / "summary.md").read_text()
    assert (folder / "curves.png").stat().st_size > 0
    # A trial is a normal run: seed 0's is the smoke run, weights and evaluations alike.
    _, plain = smoke_run
    trial = folder / "runs" / "base__s0"
    a, b = policy_weights(plain / "final_model.zip"), policy_weights(trial / "final_model.zip")
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert [r[:-1] for r in csv.reader((trial / "eval.csv").open())] == \
        [r[:-1] for r in csv.reader((plain / "eval.csv").open())]


def test_a_trial_whose_node_dies_resumes_on_another_node_to_the_same_weights(tmp_path):
    from train.ppo import main

    # Long enough (16 checkpoints) that the trial cannot finish between the first checkpoint and
    # the node's loss, which comes before a second node exists: the trial has nowhere else to go.
    overrides = ["run.total_timesteps=8192"]
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        first = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(timeout=60)
        proc = sweep(tmp_path / "sweep", cluster.address, "--seeds", "0", *[f"--set={o}" for o in overrides])
        try:
            run_dir = tmp_path / "sweep" / "runs" / "base__s0"
            wait_for(lambda: (run_dir / "checkpoints" / "ckpt_512.json").exists(), 150,
                     "checkpoint at 512", proc)
            cluster.remove_node(first, allow_graceful=False)
            second = cluster.add_node(num_cpus=1)
            out, _ = proc.communicate(timeout=180)
        finally:
            proc.kill()
    finally:
        cluster.shutdown()
    assert proc.returncode == 0, out[-3000:]
    attempts = (run_dir / "attempts.txt").read_text().splitlines()
    assert len(attempts) == 2, attempts
    assert attempts[0].endswith(first.node_id) and attempts[1].endswith(second.node_id)
    assert "--resume" in (run_dir / "command.txt").read_text().splitlines()[-1]

    straight = main(smoke(tmp_path / "straight", *overrides), command=["python"], progress=False)
    a, b = policy_weights(straight / "final_model.zip"), policy_weights(run_dir / "final_model.zip")
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert [r[:-1] for r in csv.reader((run_dir / "eval.csv").open())] == \
        [r[:-1] for r in csv.reader((straight / "eval.csv").open())]
