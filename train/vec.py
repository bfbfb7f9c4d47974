"""The wrappers around the training env (``train/batched_vec.py``) and its opponent pool.

- ``EpisodeMonitor`` (SB3's ``VecMonitor``, visiting only the envs whose episode ended) gives
  SB3 its ``rollout/ep_rew_mean`` and ``ep_len_mean`` (one episode = one hand, reward in big
  bets).
- ``TimedVecEnv`` counts the wall seconds spent in the env (``time/env_share``).
- ``set_pool`` gives the env its opponent pool (``train.opponents.build_pool``).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecMonitor

__all__ = ["EpisodeMonitor", "TimedVecEnv", "set_pool"]


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
                # the hand's own reward where the env shapes the steps' (ppo.checkdown_baseline)
                if "hand_reward" in info:
                    episode_return = type(episode_return)(info["hand_reward"])
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
             lbr_engine: str = "auto", responses: Sequence = (), response_weight: float = 0.0,
             lbr_keep: int = 1, lbr_win_samples: int | None = None) -> int:
    """Give the training env its opponent pool (baselines, snapshots, and best responses to
    them: ``train.opponents.build_pool``), one pool for all its hands
    (``BatchedVecEnv.set_opponents``), with generators drawn from ``(seed, generation)``;
    returns the pool's size. ``lbr_engine``: the local best response's (``arena.lbr.ENGINES``;
    ``python`` plays it hand by hand)."""
    from train.opponents import build_pool

    rules = venv.get_attr("rules", indices=[0])[0]
    pool, weights = build_pool(baselines, snapshots, self_play_weight=self_play_weight,
                               seed=np.random.SeedSequence(seed, spawn_key=(generation, 0)), rules=rules,
                               lbr_weight=lbr_weight, lbr_samples=lbr_samples,
                               lbr_engine=lbr_engine, responses=responses,
                               response_weight=response_weight, lbr_keep=lbr_keep,
                               lbr_win_samples=lbr_win_samples)
    venv.unwrapped.set_opponents(pool, weights)
    return len(pool)
