"""Tournament hands/s on Ray with one node and with two nodes of the same total CPUs, beside a
local process pool of as many workers: what a second node costs. ``--sweep N``: instead, the
wall time of a sweep of configs/smoke.yaml over N seeds on each cluster (trials per hour).

    PYTHONPATH=. python bench/ray_scaling.py --cpus 2 --hands 3000 --agents tag random call
    PYTHONPATH=. python bench/ray_scaling.py --cpus 2 --sweep 4
    python bench/ray_scaling.py --quick           # 200 hands a setting: a smoke run

Each setting plays the same tournament (same seed: the results are checked equal); the time is
``TournamentResult.seconds``, which for Ray includes starting the actors and their warm-up.
The Ray clusters are ``ray.cluster_utils.Cluster`` on this machine, started before the clock.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)


def tournament(agents, hands, **kw):
    from arena.tournament import TournamentConfig, run_tournament

    start = time.perf_counter()
    result = run_tournament(TournamentConfig(game="soko", agents=list(agents), hands=hands, seed=0,
                                             progress=False, write=False, **kw))
    return result, time.perf_counter() - start


def on_cluster(nodes: list[int], agents, hands):
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": nodes[0], "include_dashboard": False})
    for cpus in nodes[1:]:
        cluster.add_node(num_cpus=cpus)
    cluster.wait_for_nodes(timeout=60)
    try:
        return tournament(agents, hands, ray=cluster.address)
    finally:
        cluster.shutdown()


def sweep_on_cluster(nodes: list[int], seeds: int, out) -> float:
    import subprocess
    import sys

    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": nodes[0], "include_dashboard": False})
    for cpus in nodes[1:]:
        cluster.add_node(num_cpus=cpus)
    cluster.wait_for_nodes(timeout=60)
    try:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "train.sweep", "--config", "configs/smoke.yaml", "--seeds",
                        *map(str, range(seeds)), "--address", cluster.address, "--out", str(out)],
                       check=True, capture_output=True)
        return time.perf_counter() - start
    finally:
        cluster.shutdown()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--hands", type=int, default=3000)
    p.add_argument("--agents", nargs="+", default=["tag", "random", "call"])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--sweep", type=int, default=0, metavar="SEEDS")
    args = quick_option.parse_args(p, {"hands": 200}, argv)
    if args.cpus < 2 or args.hands < 1 or args.repeats < 1 or args.sweep < 0:
        p.error("--cpus must be at least 2 (two nodes share them), --hands and --repeats at least 1, "
                "--sweep at least 0")
    half = args.cpus // 2
    if args.sweep:
        import tempfile

        print("| setting | trials | wall seconds | trials/hour |")
        print("|---|---|---|---|")
        for _ in range(args.repeats):
            for name, nodes in ((f"1 node x {args.cpus} CPUs", [args.cpus]),
                                (f"2 nodes x {half} CPUs", [half, args.cpus - half])):
                with tempfile.TemporaryDirectory() as tmp:
                    seconds = sweep_on_cluster(nodes, args.sweep, f"{tmp}/sweep")
                print(f"| {name} | {args.sweep} | {seconds:.1f} | {3600 * args.sweep / seconds:.0f} |",
                      flush=True)
        return
    settings = {
        f"processes ({args.cpus} workers)": lambda: tournament(args.agents, args.hands, workers=args.cpus),
        f"Ray, 1 node x {args.cpus} CPUs": lambda: on_cluster([args.cpus], args.agents, args.hands),
        f"Ray, 2 nodes x {half} CPUs": lambda: on_cluster([half, args.cpus - half], args.agents, args.hands),
    }
    reference = None
    print("| setting | hands | play seconds | hands/s | wall seconds |")
    print("|---|---|---|---|---|")
    for _ in range(args.repeats):
        for name, run in settings.items():
            result, wall = run()
            groups = [m.group_results for m in result.matches]
            if reference is None:
                reference = groups
            assert all(np.array_equal(a, b) for a, b in zip(reference, groups)), f"{name}: other results"
            print(f"| {name} | {result.hands} | {result.seconds:.1f} | {result.hands / result.seconds:.0f} "
                  f"| {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
