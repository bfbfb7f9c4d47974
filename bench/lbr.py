"""Local best response speed: LBR hands per second against a trained agent at heads-up Soko.

    python bench/lbr.py --ppo runs/<soko run>/final_model.zip     # 1000 duplicate hands
    python bench/lbr.py --quick                                  # 100 hands against tag, no model

A hand is one duplicate hand of ``arena.match.play_match`` (LBR in one seat, the target in the
other), both agents' decisions included, after the hand tables are built (``warm_up``). LBR's
cost per decision: one replay of the hand, the target's policy for every card of the range at
each of its new decisions (one batched forward pass for a ``ppo`` model; with observation
features, each card's hand_class and win_probability written first, the latter by the compiled
core: 64 roll-outs a card before the last street), and the equity against
every card once per street (``--samples`` roll-outs before the last street, exact on it).
Wall-clock seconds on one process.
"""

from __future__ import annotations

import argparse
import time

from agents.registry import make_agent
from arena.lbr import LBRAgent
from arena.match import play_match


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ppo", default=None, help="a PPO model trained on Soko heads-up (the target)")
    p.add_argument("--target", default=None, help="another target spec (default: the model, else tag)")
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--samples", type=int, default=200, help="LBR's roll-outs per street")
    p.add_argument("--quick", action="store_true", help="100 hands against tag")
    args = p.parse_args(argv)

    spec = args.target or (f"ppo:{args.ppo}" if args.ppo and not args.quick else "tag")
    hands = 100 if args.quick else args.hands
    target = make_agent(spec)
    getattr(target, "actor", None)   # a model loads here, outside the timing
    lbr = LBRAgent(target, samples=args.samples)
    lbr.warm_up(__import__("envs.engine.rules", fromlist=["get_rules"]).get_rules("soko"))
    start = time.perf_counter()
    result = play_match("soko", [lbr, target], hands=hands, seed=0)
    seconds = time.perf_counter() - start
    est = result.estimates[result.agents[0]]
    print(f"LBR vs {spec}: {result.hands} hands in {seconds:.1f} s = {result.hands / seconds:.0f} hands/s "
          f"({args.samples} roll-outs); LBR wins {est.mean:+.1f} bb/100 [{est.low:+.1f}, {est.high:+.1f}]")


if __name__ == "__main__":
    main()
