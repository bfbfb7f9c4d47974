"""Exact solving of soko_mini: best response to a trained PPO agent, and CFR+ to < 1 bb/100.

    python bench/exact.py --ppo runs/<soko_mini run>/final_model.zip     # both (budgets: 60 s, 10 min)
    python bench/exact.py --quick                                          # a few CFR+ iterations only
    python bench/exact.py --ppo PATH --match 20000                         # and a duplicate match of
                                                                           # the best response vs PPO
    python bench/exact.py --agent equity --match 20000 --no-cfr           # any agent spec as the target

The PPO model comes from ``python train/ppo.py --config configs/soko_mini_ppo.yaml``. CFR+'s
average strategy is saved (``--save``, default ``runs/cfr_soko_mini.npz``) and plays as
``cfr:PATH``. Times are wall-clock seconds on one process (NumPy single-threaded work).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from arena.exact import build_tree, cfr_plus, save_table


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="soko_mini")
    p.add_argument("--ppo", default=None, help="a PPO model trained on the game (best-response timing)")
    p.add_argument("--agent", default=None, metavar="SPEC", help="the best response's target as an agent "
                   "spec (instead of --ppo)")
    p.add_argument("--no-cfr", action="store_true", help="the best response only, no CFR+")
    p.add_argument("--target", type=float, default=1.0, help="CFR+ stops below this exploitability (bb/100)")
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--save", default="runs/cfr_soko_mini.npz")
    p.add_argument("--match", type=int, default=0, help="hands of best response vs PPO (duplicate)")
    p.add_argument("--quick", action="store_true", help="20 CFR+ iterations, no file, no PPO")
    args = p.parse_args(argv)

    if args.ppo and args.agent:
        p.error("--ppo and --agent both name the target: give one")
    start = time.perf_counter()
    tree = build_tree(args.game)
    print(f"{args.game}: tree of {len(tree.nodes)} betting nodes, {len(tree.pubs[1])} public deals "
          f"x {tree.size} hole cards, built in {time.perf_counter() - start:.1f} s")

    if (args.ppo or args.agent) and not args.quick:
        from arena.exploit import exact_method

        spec = args.agent or f"ppo:{args.ppo}"
        out = Path("runs/br_bench") if args.match else None
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        r = exact_method(tree.rules, spec, out, None)   # the same computation as python -m arena.exploit
        value, by_seat, sec = r["exploitability_bb_per_100"], r["best_response_bb_per_100"], r["seconds"]
        print(f"best response to {spec}: exploitability {value:.2f} bb/100 (seat 0 {by_seat['seat0']:.2f}, "
              f"seat 1 {by_seat['seat1']:.2f}); policy {sec['policy']:.1f} s + best responses "
              f"{sec['best_response']:.1f} s = {sec['policy'] + sec['best_response']:.1f} s (budget 60 s)")
        if args.match:
            from arena.match import play_match

            br = r["best_response_agent"]
            result = play_match(args.game, [br, spec], hands=args.match, seed=0)
            e = result.estimates[br]
            inside = "inside" if e.low <= value <= e.high else "OUTSIDE"
            print(f"duplicate match, {result.hands} hands: best response wins {e.mean:.2f} bb/100, "
                  f"95% interval [{e.low:.2f}, {e.high:.2f}]; the exact value {value:.2f} is {inside}")
    if args.no_cfr:
        return

    iterations = 20 if args.quick else args.iterations
    t0 = time.perf_counter()
    average, history = cfr_plus(tree, iterations=iterations, target_bb_per_100=args.target,
                                progress=lambda t, s, e: print(f"  CFR+ iteration {t}: {e:.3f} bb/100 "
                                                               f"after {s:.0f} s", flush=True))
    seconds = time.perf_counter() - t0
    t, _, e = history[-1]
    print(f"CFR+: {e:.3f} bb/100 after {t} iterations, {seconds:.0f} s (budget 600 s)")
    if not args.quick:
        path = save_table(tree, args.save, probabilities=average)
        print(f"average strategy saved: cfr:{path}")


if __name__ == "__main__":
    main()
