"""Interval coverage: how often a short match's 95% interval holds a long match's estimate.

    python bench/interval_coverage.py                       # random vs call, 200 matches of 800 hands
    python bench/interval_coverage.py --agents tag random --matches 200 --hands 800

First one long reference match (``--reference-hands``, seed 0), then ``--matches`` short ones
with seeds 1000, 1001, ... (independent deals). For the luck-corrected intervals (fitted
coefficients) and the raw ones of the same hands, it prints how often the interval holds the
reference mean, the mean of the estimates against the reference, and their spread against the
mean half-width. The reference has its own error, which lowers both coverages a little; the
raw intervals (plain Student-t on groups) show how much.
"""

from __future__ import annotations

import argparse

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from arena.match import play_match

# `--quick` (bench/quick_option.py): these options.
QUICK = {"matches": 8, "hands": 600, "reference_hands": 3000}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="soko")
    parser.add_argument("--agents", nargs=2, default=["random", "call"], metavar="SPEC")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--hands", type=int, default=800, help="hands per short match")
    parser.add_argument("--reference-hands", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    args = quick_option.parse_args(parser, QUICK, argv)
    a, b = args.agents
    ref = play_match(args.game, [a, b], hands=args.reference_hands, seed=0, luck_correction=True,
                     workers=args.workers).estimates[a]
    print(f"{args.game}, {a} vs {b}: reference {ref.mean:+.2f} ±{ref.half_width:.2f} bb/100 "
          f"({args.reference_hands} hands, luck-corrected)")
    rows = []
    for k in range(args.matches):
        r = play_match(args.game, [a, b], hands=args.hands, seed=1000 + k, luck_correction=True,
                       workers=args.workers)
        e, w = r.estimates[a], r.raw_estimates[a]
        rows.append((e.mean, e.half_width, w.mean, w.half_width, r.luck_fitted))
    x = np.array(rows)
    fitted = sorted(set(x[:, 4].astype(int).tolist()))
    print(f"{args.matches} matches of {args.hands} hands (coefficients fitted: {fitted})")
    for name, col in (("corrected", 0), ("raw", 2)):
        est, half = x[:, col], x[:, col + 1]
        cover = np.mean(np.abs(est - ref.mean) <= half)
        print(f"  {name:9s} coverage {cover:.3f}; estimates average {est.mean():+.2f} "
              f"(se {est.std(ddof=1) / np.sqrt(len(est)):.2f}), spread {est.std(ddof=1):.2f} "
              f"against a mean half-width / 1.96 of {half.mean() / 1.96:.2f}")


if __name__ == "__main__":
    main()
