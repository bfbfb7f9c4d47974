"""The default training run with its rollouts alternating between the local best response's code
as it is ("new") and as it was before one of its changes ("old"), in one run (`--compare`):

- ``ahead`` (the default): the likelihoods computed ahead (``BatchedLBR.ahead`` at each step's
  end, finished when the rollout ends, the rollouts' forward passes one network after the
  other) against none (no ``ahead``, the rollouts' passes of the policy's and the value's
  networks side by side);
- ``draws``: the roll-outs' uniform draws made by the core from its copy of each hand's NumPy
  generator (``src/util/numpy_rng.h``) against a NumPy ``Generator`` made and drawn from in
  Python (what ``BatchedLBR`` does for a hand without a seed the core takes), for the hands
  whose first decision falls in a rollout of that mode.

Both modes play the same hands and train the same weights, so one run compares them on the same
machine at the same minutes (this machine's speed drifts by a tenth within an hour: two whole
runs cannot tell 5% apart).

It prints, per mode, the mean seconds of a rollout period (a rollout's start to the next's: its
steps and its update), the env's share of it (``TimedVecEnv``), the update's (rollout end to the
next start) and the rest (the learner's forward passes, SB3's loop), over the rollouts past
``--skip`` timesteps (the local best response plays from the first snapshot on). The run folder
is a normal run's.

    .venv/bin/python bench/lbr_ahead.py [--compare ahead|draws] [--config configs/soko_ppo.yaml]
                                        [--steps 1500000]
"""

from __future__ import annotations

import argparse
import sys
import time

import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

# `--quick` (bench/quick_option.py): these options.
QUICK = {"steps": 140_000, "skip": 100_000}
MODES = ("old", "new")


def install(stats: dict, mode: list[int], skip: int, compare: str = "ahead") -> None:
    """Patch what ``compare`` changes (``ahead``: the env's ``_ahead`` and the extractor's pass
    without gradients; ``draws``: ``BatchedLBR.seed``) and ``TimeShares``' rollout hooks: the mode
    flips at each rollout's start, and each period is booked to its mode."""
    import train.callbacks as cb

    if compare == "ahead":
        _compare_ahead(mode)
    else:
        _compare_draws(mode)
    on_start, on_end = cb.TimeShares._on_rollout_start, cb.TimeShares._on_rollout_end
    marks: dict = {}

    def rollout_end(self) -> None:
        marks["end"] = time.perf_counter()
        on_end(self)

    def rollout_start(self) -> None:
        now = time.perf_counter()
        if "start" in marks and self.num_timesteps > skip:
            s = stats[MODES[mode[0]]]
            s["n"] += 1
            s["period"] += now - marks["start"]
            s["env"] += self.env.seconds - marks["env"]
            s["update"] += now - marks["end"]
        mode[0] = (mode[0] + 1) % len(MODES)
        marks.update(start=now, env=self.env.seconds)
        on_start(self)

    cb.TimeShares._on_rollout_start, cb.TimeShares._on_rollout_end = rollout_start, rollout_end


def _compare_draws(mode: list[int]) -> None:
    """Old mode: each new hand's seed stays in Python (its draws from a NumPy ``Generator``)."""
    from arena.lbr import BatchedLBR

    seed = BatchedLBR.seed

    def python_draws(self, slot: int, value: int) -> None:
        seed(self, slot, value)
        if MODES[mode[0]] == "old":
            self.player.seed(slot, None)

    BatchedLBR.seed = python_draws


def _compare_ahead(mode: list[int]) -> None:
    import torch

    import train.batched_vec as bv
    from agents import side_by_side as sbs

    ahead = bv.BatchedVecEnv._ahead

    def _ahead(self) -> None:
        if MODES[mode[0]] == "new":
            ahead(self)

    forward = sbs.SideBySideExtractor.forward

    def side_by_side_forward(self, features):   # the old pass without gradients
        if MODES[mode[0]] == "old" and not torch.is_grad_enabled():
            def value():
                with torch.no_grad():
                    return self.value_net(features)
            future = sbs._the_worker().submit(value)
            return self.policy_net(features), sbs._wait(future)
        return forward(self, features)

    bv.BatchedVecEnv._ahead = _ahead
    sbs.SideBySideExtractor.forward = side_by_side_forward


def main(args: argparse.Namespace) -> int:
    from train.ppo import cli

    stats = {m: {"n": 0, "period": 0.0, "env": 0.0, "update": 0.0} for m in MODES}
    install(stats, [len(MODES) - 1], args.skip, args.compare)
    code = cli(["--config", args.config, "--seed", str(args.seed), "--no-progress",
                "--set", f"run.total_timesteps={args.steps}"])
    if code:
        return code
    for m in MODES:
        s = stats[m]
        n = max(s["n"], 1)
        ms = {k: 1000 * s[k] / n for k in ("period", "env", "update")}
        rest = ms["period"] - ms["env"] - ms["update"]
        print(f"{m}: {s['n']} rollouts, period {ms['period']:.1f} ms, env {ms['env']:.1f}, "
              f"update {ms['update']:.1f}, rest {rest:.1f}")
    old, new = stats["old"], stats["new"]
    if old["n"] and new["n"]:
        ratio = (new["period"] / new["n"]) / (old["period"] / old["n"])
        print(f"new / old: {ratio:.3f} of a rollout period")
    return 0


def cli(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compare", choices=("ahead", "draws"), default="ahead",
                   help="the change whose code before alternates with the code as it is")
    p.add_argument("--config", default="configs/soko_ppo.yaml")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=1_500_000, help="the run's timesteps")
    p.add_argument("--skip", type=int, default=200_000,
                   help="rollouts up to this many timesteps are not counted")
    args = quick_option.parse_args(p, QUICK, argv)
    if args.steps < 1 or args.skip < 0:
        p.error("--steps must be at least 1 and --skip at least 0")
    return main(args)


if __name__ == "__main__":
    sys.exit(cli())
