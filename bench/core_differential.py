"""The compiled core against the reference engine over a million hands (or ``--hands``).

Cycles through every variant of ``envs/differential.py`` (each preset under each betting
structure, plus each rule option off its preset value) and every player count, alternating
deep and short stacks, in batches of ``--batch`` seeded hands; every step of every hand
compares the player to act, the action mask, the raise-to amounts and the pot, and every
hand's end compares the payoffs. Prints a report and exits 1 on any mismatch.

    .venv/bin/python bench/core_differential.py [--hands 1000000] [--batch 200] [--seed 0]
        [--observations] [--features]

``--features`` compares the observations with every optional piece too (hand_class,
showing_class, win_probability against the pure-Python reference: about 1 ms a decision, so
give it fewer hands).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from envs.differential import Report, compare, variants
from envs.observation import FEATURES

# `--quick` (bench/quick_option.py): these options.
QUICK = {"hands": 2000}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--observations", action="store_true",
                        help="also compare observations (the player to act's at every step, every seat's "
                             "at the end)")
    parser.add_argument("--features", action="store_true",
                        help="with every optional observation piece (implies --observations)")
    args = quick_option.parse_args(parser, QUICK, argv)

    configs = [(rules, players, short) for rules in variants()
               for players in range(rules.min_players, rules.max_players + 1)
               for short in (False, True)]
    total = Report()
    per_game = Counter()
    start = time.perf_counter()
    last = start
    for k in itertools.count():
        if total.hands >= args.hands:
            break
        rules, players, short = configs[k % len(configs)]
        batch = min(args.batch, args.hands - total.hands)
        report = compare(rules, players, batch, seed=args.seed * 1_000_003 + k, short_stacks=short,
                         observations=args.observations, features=tuple(FEATURES) if args.features else ())
        total.add(report)
        per_game[rules.name] += batch
        now = time.perf_counter()
        if now - last > 30:
            last = now
            print(f"  {total.hands:>9,} hands, {total.steps:>11,} steps, "
                  f"{len(total.mismatches)} mismatches, {now - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - start
    what = ("with observations and features" if args.features else
            "with observations" if args.observations else "without observations")
    print(f"core vs reference ({what}): {total.hands:,} hands, {total.steps:,} steps (decisions), "
          f"{len(configs)} configurations (variant x players x stacks), {elapsed:.0f} s")
    print(f"mismatches: {len(total.mismatches)}")
    for text in total.mismatches[:5]:
        print(text)
    return 1 if total.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
