"""Vectorized training envs: ``SingleAgentEnv`` copies in ``DummyVecEnv`` or ``SubprocVecEnv``.

``make_vec_env(cfg.env, ...)`` builds ``VecMonitor(VecMaskCache(DummyVecEnv | SubprocVecEnv))``:

- ``VecMonitor`` gives SB3 its ``rollout/ep_rew_mean`` and ``ep_len_mean`` (one episode = one
  hand, reward in big bets).
- ``VecMaskCache`` answers MaskablePPO's ``env_method("action_masks")`` from the
  ``info["action_mask"]`` each step already carries, instead of a second round trip to every
  worker per step (with ``SubprocVecEnv`` that round trip costs as much as the step itself).

The opponent pool is set afterwards with ``set_pool`` (``env_method("set_opponents", ...)``, one
call per env so each gets generators of its own).
"""

from __future__ import annotations

import multiprocessing as mp
import signal
from typing import Any, Callable, Sequence

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper

from train.config import EnvConfig

__all__ = ["env_kwargs", "make_env", "make_vec_env", "FastDummyVecEnv", "BatchedSubprocVecEnv", "VecMaskCache", "set_pool"]


def env_kwargs(env_cfg: EnvConfig) -> dict[str, Any]:
    """``SingleAgentEnv`` arguments for a config's table: the env family, the preset, overrides."""
    from envs.single_agent import GAMES

    family = next((g for g, presets in GAMES.items() if env_cfg.game in presets), None)
    if family is None:
        presets = [p for ps in GAMES.values() for p in ps]
        raise ValueError(f"env.game {env_cfg.game!r} has no single-agent env; games are {', '.join(presets)}")
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in env_cfg.rules.items()}
    return dict(game=family, rules=env_cfg.game, num_players=env_cfg.players, **overrides)


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


def _batched_worker(remote, parent_remote, thunks: CloudpickleWrapper) -> None:
    parent_remote.close()
    venv = FastDummyVecEnv(thunks.var)
    try:
        while True:
            cmd, data = remote.recv()
            if cmd == "step":
                venv.step_async(data)
                obs, rewards, dones, infos = venv.step_wait()
                resets = [venv.reset_infos[i] if done else {} for i, done in enumerate(dones)]
                remote.send((obs, rewards, dones, infos, resets))
            elif cmd == "reset":
                venv._seeds, venv._options = list(data[0]), list(data[1])
                obs = venv.reset()
                remote.send((obs, list(venv.reset_infos)))
            elif cmd == "env_method":
                name, args, kwargs, indices = data
                remote.send(venv.env_method(name, *args, indices=indices, **kwargs))
            elif cmd == "get_attr":
                remote.send(venv.get_attr(data[0], indices=data[1]))
            elif cmd == "set_attr":
                remote.send(venv.set_attr(data[0], data[1], indices=data[2]))
            elif cmd == "has_attr":
                remote.send(venv.has_attr(data))
            elif cmd == "is_wrapped":
                remote.send(venv.env_is_wrapped(data[0], indices=data[1]))
            elif cmd == "get_spaces":
                remote.send((venv.observation_space, venv.action_space))
            elif cmd == "close":
                venv.close()
                break
            else:
                raise NotImplementedError(f"unknown command {cmd!r}")
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        remote.close()


class BatchedSubprocVecEnv(VecEnv):
    """``n_envs`` envs in ``workers`` processes, each stepping its share in a loop.

    SB3's ``SubprocVecEnv`` puts one env in each process, so with more envs than cores the
    processes take turns and every step pays one pipe round trip per env. Here a step costs
    one round trip per worker, the workers step their envs in parallel, and observations come
    back as one array per worker.
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]], *, workers: int, start_method: str = "forkserver") -> None:
        n_envs = len(env_fns)
        workers = max(1, min(workers, n_envs))
        ctx = mp.get_context(start_method)
        bounds = np.linspace(0, n_envs, workers + 1).round().astype(int)
        self.slices = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
        self.owner = [(w, i - a) for w, (a, b) in enumerate(self.slices) for i in range(a, b)]
        self.remotes, self.processes = [], []
        for a, b in self.slices:
            remote, work_remote = ctx.Pipe()
            process = ctx.Process(target=_batched_worker,
                                  args=(work_remote, remote, CloudpickleWrapper(list(env_fns[a:b]))), daemon=True)
            process.start()
            work_remote.close()
            self.remotes.append(remote)
            self.processes.append(process)
        self.waiting = False
        self.closed = False
        self.remotes[0].send(("get_spaces", None))
        observation_space, action_space = self.remotes[0].recv()
        super().__init__(n_envs, observation_space, action_space)

    def step_async(self, actions: np.ndarray) -> None:
        for remote, (a, b) in zip(self.remotes, self.slices):
            remote.send(("step", actions[a:b]))
        self.waiting = True

    def step_wait(self):
        results = [remote.recv() for remote in self.remotes]
        self.waiting = False
        obs = np.concatenate([r[0] for r in results])
        rewards = np.concatenate([r[1] for r in results])
        dones = np.concatenate([r[2] for r in results])
        infos = [info for r in results for info in r[3]]
        self.reset_infos = [info for r in results for info in r[4]]
        return obs, rewards, dones, infos

    def reset(self):
        for remote, (a, b) in zip(self.remotes, self.slices):
            remote.send(("reset", (self._seeds[a:b], self._options[a:b])))
        results = [remote.recv() for remote in self.remotes]
        self.reset_infos = [info for r in results for info in r[1]]
        self._reset_seeds()
        self._reset_options()
        return np.concatenate([r[0] for r in results])

    def _by_worker(self, indices) -> list[tuple[int, list[int]]]:
        groups: dict[int, list[int]] = {}
        for i in self._get_indices(indices):
            w, local = self.owner[i]
            groups.setdefault(w, []).append(local)
        return list(groups.items())

    def _ask(self, cmd: str, make_data, indices) -> list[Any]:
        groups = self._by_worker(indices)
        for w, local in groups:
            self.remotes[w].send((cmd, make_data(local)))
        out: list[Any] = []
        for w, _ in groups:
            out.extend(self.remotes[w].recv())
        return out

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        return self._ask("env_method", lambda local: (method_name, method_args, method_kwargs, local), indices)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return self._ask("get_attr", lambda local: (attr_name, local), indices)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        for w, local in self._by_worker(indices):
            self.remotes[w].send(("set_attr", (attr_name, value, local)))
            self.remotes[w].recv()

    def has_attr(self, attr_name: str) -> bool:
        for remote in self.remotes:
            remote.send(("has_attr", attr_name))
        return all(remote.recv() for remote in self.remotes)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return self._ask("is_wrapped", lambda local: (wrapper_class, local), indices)

    def get_images(self):
        return [None] * self.num_envs

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.waiting:
                for remote in self.remotes:
                    remote.recv()
            for remote in self.remotes:
                remote.send(("close", None))
        except (EOFError, BrokenPipeError, ConnectionError, OSError):
            pass
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        for remote in self.remotes:
            remote.close()


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
        if method_name == "action_masks" and not method_args and not method_kwargs and self._masks is not None:
            return [self._masks[i] for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def _get_indices(self, indices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices


def make_vec_env(env_cfg: EnvConfig, *, n_envs: int, kind: str = "dummy", start_method: str = "forkserver",
                 torch_threads: int = 1, workers: int = 2) -> VecEnv:
    """``n_envs`` single-agent envs, vectorized (``dummy``: in this process; ``subproc``: SB3's
    one process per env; ``batched``: ``workers`` processes sharing the envs), with monitoring
    and cached action masks."""
    if kind in ("subproc", "batched"):
        thunks = [make_env(env_cfg, torch_threads=torch_threads, in_worker=True) for _ in range(n_envs)]
        if kind == "subproc":
            venv: VecEnv = SubprocVecEnv(thunks, start_method=start_method)
        else:
            venv = BatchedSubprocVecEnv(thunks, workers=workers, start_method=start_method)
    elif kind == "dummy":
        thunks = [make_env(env_cfg) for _ in range(n_envs)]
        venv = FastDummyVecEnv(thunks)
    else:
        raise ValueError(f"vec_env must be 'dummy', 'subproc' or 'batched', not {kind!r}")
    return VecMonitor(VecMaskCache(venv))


def set_pool(venv: VecEnv, baselines: dict[str, float], snapshots: Sequence, *, self_play_weight: float,
             seed: int, generation: int) -> int:
    """Give every env the opponent pool (baselines and snapshots), each with generators of its
    own drawn from ``(seed, generation, env index)``; returns the pool's size."""
    from train.opponents import build_pool

    obs_size = int(np.prod(venv.observation_space.shape))
    size = 0
    for i in range(venv.num_envs):
        pool, weights = build_pool(baselines, snapshots, self_play_weight=self_play_weight,
                                   seed=np.random.SeedSequence(seed, spawn_key=(generation, i)),
                                   obs_size=obs_size)
        venv.env_method("set_opponents", pool, weights, indices=[i])
        size = len(pool)
    return size
