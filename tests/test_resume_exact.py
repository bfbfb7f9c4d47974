"""An exact --resume: a smoke run killed with SIGKILL at a random point and resumed ends with the
weights and the eval.csv of the run that never stopped, and the
generator states a checkpoint keeps are JSON that restore what they captured. About 30 s."""

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.test_train import SMOKE, smoke

REPO = Path(__file__).resolve().parent.parent


def policy_weights(path: Path) -> dict:
    from sb3_contrib import MaskablePPO

    return {k: v.numpy() for k, v in MaskablePPO.load(path).policy.state_dict().items()}


def eval_rows(run_dir: Path) -> list[list[str]]:
    """eval.csv without its last column, the wall seconds (the one thing that is not replayed)."""
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = [row[:-1] for row in csv.reader(f)]
    assert rows[0] == ["timesteps", "opponent", "hands", "bb100", "ci95_low", "ci95_high"]
    return rows


def kill_during(out: Path, overrides: list[str], *, after_checkpoint: int, delay: float) -> Path:
    """Start a smoke run in its own process, SIGKILL it ``delay`` seconds after its checkpoint at
    ``after_checkpoint`` timesteps is on disk; returns its run folder."""
    cmd = [sys.executable, "train/ppo.py", "--config", str(SMOKE), "--set", f"run.out_dir={out}",
           "--no-progress"]
    for item in overrides:
        cmd += ["--set", item]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while not list(out.glob(f"*/checkpoints/ckpt_{after_checkpoint}.json")):
            assert proc.poll() is None, f"the run ended before its checkpoint: {proc.stderr.read()!r}"
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            time.sleep(0.005)
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
    (run_dir,) = out.iterdir()
    return run_dir


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> Path:
    """A smoke run that never stopped: what a resumed one must end as."""
    from train.ppo import main

    return main(smoke(tmp_path_factory.mktemp("straight")), command=["python"], progress=False)


def test_a_run_killed_at_a_random_point_resumes_to_the_same_weights_and_eval_csv(tmp_path, straight):
    from train.ppo import cli

    overrides = []
    chooser = random.Random()
    after, delay = chooser.choice([0, 512]), chooser.uniform(0.0, 0.3)
    where = f"killed {delay:.2f} s after the checkpoint at {after} timesteps"
    run_dir = kill_during(tmp_path / "killed", overrides, after_checkpoint=after, delay=delay)
    assert not (run_dir / "final_model.zip").exists(), f"{where}: the run had finished"
    newest = max(int(p.stem.split("_")[1]) for p in (run_dir / "checkpoints").glob("ckpt_*.json"))
    assert cli(["--resume", str(run_dir), "--no-progress"]) == 0

    a, b = policy_weights(straight / "final_model.zip"), policy_weights(run_dir / "final_model.zip")
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(a[key], b[key]), f"{where}, resumed from {newest}: {key} differs"
    assert eval_rows(run_dir) == eval_rows(straight), where
    assert len(eval_rows(straight)) > 1


def test_a_run_killed_before_its_first_eval_row_was_flushed_resumes_with_the_header(tmp_path, straight):
    """A kill between ``eval.csv``'s creation and its first flush leaves it empty (the smoke
    run's first evaluation is at step 768, after the checkpoint at 512): the resumed run writes
    the header and every row, as the run that never stopped."""
    from train.ppo import cli

    run_dir = kill_during(tmp_path / "killed", [], after_checkpoint=512, delay=0.0)
    newest = max(int(p.stem.split("_")[1]) for p in (run_dir / "checkpoints").glob("ckpt_*.json"))
    assert newest == 512, f"the run got to its checkpoint at {newest} before the kill"
    (run_dir / "eval.csv").write_text("")
    assert cli(["--resume", str(run_dir), "--no-progress"]) == 0
    assert eval_rows(run_dir) == eval_rows(straight)


def test_periodic_checkpoints_are_exact_and_keep_their_generators(smoke_run):
    _, run_dir = smoke_run
    for path in (run_dir / "checkpoints").glob("ckpt_*.json"):
        state = json.loads(path.read_text())
        assert state["exact"] is True
        assert set(state["generators"]) >= {"python", "numpy", "torch"}
        assert set(state["evaluation"]) == {"last_timesteps", "br_mark", "submitted"}


def test_the_generators_state_round_trips_through_json():
    import torch

    from train import rng_state

    state = json.loads(json.dumps(rng_state.capture()))
    first = (random.random(), np.random.random(), torch.rand(3))
    random.seed(99)
    np.random.seed(99)
    torch.manual_seed(99)
    rng_state.restore(state)
    again = (random.random(), np.random.random(), torch.rand(3))
    assert first[:2] == again[:2] and torch.equal(first[2], again[2])
    with pytest.raises(ValueError, match="not a generator state"):
        rng_state.restore({"python": {}})


def test_the_hands_after_a_checkpoint_are_dealt_from_its_own_seed():
    from train.callbacks import hands_seed

    assert hands_seed(7, 0) == 7
    seeds = {hands_seed(7, t) for t in range(1, 2000)}
    assert len(seeds) == 1999 and hands_seed(7, 512) != hands_seed(8, 512)
