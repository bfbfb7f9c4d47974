"""Local best response speed: LBR hands per second against a trained agent at heads-up Soko.

    python bench/lbr.py --ppo runs/<soko run>/final_model.zip     # 1000 duplicate hands, both engines
    python bench/lbr.py --ppo MODEL --engines core --clock cpu     # one engine, process CPU seconds
    python bench/lbr.py --quick                                  # 100 hands against tag, no model

A hand is one duplicate hand of ``arena.match.play_match`` (LBR in one seat, the target in the
other), both agents' decisions included, after the hand tables are built (``warm_up``). LBR's
cost per decision: one replay of the hand, the target's policy for every card of the range at
each of its new decisions and in the spot after each bet or raise LBR considers, and the equity
against every card once per street (``--samples`` roll-outs before the last street, exact on it).

``--engines`` (default: python auto) runs the match once per engine of ``LBRAgent``
(``arena.lbr.ENGINES``), in the same process one after the other, on the same deals:
``python``, the target's policy from a replayed
``Game`` and one NumPy pass over the range (the reference); ``core``, the candidates' observations
encoded and the network run by the compiled core (``src/arena/lbr.h``) on a core copy of the hand.
Both play the same decisions (the last line says whether they did, decision for decision).
``--clock wall`` (default) or ``cpu`` (this process's CPU seconds: fairer on a shared machine).
"""

from __future__ import annotations

import argparse
import time

from agents.registry import make_agent
from arena.lbr import ENGINES, LBRAgent
from arena.match import play_match
from envs.engine.rules import get_rules

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ppo", default=None, help="a PPO model trained on Soko heads-up (the target)")
    p.add_argument("--target", default=None, help="another target spec (default: the model, else tag)")
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--samples", type=int, default=200, help="LBR's roll-outs per street")
    p.add_argument("--engines", nargs="+", default=["python", "auto"], choices=ENGINES,
                   help="LBRAgent engines to time, in this order (default: python auto; auto is the core "
                        "for a ppo model)")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    p.add_argument("--quick", action="store_true", help="100 hands against tag, no model")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands must be at least 1, not {args.hands}")

    spec = args.target or (f"ppo:{args.ppo}" if args.ppo and not args.quick else "tag")
    hands = 100 if args.quick else args.hands
    target = make_agent(spec)
    getattr(target, "actor", None)   # a model loads here, outside the timing
    clock = CLOCKS[args.clock]
    rules = get_rules("soko")
    rates, played = {}, {}
    for engine in args.engines:
        lbr = LBRAgent(target, samples=args.samples, engine=engine)
        lbr.warm_up(rules)
        decisions = played[engine] = []
        act = lbr.act

        def recorded(view, mask, act=act, decisions=decisions):
            decisions.append(act(view, mask))
            return decisions[-1]

        lbr.act = recorded
        start = clock()
        result = play_match("soko", [lbr, target], hands=hands, seed=0)
        seconds = clock() - start
        rates[engine] = result.hands / seconds
        est = result.estimates[result.agents[0]]
        print(f"LBR ({engine}) vs {spec}: {result.hands} hands in {seconds:.1f} {args.clock} s = "
              f"{rates[engine]:.1f} hands/s ({args.samples} roll-outs); LBR wins {est.mean:+.1f} bb/100 "
              f"[{est.low:+.1f}, {est.high:+.1f}]")
    if len(rates) > 1:
        first, *rest = args.engines
        same = all(played[e] == played[first] for e in rest)
        print(" ".join(f"{e}/{first}: {rates[e] / rates[first]:.1f}x" for e in rest)
              + f"; the same {len(played[first])} decisions: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
