"""A grid of config overrides x seeds as Ray Tune trials, each one a normal training run.

    python -m train.sweep --config configs/soko_ppo.yaml --seeds 0 1 2 --grid ppo.ent_coef=0.01,0.05
    python -m train.sweep --config configs/smoke.yaml --seeds 0 1 --address ray://head:10001

Every grid point (the product of the ``--grid KEY=V1,V2,...`` lists, plus the ``--set``
overrides common to all) runs once per seed. A trial is ``train.ppo.main`` in the run folder
``<sweep>/runs/<point>__s<seed>/`` (config.yaml, TensorBoard, checkpoints, eval.csv: a run like
any other, ``--resume`` and ``ppo:<sweep>/runs/.../final_model.zip`` work on it). Each evaluation
is reported to Tune as it happens (``eval/*``: bb/100 against each baseline with its bounds,
LBR and exact exploitability when the config asks for them) with a Tune checkpoint that names
the run folder and its step. When a trial fails (its node lost, its process killed), Tune starts
it again (``--max-failures``) and it goes on with ``--resume`` from the newest of its own
checkpoints, exactly (``train/ppo.py``): the run folder must be on storage every node sees.

At the end the sweep writes, in ``<sweep>/``:

=================== =========================================================================
``summary.md``      per grid point, the mean over seeds of each final ``eval/*`` value with its
                    95% Student-t interval, the per-seed values, and which point wins on
                    ``--metric`` and by how much (the difference with its Welch 95% interval)
``summary.csv``     the same numbers, one row per (point, metric)
``curves.png``      each bb/100 curve, mean over seeds with its 95% band, one line per point
``sweep.json``      the command, the grid, the trials and their run folders
=================== =========================================================================

A trial's run folder also holds ``metrics.jsonl`` (what it reported to Tune, strict JSON: a
value with no number, such as an interval's bound from too few deals, is null) and
``attempts.txt`` (when and on which Ray node each attempt started).

Without ``--address`` it starts a local Ray instance sized to the machine (every core); with
one it joins that cluster (``arena.cluster.connect``). The code must be importable on every
node at the same path (this checkout is put on the workers' PYTHONPATH). A bad argument or
config stops with one line and exit code 2 before any trial starts.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envs.cli import OneLineParser
from envs.files import (
    atomic_write_bytes,
    atomic_write_text,
    check_folder,
    finite_or_none,
    make_folder,
    write_json,
)
from train.checks import checked_config_from_dict, load_checked_config
from train.config import ConfigError, read_yaml

__all__ = ["cli", "grid_points", "main", "parse_grid", "run_trial", "summarize"]

# --------------------------------------------------------------------------------------------
# The grid


def parse_grid(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``["ppo.ent_coef=0.01,0.05"]`` -> ``[("ppo.ent_coef", ["0.01", "0.05"])]``; ConfigError
    for an item without ``=``, an empty value or a key given twice.

    >>> parse_grid(["ppo.ent_coef=0.01,0.05", "ppo.n_epochs=4"])
    [('ppo.ent_coef', ['0.01', '0.05']), ('ppo.n_epochs', ['4'])]
    """
    out: list[tuple[str, list[str]]] = []
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip()
        parts = [v.strip() for v in values.split(",")]
        if not eq or not key:
            raise ConfigError(f"--grid {item!r}: write KEY=VALUE1,VALUE2 (e.g. ppo.ent_coef=0.01,0.05)")
        if any(not v for v in parts):
            raise ConfigError(f"--grid {item!r}: an empty value")
        if key in [k for k, _ in out]:
            raise ConfigError(f"--grid {key} is given twice; give its values in one list")
        out.append((key, parts))
    return out


def grid_points(grid: Sequence[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """Every combination of the grid's values as ``(name, overrides)``; the name is the
    assignments without their table (``ent_coef=0.01``), or ``base`` for an empty grid.

    >>> grid_points([("ppo.ent_coef", ["0.01", "0.05"])])
    [('ent_coef=0.01', ['ppo.ent_coef=0.01']), ('ent_coef=0.05', ['ppo.ent_coef=0.05'])]
    """
    if not grid:
        return [("base", [])]
    keys = [k for k, _ in grid]
    points = []
    for values in itertools.product(*[v for _, v in grid]):
        overrides = [f"{k}={v}" for k, v in zip(keys, values)]
        name = ",".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in zip(keys, values))
        points.append((name, overrides))
    return points


def _folder_name(point: str, seed: int) -> str:
    """A run folder's name for a grid point and seed, with no ``=`` or ``,`` (an agent spec's
    separators: ``ppo:<folder>/final_model.zip`` must parse).

    >>> _folder_name("ent_coef=0.01,n_epochs=4", 2)
    'ent_coef-0.01+n_epochs-4__s2'
    """
    safe = "".join(c if c.isalnum() or c in ".-_" else "-" if c == "=" else "+" if c == "," else "_"
                   for c in point)
    return f"{safe}__s{seed}"


# --------------------------------------------------------------------------------------------
# One trial (runs in a Ray worker)


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """The evaluations a trial reported (``metrics.jsonl``), one per step: a step evaluated
    again after a resume keeps its last record (the same values: the resume is exact)."""
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return []
    by_step: dict[int, dict] = {}
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:   # a line cut short by a killed process
            continue
        if isinstance(row, dict) and isinstance(row.get("timesteps"), int):
            by_step[row["timesteps"]] = {k: math.nan if v is None else v for k, v in row.items()}
    return [by_step[k] for k in sorted(by_step)]


def append_metrics(run_dir: Path, timesteps: int, values: dict) -> dict[str, Any]:
    """Add one evaluation to ``metrics.jsonl`` as a line of strict JSON (a NaN, such as an
    interval's bound from too few deals, as null; :func:`read_metrics` gives NaN back), on the
    disk before it returns; the row (NaN kept) for Tune."""
    row = {"timesteps": int(timesteps), **{k: float(v) for k, v in values.items()}}
    with (Path(run_dir) / "metrics.jsonl").open("a") as f:
        f.write(json.dumps(finite_or_none(row), allow_nan=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return row


def run_trial(params: dict[str, Any]) -> None:
    """A Tune trial: the training run ``params`` names, new or resumed from its run folder's
    newest checkpoint; each evaluation goes to ``metrics.jsonl`` and to Tune."""
    import tempfile

    import ray
    from ray import tune

    from train.callbacks import latest_checkpoint
    from train.ppo import RunFinished
    from train.ppo import main as train_main

    run_dir = Path(params["run_dir"])

    def report(timesteps: int, values: dict) -> None:
        row = append_metrics(run_dir, timesteps, values)
        with tempfile.TemporaryDirectory() as tmp:
            pointer = {"run_dir": str(run_dir), "timesteps": int(timesteps)}
            (Path(tmp) / "run.json").write_text(json.dumps(pointer) + "\n")
            tune.report(row, checkpoint=tune.Checkpoint.from_directory(tmp))

    command = ["python", "-m", "train.sweep", "(trial)", params["name"], f"seed={params['seed']}"]
    attempt = f"{time.strftime('%Y-%m-%d %H:%M:%S')} node {ray.get_runtime_context().get_node_id()}\n"
    if latest_checkpoint(run_dir / "checkpoints") is not None:
        with (run_dir / "attempts.txt").open("a") as f:   # where each attempt ran
            f.write(attempt)
        cfg = checked_config_from_dict(read_yaml(run_dir / "config.yaml"))
        try:
            train_main(cfg, resume=run_dir, command=command + ["--resume"], progress=False,
                       on_evaluation=report)
        except RunFinished:
            rows = read_metrics(run_dir)
            if rows:
                tune.report(rows[-1])
        return
    if run_dir.exists():   # an attempt that stopped before its first checkpoint: set it aside
        k = 1
        while run_dir.with_name(f"{run_dir.name}.failed-{k}").exists():
            k += 1
        run_dir.rename(run_dir.with_name(f"{run_dir.name}.failed-{k}"))
    cfg = load_checked_config(params["config"], overrides=params["overrides"], seed=params["seed"])
    run_dir.mkdir(parents=True)
    (run_dir / "attempts.txt").write_text(attempt)
    train_main(cfg, run_dir=run_dir, command=command, progress=False, on_evaluation=report,
               allow_files=("attempts.txt",))


# --------------------------------------------------------------------------------------------
# The summary


def _interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t interval over seeds (NaN bounds for one seed)."""
    from arena.stats import t_quantile

    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(0.95, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """mean(a) - mean(b) with its Welch 95% interval (NaN bounds below two seeds each)."""
    from scipy.stats import t as student_t

    diff = sum(a) / len(a) - sum(b) / len(b)
    if len(a) < 2 or len(b) < 2:
        return diff, math.nan, math.nan
    va = sum((x - sum(a) / len(a)) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - sum(b) / len(b)) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff, diff
    df = (va + vb) ** 2 / ((va ** 2) / (len(a) - 1) + (vb ** 2) / (len(b) - 1))   # Welch-Satterthwaite
    half = float(student_t.ppf(0.975, df)) * se
    return diff, diff - half, diff + half


def _fmt(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.2f}"


def _final_metrics(rows: list[dict]) -> list[str]:
    """The metrics a summary shows: each evaluation value but its bounds and timings."""
    keys: list[str] = []
    for row in rows:
        for k in row:
            if (k.startswith("eval/") and not k.endswith(("_ci95_low", "_ci95_high", "seconds"))
                    and k not in keys):
                keys.append(k)
    return keys


def summarize(sweep_dir: Path, trials: Sequence[dict], *, metric: str = "eval/bb100_vs_field",
              mode: str = "max") -> dict[str, Any]:
    """Write ``summary.md``, ``summary.csv`` and ``curves.png`` for ``trials`` (their ``name``,
    ``seed`` and ``run_dir``); returns the summary (``points``, ``winner``, ``margin``)."""
    sweep_dir = make_folder(sweep_dir)
    curves: dict[str, dict[int, list[dict]]] = {}
    finals: dict[str, dict[int, dict]] = {}
    missing: list[str] = []
    for trial in trials:
        rows = read_metrics(Path(trial["run_dir"]))
        if not rows:
            missing.append(f"{trial['name']} seed {trial['seed']}")
            continue
        curves.setdefault(trial["name"], {})[trial["seed"]] = rows
        finals.setdefault(trial["name"], {})[trial["seed"]] = rows[-1]
    points = [t["name"] for t in trials if t["name"] in finals]
    points = list(dict.fromkeys(points))
    metrics = _final_metrics([r for per in finals.values() for r in per.values()])
    table: dict[str, dict[str, dict]] = {}
    for point in points:
        table[point] = {}
        for m in metrics:
            values = [finals[point][s][m] for s in sorted(finals[point]) if m in finals[point][s]]
            if values:
                mean, low, high = _interval(values)
                table[point][m] = {"n": len(values), "mean": mean, "low": low, "high": high,
                                   "seeds": {s: finals[point][s][m] for s in sorted(finals[point])
                                             if m in finals[point][s]}}
    ranked = sorted((p for p in points if metric in table[p]), key=lambda p: table[p][metric]["mean"],
                    reverse=mode == "max")
    summary: dict[str, Any] = {"points": table, "metric": metric, "mode": mode, "missing": missing,
                               "winner": ranked[0] if ranked else None, "margin": None}
    verdict = f"no trial reported {metric}"
    if ranked:
        best = ranked[0]
        verdict = f"**{best}** wins on {metric} ({mode}): {table[best][metric]['mean']:+.2f}"
        if len(ranked) > 1:
            second = ranked[1]
            a = list(table[best][metric]["seeds"].values())
            b = list(table[second][metric]["seeds"].values())
            diff, low, high = _welch(a, b)
            summary["margin"] = {"over": second, "difference": diff, "low": low, "high": high}
            separated = not math.isnan(low) and (low > 0 or high < 0)
            verdict += (f", ahead of {second} by {diff:+.2f} (95% interval [{_fmt(low)}, {_fmt(high)}]; "
                        f"{'separated' if separated else 'not separated'} at 95% over "
                        f"{len(a)} and {len(b)} seeds)")
    summary["verdict"] = verdict.replace("**", "")

    # summary.md
    intro = "Final evaluation of each trial; mean over seeds with its 95% Student-t interval [low, high]."
    lines = ["# Sweep summary", "", intro, ""]
    short = [m.removeprefix("eval/") for m in metrics]
    if not metrics:
        short = ["(no evaluation)"]
    lines.append("| point | seeds | " + " | ".join(short) + " |")
    lines.append("|---|---|" + "---|" * len(metrics))
    for point in points:
        cells = []
        for m in metrics:
            c = table[point].get(m)
            cells.append("" if c is None else f"{c['mean']:+.2f} [{_fmt(c['low'])}, {_fmt(c['high'])}]")
        lines.append(f"| {point} | {len(finals[point])} | " + " | ".join(cells) + " |")
    lines += ["", "Per seed:", "", "| point | seed | " + " | ".join(short) + " |",
              "|---|---|" + "---|" * len(metrics)]
    for point in points:
        for seed in sorted(finals[point]):
            row = finals[point][seed]
            lines.append(f"| {point} | {seed} | "
                         + " | ".join(_fmt(row[m]) if m in row else "" for m in metrics)
                         + " |")
    lines += ["", verdict + ".", ""]
    if missing:
        lines += [f"No evaluation from: {', '.join(missing)}.", ""]
    lines += ["![curves](curves.png)", ""]
    atomic_write_text(sweep_dir / "summary.md", "\n".join(lines))

    # summary.csv
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["point", "metric", "seeds", "mean", "ci95_low", "ci95_high", "per_seed"])
    for point in points:
        for m in metrics:
            c = table[point].get(m)
            if c:
                cells = [f"{v:.4f}" if math.isfinite(v) else "" for v in (c["mean"], c["low"], c["high"])]
                writer.writerow([point, m, c["n"], *cells,    # one seed: no interval, empty bounds
                                 " ".join(f"{s}:{v:.4f}" for s, v in c["seeds"].items())])
    atomic_write_text(sweep_dir / "summary.csv", out.getvalue())
    _plot(sweep_dir / "curves.png", curves, [m for m in metrics if "bb100" in m] or metrics)
    return summary


def _plot(path: Path, curves: dict[str, dict[int, list[dict]]], metrics: list[str]) -> None:
    """One panel per metric: each point's mean over seeds per step, with its 95% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not metrics:
        return
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.4), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        for point, per_seed in curves.items():
            steps = sorted({r["timesteps"] for rows in per_seed.values() for r in rows if m in r})
            means, lows, highs = [], [], []
            for step in steps:
                vals = [r[m] for rows in per_seed.values() for r in rows if r["timesteps"] == step and m in r]
                mean, low, high = _interval(vals)
                means.append(mean)
                lows.append(mean if math.isnan(low) else low)
                highs.append(mean if math.isnan(high) else high)
            (line,) = ax.plot(steps, means, marker="o", ms=3, label=f"{point} ({len(per_seed)} seeds)")
            ax.fill_between(steps, lows, highs, color=line.get_color(), alpha=0.2)
        ax.set_title(m.removeprefix("eval/"), fontsize=9)
        ax.set_xlabel("timesteps")
        ax.axhline(0, color="grey", lw=0.5)
    axes[0][0].set_ylabel("bb/100")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


# --------------------------------------------------------------------------------------------
# The command


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = OneLineParser(hint=" (see --help)", prog="python -m train.sweep",
                           description="A grid of overrides x seeds as Ray Tune trials.",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog="Writes <out>/runs/<point>__s<seed>/ (one training run each), summary.md, "
                                  "summary.csv, curves.png.\nA bad argument or config exits with code 2.")
    parser.add_argument("--config", required=True, help="a YAML experiment, e.g. configs/soko_ppo.yaml")
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="seeds (default: the config's run.seed)")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                        help="a config key and its values (repeatable: the product is the grid)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="an override for every trial (repeatable)")
    parser.add_argument("--address", default=None,
                        help="a running Ray cluster (auto, HOST:PORT or ray://HOST:10001); default: a local "
                             "Ray instance sized to this machine")
    parser.add_argument("--out", default=None, help="the sweep folder (default runs/sweeps/<config>__<time>)")
    parser.add_argument("--cpus-per-trial", type=float, default=1.0, help="CPUs Ray reserves per trial (1)")
    parser.add_argument("--max-failures", type=int, default=3, help="restarts of a failed trial (3)")
    parser.add_argument("--metric", default="eval/bb100_vs_field", help="what decides the winner")
    parser.add_argument("--mode", choices=["max", "min"], default="max",
                        help="higher or lower is better (max)")
    args = parser.parse_args(argv)
    if args.cpus_per_trial <= 0:
        parser.error(f"--cpus-per-trial must be positive, not {args.cpus_per_trial}")
    if args.max_failures < 0:
        parser.error(f"--max-failures must be 0 or more, not {args.max_failures}")
    return args


def plan(args: argparse.Namespace) -> tuple[Path, list[dict]]:
    """The sweep folder and its trials, every config checked first (ConfigError)."""
    config = Path(args.config).resolve()
    base = load_checked_config(config, overrides=args.overrides)
    grid = parse_grid(args.grid)
    seeds = args.seeds if args.seeds is not None else [base.run.seed]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds {' '.join(map(str, seeds))}: a seed is given twice")
    out = Path(args.out) if args.out else Path(base.run.out_dir) / "sweeps" / \
        f"{base.run.name}__{time.strftime('%Y%m%d-%H%M%S')}"
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out {out} holds files already; give a new folder")
    trials = []
    for name, overrides in grid_points(grid):
        for seed in seeds:
            every = [*args.overrides, *overrides]
            cfg = load_checked_config(config, overrides=every, seed=seed)   # a bad value stops here
            if not cfg.eval.every:
                raise ConfigError("eval.every is 0: a sweep compares evaluations; set eval.every")
            trials.append({"name": name, "seed": seed, "config": str(config), "overrides": every,
                           "run_dir": str(out / "runs" / _folder_name(name, seed))})
    return out, trials


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run the sweep ``args`` describes; returns its summary."""
    import ray
    from ray import tune

    from arena.cluster import connect

    out, trials = plan(args)
    try:
        check_folder(out / "runs")
    except ValueError as exc:
        raise ConfigError(f"--out: {exc}") from None
    try:
        started_here = connect(args.address)
    except ValueError as exc:
        raise ConfigError(f"--address: {exc}") from exc
    largest = max((node.get("Resources", {}).get("CPU", 0) for node in ray.nodes() if node.get("Alive")),
                  default=0)
    if args.cpus_per_trial > largest:   # Tune would wait for such a node forever
        if started_here:
            ray.shutdown()
        raise ConfigError(f"--cpus-per-trial {args.cpus_per_trial:g}: a trial runs on one node, and the "
                          f"largest node of this cluster has {largest:g} CPUs")
    (out / "runs").mkdir(parents=True, exist_ok=True)
    record = {"command": shlex.join([sys.executable, "-m", "train.sweep", *sys.argv[1:]]), "trials": trials,
              "address": args.address}
    write_json(out / "sweep.json", record)
    print(f"sweep: {len(trials)} trials on {ray.cluster_resources().get('CPU', 0):g} CPUs; folder {out}",
          flush=True)
    try:
        trainable = tune.with_resources(_trial_entry, {"cpu": args.cpus_per_trial})
        tuner = tune.Tuner(
            trainable,
            param_space={"trial": tune.grid_search(trials)},
            tune_config=tune.TuneConfig(
                trial_dirname_creator=lambda t: Path(t.config["trial"]["run_dir"]).name),
            run_config=tune.RunConfig(name="tune", storage_path=str(out), verbose=0,
                                      failure_config=tune.FailureConfig(max_failures=args.max_failures)),
        )
        results = tuner.fit()
    finally:
        if started_here:
            ray.shutdown()
    errors = [r.error for r in results if r.error is not None]
    summary = summarize(out, trials, metric=args.metric, mode=args.mode)
    summary["errors"] = [(str(e).strip().splitlines() or [type(e).__name__])[-1] for e in errors]
    print((out / "summary.md").read_text(), flush=True)
    print(f"summary: {out / 'summary.md'}, {out / 'summary.csv'}, {out / 'curves.png'}", flush=True)
    return summary


def _trial_entry(config: dict) -> None:
    run_trial(config["trial"])


def cli(argv: Sequence[str] | None = None) -> int:
    """0 when every trial finished, 1 when some failed for good, 2 for a bad argument or config."""
    args = parse_args(argv)
    try:
        summary = main(args)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    if summary["errors"] or summary["missing"]:
        print(f"{len(summary['errors'])} trials failed: " + "; ".join(summary["errors"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from train.sweep import cli as _cli  # the module's own functions, so Ray ships them by name

    sys.exit(_cli())
