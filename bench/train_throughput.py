"""Training throughput: env-steps a second of MaskablePPO learning, ours against the tutorial,
and the training env (``train/batched_vec.py``, hands on the compiled core) against
``SingleAgentEnv`` copies in SB3's ``DummyVecEnv`` (the single-agent pipeline it replaced).

Runs in one process, interleaved one rollout-plus-update at a time (so a busy machine slows
every setup alike):

- **ours**: the default experiment, ``configs/soko_ppo.yaml`` (Soko heads-up, its opponent
  pool, its PPO settings, envs and torch threads), through ``train.ppo.training_env`` exactly
  as ``train/ppo.py`` builds it (with its observation features);
- **single_agent / batched**: the same config (its observation features and its pool, equity
  included), once as ``--single-envs`` (16) ``envs.single_agent.SingleAgentEnv`` in SB3's
  ``DummyVecEnv`` (the reference: the single-agent pipeline training had until 2026-12-04,
  built here without that pipeline's cached masks, so its rate is somewhat lower than the
  pipeline's was and the ratios are not comparable with figures from before that date) and
  once on the batched env for each slot count of
  ``--slots`` (the config's own count is the **ours** row), each with ``n_steps`` = the
  config's rollout size / slots, so every setup learns from rollouts of the same size;
  ``--no-features`` measures these rows without the observation features (the comparison
  before the features were in the default);
- **tutorial, 1 env / 4 envs**: PettingZoo's SB3 action-masking tutorial setup on
  ``texas_holdem_v4``: its ``SB3ActionMaskWrapper`` around the AEC env, ``ActionMasker``,
  ``MaskablePPO(MaskableActorCriticPolicy, env)`` with every default (``n_steps=2048``,
  ``batch_size=64``, ``n_epochs=10``, ``[64, 64]``), torch's default thread count and
  distribution argument checks, in one env or a ``DummyVecEnv`` of four.

``--env-threads 1 2`` measures each batched row once per value of ``ppo.env_threads`` (the
threads the core steps its hands on; default: the config's). ``--observe-every-seat`` adds, for
each batched row, the same setup with the core writing every player's observation
(``BatchedVecEnv(observe_every_seat=True)``, as before the env listed only the seats that read
them): an A/B of that change in the same run. ``--env-step-cost`` times only
``BatchedVecEnv.step`` on the config's env and pool with a uniformly random learner, in
microseconds per learner step for each of ``--slots``, readers only against every seat
(interleaved), and skips the training rows; with ``--snapshot MODEL`` the pool is a real run's
after its first snapshot (the model as the snapshot, the config's local best response to it).

Every setup plays the config's pool as it is at step 0: the baselines, without the learner's
snapshots or the local best response to them (``opponents.self_play``), which join later in a
real run (the local best response plays in Python: see docs/results.md for a whole run's time).

An env-step is one ``VecEnv.step`` transition of one env: one learner decision in ours (the
opponents' actions happen inside it), one player's action in the tutorial (it plays both
seats). The time covers rollouts and gradient updates; the first rollout of each is warm-up.
A second table splits each of ours into the env (``VecEnv`` step and mask calls, opponents
included), the rest of SB3's rollout collection (policy forward passes, buffers, callbacks)
and the gradient updates.

    .venv/bin/python bench/train_throughput.py [--rounds 4] [--slots 16 256] [--env-threads 1 2]
        [--single-envs 16] [--no-features] [--observe-every-seat] [--env-step-cost [--env-seconds 2]
        [--snapshot MODEL]] [--quick]

Targets: ours at least 2x the tutorial's best (issue #5); the batched env at least 4x the
single-agent pipeline on the same config, with the env at most 10% of its time (issue #14).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

import gymnasium  # noqa: E402
import quick_option  # noqa: E402  (bench/quick_option.py: this folder is on sys.path for a script)
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from sb3_contrib.common.wrappers import ActionMasker  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from train.checks import load_checked_config  # noqa: E402
from train.config import Config  # noqa: E402
from train.ppo import _new_model, training_env  # noqa: E402
from train.vec import set_pool  # noqa: E402

DEFAULT_THREADS = torch.get_num_threads()


# ----------------------------------------------------------------------------------------
# PettingZoo's tutorial setup


def _texas_holdem_v4():
    """``texas_holdem_v4``; its module imports pygame for rendering only, so a stub stands in
    when pygame is not installed (nothing here renders)."""
    try:
        import pygame  # noqa: F401
    except ImportError:
        class Anything:
            def __getattr__(self, name):
                return self

        def attribute(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return Anything()

        stub = types.ModuleType("pygame")
        stub.__getattr__ = attribute
        sys.modules["pygame"] = stub
    from pettingzoo.classic import texas_holdem_v4

    return texas_holdem_v4


def _tutorial_wrapper():
    import pettingzoo.utils

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
        """The tutorial's wrapper (tutorials/SB3/connect_four/sb3_connect_four_action_mask.py),
        also a ``gymnasium.Env`` so that gymnasium 1.x wrappers accept it."""

        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            current_agent = self.agent_selection
            super().step(action)
            next_agent = self.agent_selection
            return (self.observe(next_agent), self._cumulative_rewards[current_agent],
                    self.terminations[current_agent], self.truncations[current_agent],
                    self.infos[current_agent])

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    return SB3ActionMaskWrapper


def tutorial_model(n_envs: int, seed: int = 0, n_steps: int = 2048) -> MaskablePPO:
    holdem = _texas_holdem_v4()
    wrapper = _tutorial_wrapper()

    def make(i: int):
        def thunk():
            env = wrapper(holdem.env())
            env.reset(seed=seed + i)
            return ActionMasker(env, lambda e: e.action_mask())
        return thunk

    env = make(0)() if n_envs == 1 else DummyVecEnv([make(i) for i in range(n_envs)])
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=n_steps, verbose=0)
    model.set_random_seed(seed)
    return model


# ----------------------------------------------------------------------------------------
# Ours


def _ppo_model(cfg: Config, venv, *, n_steps: int, seed: int) -> MaskablePPO:
    """The model train/ppo.py builds for ``cfg`` (``train.ppo._new_model``) on ``venv``,
    ``n_steps`` per env a rollout."""
    return _new_model(dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, n_steps=n_steps)), venv, seed)


def our_model(cfg: Config, seed: int = 0) -> MaskablePPO:
    venv = training_env(cfg, seed=seed)
    venv.seed(seed)
    set_pool(venv, cfg.opponents.baselines, [], self_play_weight=0.0, seed=seed, generation=0)
    return _ppo_model(cfg, venv, n_steps=cfg.ppo.n_steps, seed=seed)


def single_agent_model(cfg: Config, n_envs: int, seed: int = 0) -> MaskablePPO:
    """The reference: ``n_envs`` ``SingleAgentEnv`` copies of the config's game in SB3's
    ``DummyVecEnv``, each with the config's pool at step 0 (its own generators), n_steps the
    config's rollout size / ``n_envs``."""
    import numpy as np

    from envs.engine.rules import get_rules
    from envs.single_agent import GAMES, SingleAgentEnv
    from train.opponents import build_pool
    from train.vec import EpisodeMonitor

    family = next(g for g, presets in GAMES.items() if cfg.env.game in presets)
    rules = get_rules(cfg.env.game, **cfg.env.rule_overrides())

    def make(i: int):
        def thunk():
            env = SingleAgentEnv(family, rules=rules, num_players=cfg.env.players,
                                 observation_features=tuple(cfg.env.observation_features))
            pool, weights = build_pool(cfg.opponents.baselines, [], self_play_weight=0.0,
                                       seed=np.random.SeedSequence(seed, spawn_key=(0, i)), rules=rules)
            env.set_opponents(pool, weights)
            env.reset(seed=seed + i)
            return env
        return thunk

    venv = EpisodeMonitor(DummyVecEnv([make(i) for i in range(n_envs)]))
    venv.seed(seed)
    return _ppo_model(cfg, venv, n_steps=max(1, cfg.ppo.n_steps * cfg.ppo.n_envs // n_envs), seed=seed)


# ----------------------------------------------------------------------------------------


# `--quick` (bench/quick_option.py): these options.
QUICK = {"rounds": 1, "tutorial_n_steps": 512, "one_thread_tutorial_only": True, "slots": [256]}


class Setup:
    def __init__(self, label: str, model: MaskablePPO, *, threads: int, validate: bool) -> None:
        self.label = label
        self.model = model
        self.threads = threads
        self.validate = validate
        self.steps = 0
        self.seconds = 0.0
        self.rollout = model.n_steps * model.n_envs
        # The profile split: time in the env, in SB3's rollout collection, in gradient updates.
        self.split = {"env": 0.0, "collect": 0.0, "train": 0.0}
        self._profiling = False
        model = self.model
        for name, key in (("collect_rollouts", "collect"), ("train", "train")):
            setattr(model, name, self._timed(getattr(model, name), key))
        env = model.get_env()
        for name in ("step", "reset", "env_method"):
            setattr(env, name, self._timed(getattr(env, name), "env"))

    @contextlib.contextmanager
    def settings(self):
        torch.set_num_threads(self.threads)
        torch.distributions.Distribution.set_default_validate_args(self.validate)
        yield

    def _timed(self, method, key: str):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                if self._profiling:
                    self.split[key] += time.perf_counter() - start
        return timed

    def run(self, *, measure: bool) -> None:
        with self.settings():
            before = self.model.num_timesteps
            self._profiling = measure
            start = time.perf_counter()
            self.model.learn(self.rollout, reset_num_timesteps=False)
            elapsed = time.perf_counter() - start
            self._profiling = False
        if measure:
            self.steps += self.model.num_timesteps - before
            self.seconds += elapsed

    def shares(self) -> tuple[float, float, float]:
        """Shares of the measured time: env, the rest of rollout collection, gradient updates."""
        env, collect, train = self.split["env"], self.split["collect"], self.split["train"]
        return env / self.seconds, (collect - env) / self.seconds, train / self.seconds

    @property
    def rate(self) -> float:
        return self.steps / self.seconds if self.seconds else float("nan")


def env_step_cost(cfg: Config, slots: int, *, every_seat: bool, seconds: float, seed: int = 0,
                  threads: int = 1, snapshot: str | None = None, lbr_engine: str = "auto") -> float:
    """Microseconds per learner step of ``BatchedVecEnv.step`` (opponents included) at ``slots``
    hand slots, the config's env and pool, a uniformly random learner; about ``seconds`` of it.
    ``snapshot``: a model standing in for the learner's newest snapshot, so the pool is a real
    run's after its first snapshot (the config's self-play share and local best response, played
    by ``lbr_engine``: ``auto`` on the core for every slot at once, ``python`` hand by hand)."""
    import numpy as np

    from agents.trained import PPOAgent
    from train.batched_vec import BatchedVecEnv

    env = BatchedVecEnv(cfg.env.game, cfg.env.players, slots,
                        observation_features=cfg.env.observation_features,
                        seed=seed, observe_every_seat=every_seat, threads=threads)
    if snapshot is None:
        set_pool(env, cfg.opponents.baselines, [], self_play_weight=0.0, seed=seed, generation=0)
    else:
        sp = cfg.opponents.self_play
        snap = PPOAgent(path=snapshot, deterministic=sp.deterministic)
        snap.name = "snapshot"
        set_pool(env, cfg.opponents.baselines, [snap], self_play_weight=sp.weight, seed=seed, generation=1,
                 lbr_weight=sp.lbr, lbr_samples=sp.lbr_samples, lbr_engine=lbr_engine)
    env.reset()
    rng = np.random.default_rng(seed)
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        masks = env.action_masks()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        start = time.perf_counter()
        env.step(actions)
        elapsed += time.perf_counter() - start
        steps += 1
    return elapsed / (steps * slots) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "soko_ppo.yaml"))
    parser.add_argument("--rounds", type=int, default=4,
                        help="measured rollouts per setup (after one warm-up)")
    parser.add_argument("--single-envs", type=int, default=16,
                        help="SingleAgentEnv copies of the reference row (n_steps = rollout size / copies)")
    parser.add_argument("--tutorial-n-steps", type=int, default=2048,
                        help="the tutorial's rollout length per env (its default, SB3's, is 2048)")
    parser.add_argument("--one-thread-tutorial-only", action="store_true",
                        help="skip the tutorial setups with torch's default thread count: the slowest "
                             "rows (minutes on a busy machine, where their threads fight for the cores), "
                             "and not the best tutorial setup here")
    parser.add_argument("--slots", type=int, nargs="+", default=[16, 256],
                        help="hand slots of the batched env to measure (n_steps = rollout size / slots)")
    parser.add_argument("--no-features", action="store_true",
                        help="compare single_agent and batched without the config's observation features")
    parser.add_argument("--observe-every-seat", action="store_true",
                        help="also measure each batched row with the core writing every seat's observation")
    parser.add_argument("--env-threads", type=int, nargs="+", default=None,
                        help="the batched rows' ppo.env_threads, one row per value (default: the config's)")
    parser.add_argument("--env-step-cost", action="store_true",
                        help="only time BatchedVecEnv.step per learner step at each of --slots "
                             "(readers only against every seat), no training")
    parser.add_argument("--env-seconds", type=float, default=2.0,
                        help="with --env-step-cost: seconds of stepping per measurement")
    parser.add_argument("--snapshot", default=None, metavar="MODEL",
                        help="with --env-step-cost: a model as the learner's newest snapshot, so the pool "
                             "is a real run's after its first one (self-play and the local best response)")
    parser.add_argument("--lbr-engine", choices=("auto", "core", "python"), default="auto",
                        help="with --snapshot: how the local best response plays (arena.lbr.ENGINES; "
                             "python: hand by hand, as before the core played it)")
    args = quick_option.parse_args(parser, QUICK, argv)

    cfg = load_checked_config(args.config)
    env_threads = args.env_threads or [cfg.ppo.env_threads]
    from agents.trained import limit_blas_threads

    # As train/ppo.py: the opponents' NumPy passes on torch's threads (NumPy's own BLAS threads
    # spin, and made a step with the local best response in the pool 1.6x as slow here).
    limit_blas_threads(cfg.ppo.torch_threads)
    if args.env_step_cost:
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; us per learner step of "
              f"BatchedVecEnv.step, {args.rounds} rounds of {args.env_seconds:g} s each, interleaved",
              flush=True)
        for slots in args.slots:
            for n in env_threads:
                cost = {False: [], True: []}
                for _ in range(args.rounds):
                    for every in (True, False):
                        cost[every].append(env_step_cost(cfg, slots, every_seat=every,
                                                         seconds=args.env_seconds, threads=n,
                                                         snapshot=args.snapshot, lbr_engine=args.lbr_engine))
                mine, before = min(cost[False]), min(cost[True])
                print(f"{slots:>5} slots, {n} thread{'s' if n > 1 else ''}: readers only {mine:6.2f} us "
                      f"(rounds {' '.join(f'{c:.2f}' for c in cost[False])}), every seat {before:6.2f} us "
                      f"({' '.join(f'{c:.2f}' for c in cost[True])}): {before / mine:.2f}x (best of each)")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return
    tutorial_steps = args.tutorial_n_steps
    threads = cfg.ppo.torch_threads
    setups = [
        Setup(f"ours: {Path(args.config).name} ({cfg.ppo.n_envs} x batched)", our_model(cfg), threads=threads,
              validate=False),
    ]
    # The single-agent reference and the batched env on the same config (or without features).
    features = ["env.observation_features=[]"] if args.no_features else []
    tag = ", no features" if args.no_features else ""
    plain = load_checked_config(args.config, overrides=features)
    rollout = plain.ppo.n_steps * plain.ppo.n_envs
    single = Setup(f"single_agent{tag} ({args.single_envs} x DummyVecEnv)",
                   single_agent_model(plain, args.single_envs), threads=threads, validate=False)
    batched = []
    for slots in args.slots:
        for n in env_threads:
            same_as_ours = (not args.no_features and slots == cfg.ppo.n_envs
                            and rollout // slots == cfg.ppo.n_steps and n == cfg.ppo.env_threads)
            if same_as_ours:
                batched.append(setups[0])
                continue
            variant = load_checked_config(
                args.config, overrides=[*features, f"ppo.env_threads={n}",
                                        f"ppo.n_envs={slots}", f"ppo.n_steps={max(1, rollout // slots)}"])
            batched.append(Setup(f"batched{tag} ({slots} slots x {variant.ppo.n_steps}, {n} env thread"
                                 f"{'s' if n > 1 else ''})", our_model(variant), threads=threads,
                                 validate=False))
    twins = []   # --observe-every-seat: the same setups writing every seat's observation (A/B)
    if args.observe_every_seat:
        for b in batched:
            variant = load_checked_config(
                args.config, overrides=[*features,
                                        f"ppo.env_threads={b.model.get_env().unwrapped.game.threads}",
                                        f"ppo.n_envs={b.model.n_envs}", f"ppo.n_steps={b.model.n_steps}"])
            twin = Setup(f"batched{tag}, every seat ({b.model.n_envs} slots x {b.model.n_steps})",
                         our_model(variant), threads=threads, validate=False)
            twin.model.get_env().unwrapped.observe_every_seat = True
            twins.append(twin)
    setups += [single, *[b for b in batched if b is not setups[0]], *twins]
    if not args.one_thread_tutorial_only:
        setups += [
            Setup("tutorial: texas_holdem_v4, 1 env", tutorial_model(1, n_steps=tutorial_steps),
                  threads=DEFAULT_THREADS, validate=True),
            Setup("tutorial: texas_holdem_v4, 4 envs", tutorial_model(4, n_steps=tutorial_steps),
                  threads=DEFAULT_THREADS, validate=True),
        ]
    setups.append(Setup("tutorial, 4 envs, 1 torch thread", tutorial_model(4, n_steps=tutorial_steps),
                        threads=1, validate=True))

    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; torch default threads "
          f"{DEFAULT_THREADS}; {args.rounds} measured rollouts each, interleaved", flush=True)
    for s in setups:
        s.run(measure=False)
    for r in range(args.rounds):
        for s in setups:
            s.run(measure=True)
        print(f"  round {r + 1}/{args.rounds} done", flush=True)

    reference = max(s.rate for s in setups if s.label.startswith("tutorial"))
    ours = setups[0].rate
    width = 52
    print(f"\n{'setup':{width}} {'env-steps/s':>12} {'steps':>9} {'seconds':>8} {'x best tutorial':>16}")
    for s in setups:
        print(f"{s.label:{width}} {s.rate:>12.0f} {s.steps:>9} {s.seconds:>8.1f} {s.rate / reference:>16.2f}")
    print("\nwhere the time goes (shares of each setup's measured time):")
    print(f"{'setup':{width}} {'env+opponents':>14} {'SB3 collection':>15} {'gradient updates':>17} "
          f"{'x single_agent':>15}")
    for s in dict.fromkeys([setups[0], single, *batched, *twins]):
        env, collect, train = s.shares()
        print(f"{s.label:{width}} {env:>14.1%} {collect:>15.1%} {train:>17.1%} {s.rate / single.rate:>15.2f}")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    print(f"target: ours >= 2x the best tutorial setup: {ours / reference:.2f}x "
          f"-> {'met' if ours >= 2 * reference else 'NOT met'}")
    best = max(batched, key=lambda s: s.rate)
    env_share = best.shares()[0]
    ratio = best.rate / single.rate
    print(f"target: batched >= 4x single_agent on the same config, env <= 10% of its time: best is "
          f"{best.label}, {ratio:.2f}x, env {env_share:.1%} -> "
          f"{'met' if ratio >= 4 and env_share <= 0.10 else 'NOT met'}")
    for s in setups:
        s.model.get_env().close()


if __name__ == "__main__":
    main()
