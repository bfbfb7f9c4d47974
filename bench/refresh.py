"""One refresh of a soko_mini training run's exact best response, piece by piece.

    python bench/refresh.py --ppo RUN/final_model.zip   # a model trained by configs/soko_mini_ppo.yaml
    python bench/refresh.py --quick                     # an untrained featured [64, 64] model, 1 repeat

``opponents.self_play.exact_br`` refreshes the best response to the learner once a rollout
(``train/callbacks.py`` ``add_best_response``): the learner's policy at every information set
(``arena.exact.agent_strategy``), the two seats' best responses on two threads, the table saved
and loaded as a ``br:`` agent; the training env then plays it on every slot at once
(``agents.table.BatchedTable``). This times each piece, and the table's play against its
slot-by-slot form in the same run (the reference: the same decisions, one dict a slot).
Wall-clock seconds, NumPy's BLAS on one thread as in training.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import quick_option  # bench/quick_option.py: this folder is on sys.path for a script

from agents.table import BestResponseAgent
from agents.trained import PPOAgent, limit_blas_threads
from arena.exact import agent_strategy, best_response, build_tree, merge_best, save_table
from envs.batched import BatchedGame


def _untrained(rules) -> PPOAgent:
    """A fresh featured [64, 64] tanh policy (seed 0): the config's network, untrained."""
    import torch
    from sb3_contrib import MaskablePPO

    from envs.observation import FEATURES
    from envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv("soko", rules=rules, observation_features=tuple(FEATURES))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[64, 64], activation_fn=torch.nn.Tanh))
    model.observation_features = list(FEATURES)
    return PPOAgent.from_model(model, name="untrained", deterministic=False)


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ppo", default=None, help="a soko_mini model (.zip or .safetensors); default untrained")
    p.add_argument("--repeats", type=int, default=3, help="refreshes timed (the mean is printed)")
    p.add_argument("--slots", type=int, default=128, help="hand slots for the table's play")
    p.add_argument("--steps", type=int, default=200, help="steps of random play timed")
    args = quick_option.parse_args(p, {"repeats": 1, "steps": 20}, argv)
    limit_blas_threads(1)

    tree, seconds = _timed(lambda: build_tree("soko_mini"))
    print(f"tree: {len(tree.nodes)} betting nodes, built in {seconds:.1f} s")
    agent = PPOAgent(path=args.ppo, deterministic=False) if args.ppo else _untrained(tree.rules)
    _, seconds = _timed(lambda: agent_strategy(tree, agent))
    print(f"first policy over the tree (its observations encoded and kept): {seconds:.2f} s")

    parts = {"policy": [], "best responses": [], "table": []}
    with tempfile.TemporaryDirectory() as folder:
        for k in range(args.repeats):
            strategy, seconds = _timed(lambda: agent_strategy(tree, agent))
            parts["policy"].append(seconds)
            with ThreadPoolExecutor(max_workers=2) as pool:
                (best0, best1), seconds = _timed(
                    lambda: list(pool.map(lambda seat: best_response(tree, strategy, seat)[1], (0, 1))))
            parts["best responses"].append(seconds)

            def table():
                path = save_table(tree, Path(folder) / f"br_{k}.npz", actions=merge_best(tree, best0, best1),
                                  compress=False)
                response = BestResponseAgent(path=str(path))
                return response, response.batched(tree.rules)
            (response, form), seconds = _timed(table)
            parts["table"].append(seconds)
        total = sum(float(np.mean(v)) for v in parts.values())
        print("one refresh: " + ", ".join(f"{name} {np.mean(v):.2f} s" for name, v in parts.items())
              + f"; {total:.2f} s in all (mean of {args.repeats})")

        # The table's play: every slot at once against slot by slot, the same decisions.
        game = BatchedGame(tree.rules, 2, args.slots, keep_betting=True)
        game.reset(seeds=np.arange(args.slots))
        rng = np.random.default_rng(0)
        together = one_by_one = 0.0
        for _ in range(args.steps):
            slots = np.flatnonzero(game.current_player >= 0)
            a, seconds = _timed(lambda: form.act_slots(game, slots, rng=rng))
            together += seconds
            b, seconds = _timed(lambda: form._act_each(game, slots, None))
            one_by_one += seconds
            if not np.array_equal(a, b):
                raise SystemExit("the table's two forms chose different actions")
            legal = [np.flatnonzero(m) for m in game.action_mask]
            game.step(np.array([rng.choice(x) if len(x) else -1 for x in legal]))
        print(f"the table on {args.slots} slots: {1e3 * together / args.steps:.2f} ms a step at once, "
              f"{1e3 * one_by_one / args.steps:.2f} ms slot by slot (the reference): "
              f"{one_by_one / together:.1f}x")


if __name__ == "__main__":
    main()
