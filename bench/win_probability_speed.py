"""The core's ``win_probability`` as the local best response's target asks it: for one seat of a
spot, the value of holding each card the other seat cannot see, by street (a training run with
the local best response in its pool spends about a quarter of the env's time here).

Spots: ``--hands`` hands of ``--game`` dealt from random decks and played with random legal
actions (the reference engine); every state before an action is a spot for the seat to act, its
candidates every card of the deck but the other seat's face-down cards and the face-up ones (one
face-down card a seat: the games where the target's range is a card). Each street's spots are
timed in one pass of ``_stud_core.win_probabilities`` calls (the arguments built before the
clock), best of ``--rounds``; it prints microseconds a candidate card by street and a SHA-256 of
every value. Two checkouts that print the same digest computed the same values; run each in
turn to compare their times:

    .venv/bin/python bench/win_probability_speed.py [--game soko] [--hands 200] [--rounds 5]
    PYTHONPATH=/other/checkout .venv/bin/python bench/win_probability_speed.py
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from envs import _stud_core
from envs.actions import action_mask, apply_action, random_action
from envs.batched import _cached_core_rules
from envs.engine.cards import RANKS
from envs.engine.game import Game
from envs.engine.rules import get_rules
from envs.observation import WIN_EXACT, WIN_SAMPLES

# `--quick` (bench/quick_option.py): these options.
QUICK = {"hands": 10, "rounds": 1}


def spots(rules, players: int, hands: int, seed: int) -> dict[int, list[tuple]]:
    """``win_probabilities``' arguments (after the rules) for every spot, by street."""
    rng = np.random.default_rng(seed)
    deck = [int(c) for c in rules.deck]
    by_street: dict[int, list[tuple]] = {}
    for _ in range(hands):
        game = Game(rules, players, button=int(rng.integers(players)), deck=rng.permutation(deck).tolist())
        while not game.is_over:
            seat = game.current_player
            up = [[int(c) for c in game.up_cards(s)] for s in range(players)]
            seen = {c for cards in up for c in cards}
            for other in range(players):
                if other != seat:
                    seen |= {int(c) for c in game.hole_cards(other)}
            candidates = [c for c in deck if c not in seen]
            wild = game.wild_rank
            by_street.setdefault(game.street, []).append(
                (game.button, game.street, seat, -1 if wild is None else RANKS.index(wild),
                 [[c] for c in candidates], [len(game.hole_cards(s)) for s in range(players)], up,
                 list(game.folded), WIN_SAMPLES, WIN_EXACT))
            apply_action(game, random_action(action_mask(game), rng))
    return by_street


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="soko")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = quick_option.parse_args(parser, QUICK, argv)
    if args.hands < 1 or args.rounds < 1:
        print("win_probability_speed: --hands and --rounds must be at least 1", file=sys.stderr)
        return 2
    try:
        rules = get_rules(args.game)
    except (KeyError, ValueError) as e:
        print(f"win_probability_speed: {e}", file=sys.stderr)
        return 2
    if sum(not up for street in rules.streets for up in street.cards) != 1:
        print(f"win_probability_speed: {args.game} deals more than one face-down card a seat",
              file=sys.stderr)
        return 2
    if not rules.min_players <= args.players <= rules.max_players:
        print(f"win_probability_speed: {args.game} seats {rules.min_players} to {rules.max_players}",
              file=sys.stderr)
        return 2
    core_rules = _cached_core_rules(rules)
    by_street = spots(rules, args.players, args.hands, args.seed)
    best = {street: float("inf") for street in by_street}
    digest = hashlib.sha256()
    for round_ in range(args.rounds):
        for street in sorted(by_street):
            start = time.perf_counter()
            values = [_stud_core.win_probabilities(core_rules, *spot) for spot in by_street[street]]
            best[street] = min(best[street], time.perf_counter() - start)
            if round_ == 0:
                digest.update(np.asarray([v for row in values for v in row], dtype=np.float64).tobytes())
    print(f"{args.game}, {args.players} seats, {args.hands} hands, best of {args.rounds}")
    for street in sorted(by_street):
        cards = sum(len(spot[4]) for spot in by_street[street])
        print(f"street {street}: {len(by_street[street]):5d} spots {cards:6d} cards  "
              f"{1e6 * best[street] / cards:7.2f} us a card")
    print(f"sha256 {digest.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
