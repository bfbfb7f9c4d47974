"""The training env's trace: a fixed learner against a config's opponents, as numbers to compare
between two checkouts (does the training env play the same hands, step for step?).

    .venv/bin/python bench/env_trace.py                     # the shipped Soko champion as the learner
    .venv/bin/python bench/env_trace.py --model RUN/final_model.zip --run RUN --step 409600
    PYTHONPATH=/other/checkout .venv/bin/python bench/env_trace.py --model MODEL    # its code

Without ``--run``: one case per opponent, each alone in the pool: every baseline of the
config's ``opponents.baselines``, a snapshot (the model itself, sampling) and, when the config
has ``self_play.lbr``, a local best response to that snapshot. With ``--run RUN --step N``: one
case, the pool that run had after step N (the config's baselines, the run's newest
``self_play.keep`` snapshots up to N, the local best response to the newest, with the config's
weights), the learner's draws the same. Each case starts a fresh env (``--slots`` hand slots,
``--seed``) and runs ``--steps`` learner steps; it prints the hands finished, the learner's mean
reward in big bets per 100 hands and a SHA-256 of every step's observations and rewards. Two
checkouts that print the same digests played the same cards, actions and rewards. The core
steps on one thread (its hands are the same on any number) and the NumPy forward passes run on
``ppo.torch_threads`` BLAS threads, as in training, so the seconds printed are comparable too.
``--threads 2`` steps the core on two threads as training does (the local best response's
likelihoods computed ahead on the second while the learner picks its actions): the same digests.

The learner samples from the model's policy (``PPOAgent.choose_batch``) with uniform draws from
its own generator (``--seed``), so its draws do not depend on the env's. This checkout reads
models as agent files or SB3 zips weights-only (nothing is unpickled); an older checkout's code
reads them its own way. 65236fe's code (issue 25's start, before agent files: give it zips) runs
it; older checkouts may lack an API it uses.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from agents.trained import PPOAgent
from train.batched_vec import make_batched_vec_env
from train.config import load_config
from train.vec import set_pool


def _snapshots(run: Path, step: int, keep: int) -> list[Path]:
    """The run's snapshot files (``snapshot_<steps>.zip``) up to ``step``, the newest ``keep``."""
    by_step = {int(p.stem.removeprefix("snapshot_")): p for p in (run / "snapshots").glob("snapshot_*.zip")
               if p.stem.removeprefix("snapshot_").isdigit()}
    return [by_step[s] for s in sorted(by_step) if s <= step][-keep:]


def trace(cfg, learner: PPOAgent, baselines: dict, snapshots: list, *, self_play_weight: float,
          lbr_weight: float, steps: int, slots: int, seed: int, generation: int, threads: int = 1) -> dict:
    """Run ``steps`` learner steps against one pool; the hands, mean reward and digest."""
    venv = make_batched_vec_env(cfg.env, n_envs=slots, seed=seed, threads=threads)
    set_pool(venv, baselines, snapshots, self_play_weight=self_play_weight, seed=seed,
             generation=generation, lbr_weight=lbr_weight, lbr_samples=cfg.opponents.self_play.lbr_samples)
    env = venv.unwrapped
    draws = np.random.default_rng(seed)
    digest = hashlib.sha256()
    observations = venv.reset()
    rewards: list[float] = []
    start = time.perf_counter()
    for _ in range(max(1, steps // slots)):
        actions = learner.choose_batch(observations, env.action_masks(), uniforms=draws.random(slots))
        observations, reward, done, _ = venv.step(actions)
        digest.update(np.ascontiguousarray(observations).tobytes())
        digest.update(np.ascontiguousarray(reward).tobytes())
        rewards.extend(reward[done].tolist())
    r = np.asarray(rewards)
    return {"hands": len(r), "bb100": float(r.mean() * 100) if len(r) else float("nan"),
            "sha256": digest.hexdigest()[:16], "seconds": time.perf_counter() - start}


def main(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    from agents.trained import limit_blas_threads

    limit_blas_threads(cfg.ppo.torch_threads)   # the NumPy forward passes on as many threads as training
    learner = PPOAgent(path=args.model, deterministic=False)
    sp = cfg.opponents.self_play
    baselines = dict(cfg.opponents.baselines)
    common = {"steps": args.steps, "slots": args.slots, "seed": args.seed, "threads": args.threads}
    if args.run:
        snaps = [PPOAgent(path=str(p), deterministic=sp.deterministic)
                 for p in _snapshots(Path(args.run), args.step, sp.keep)]
        if not snaps:
            print(f"error: {args.run} has no snapshots/snapshot_<steps>.zip up to step {args.step}",
                  file=sys.stderr)
            return 2
        cases = [(f"pool at {args.step}", baselines, snaps, sp.weight, sp.lbr, len(snaps))]
    else:
        snap = PPOAgent(path=args.model, deterministic=False)
        cases = [(name, {name: 1.0}, [], 0.0, 0.0, 0) for name in baselines]
        cases.append(("snapshot", {}, [snap], 1.0, 0.0, 1))
        if sp.lbr > 0:
            cases.append(("lbr", {}, [snap], 0.0, 1.0, 1))
    for name, base, snaps, share, lbr, generation in cases:
        out = trace(cfg, learner, base, snaps, self_play_weight=share, lbr_weight=lbr,
                    generation=generation, **common)
        print(f"{name:22s} hands {out['hands']:7d}  {out['bb100']:+8.2f} bb/100  "
              f"sha256 {out['sha256']}  ({out['seconds']:.0f} s)", flush=True)
    return 0


def cli(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None,
                   help="the learner: an agent file or an SB3 zip (default: the shipped Soko champion)")
    p.add_argument("--config", default="configs/soko_ppo.yaml", help="the env and the opponents")
    p.add_argument("--run", default=None, help="a run folder: its pool after --step instead of each opponent")
    p.add_argument("--step", type=int, default=0, help="with --run: the step whose pool to play")
    p.add_argument("--steps", type=int, default=204_800, help="learner steps per case")
    p.add_argument("--slots", type=int, default=256, help="hand slots")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="the core's threads (training's: 2)")
    args = quick_option.parse_args(p, {"steps": 2048}, argv)
    if args.steps < 1 or args.slots < 1 or args.threads < 1:
        p.error("--steps, --slots and --threads must be at least 1")
    args.model = quick_option.model_or_champion(p, args.model)
    try:
        return main(args)
    except (ValueError, OSError) as exc:   # a bad config, model or run folder: one line
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(cli())
