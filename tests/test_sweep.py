"""train.sweep without Ray: the grid, bad input (one line, exit 2, before Ray starts), and the
summary's numbers (means, Student-t intervals over seeds, the winner and its Welch margin)."""

import csv
import json
import math

import pytest
from scipy import stats

from tests.test_train import SMOKE
from train.sweep import append_metrics, cli, grid_points, parse_grid, read_metrics, summarize


def test_the_grid_is_the_product_of_its_lists():
    points = grid_points(parse_grid(["ppo.ent_coef=0.01,0.05", "ppo.n_epochs=2,4"]))
    assert [name for name, _ in points] == ["ent_coef=0.01,n_epochs=2", "ent_coef=0.01,n_epochs=4",
                                           "ent_coef=0.05,n_epochs=2", "ent_coef=0.05,n_epochs=4"]
    assert points[1][1] == ["ppo.ent_coef=0.01", "ppo.n_epochs=4"]
    assert grid_points([]) == [("base", [])]


@pytest.mark.parametrize("argv, words", [
    (["--grid", "ppo.ent_coef"], "write KEY=VALUE1,VALUE2"),
    (["--grid", "ppo.ent_coef=0.01,"], "an empty value"),
    (["--grid", "ppo.ent_coef=1", "--grid", "ppo.ent_coef=2"], "given twice"),
    (["--grid", "ppo.no_such_key=1"], "no_such_key"),
    (["--grid", "ppo.ent_coef=lots"], "ent_coef"),
    (["--seeds", "1", "1"], "a seed is given twice"),
    (["--seeds", "x"], "invalid int value"),
    (["--cpus-per-trial", "0"], "must be positive"),
    (["--address", "127.0.0.1:1"], "nothing answers there"),
    (["--cpus-per-trial", "10000"], "a trial runs on one node, and the largest node of this cluster has"),
], ids=["no-equals", "empty", "twice", "unknown-key", "bad-value", "seed-twice", "seed-not-int", "cpus",
        "no-cluster", "cpus-beyond-any-node"])
def test_bad_input_is_one_line_and_exit_2(argv, words, tmp_path, capsys):
    try:
        code = cli(["--config", str(SMOKE), "--out", str(tmp_path / "sweep"), *argv])
    except SystemExit as exc:   # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "sweep").exists()


def test_an_out_folder_inside_a_file_is_one_line_before_ray_starts(tmp_path, capsys, monkeypatch):
    import arena.cluster

    def never(address):
        raise AssertionError("Ray started before --out was checked")

    monkeypatch.setattr(arena.cluster, "connect", never)
    (tmp_path / "a_file").write_text("")
    out = tmp_path / "a_file" / "sweep"
    assert cli(["--config", str(SMOKE), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"config error: --out: cannot make the folder {out / 'runs'}: {tmp_path / 'a_file'} is a "
                   f"file, not a folder\n")


def write_trial(folder, rows):
    folder.mkdir(parents=True)
    with (folder / "metrics.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
        f.write('{"timesteps": 99, "eval/bb')   # a line cut short by a kill: skipped


def test_the_summary_gives_means_intervals_and_the_winner(tmp_path):
    finals = {"a": [10.0, 14.0, 12.0], "b": [1.0, 3.0, 2.0]}
    trials = []
    for point, values in finals.items():
        for seed, value in enumerate(values):
            run_dir = tmp_path / "runs" / f"{point}__s{seed}"
            write_trial(run_dir, [{"timesteps": 100, "eval/bb100_vs_field": 0.0, "eval/bb100_vs_call": 5.0},
                                  {"timesteps": 200, "eval/bb100_vs_field": -50.0},    # replaced below:
                                  {"timesteps": 200, "eval/bb100_vs_field": value,     # a step reported again
                                   "eval/bb100_vs_field_ci95_low": value - 1, "eval/seconds": 3.0}])
            trials.append({"name": point, "seed": seed, "run_dir": str(run_dir)})
    assert [r["timesteps"] for r in read_metrics(tmp_path / "runs" / "a__s0")] == [100, 200]
    summary = summarize(tmp_path, trials)
    assert summary["winner"] == "a"
    rows = {(r["point"], r["metric"]): r for r in csv.DictReader((tmp_path / "summary.csv").open())}
    assert set(rows) == {("a", "eval/bb100_vs_field"), ("b", "eval/bb100_vs_field")}   # no bounds, no seconds
    row = rows[("a", "eval/bb100_vs_field")]
    half = stats.t.ppf(0.975, 2) * stats.tstd(finals["a"]) / math.sqrt(3)
    assert float(row["mean"]) == pytest.approx(12.0)
    assert float(row["ci95_low"]) == pytest.approx(12.0 - half, abs=1e-3)
    assert float(row["ci95_high"]) == pytest.approx(12.0 + half, abs=1e-3)
    margin = summary["margin"]
    assert margin["over"] == "b" and margin["difference"] == pytest.approx(10.0)
    welch = stats.ttest_ind(finals["a"], finals["b"], equal_var=False).confidence_interval(0.95)
    assert (margin["low"] == pytest.approx(welch.low, rel=0.05)
            and margin["high"] == pytest.approx(welch.high, rel=0.05))
    text = (tmp_path / "summary.md").read_text()
    assert "a wins on eval/bb100_vs_field" in text.replace("**", "") and "; separated at 95%" in text
    assert (tmp_path / "curves.png").stat().st_size > 0
    assert summarize(tmp_path, trials, mode="min")["winner"] == "b"
    # One seed a point: no interval; empty bounds in the CSV and n/a in the table, never "nan".
    one = tmp_path / "one"
    summarize(one, [t for t in trials if t["seed"] == 0])
    rows = list(csv.DictReader((one / "summary.csv").open()))
    assert [(r["ci95_low"], r["ci95_high"]) for r in rows] == [("", ""), ("", "")]
    assert "nan" not in (one / "summary.csv").read_text() + (one / "summary.md").read_text()


def test_metrics_lines_are_strict_json_and_read_back_with_nan(tmp_path):
    append_metrics(tmp_path, 100, {"eval/bb100_vs_call": 5.0, "eval/bb100_vs_call_ci95_low": math.nan})
    append_metrics(tmp_path, 200, {"eval/bb100_vs_call": 6.5, "eval/bb100_vs_call_ci95_low": 1.0})
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    first = json.loads(lines[0], parse_constant=lambda name: pytest.fail(f"{name} in metrics.jsonl"))
    assert first == {"timesteps": 100, "eval/bb100_vs_call": 5.0, "eval/bb100_vs_call_ci95_low": None}
    rows = read_metrics(tmp_path)
    assert [r["timesteps"] for r in rows] == [100, 200]
    low = [r["eval/bb100_vs_call_ci95_low"] for r in rows]
    assert math.isnan(low[0]) and low[1] == 1.0
