"""Hands a second: the compiled core (``envs.batched.BatchedGame``) against the reference engine
(``envs.engine.game.Game``), both with uniformly random legal actions.

The reference plays one hand at a time through ``envs.actions`` (``action_mask``,
``random_action``, ``apply_action``), as the envs do. The core steps ``--batch`` hands per call;
the random actions are drawn for the whole batch with NumPy (their cost is counted), and
finished hands are re-dealt inside the step (automatic reset). The last column writes the
observation of every hand's player to act at every step too; ``--features`` adds a column with
every optional observation piece (``envs.observation.FEATURES``: hand_class, showing_class and
win_probability, a 64-deal simulation at every decision before the last street).

``--clock cpu`` counts this process's CPU seconds (every thread's, with ``--threads`` above 1)
instead of wall-clock ones, so the time a busy machine gives to other processes is left out:
the figure to compare two builds of the core on a shared machine (run this script with each
build's tree first on ``PYTHONPATH``, alternately).

    .venv/bin/python bench/core_speed.py [--seconds 3] [--batch 1024] [--threads 1] [--features] [--clock cpu]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from envs.actions import action_mask, apply_action, random_action
from envs.batched import BatchedGame
from envs.engine.game import Game
from envs.observation import FEATURES

# `--quick` (bench/quick_option.py): these options.
QUICK = {"seconds": 0.3}
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def reference(game: str, players: int, seconds: float, *, clock=time.perf_counter) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    hands = steps = 0
    start = clock()
    while clock() - start < seconds:
        g = Game(game, players, seed=rng, button=hands % players)
        while g.current_player is not None:
            apply_action(g, random_action(action_mask(g), rng))
            steps += 1
        hands += 1
    elapsed = clock() - start
    return hands / elapsed, steps / elapsed


def core(game: str, players: int, seconds: float, batch: int, *, observations: bool = False,
         features=(), threads: int = 1, clock=time.perf_counter) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    g = BatchedGame(game, players, batch, observations=observations, observation_features=features,
                    threads=threads)
    g.reset(seeds=np.arange(batch))
    hands = steps = 0
    start = clock()
    while clock() - start < seconds:
        for _ in range(50):
            g.step(np.argmax(rng.random(g.action_mask.shape) * g.action_mask, axis=1))
            hands += int(g.dones.sum())
            steps += batch
    elapsed = clock() - start
    return hands / elapsed, steps / elapsed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1, help="threads per core step")
    parser.add_argument("--features", action="store_true",
                        help="a last column with the observation features as well")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="time in wall-clock seconds, or in this process's CPU seconds")
    args = quick_option.parse_args(parser, QUICK, argv)
    clock = CLOCKS[args.clock]
    print(f"{'game':<30} {'players':>7} {'reference hands/s':>18} {'core hands/s':>13} "
          f"{'core steps/s':>13} {'ratio':>6} {'core+obs hands/s':>17}"
          + (f" {'core+obs+features hands/s':>26}" if args.features else ""))
    for game, players in (("soko", 2), ("soko", 6), ("follow_the_bitch", 2),
                          ("follow_the_bitch_low_chicago", 6)):
        ref, _ = reference(game, players, args.seconds, clock=clock)
        fast, fast_steps = core(game, players, args.seconds, args.batch, threads=args.threads, clock=clock)
        with_obs, _ = core(game, players, args.seconds, args.batch, observations=True, threads=args.threads,
                           clock=clock)
        line = (f"{game:<30} {players:>7} {ref:>18,.0f} {fast:>13,.0f} {fast_steps:>13,.0f} "
                f"{fast / ref:>5.0f}x {with_obs:>17,.0f}")
        if args.features:
            featured, _ = core(game, players, args.seconds, args.batch, observations=True,
                               features=tuple(FEATURES), threads=args.threads, clock=clock)
            line += f" {featured:>26,.0f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
