"""The gradient update of the default config: SB3's ``MaskablePPO.train()`` against
``train.update.LeanMaskablePPO.train()`` (the same operators with less Python around them), in one
process, alternating on the same rollout so that the machine's drift slows both alike.

The model is the one ``train/ppo.py`` builds for ``--config`` (its sparse first layers, fused
Adam, the networks side by side, torch on the config's threads), on its training env; it learns
``--warmup`` rollouts first, then each round runs one update of each kind on the last rollout,
in turn. Before timing, one update of each from the same weights, optimizer state and random
state is checked to give the same weights bit for bit. Prints the median milliseconds of an
update of each and their ratio (lean / SB3).

``--whole-run`` instead trains the config as ``train/ppo.py`` does (``--steps`` timesteps, seed
0) with its updates alternating between the two (the same weights either way, so the run is the
config's run), and prints each kind's mean update, the run's wall time and the run's time with
every update of one kind (the wall time less or plus the difference in the other kind's
updates): what the lean update saves of a whole run, measured in it (the env's work between the
updates leaves the caches as in training).

    .venv/bin/python bench/update_speed.py [--config configs/soko_ppo.yaml] [--rounds 20]
    .venv/bin/python bench/update_speed.py --whole-run [--steps 1500000]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

# `--quick` (bench/quick_option.py): these options.
QUICK = {"rounds": 2, "warmup": 1}


def whole_run(args: argparse.Namespace) -> int:
    from sb3_contrib import MaskablePPO

    from train.ppo import cli
    from train.update import LeanMaskablePPO

    kinds = {"sb3": MaskablePPO.train, "lean": LeanMaskablePPO.train}
    seconds = {name: [] for name in kinds}
    turn = [0]

    def alternating(model) -> None:
        name = list(kinds)[turn[0] % 2]
        turn[0] += 1
        start = time.perf_counter()
        kinds[name](model)
        seconds[name].append(time.perf_counter() - start)

    LeanMaskablePPO.train = alternating
    start = time.perf_counter()
    try:
        code = cli(["--config", args.config, "--seed", "0", "--no-progress",
                    "--set", f"run.total_timesteps={args.steps}"])
    finally:
        LeanMaskablePPO.train = kinds["lean"]
    wall = time.perf_counter() - start
    if code:
        return code
    mean = {name: 1000 * sum(s) / max(len(s), 1) for name, s in seconds.items()}
    for name in kinds:
        print(f"{name}: {len(seconds[name])} updates, mean {mean[name]:.1f} ms")
    diff = (mean["sb3"] - mean["lean"]) / 1000
    all_sb3, all_lean = wall + diff * len(seconds["lean"]), wall - diff * len(seconds["sb3"])
    print(f"lean / sb3: {mean['lean'] / mean['sb3']:.3f} of an update; the run took {wall:.1f} s: "
          f"with every update SB3's about {all_sb3:.1f} s, every update lean {all_lean:.1f} s "
          f"({all_lean / all_sb3:.3f})")
    return 0


def main(args: argparse.Namespace) -> int:
    if args.whole_run:
        return whole_run(args)
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from train.config import load_config
    from train.ppo import _new_model, training_env
    from train.update import LeanMaskablePPO, lean_applies

    cfg = load_config(args.config)
    torch.set_num_threads(cfg.ppo.torch_threads)
    torch.distributions.Distribution.set_default_validate_args(False)   # as train/ppo.py runs
    venv = training_env(cfg)
    try:
        model = _new_model(cfg, venv, cfg.run.seed)
        if not lean_applies(model):
            print(f"{args.config}: the lean update does not apply to this model", file=sys.stderr)
            return 2
        model.learn(total_timesteps=args.warmup * cfg.ppo.n_steps * cfg.ppo.n_envs)
    finally:
        venv.close()
    kinds = {"sb3": MaskablePPO.train, "lean": LeanMaskablePPO.train}

    state = (copy.deepcopy(model.policy.state_dict()), copy.deepcopy(model.policy.optimizer.state_dict()),
             np.random.get_state())
    weights = {}
    for name, train in kinds.items():
        model.policy.load_state_dict(state[0])
        model.policy.optimizer.load_state_dict(copy.deepcopy(state[1]))
        np.random.set_state(state[2])
        train(model)
        weights[name] = copy.deepcopy(model.policy.state_dict())
    same = all(torch.equal(weights["sb3"][k], weights["lean"][k]) for k in weights["sb3"])
    print(f"one update from the same state: {'the same weights' if same else 'DIFFERENT weights'}")

    seconds = {name: [] for name in kinds}
    for _ in range(args.rounds):
        for name, train in kinds.items():
            start = time.perf_counter()
            train(model)
            seconds[name].append(time.perf_counter() - start)
    median = {name: 1000 * float(np.median(s)) for name, s in seconds.items()}
    rows = cfg.ppo.n_steps * cfg.ppo.n_envs
    print(f"{args.config}: {rows} rows an update, {cfg.ppo.n_epochs} epochs of {cfg.ppo.batch_size}; "
          f"{args.rounds} updates of each")
    for name in kinds:
        print(f"{name}: median {median[name]:.1f} ms an update")
    print(f"lean / sb3: {median['lean'] / median['sb3']:.3f}")
    return 0 if same else 1


def cli(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="configs/soko_ppo.yaml")
    p.add_argument("--rounds", type=int, default=20, help="updates of each kind timed")
    p.add_argument("--warmup", type=int, default=2, help="rollouts learned before timing")
    p.add_argument("--whole-run", action="store_true",
                   help="train the config with the updates alternating between the two")
    p.add_argument("--steps", type=int, default=1_500_000, help="--whole-run: the run's timesteps")
    args = quick_option.parse_args(p, QUICK, argv)
    if args.rounds < 1 or args.warmup < 1 or args.steps < 1:
        p.error("--rounds, --warmup and --steps must be at least 1")
    return main(args)


if __name__ == "__main__":
    sys.exit(cli())
