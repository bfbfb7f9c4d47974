"""The record of a training run that is killed and resumed: eval.csv, TensorBoard, the self-play
pool and the final model; resuming a finished run, a broken checkpoint, --set with --resume,
one-line usage errors, and env keyword typos. About 25 s on 2 cores."""

import csv
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_train import tb_tags

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "configs" / "smoke.yaml"


def eval_rows(run_dir: Path) -> list[tuple[int, str]]:
    """The finished rows of a run's eval.csv. Read while the run appends to it, so a line (the
    header too, on a loaded machine) may be cut short: such a row is not finished yet."""
    path = run_dir / "eval.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [(int(r["timesteps"]), r["opponent"]) for r in csv.DictReader(f)
                if r.get("seconds") and (r.get("timesteps") or "").isdigit()]


def checkpoint_steps(run_dir: Path) -> list[int]:
    """The steps of the complete checkpoints (model and state file)."""
    return sorted(int(p.stem.split("_")[1]) for p in (run_dir / "checkpoints").glob("ckpt_*.json"))


def listed_snapshots(run_dir: Path) -> list[str]:
    names = []
    for path in (run_dir / "checkpoints").glob("ckpt_*.json"):
        names += [s["path"] for s in json.loads(path.read_text())["pool"]["snapshots"]]
    return names


def folder_state(run_dir: Path) -> dict[str, tuple[float, str]]:
    return {str(p.relative_to(run_dir)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def train_cli(*args: str) -> list[str]:
    return [sys.executable, str(REPO / "train" / "ppo.py"), *args, "--no-progress"]


def test_a_run_killed_after_an_evaluation_past_its_checkpoint_resumes_with_a_clean_record(tmp_path):
    # Evaluate every rollout and checkpoint every third, so that evaluations land after the
    # newest checkpoint; snapshots every rollout with keep=2, so the pool turns over between
    # checkpoints and an old checkpoint's snapshots would be gone without retention.
    sets = ["--set", f"run.out_dir={tmp_path}", "--set", "eval.every=256",
            "--set", "run.checkpoint_every=768",
            "--set", "opponents.self_play.every=256", "--set", "run.total_timesteps=1792"]
    process = subprocess.Popen(train_cli("--config", str(SMOKE), *sets), cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    killed_at = None
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            runs = list(tmp_path.glob("smoke__*"))
            if runs:
                ckpts = [s for s in checkpoint_steps(runs[0]) if s > 0]
                evals = [t for t, _ in eval_rows(runs[0])]
                if ckpts and evals and max(evals) > max(ckpts):
                    process.send_signal(signal.SIGKILL)
                    killed_at = max(evals)
                    break
            time.sleep(0.02)
    finally:
        if process.poll() is None and killed_at is None:
            process.kill()
        process.wait(timeout=30)
    output = process.stdout.read().decode()
    assert killed_at is not None, output
    (run_dir,) = tmp_path.glob("smoke__*")
    checkpoint = max(checkpoint_steps(run_dir))
    assert max(t for t, _ in eval_rows(run_dir)) > checkpoint       # the case this test is about
    assert not (run_dir / "final_model.zip").exists()
    assert all((run_dir / "snapshots" / name).exists() for name in listed_snapshots(run_dir))

    out = subprocess.run(train_cli("--resume", str(run_dir)), cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "eval.csv: dropped" in out.stdout
    assert "warning" not in out.stderr                              # the pool came back whole

    rows = eval_rows(run_dir)
    assert len(rows) == len(set(rows))                              # no (timesteps, opponent) twice
    steps = [t for t, _ in rows]
    assert steps == sorted(steps)
    assert {o for t, o in rows if t == 1792} == {"random", "call", "field"}   # the final model
    assert all((run_dir / "snapshots" / name).exists() for name in listed_snapshots(run_dir))
    assert (run_dir / "final_model.zip").exists()
    assert max(checkpoint_steps(run_dir)) == 1792
    tags = tb_tags(run_dir / "tb")
    for tag in ("rollout/ep_rew_mean", "eval/bb100_vs_field"):
        assert tags[tag] == sorted(set(tags[tag])), tag              # each step logged once
    assert max(tags["eval/bb100_vs_field"]) == 1792


def test_the_last_checkpoint_and_eval_row_hold_the_final_model(smoke_run):
    from sb3_contrib import MaskablePPO

    cfg, run_dir = smoke_run
    total = cfg.run.total_timesteps
    final = MaskablePPO.load(run_dir / "final_model.zip")
    last = MaskablePPO.load(run_dir / "checkpoints" / f"ckpt_{total}.zip")
    for a, b in zip(final.policy.state_dict().values(), last.policy.state_dict().values()):
        assert (a == b).all()
    assert {o for t, o in eval_rows(run_dir) if t == total} == {"random", "call", "field"}


def test_evaluation_deals_do_not_depend_on_how_the_run_folder_is_spelled(smoke_run, tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    from train.callbacks import Evaluation

    cfg, run_dir = smoke_run
    model = MaskablePPO.load(run_dir / "final_model.zip")
    model.set_logger(Logger(None, []))
    (tmp_path / "checkpoints").mkdir()
    monkeypatch.chdir(tmp_path.parent)
    results = [Evaluation(cfg, folder).evaluate(model) for folder in (Path(tmp_path.name), tmp_path)]
    assert results[0]["field"].mean == results[1]["field"].mean
    assert results[0]["random"].mean == results[1]["random"].mean


def test_resume_of_a_smoke_run_exits_0_and_changes_nothing(smoke_run, tmp_path, capsys):
    from train.ppo import cli

    _, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    before = folder_state(run_dir)
    assert cli(["--resume", str(run_dir), "--no-progress"]) == 0
    assert "is finished" in capsys.readouterr().out
    assert folder_state(run_dir) == before


def test_resume_falls_back_past_a_broken_newest_checkpoint(smoke_run, tmp_path, capsys):
    from train.ppo import cli

    cfg, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    newest, older = max(checkpoint_steps(run_dir)), sorted(checkpoint_steps(run_dir))[-2]
    (run_dir / "checkpoints" / f"ckpt_{newest}.zip").write_bytes(b"PK\x03\x04 not a zip any more")
    total = cfg.run.total_timesteps + 256
    assert cli(["--resume", str(run_dir), "--set", f"run.total_timesteps={total}", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"ckpt_{newest}.zip cannot be loaded" in captured.err
    assert f"resuming from ckpt_{older}.zip" in captured.err
    assert f"run.total_timesteps {cfg.run.total_timesteps!r} -> {total!r}" in captured.out
    assert (run_dir / "checkpoints" / f"ckpt_{newest}.zip.broken").exists()
    assert max(checkpoint_steps(run_dir)) == total
    assert "total_timesteps: %d" % total in (run_dir / "config.yaml").read_text()   # --set recorded
    assert "--set run.total_timesteps" in (run_dir / "command.txt").read_text().splitlines()[-1]
    rows = eval_rows(run_dir)
    assert len(rows) == len(set(rows)) and [t for t, _ in rows] == sorted(t for t, _ in rows)


def test_set_with_resume_refuses_what_the_checkpoint_fixes(smoke_run, tmp_path, capsys):
    from train.ppo import cli

    _, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    before = folder_state(run_dir)
    assert cli(["--resume", str(run_dir), "--set", "ppo.learning_rate=1e-3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set ppo.learning_rate cannot change on --resume" in err
    assert folder_state(run_dir) == before


def test_a_run_without_a_checkpoint_says_it_cannot_resume(tmp_path, capsys):
    from train.ppo import cli

    (tmp_path / "checkpoints").mkdir()
    shutil.copy(SMOKE, tmp_path / "config.yaml")
    assert cli(["--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no complete checkpoint" in err and "start it again with --config" in err


@pytest.mark.parametrize("args", [[], ["--config", str(SMOKE), "--seed", "x"], ["--bogus"],
                                  ["--resume", "somewhere", "--config", str(SMOKE)],
                                  ["--config", str(SMOKE), "--set", "ppo.n_steps=many"],
                                  ["--resume", "nowhere"]],
                         ids=["nothing", "seed", "unknown", "resume+config", "bad-set", "no-run"])
def test_usage_errors_exit_2_with_one_line(args):
    out = subprocess.run([sys.executable, str(REPO / "train" / "ppo.py"), *args], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "rror: Error" not in out.stderr, out.stderr
    assert out.stdout == ""


def test_env_keyword_typos_name_the_env_arguments_and_the_rules_fields():
    from envs import SingleAgentEnv, soko_v0

    with pytest.raises(ValueError) as excinfo:
        soko_v0.env(num_player=3)
    message = str(excinfo.value)
    assert "num_player (did you mean num_players?)" in message
    assert "arguments are num_players, render_mode" in message and "rules fields are name" in message
    with pytest.raises(ValueError,
                       match=r"learner_sat \(did you mean learner_seat\?\).*learner_seat.*bring_in"):
        SingleAgentEnv("soko", learner_sat=0)


def test_runs_started_in_the_same_second_get_folders_of_their_own(tmp_path, monkeypatch):
    """Two runs of one config and seed started in the same second (a sweep, two shells): the
    second gets a suffix, also when the first creates its folder between the second's look and
    its mkdir (simulated: nothing ever seems to exist)."""
    from train.config import Config
    from train.ppo import new_run_dir

    cfg = Config()
    cfg.run.out_dir = str(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20261204-120000")
    first = new_run_dir(cfg)
    monkeypatch.setattr(Path, "exists", lambda self: False)
    second, third = new_run_dir(cfg), new_run_dir(cfg)
    assert first.is_dir() and second.is_dir() and third.is_dir()
    assert len({first, second, third}) == 3
    assert second.name == first.name + "-2" and third.name == first.name + "-3"
