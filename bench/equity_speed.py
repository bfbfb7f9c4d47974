"""The equity agent's cost per decision: the reference (``EquityAgent.decide``, the Python
Monte-Carlo that ``EquityAgent.act`` runs) against the compiled core's port
(``agents.equity.BatchedEquity``), on the same states and keys.

States: ``--hands`` hands dealt from random decks and played with random legal actions, on the
reference and on the core in lockstep; every state with a choice (more than one legal id) is a
decision. The reference decides them one at a time; the core decides each step's states in one
call (as the training VecEnv does) and, in a second column, one call per state. Every decision
is checked equal. The reference's evaluator tables are built before the clock starts.

    .venv/bin/python bench/equity_speed.py [--game soko] [--players 2] [--samples 100] [--hands 300]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from agents.equity import KEY_LIMIT, BatchedEquity, EquityAgent
from envs.actions import action_mask, apply_action, random_action
from envs.batched import BatchedGame
from envs.engine.equity import warm_up
from envs.engine.game import Game
from envs.engine.rules import get_rules

# `--quick` (bench/quick_option.py): these options.
QUICK = {"hands": 20}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="soko")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--hands", type=int, default=300)
    args = quick_option.parse_args(parser, QUICK, argv)

    rules = get_rules(args.game)
    warm_up(rules)
    agent, batched = EquityAgent(samples=args.samples), BatchedEquity(samples=args.samples)
    rng = np.random.default_rng(0)
    cards = np.array([int(c) for c in rules.deck])
    decks = np.stack([rng.permutation(cards) for _ in range(args.hands)])
    buttons = rng.integers(args.players, size=args.hands)
    games = [Game(rules, args.players, button=int(buttons[i]), deck=decks[i].tolist())
             for i in range(args.hands)]
    core = BatchedGame(rules, args.players, args.hands, auto_reset=False)
    core.reset(decks=decks, buttons=buttons)

    decisions, python_s, batch_s, single_s = 0, 0.0, 0.0, 0.0
    while True:
        live = [i for i, g in enumerate(games) if not g.is_over]
        if not live:
            break
        masks = {i: action_mask(games[i]) for i in live}
        choice = [i for i in live if masks[i].sum() > 1]
        keys = rng.integers(KEY_LIMIT, size=len(choice))
        if choice:
            start = time.perf_counter()
            want = [agent.decide(games[i].view(games[i].current_player), masks[i], int(k))
                    for i, k in zip(choice, keys)]
            python_s += time.perf_counter() - start
            start = time.perf_counter()
            got = batched.act(core, choice, keys)
            batch_s += time.perf_counter() - start
            start = time.perf_counter()
            for i, k in zip(choice, keys):
                batched.act(core, [i], [k])
            single_s += time.perf_counter() - start
            if got.tolist() != want:
                raise AssertionError("the core and the reference disagree")
            decisions += len(choice)
        actions = np.full(args.hands, -1, dtype=np.int64)
        for i in live:
            actions[i] = random_action(masks[i], rng)
            apply_action(games[i], int(actions[i]))
        core.step(actions)

    print(f"{args.game}, {args.players} players, samples={args.samples}: {decisions} decisions "
          f"(load average {os.getloadavg()[0]:.2f})")
    print(f"{'':28} {'us/decision':>12} {'x reference':>12}")
    ref = python_s / decisions * 1e6
    for label, seconds in (("reference (Python decide)", python_s), ("core, one call per step", batch_s),
                           ("core, one call per state", single_s)):
        per = seconds / decisions * 1e6
        print(f"{label:28} {per:>12.1f} {ref / per:>12.0f}")


if __name__ == "__main__":
    main()
