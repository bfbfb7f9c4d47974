"""Tournament speed: hands a second with cheap agents, and the speed-up from 1 to N workers.

    python bench/tournament_speed.py                 # Soko heads-up, random/call/raise, 1 and 2 workers,
                                                     # without and with the luck correction
    python bench/tournament_speed.py --hands 20000 --workers 1 2 4 --agents random call raise tag

Every run plays the same seeded tournament, so the results must agree exactly; the script
checks that. Times are wall-clock seconds of play (evaluator warm-up excluded); "cores busy" is
the CPU time of this process and its workers divided by the wall time, which shows when other
load on the machine, not the harness, limits the speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import resource

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from arena.tournament import TournamentConfig, run_tournament


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# `--quick` (bench/quick_option.py): these options.
QUICK = {"hands": 600}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="soko")
    parser.add_argument("--agents", nargs="+", default=["random", "call", "raise"])
    parser.add_argument("--hands", type=int, default=10000, help="hands per match")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--luck", choices=["both", "on", "off"], default="both",
                        help="with and/or without the luck correction (arena/luck.py)")
    args = quick_option.parse_args(parser, QUICK, argv)
    for luck in ([False, True] if args.luck == "both" else [args.luck == "on"]):
        run(args, luck)


def run(args, luck: bool) -> None:

    baseline = None
    reference = None
    print(f"{args.game}, {args.players} players, agents {' '.join(args.agents)}, {args.hands} hands "
          f"per match, luck correction {'on' if luck else 'off'}")
    for workers in args.workers:
        cfg = TournamentConfig(game=args.game, agents=args.agents, hands=args.hands, players=args.players,
                               seed=args.seed, workers=workers, progress=False, write=False,
                               luck_correction=luck)
        before = _cpu()
        result = run_tournament(cfg)
        busy = (_cpu() - before) / (result.seconds + result.warm_up_seconds)
        data = result.as_dict()
        numbers = json.dumps({k: data[k] for k in ("ranking", "crosstable", "matches")})
        if reference is None:
            reference = numbers
        same = "identical" if numbers == reference else "DIFFERENT"
        rate = result.hands_per_second
        baseline = baseline or rate
        print(f"  workers {workers}: {result.hands} hands in {result.seconds:6.2f} s = {rate:7.0f} hands/s, "
              f"speed-up x{rate / baseline:.2f}, cores busy {busy:.2f} of {os.cpu_count()}, results {same}")
        if numbers != reference:
            raise SystemExit("results differ between worker counts")


if __name__ == "__main__":
    main()
