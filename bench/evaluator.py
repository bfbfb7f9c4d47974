"""Benchmark: our hand evaluator against treys and eval7.

    .venv/bin/python bench/evaluator.py                 # 200000 hands
    .venv/bin/python bench/evaluator.py --hands 50000 --seed 3
    .venv/bin/python bench/evaluator.py --quick         # 20000 hands, one pass

One run pre-generates random hands (the same hands for every library; cards are converted to
each library's format before any timing), warms every path up on separate warm-up hands (our
evaluator fills its caches lazily, per rank multiset, so the first calls are slow), then times:

- Soko five-card hands (canadian=True), one call per hand: ours (through ``evaluator(...)``,
  which looks the options up once like ``treys.Evaluator``, and through ``evaluate(...)``,
  which looks them up per call), treys, eval7 (the standard
  five-card value: they know no Canadian hands; the comparison is of speed only);
- standard seven-card hands, one call per hand: ours, treys, eval7;
- seven-card hands with one wild rank (9s) and with two (9s and queens): ours only, the
  ratios are against the standard seven-card speed of treys and eval7;
- the batch path, ``evaluate_batch`` on an (N, 7) array, plain and with wild ranks, in hands
  per second.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from envs.engine.cards import DECK
from envs.engine.hands import evaluate, evaluate_batch, evaluator


def deal_hands(count: int, seed: int, size: int = 7) -> np.ndarray:
    """``count`` random hands of ``size`` distinct card indices, shape (count, size)."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :size].astype(np.int64)


def time_calls(function, hands, repeats: int = 1, *, two_args: bool = False) -> float:
    """Seconds to call ``function(hand)`` once per hand (a plain loop, the same for everyone;
    ``two_args``: ``function(hand, board)`` for treys, whose hands come as such pairs); the best
    of ``repeats`` passes, so a busy machine disturbs the numbers less."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        if two_args:
            for hand, board in hands:
                function(hand, board)
        else:
            for hand in hands:
                function(hand)
        best = min(best, time.perf_counter() - start)
    return best


# `--quick` (bench/quick_option.py): these options.
QUICK = {"hands": 20000, "repeats": 1}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=200_000, help="hands per timed path")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random hands")
    parser.add_argument("--warmup", type=int, default=None,
                        help="separate random hands run once through every path before timing "
                             "(default: as many as --hands, so lazy caches reach steady state)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per path; the best counts")
    args = quick_option.parse_args(parser, QUICK, argv)
    if args.warmup is None:
        args.warmup = args.hands

    import eval7
    import treys

    arrays = deal_hands(args.hands, args.seed)
    warm_arrays = deal_hands(args.warmup, args.seed + 1_000_003)

    # Conversions happen here, outside every timed loop.
    def formats(array: np.ndarray):
        ours7 = [tuple(DECK[c] for c in row) for row in array.tolist()]
        ours5 = [hand[:5] for hand in ours7]
        e7_cards = [eval7.Card(str(card)) for card in DECK]
        tr_cards = [treys.Card.new(str(card)) for card in DECK]
        e7_7 = [[e7_cards[c] for c in row] for row in array.tolist()]
        e7_5 = [hand[:5] for hand in e7_7]
        tr_7 = [([tr_cards[c] for c in row[:2]], [tr_cards[c] for c in row[2:]])
                for row in array.tolist()]
        tr_5 = [(hand, board[:3]) for hand, board in tr_7]
        return {"ours5": ours5, "ours7": ours7, "e7_5": e7_5, "e7_7": e7_7,
                "tr_5": tr_5, "tr_7": tr_7, "array": array}

    timed = formats(arrays)
    warm = formats(warm_arrays)

    treys_evaluator = treys.Evaluator()
    treys_eval = treys_evaluator.evaluate
    eval7_eval = eval7.evaluate
    one_wild = ("9",)
    two_wilds = ("9", "Q")

    # name, hand list key, per-hand function (or None for batch), batch options, baseline size
    soko = evaluator(canadian=True)  # like treys.Evaluator(): the options looked up once
    standard = evaluator()
    wild1 = evaluator(wild_ranks=one_wild)
    wild2 = evaluator(wild_ranks=two_wilds)
    paths = [
        ("ours   5-card Soko, evaluator()", "ours5", soko, 5),
        ("ours   5-card Soko, evaluate()", "ours5", lambda h: evaluate(h, canadian=True), 5),
        ("treys  5-card", "tr_5", treys_eval, 5),
        ("eval7  5-card", "e7_5", eval7_eval, 5),
        ("ours   7-card standard, evaluator()", "ours7", standard, 7),
        ("ours   7-card standard, evaluate()", "ours7", evaluate, 7),
        ("treys  7-card", "tr_7", treys_eval, 7),
        ("eval7  7-card", "e7_7", eval7_eval, 7),
        ("ours   7-card, 1 wild rank, evaluator()", "ours7", wild1, 7),
        ("ours   7-card, 1 wild rank, evaluate()", "ours7", lambda h: evaluate(h, wild_ranks=one_wild), 7),
        ("ours   7-card, 2 wild ranks, evaluator()", "ours7", wild2, 7),
        ("ours   7-card, 2 wild ranks, evaluate()", "ours7",
         lambda h: evaluate(h, wild_ranks=two_wilds), 7),
    ]
    batch_paths = [
        ("ours   batch 7-card standard", {}),
        ("ours   batch 7-card, 1 wild rank", {"wild_ranks": one_wild}),
        ("ours   batch 7-card, 2 wild ranks", {"wild_ranks": two_wilds}),
        ("ours   batch 5-card Soko (canadian)", {"canadian": True, "five": True}),
    ]

    rates: dict[str, float] = {}
    rows: list[tuple[str, float, int]] = []
    for name, key, function, size in paths:
        two_args = key.startswith("tr_")  # treys.Evaluator.evaluate(hand, board), called directly
        time_calls(function, warm[key], two_args=two_args)  # warm-up: fill the lazy caches
        time_calls(function, timed[key], two_args=two_args)
        seconds = time_calls(function, timed[key], repeats=args.repeats, two_args=two_args)
        rates[name] = args.hands / seconds
        rows.append((name, rates[name], size))
    for name, options in batch_paths:
        options = dict(options)
        five = options.pop("five", False)
        array = timed["array"][:, :5] if five else timed["array"]
        warm_array = warm["array"][:, :5] if five else warm["array"]
        evaluate_batch(warm_array, **options)  # warm-up pass: builds the numpy tables
        seconds = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            evaluate_batch(array, **options)
            seconds = min(seconds, time.perf_counter() - start)
        rates[name] = args.hands / seconds
        rows.append((name, rates[name], 5 if five else 7))

    baseline = {5: (rates["treys  5-card"], rates["eval7  5-card"]),
                7: (rates["treys  7-card"], rates["eval7  7-card"])}
    print(f"Hand evaluator benchmark: {args.hands} random hands per path, seed {args.seed}.")
    print(f"Every path was warmed up on {args.warmup} other random hands and on the timed hands "
          f"(our evaluator fills its caches lazily); each rate is the best of {args.repeats} passes;")
    print("cards were converted to each library's format beforehand, outside the timed loops.")
    print("Ratios compare with treys/eval7 on hands of the same size (standard rules; the wild "
          "and Soko paths have no treys/eval7 equivalent).")
    print()
    header = f"{'path':44s} {'evals/second':>14s} {'x treys':>9s} {'x eval7':>9s}"
    print(header)
    print("-" * len(header))
    for name, rate, size in rows:
        treys_rate, eval7_rate = baseline[size]
        print(f"{name:44s} {rate:14,.0f} {rate / treys_rate:9.2f} {rate / eval7_rate:9.2f}")


if __name__ == "__main__":
    main()
