"""Vectorized training envs: ``SingleAgentEnv`` copies in ``DummyVecEnv`` or ``SubprocVecEnv``.

``make_vec_env(cfg.env, ...)`` builds ``EpisodeMonitor(VecMaskCache(DummyVecEnv | SubprocVecEnv))``:

- ``EpisodeMonitor`` (SB3's ``VecMonitor``, visiting only the envs whose episode ended) gives
  SB3 its ``rollout/ep_rew_mean`` and ``ep_len_mean`` (one episode = one hand, reward in big
  bets).
- ``VecMaskCache`` answers MaskablePPO's ``env_method("action_masks")`` from the
  ``info["action_mask"]`` each step already carries, instead of a second round trip to every
  worker per step (with ``SubprocVecEnv`` that round trip costs as much as the step itself).

The opponent pool is set afterwards with ``set_pool`` (``env_method("set_opponents", ...)``, one
call per env so each gets generators of its own).
"""

from __future__ import annotations

import signal
import time
from typing import Any, Callable, Sequence

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper, VecMonitor

from train.config import EnvConfig

__all__ = ["env_kwargs", "make_env", "make_vec_env", "FastDummyVecEnv", "VecMaskCache", "EpisodeMonitor",
           "TimedVecEnv", "set_pool"]


def env_kwargs(env_cfg: EnvConfig) -> dict[str, Any]:
    """``SingleAgentEnv`` arguments for a config's table: the env family, the preset, overrides."""
    from envs.single_agent import GAMES

    family = next((g for g, presets in GAMES.items() if env_cfg.game in presets), None)
    if family is None:
        presets = [p for ps in GAMES.values() for p in ps]
        raise ValueError(f"env.game {env_cfg.game!r} has no single-agent env; games are {', '.join(presets)}")
    return dict(game=family, rules=env_cfg.game, num_players=env_cfg.players,
                observation_features=tuple(env_cfg.observation_features), **env_cfg.rule_overrides())


def make_env(env_cfg: EnvConfig, *, torch_threads: int = 1, in_worker: bool = False) -> Callable[[], Any]:
    """A thunk building one ``SingleAgentEnv`` (run inside the worker for ``SubprocVecEnv``)."""
    kwargs = env_kwargs(env_cfg)

    def thunk():
        if in_worker:
            # Ctrl-C goes to the whole process group; the main process handles it (it saves a
            # checkpoint and closes the workers), so the workers ignore it.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            import torch

            torch.set_num_threads(torch_threads)
        from envs.single_agent import SingleAgentEnv

        return SingleAgentEnv(**kwargs)

    return thunk


class FastDummyVecEnv(DummyVecEnv):
    """``DummyVecEnv`` without the ``deepcopy`` of every step's infos: ``SingleAgentEnv`` returns
    a fresh info dict each step, so a shallow copy of the list is enough (the deep copy of the
    end-of-hand statistics cost about a tenth of a training step)."""

    def step_wait(self):
        for i, env in enumerate(self.envs):
            obs, self.buf_rews[i], terminated, truncated, info = env.step(self.actions[i])
            self.buf_dones[i] = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if self.buf_dones[i]:
                info["terminal_observation"] = obs
                obs, self.reset_infos[i] = env.reset()
            self.buf_infos[i] = info
            self._save_obs(i, obs)
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), list(self.buf_infos)


class VecMaskCache(VecEnvWrapper):
    """Serves ``env_method("action_masks")`` from the masks the last ``step``/``reset`` returned."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self._masks: list[np.ndarray] | None = None

    def reset(self):
        obs = self.venv.reset()
        self._masks = [np.asarray(info["action_mask"], dtype=bool) for info in self.venv.reset_infos]
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        reset_infos = self.venv.reset_infos
        self._masks = [np.asarray((reset_infos[i] if done else infos[i])["action_mask"], dtype=bool)
                       for i, done in enumerate(dones)]
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if (method_name == "action_masks" and not method_args and not method_kwargs
                and self._masks is not None):
            return [self._masks[i] for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def _get_indices(self, indices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices


def make_vec_env(env_cfg: EnvConfig, *, n_envs: int, kind: str = "dummy", start_method: str = "forkserver",
                 torch_threads: int = 1) -> VecEnv:
    """``n_envs`` single-agent envs, vectorized (``dummy``: in this process; ``subproc``: SB3's
    one process per env), with monitoring and cached action masks."""
    if kind == "subproc":
        thunks = [make_env(env_cfg, torch_threads=torch_threads, in_worker=True) for _ in range(n_envs)]
        venv: VecEnv = SubprocVecEnv(thunks, start_method=start_method)
    elif kind == "dummy":
        thunks = [make_env(env_cfg) for _ in range(n_envs)]
        venv = FastDummyVecEnv(thunks)
    else:
        raise ValueError(f"vec_env must be 'dummy' or 'subproc', not {kind!r}")
    return EpisodeMonitor(VecMaskCache(venv))


class EpisodeMonitor(VecMonitor):
    """SB3's ``VecMonitor`` with the same infos (each ended episode's ``info["episode"]``: its
    return ``r``, length ``l`` and time ``t``), but its step visits only the envs whose episode
    ended: ``VecMonitor`` tests every env's done flag in Python each step, a cost the batched
    env's 256 slots feel (``bench/train_throughput.py``). ``t`` is read once per step."""

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.episode_returns += rewards
        self.episode_lengths += 1
        new_infos = list(infos)
        ended = np.flatnonzero(dones)
        if len(ended):
            now = round(time.time() - self.t_start, 6)
            for i, episode_return, episode_length in zip(ended.tolist(), self.episode_returns[ended],
                                                         self.episode_lengths[ended]):
                info = infos[i].copy()
                episode_info = {"r": episode_return, "l": episode_length, "t": now}
                for key in self.info_keywords:
                    episode_info[key] = info[key]
                info["episode"] = episode_info
                if self.results_writer:
                    self.results_writer.write_row(episode_info)
                new_infos[i] = info
            self.episode_count += len(ended)
            self.episode_returns[ended] = 0
            self.episode_lengths[ended] = 0
        return obs, rewards, dones, new_infos


class TimedVecEnv(VecEnvWrapper):
    """The training env, counting the wall seconds spent in it (``seconds``): its steps, resets
    and method calls (MaskablePPO's action masks), so the core, the opponents' decisions and the
    observations. ``train.callbacks.TimeShares`` logs them as ``time/env_share``."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.seconds = 0.0

    def _timed(self, method, *args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def reset(self):
        return self._timed(self.venv.reset)

    def step_async(self, actions: np.ndarray) -> None:
        self._timed(self.venv.step_async, actions)

    def step_wait(self):
        return self._timed(self.venv.step_wait)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        return self._timed(self.venv.env_method, method_name, *method_args, indices=indices, **method_kwargs)


def set_pool(venv: VecEnv, baselines: dict[str, float], snapshots: Sequence, *, self_play_weight: float,
             seed: int, generation: int, lbr_weight: float = 0.0, lbr_samples: int = 50,
             lbr_engine: str = "auto", responses: Sequence = (), response_weight: float = 0.0) -> int:
    """Give every env the opponent pool (baselines, snapshots, and best responses to them:
    ``train.opponents.build_pool``), each with generators of its
    own drawn from ``(seed, generation, env index)``; returns the pool's size. A VecEnv whose
    hands share one pool (``one_pool = True``: ``train.batched_vec.BatchedVecEnv``) gets one pool
    for all its hands. ``lbr_engine``: the local best response's (``arena.lbr.ENGINES``;
    ``python`` plays it hand by hand, as before)."""
    from train.opponents import build_pool

    rules = venv.get_attr("rules", indices=[0])[0]
    if getattr(venv.unwrapped, "one_pool", False):  # one pool for all its hands (its own generator)
        pool, weights = build_pool(baselines, snapshots, self_play_weight=self_play_weight,
                                   seed=np.random.SeedSequence(seed, spawn_key=(generation, 0)), rules=rules,
                                   lbr_weight=lbr_weight, lbr_samples=lbr_samples,
                                   lbr_engine=lbr_engine, responses=responses,
                                   response_weight=response_weight)
        venv.unwrapped.set_opponents(pool, weights)
        return len(pool)
    size = 0
    for i in range(venv.num_envs):
        pool, weights = build_pool(baselines, snapshots, self_play_weight=self_play_weight,
                                   seed=np.random.SeedSequence(seed, spawn_key=(generation, i)),
                                   rules=rules, lbr_weight=lbr_weight, lbr_samples=lbr_samples,
                                   lbr_engine=lbr_engine, responses=responses,
                                   response_weight=response_weight)
        venv.env_method("set_opponents", pool, weights, indices=[i])
        size = len(pool)
    return size
