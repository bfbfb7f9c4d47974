"""PPO's exact exploitability over wall time against CFR+'s, on ``soko_mini``, in one run.

    python bench/nash_curve.py --runs RUN [RUN ...] --out docs/img/soko_mini_nash.png
    python bench/nash_curve.py --quick     # CFR+ alone for 2 s, the plot in the temporary folder

Each ``RUN`` is a finished run folder of ``configs/soko_mini_ppo.yaml`` (``eval.exploitability``
on): its ``eval/exploitability`` points are read from its TensorBoard events with their wall
times (seconds since the run's first event). CFR+ then runs here for as long as the longest run
took (``--seconds`` to choose), with its exploitability checked every ``--check-every``
iterations (``arena.exact.cfr_plus``). Both curves go on one log-scale plot; the points are
printed too. Wall times of the runs are whatever the machine's load was when they ran: say it
when quoting them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from arena.exact import build_tree, cfr_plus

TAG = "eval/exploitability"


def run_curve(folder: Path) -> list[tuple[float, int, float]]:
    """(seconds since the run started, step, exploitability bb/100) of a run folder."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = sorted(folder.glob("**/events.out.tfevents*"))
    if not files:
        raise ValueError(f"{folder}: no TensorBoard events (is it a run folder?)")
    points, first = [], None
    for f in files:
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        tags = acc.Tags()["scalars"]
        for tag in tags:
            for e in acc.Scalars(tag):
                first = e.wall_time if first is None else min(first, e.wall_time)
        if TAG in tags:
            points += [(e.wall_time, e.step, e.value) for e in acc.Scalars(TAG)]
    if not points:
        raise ValueError(f"{folder}: no {TAG} points (was eval.exploitability on?)")
    return [(w - first, s, v) for w, s, v in sorted(points)]


def main(cfg: argparse.Namespace) -> None:
    curves = {Path(r).name: run_curve(Path(r)) for r in cfg.runs}
    seconds = cfg.seconds or max(c[-1][0] for c in curves.values())
    tree = build_tree("soko_mini")
    _, history = cfr_plus(tree, iterations=100_000, check_every=cfg.check_every, seconds=seconds)
    for name, curve in curves.items():
        print(f"{name}: " + ", ".join(f"{t:.0f} s {v:.2f}" for t, _, v in curve))
    print("CFR+: " + ", ".join(f"{t:.0f} s (it {i}) {v:.2f}" for i, t, v in history))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in curves.items():
        ax.plot([t for t, _, _ in curve], [v for _, _, v in curve], marker="o", ms=3, label=f"PPO {name}")
    ax.plot([t for _, t, _ in history], [v for _, _, v in history], marker="s", ms=3, color="black",
            label="CFR+ (average strategy)")
    ax.axhline(2.0, color="grey", ls="--", lw=0.8, label="2 bb/100")
    ax.set_yscale("log")
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("exact exploitability (bb/100)")
    ax.set_title("soko_mini: PPO against CFR+")
    ax.legend(fontsize=7)
    fig.tight_layout()
    Path(cfg.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(cfg.out, dpi=110)
    print(f"plot: {cfg.out}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", nargs="*", default=[], help="soko_mini run folders")
    p.add_argument("--out", default="docs/img/soko_mini_nash.png")
    p.add_argument("--seconds", type=float, default=None, help="CFR+'s budget (default: the longest run's)")
    p.add_argument("--check-every", type=int, default=5)
    args = quick_option.parse_args(p, {"seconds": 2.0, "out": str(Path(tempfile.gettempdir()) /
                                                                   "soko_mini_nash_quick.png")})
    if not args.runs and not args.seconds:
        p.error("give --runs (run folders of configs/soko_mini_ppo.yaml) or --seconds for CFR+ alone")
    if args.seconds is not None and args.seconds <= 0 or args.check_every < 1:
        p.error("--seconds must be positive and --check-every at least 1")
    try:
        main(args)
    except ValueError as exc:
        print(f"nash_curve: {exc}", file=sys.stderr)
        sys.exit(2)
