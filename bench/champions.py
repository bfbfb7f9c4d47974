"""Re-measure the shipped champions (agents/champions/): duplicate matches against every
baseline, luck-corrected where the game allows, and a local best response where it applies.

    python bench/champions.py                        # every shipped champion, 4,000 hands a match
    python bench/champions.py --champions soko --hands 20000 --lbr-hands 2000
    python bench/champions.py --quick                # a smoke run (numbers too noisy to report)

Heads-up champions play each baseline in a duplicate pair; the six-seat one plays a table of
five copies of each baseline (the harder test: a mixed field lets it feed on the weakest). The
output is a Markdown table for docs/results.md (bb/100 of the champion, 95% interval).
"""

from __future__ import annotations

import argparse
import time

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

BASELINES = ("random", "call", "raise", "tag", "equity")
QUICK = {"hands": 120, "lbr_hands": 40, "champions": ["soko"], "baselines": ["random", "tag"]}


def measure(game: str, *, hands: int, lbr_hands: int, baselines, seed: int, workers: int) -> list[str]:
    from agents.agent_file import model_info
    from agents.registry import champion_path
    from arena.exploit import lower_bound, match_spec
    from arena.match import play_match

    info = model_info(champion_path(game))
    rules, players = info.rules, int(info.header["players"])
    spec = f"champion:{game}"
    luck = not rules.follow_the_queen
    rows = []
    for opponent in baselines:
        start = time.perf_counter()
        result = play_match(rules, [spec] + [opponent] * (players - 1), hands=hands, seed=seed,
                            luck_correction=luck, workers=workers)
        est = result.estimates[spec]
        rows.append(f"| {spec} | {opponent}{' x5' if players > 2 else ''} | {result.hands} | {est.mean:+.1f} "
                    f"| [{est.low:+.1f}, {est.high:+.1f}] | {time.perf_counter() - start:.0f} |")
    from arena.lbr import LBRAgent, check_rules

    try:
        check_rules(rules, players)   # where LBR applies: heads-up, one face-down card, no wild cards
    except ValueError:
        lbr_hands = 0
    if lbr_hands:
        start = time.perf_counter()
        target = match_spec(spec)   # the deals of `python -m arena.exploit --agent SPEC`
        out = lower_bound(rules, LBRAgent(target), target, hands=lbr_hands, seed=seed, workers=workers)
        low, high = out["ci95"]
        rows.append(f"| {spec} | LBR (exploitability, lower bound) | {out['match']['hands']} "
                    f"| {out['exploitability_bb_per_100']:+.1f} | [{low:+.1f}, {high:+.1f}] "
                    f"| {time.perf_counter() - start:.0f} |")
    return rows


def main(argv=None) -> None:
    from agents.registry import CHAMPIONS, shipped_champions

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--champions", nargs="+", default=shipped_champions(), choices=list(CHAMPIONS))
    parser.add_argument("--baselines", nargs="+", default=list(BASELINES))
    parser.add_argument("--hands", type=int, default=4000, help="hands per match")
    parser.add_argument("--lbr-hands", type=int, default=2000, help="local best response hands (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = quick_option.parse_args(parser, QUICK, argv)
    print("| champion | opponent | hands | bb/100 | 95% interval | seconds |")
    print("|---|---|---|---|---|---|")
    for game in args.champions:
        for row in measure(game, hands=args.hands, lbr_hands=args.lbr_hands, baselines=args.baselines,
                           seed=args.seed, workers=args.workers):
            print(row, flush=True)


if __name__ == "__main__":
    main()
