"""What ``train/ppo.py`` does while MaskablePPO learns, as SB3 callbacks.

=================== ==========================================================================
``ProgressBar``     a tqdm bar over the run's timesteps (resumes where the run stopped)
``PokerStats``      ``poker/*`` from each finished hand's info: fold, showdown, VPIP, aggression
``SelfPlay``        every ``every`` timesteps a frozen copy of the learner joins the opponent pool
``Checkpoints``     every ``checkpoint_every`` timesteps an atomic checkpoint and the pool state
``Evaluation``      every ``eval.every`` timesteps a duplicate tournament (``arena.match``)
                    against each baseline: ``eval/bb100_vs_<agent>`` with its 95% interval;
                    exploitability as asked: ``eval/lbr_bb100``, ``eval/br_bb100`` (a
                    learned best response), ``eval/exploitability`` (exact)
=================== ==========================================================================

The periodic ones act after the policy update of the rollout that crosses their interval (at
the start of the next rollout), so a snapshot, an evaluation and a checkpoint at step N all hold
the weights training goes on from, and what they log lands at step N, the step of SB3's rollout
tags. After the last update ``train/ppo.py`` evaluates and checkpoints the final model itself.

A checkpoint ``ckpt_N`` is written after everything else at step N, so when it exists the
snapshot of step N and every evaluation before N are on disk too, and so is the evaluation of
step N unless ``eval.background`` is still playing it (a resume from N plays it again when its
row is missing); ``--resume`` from it drops the ``eval.csv`` rows past N (training repeats
those steps) and TensorBoard hides the points past N (``purge_step``). Snapshot files stay
until neither the pool nor any checkpoint lists them.

Everything saved is written to a temporary file in the same folder and moved into place with
``os.replace``, so a crash or Ctrl-C in the middle of a save leaves the previous file whole.
"""

from __future__ import annotations

import concurrent.futures
import csv
import functools
import io
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.agent_file import checkpoint_files
from agents.trained import PPOAgent
from envs.files import atomic_write_bytes, atomic_write_text, write_json
from train.config import Config, repo_path
from train.vec import set_pool

__all__ = ["save_model", "ProgressBar", "PokerStats", "SelfPlay", "Checkpoints",
           "Evaluation", "OpponentPool", "tag_name", "latest_checkpoint",
           "read_checkpoint_state", "referenced_snapshots", "write_now", "hands_seed", "restart_hands"]


LEARNER = "learner"
"""The learner's name at an evaluation's tables (its deals are keyed by the seats' names)."""


# --------------------------------------------------------------------------------------------
# Saving models (atomically: envs.files)


def save_model(model, path: Path) -> Path:
    """``model.save`` to ``path`` (a ``.zip``), atomically."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    model.save(buffer)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def save_agent(model, path: Path, cfg: Config) -> Path:
    """The learner's policy as an agent file (``agents.agent_file``) at ``path``, with how it was
    made: the run's config, command and commit (read from its folder), the seed and the steps."""
    from agents.agent_file import run_record, save_agent_file
    from envs.engine.rules import get_rules

    record = run_record(Path(path))
    made = {"config": record.get("config", {}), "seed": cfg.run.seed,
            "commit": record.get("commit", "unknown"), "steps": int(model.num_timesteps),
            "command": record.get("command", "")}
    return save_agent_file(path, model.policy, rules=get_rules(cfg.env.game, **cfg.env.rule_overrides()),
                           features=cfg.env.observation_features, players=cfg.env.players, made=made)


def tag_name(spec: str) -> str:
    """A TensorBoard-friendly name for an agent spec: ``"equity:samples=50"`` -> ``equity_samples_50``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", spec).strip("_") or "agent"



def read_checkpoint_state(path: Path) -> dict:
    """The state file of checkpoint ``path``; OSError or ValueError if it is missing or broken."""
    state = json.loads(Path(path).with_suffix(".json").read_text())
    if not isinstance(state, dict) or not isinstance(state.get("timesteps"), int):
        raise ValueError("its state file has no timesteps")
    return state


def latest_checkpoint(folder: Path) -> tuple[Path, dict] | None:
    """The newest checkpoint in ``folder`` with a readable state file (the model is not loaded)."""
    for _, path in checkpoint_files(folder):
        try:
            return path, read_checkpoint_state(path)
        except (OSError, ValueError):
            continue
    return None


def referenced_snapshots(folder: Path) -> set[str]:
    """The snapshot file names that the checkpoints in ``folder`` list in their pool state."""
    names: set[str] = set()
    for _, path in checkpoint_files(folder):
        try:
            state = read_checkpoint_state(path)
        except (OSError, ValueError):
            continue
        pool = state.get("pool", {})
        names.update(item["path"] for item in pool.get("snapshots", []) + pool.get("best_responses", []))
    return names


# --------------------------------------------------------------------------------------------
# The opponent pool


class OpponentPool:
    """The baselines and the learner's snapshots that the training envs draw opponents from."""

    def __init__(self, cfg: Config, venv, snapshot_dir: Path, checkpoint_dir: Path | None = None) -> None:
        self.cfg = cfg
        self.baselines = dict(cfg.opponents.baselines)
        self.self_play = cfg.opponents.self_play
        self.seed = cfg.run.seed
        self.venv = venv
        self.snapshot_dir = Path(snapshot_dir)
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        self.snapshots: list[tuple[int, Path, PPOAgent]] = []   # (timesteps, file, policy)
        # Exact best responses to snapshots (opponents.self_play.exact_br): (timesteps, file, agent)
        self.best_responses: list[tuple[int, Path, Any]] = []
        self._tree = None
        # (timesteps, exploitability in chips a hand) of the newest exact best response: the
        # evaluation at the same step asks the same question of the same weights (Evaluation).
        self.exploitability_at: tuple[int, float] | None = None
        self.generation = 0
        self.size = 0

    def push(self) -> None:
        """Send the current pool to every env (from its next hand on), as a new generation."""
        self._send(self.generation)
        self.generation += 1

    def rebuild(self) -> None:
        """Send the pool in effect again, built afresh from its generation's seeds: the state
        of a pool entry is then a function of the checkpoint alone (an exact ``--resume``)."""
        if self.generation == 0:
            self.push()
        else:
            self._send(self.generation - 1)

    def _send(self, generation: int) -> None:
        self.size = set_pool(self.venv, self.baselines, [p for _, _, p in self.snapshots],
                             self_play_weight=self.self_play.weight, seed=self.seed,
                             generation=generation, lbr_weight=self.self_play.lbr,
                             lbr_samples=self.self_play.lbr_samples, lbr_keep=self.self_play.lbr_keep,
                             lbr_win_samples=self.self_play.lbr_win_samples,
                             responses=[a for _, _, a in self.best_responses],
                             response_weight=self.self_play.exact_br + self.self_play.learned_br)

    @property
    def _responses_keep(self) -> int:
        sp = self.self_play
        return sp.learned_br_keep if sp.learned_br > 0 else sp.exact_br_keep

    def add_snapshot(self, model, timesteps: int) -> Path:
        """Freeze the learner: save it as ``snapshots/snapshot_<timesteps>.zip`` (and the same as an
        agent file, ``.safetensors``) and add it."""
        self.snapshot_dir.mkdir(parents=True, exist_ok=True)
        path = save_model(model, self.snapshot_dir / f"snapshot_{timesteps}.zip")
        save_agent(model, path.with_suffix(".safetensors"), self.cfg)
        policy = PPOAgent.from_model(model, name=f"snapshot_{timesteps}",
                                     deterministic=self.self_play.deterministic)
        self.snapshots.append((timesteps, path, policy))
        self.snapshots = self.snapshots[-self.self_play.keep:]
        if self.self_play.exact_br > 0:
            self.add_best_response(model, timesteps)
        if self.self_play.learned_br > 0:
            self.add_learned_response(path.with_suffix(".safetensors"), timesteps)
        self.push()
        self.prune()
        return path

    def add_best_response(self, model, timesteps: int) -> Path:
        """The exact best response (both seats, ``arena.exact``) to the learner's sampling policy
        now, saved as ``snapshots/br_<timesteps>.npz`` (a ``br:`` table) and added to the pool's
        responses (the newest ``exact_br_keep``); the caller sends the pool."""
        from concurrent.futures import ThreadPoolExecutor

        from agents.table import BestResponseAgent
        from arena.exact import agent_strategy, best_response, merge_best, save_table
        from envs.engine.rules import get_rules

        if self._tree is None:
            self._tree = exact_tree(get_rules(self.cfg.env.game, **self.cfg.env.rule_overrides()))
        target = PPOAgent.from_model(model, name=f"learner_{timesteps}", deterministic=False)
        strategy = agent_strategy(self._tree, target)
        # The two seats' responses on two threads (NumPy releases the GIL): the same tables,
        # 1.3-1.7x sooner on the 2 cores.
        with ThreadPoolExecutor(max_workers=2) as pool:
            (v0, best0), (v1, best1) = pool.map(lambda seat: best_response(self._tree, strategy, seat),
                                                (0, 1))
        self.exploitability_at = (timesteps, (v0 + v1) / 2)   # arena.exact.exploitability's mean
        best = merge_best(self._tree, best0, best1)
        # Uncompressed: compressing took about a fifth of each refresh, and only the newest
        # exact_br_keep files stay.
        path = save_table(self._tree, self.snapshot_dir / f"br_{timesteps}.npz", actions=best, compress=False)
        agent = BestResponseAgent(path=str(path))
        agent.name = path.stem
        self.best_responses.append((timesteps, path, agent))
        self.best_responses = self.best_responses[-self.self_play.exact_br_keep:]
        return path

    def add_learned_response(self, snapshot: Path, timesteps: int) -> Path:
        """Train a best response against the snapshot file's sampling policy alone
        (``arena.exploit.train_best_response``: a second program, this process's generators left
        alone), in ``snapshots/learned_br_<timesteps>/``, and add it to the pool's responses (the
        newest ``learned_br_keep``); the caller sends the pool."""
        from arena.exploit import train_best_response

        cfg, sp = self.cfg, self.self_play
        folder = self.snapshot_dir / f"learned_br_{timesteps}"
        shutil.rmtree(folder, ignore_errors=True)   # a half-trained one from an interrupted run
        overrides = []
        before = self.best_responses[-1][1].with_suffix(".zip") if self.best_responses else None
        if sp.learned_br_warm and before is not None and before.is_file():   # on from the newest one
            overrides.append(f"run.init_from={before}")
        model, _ = train_best_response(cfg.env.game, f"ppo:{snapshot},deterministic=false", folder,
                                       steps=sp.learned_br_steps, seed=cfg.run.seed + 5 + timesteps,
                                       rules=cfg.env.rules, players=cfg.env.players,
                                       config=repo_path(sp.learned_br_config), overrides=overrides)
        path = folder / "best_response.safetensors"   # the agent file: no pickle on resume
        shutil.copyfile(model.with_suffix(".safetensors"), path)
        if sp.learned_br_warm:   # the value net too, for the next one to start from
            shutil.copyfile(model, path.with_suffix(".zip"))
        shutil.rmtree(model.parent)   # the training run's checkpoints and logs
        agent = _learned_response(path)
        self.best_responses.append((timesteps, path, agent))
        self.best_responses = self.best_responses[-self._responses_keep:]
        return path

    def prune(self) -> None:
        """Delete the snapshot files that neither the pool nor any checkpoint lists (a
        checkpoint's snapshots must be there when a run resumes from it)."""
        if not self.snapshot_dir.is_dir():
            return
        keep = {str(p.relative_to(self.snapshot_dir)) for _, p, _ in self.snapshots + self.best_responses}
        if self.checkpoint_dir is not None:
            keep |= referenced_snapshots(self.checkpoint_dir)
        keep |= {Path(name).parts[0] for name in keep}   # a learned response's folder
        for path in [*self.snapshot_dir.glob("snapshot_*.zip"),
                     *self.snapshot_dir.glob("snapshot_*.safetensors")]:
            if path.with_suffix(".zip").name not in keep:
                path.unlink(missing_ok=True)
        for path in self.snapshot_dir.glob("br_*.npz"):
            if path.name not in keep:
                path.unlink(missing_ok=True)
        for path in self.snapshot_dir.glob("learned_br_*"):
            if path.is_dir() and path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)

    def state(self) -> dict[str, Any]:
        return {"snapshots": [{"timesteps": t, "path": p.name} for t, p, _ in self.snapshots],
                "best_responses": [{"timesteps": t, "path": str(p.relative_to(self.snapshot_dir))}
                                   for t, p, _ in self.best_responses],
                "generation": self.generation}

    def restore(self, state: dict[str, Any]) -> list[str]:
        """Reload the snapshots a checkpoint's state names and send the pool of the generation
        it was saved in; returns the names of those that could not be loaded (the caller says
        so: the pool is smaller than the one saved)."""
        self.snapshots, missing = [], []
        for item in state.get("snapshots", [])[-self.self_play.keep:]:
            path = self.snapshot_dir / item["path"]
            try:
                policy = PPOAgent(path=str(path), deterministic=self.self_play.deterministic)
                policy.name = path.stem
                policy.actor  # load now: a missing or unreadable file is reported here
            except Exception:  # noqa: BLE001 - a missing or unreadable file: reported, not fatal
                missing.append(item["path"])
                continue
            self.snapshots.append((int(item["timesteps"]), path, policy))
        self.best_responses = []
        for item in state.get("best_responses", [])[-self._responses_keep:]:
            from agents.table import BestResponseAgent

            path = self.snapshot_dir / item["path"]
            try:
                if path.suffix == ".safetensors":
                    agent = _learned_response(path)
                else:
                    agent = BestResponseAgent(path=str(path))
                    agent.name = path.stem
            except Exception:  # noqa: BLE001 - a missing or unreadable file: reported, not fatal
                missing.append(item["path"])
                continue
            self.best_responses.append((int(item["timesteps"]), path, agent))
        self.generation = int(state.get("generation", 0))
        self.rebuild()
        return missing


def _learned_response(path: Path) -> PPOAgent:
    """A learned best response as a pool entry (its most likely action, as a best response
    plays), loaded now: a missing or unreadable file is reported here."""
    agent = PPOAgent(path=str(path), deterministic=True)
    agent.name = path.parent.name
    agent.actor
    return agent


# --------------------------------------------------------------------------------------------
# Callbacks


class ProgressBar(BaseCallback):
    """A tqdm bar over the whole run (``initial`` = timesteps already done when resuming)."""

    def __init__(self, total: int, *, disable: bool = False) -> None:
        super().__init__()
        self.total = total
        self.disable = disable
        self.bar = None
        self.postfix: dict[str, str] = {}

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self._last = min(self.num_timesteps, self.total)
        self.bar = tqdm(total=self.total, initial=self._last, unit="step", dynamic_ncols=True,
                        disable=self.disable, smoothing=0.05)

    def _on_step(self) -> bool:
        # The last rollout may run past the total; the bar stops at it.
        now = min(self.num_timesteps, self.total)
        if now - self._last >= 1000 or (now == self.total and now > self._last):
            self.bar.update(now - self._last)
            self._last = now
        return True

    def set_postfix(self, **items: str) -> None:
        self.postfix.update(items)
        if self.bar is not None:
            self.bar.set_postfix(self.postfix, refresh=False)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.update(min(self.num_timesteps, self.total) - self._last)
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class PokerStats(BaseCallback):
    """``poker/*`` statistics of the learner's finished hands, logged once per rollout.

    fold_rate: share of hands the learner folded; showdown_rate: share it took to a showdown;
    vpip: share in which it called, completed, bet or raised in the first betting round (the
    bring-in is forced, so not voluntary); aggression: (completions + bets + raises) / calls;
    bb100: its result in big bets per 100 hands; illegal_rate: illegal actions per hand.
    """

    def __init__(self) -> None:
        super().__init__()
        self._reset()

    def _reset(self) -> None:
        self.hands = self.folds = self.showdowns = self.vpip = self.illegal = 0
        self.aggressive = self.calls = 0
        self.payoff_bb = 0.0

    def _on_step(self) -> bool:
        rewards = self.locals["rewards"]
        for i, (info, done) in enumerate(zip(self.locals["infos"], self.locals["dones"])):
            if not done or "actions" not in info:
                continue
            actions = info["actions"]
            self.hands += 1
            self.folds += bool(info.get("folded"))
            self.showdowns += bool(info.get("learner_showdown"))
            self.vpip += bool(info.get("vpip"))
            self.illegal += int(info.get("illegal_actions", 0))
            self.aggressive += actions.get("bet", 0) + actions.get("raise", 0) + actions.get("complete", 0)
            self.calls += actions.get("call", 0)
            self.payoff_bb += float(info.get("hand_reward", rewards[i]))   # (unshaped)
        return True

    def _on_rollout_end(self) -> None:
        if not self.hands:
            return
        record = self.logger.record
        record("poker/fold_rate", self.folds / self.hands)
        record("poker/showdown_rate", self.showdowns / self.hands)
        record("poker/vpip", self.vpip / self.hands)
        record("poker/aggression", self.aggressive / self.calls if self.calls else float(self.aggressive))
        record("poker/illegal_rate", self.illegal / self.hands)
        record("poker/bb100", 100 * self.payoff_bb / self.hands)
        record("poker/hands", self.hands)
        self._reset()


class FinishAhead(BaseCallback):
    """At the end of each rollout, the env finishes the work it started ahead for the learner's
    next step (``BatchedVecEnv.finish_ahead``: the local best response's likelihoods, on the
    core's second thread), so that the gradient updates have both cores to themselves. Through
    ``env_method``, so its seconds count as the env's (``time/env_share``); before
    :class:`TimeShares` in the list, so in the rollout that just ended."""

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.model.get_env().env_method("finish_ahead")


class TimeShares(BaseCallback):
    """``time/*``, once per rollout, over the wall time since the previous rollout ended:
    ``env_share``, the share spent in the training env (``train.vec.TimedVecEnv``: the core, the
    opponents' decisions, the observations); ``update_share``, in the gradient updates. The rest
    is the learner's own forward passes, the rollout buffer and the callbacks (evaluations,
    snapshots, checkpoints)."""

    def _on_training_start(self) -> None:
        self.env = self.model.get_env()
        if not hasattr(self.env, "seconds"):
            raise TypeError("TimeShares needs the training env in a train.vec.TimedVecEnv")
        self._start, self._env_start = time.perf_counter(), self.env.seconds
        self._rollout_end: float | None = None
        self._update = 0.0

    def _on_rollout_start(self) -> None:
        if self._rollout_end is not None:
            self._update += time.perf_counter() - self._rollout_end

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        now = time.perf_counter()
        wall = now - self._start
        if wall > 0:
            self.logger.record("time/env_share", (self.env.seconds - self._env_start) / wall)
            self.logger.record("time/update_share", self._update / wall)
        self._start, self._env_start, self._rollout_end, self._update = now, self.env.seconds, now, 0.0


class EntropySchedule(BaseCallback):
    """``ppo.ent_schedule: linear``: before each rollout, the entropy bonus the next update uses
    falls linearly from ``start`` to ``end`` over ``total`` timesteps (``train/ent_coef``)."""

    def __init__(self, start: float, end: float, total: int) -> None:
        super().__init__()
        self.start, self.end, self.total = start, end, total

    def value(self, timesteps: int) -> float:
        done = min(1.0, timesteps / self.total) if self.total else 1.0
        return self.start + (self.end - self.start) * done

    def _on_rollout_start(self) -> None:
        self.model.ent_coef = self.value(self.model.num_timesteps)
        self.logger.record("train/ent_coef", self.model.ent_coef)

    def _on_step(self) -> bool:
        return True


class EveryTimesteps(BaseCallback):
    """A callback that acts (:meth:`fire`) once the first rollout past each multiple of ``every``
    timesteps (0: never) has been learned from, i.e. at the start of the next rollout, so it sees
    the updated weights; resumed runs pick up at the next multiple."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self.next = None

    def _on_training_start(self) -> None:
        self.next = (self.num_timesteps // self.every + 1) * self.every if self.every else None

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        self.num_timesteps = self.model.num_timesteps
        if self.next is not None and self.num_timesteps >= self.next:
            self.fire()
            self.next = (self.num_timesteps // self.every + 1) * self.every

    def fire(self) -> None:
        raise NotImplementedError


class SelfPlay(EveryTimesteps):
    """Every ``every`` timesteps (0: never), freeze the learner into the opponent pool; logs
    ``selfplay/pool_size`` (snapshots in the pool) and ``selfplay/opponents`` (pool entries)."""

    def __init__(self, pool: OpponentPool, every: int) -> None:
        super().__init__(every)
        self.pool = pool

    def fire(self) -> None:
        self.pool.add_snapshot(self.model, self.num_timesteps)

    def _on_rollout_end(self) -> None:
        self.logger.record("selfplay/pool_size", len(self.pool.snapshots))
        self.logger.record("selfplay/opponents", self.pool.size)


def hands_seed(seed: int, timesteps: int) -> int:
    """The seed the training env deals from after the checkpoint at ``timesteps``: the run's
    seed at step 0, one drawn from ``(seed, timesteps)`` after that (distinct streams)."""
    if timesteps == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed) % 2 ** 32, int(timesteps)]).generate_state(1)[0])


def restart_hands(model, pool: OpponentPool, seed: int) -> None:
    """Begin new hands in every env, dealt from :func:`hands_seed` of the model's step, with the
    opponent pool built afresh: what an exact ``--resume`` from a checkpoint at this step does.

    The env's state in the middle of hands (the core's slots, opponents' generators) is not
    saved; a run starts new hands at each checkpoint instead, whether or not it is ever resumed.
    The hands under way are dropped: their last steps stay in the rollout just learned from,
    where the update bootstrapped them with the value of their last observation.
    """
    env = model.get_env()
    pool.rebuild()
    env.seed(hands_seed(seed, int(model.num_timesteps)))
    model._last_obs = env.reset()
    model._last_episode_starts = np.ones((env.num_envs,), dtype=bool)


def _jsonable_episode(info: dict) -> dict:
    """An SB3 episode record (``r``, ``l``, ``t`` and any numbers the env adds) as JSON numbers."""
    return {str(k): (int(v) if isinstance(v, (int, np.integer)) else float(v)) for k, v in info.items()}


class Checkpoints(EveryTimesteps):
    """Atomic checkpoints ``checkpoints/ckpt_<timesteps>.zip`` plus ``.json`` (the pool state,
    the process's generators, the evaluation's counters); the last ``keep`` are kept, and the
    snapshots they list. :meth:`save` is also called at step 0, at the end and when the run stops.

    A periodic checkpoint restarts the hands first (:func:`restart_hands`), so everything a
    run does after it is a function of what it holds: ``--resume`` from it is exact (``"exact":
    true``). The one saved when a run stops mid-rollout (Ctrl-C, SIGTERM, a crash) keeps the
    steps, but its env state is gone: ``"exact": false``, and a resume from it deals new hands.
    """

    def __init__(self, folder: Path, every: int, keep: int, pool: OpponentPool, *, seed: int = 0,
                 evaluation: Evaluation | None = None) -> None:
        super().__init__(every)
        self.folder = Path(folder)
        self.keep = keep
        self.pool = pool
        self.seed = seed
        self.evaluation = evaluation
        self.last_saved = -1

    def fire(self) -> None:
        restart_hands(self.model, self.pool, self.seed)
        self.save(self.model)

    def save(self, model, *, exact: bool = True) -> Path:
        """Write ``ckpt_<timesteps>``: the model first, then its state file (a checkpoint counts
        only once both exist), then drop the oldest beyond ``keep``. ``exact``: the generators
        are those the run goes on with from here (a rollout's start), so they are saved."""
        from train import rng_state

        self.folder.mkdir(parents=True, exist_ok=True)
        steps = int(model.num_timesteps)
        path = self.folder / f"ckpt_{steps}.zip"
        if steps == self.last_saved and path.exists():
            return path
        save_model(model, path)
        state: dict[str, Any] = {"timesteps": steps, "pool": self.pool.state(), "exact": exact,
                                 "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                                 # SB3 pickles these with the model; --resume reads them here.
                                 "episodes": None if model.ep_info_buffer is None else
                                 [_jsonable_episode(e) for e in model.ep_info_buffer],
                                 "successes": None if model.ep_success_buffer is None else
                                 [bool(x) for x in model.ep_success_buffer]}
        if exact:
            state["generators"] = rng_state.capture()
            if self.evaluation is not None:
                # Every evaluation before this step is logged; one begun at this very step may
                # still be under way (a resume from here plays it again if its row is missing).
                self.evaluation.collect(wait=True, before=steps)
                state["evaluation"] = self.evaluation.state()
        atomic_write_text(path.with_suffix(".json"), json.dumps(state, indent=2) + "\n")
        self.last_saved = steps
        for _, old in checkpoint_files(self.folder)[self.keep:]:   # newest first
            old.with_suffix(".json").unlink(missing_ok=True)
            old.unlink(missing_ok=True)
        self.pool.prune()
        return path


class Evaluation(EveryTimesteps):
    """Every ``every`` timesteps, a duplicate tournament of the current policy against each
    baseline, with :func:`arena.match.play_match` (``eval/*``, ``eval.csv``). With
    ``eval.background`` its hands (:func:`play_evaluation`) are played by a second process
    while training goes on, and logged at their step at the first rollout after they are done.

    The learner sits at the table as ``"learner"``: the match's deals are keyed by the seats'
    names, so the same weights get the same deals whatever the run folder's path looks like.
    """

    FIELDS = ["timesteps", "opponent", "hands", "bb100", "ci95_low", "ci95_high", "seconds"]

    def __init__(self, cfg: Config, run_dir: Path, *, progress: ProgressBar | None = None,
                 on_result=None, pool: OpponentPool | None = None) -> None:
        super().__init__(cfg.eval.every)
        self.on_result = on_result   # on_result(timesteps, values): told of each evaluation
        # The training pool: an exact best response it made at this very step (to the sampling
        # policy of the same weights) gives eval/exploitability without computing it again.
        self.pool = pool
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.csv_path = self.run_dir / "eval.csv"
        self.progress = progress
        self.last_timesteps = -1      # the last evaluation logged
        self.submitted = -1           # the last evaluation begun
        self.br_mark = 0              # the last evaluation's timesteps (when a best response is due)
        self.results: dict[str, Any] = {}
        self.background = cfg.eval.background
        self._background: concurrent.futures.ProcessPoolExecutor | None = None
        self._pending: tuple | None = None   # (steps, future, values found here, logger, model file)
        self.missing: int | None = None

    def fire(self) -> None:
        self.evaluate(wait=not self.background)

    def _on_rollout_start(self) -> None:
        self.collect(wait=False)   # a background evaluation that is done: logged now
        super()._on_rollout_start()

    def state(self) -> dict[str, int]:
        """The counters a checkpoint keeps (when a learned best response is due next, and the
        step of the evaluation under way, which a resume from this step plays again)."""
        return {"last_timesteps": self.last_timesteps, "br_mark": self.br_mark, "submitted": self.submitted}

    def resume_at(self, timesteps: int, state: dict | None = None) -> int:
        """Keep only the ``eval.csv`` rows of steps up to ``timesteps`` (the checkpoint a run
        resumes from: training repeats the steps after it), and take the checkpoint's counters
        (``state``, from :meth:`state`); returns how many rows were dropped. :attr:`missing`:
        the checkpoint's step when its evaluation was still under way in the background (its
        row never written); the caller evaluates the resumed model there again."""
        self.missing = None
        if state:
            self.br_mark = int(state.get("br_mark", timesteps))
        else:
            self.br_mark = timesteps
        rows = []
        if self.csv_path.exists():
            with self.csv_path.open(newline="") as f:
                rows = list(csv.reader(f))
        body = rows[1:] if rows and rows[0] == self.FIELDS else rows
        kept = [r for r in body if len(r) == len(self.FIELDS) and r[0].isdigit() and int(r[0]) <= timesteps]
        if any(int(r[0]) == timesteps for r in kept):
            self.last_timesteps = timesteps
        elif state and state.get("submitted") == timesteps:
            self.missing = timesteps
        dropped = len(body) - len(kept)
        # A run killed between creating the file and its first flush leaves it empty: rewritten
        # whole, header first, as a file cut mid-line is.
        if dropped or (self.csv_path.exists() and rows[:1] != [self.FIELDS]):
            out = io.StringIO()
            csv.writer(out).writerows([self.FIELDS, *kept])
            atomic_write_text(self.csv_path, out.getvalue())
        return dropped

    def evaluate(self, model=None, *, wait: bool = True) -> dict[str, Any]:
        """Play the tournaments of the model's step, log ``eval/*`` at that step, append to
        ``eval.csv``; returns the estimates of the last evaluation logged. A step already
        evaluated is not played again. With ``eval.background`` the baseline and local best
        response hands are played by a second process; ``wait=False`` returns at once (the
        results are logged by :meth:`collect`), else once they are logged. An evaluation under
        way is logged before the next one starts."""
        model = model or self.model
        steps = int(model.num_timesteps)
        if steps in (self.last_timesteps, self.submitted):
            if wait:
                self.collect(wait=True)
            return self.results
        self.collect(wait=True)
        cfg = self.cfg
        name = f"eval_model_{steps}.zip" if self.background else "eval_model.zip"
        path = save_model(model, self.run_dir / "checkpoints" / name)
        spec = f"ppo:{path},deterministic={str(cfg.eval.deterministic).lower()}"
        extra = self._exploitability(spec, cfg.env.rule_overrides(), steps)   # learned, exact: here
        if self.background:
            job = self._executor().submit(play_evaluation, cfg, spec)
        else:
            job = concurrent.futures.Future()
            job.set_result(play_evaluation(cfg, spec))
        self._pending = (steps, job, extra, model.logger, path if self.background else None)
        self.submitted = steps
        if wait:
            self.collect(wait=True)
        return self.results

    def collect(self, *, wait: bool, before: int | None = None) -> None:
        """Log the evaluation under way once it is done (``wait``: wait for it); ``before``:
        only one begun at an earlier step."""
        if self._pending is None:
            return
        steps, job, extra, logger, path = self._pending
        if (before is not None and steps >= before) or not (wait or job.done()):
            return
        self._pending = None
        rows, values = job.result()
        values.update(extra)
        write_now(logger, values, steps)
        new = not self.csv_path.exists()
        with self.csv_path.open("a", newline="") as f:
            writer = csv.writer(f)
            if new:
                writer.writerow(self.FIELDS)
            writer.writerows([steps, opponent, hands, f"{est.mean:.3f}", f"{est.low:.3f}", f"{est.high:.3f}",
                              f"{seconds:.1f}"] for opponent, hands, est, seconds in rows)
            f.flush()
            os.fsync(f.fileno())
        self.last_timesteps = steps
        self.results = {"timesteps": steps, **{o: e for o, _, e, _ in rows}}
        if path is not None:
            path.unlink(missing_ok=True)
        if self.progress is not None:
            self.progress.set_postfix(field=f"{rows[-1][2].mean:+.1f}bb/100")
        if self.on_result is not None:
            self.on_result(steps, values)

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._background is None:
            import multiprocessing

            self._background = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_one_thread)
        return self._background

    def close(self) -> None:
        """Stop the background process; an evaluation under way is dropped (its process ended,
        not waited for). The executor's own thread is joined before this returns: one left
        running (``shutdown(wait=False)``) races Python's exit hook, which can then print an
        ``OSError: [Errno 9] Bad file descriptor`` traceback after a finished run (CPython 3.11's
        ``_ThreadWakeup``, locked in later versions: gh-125451)."""
        if self._background is None:
            return
        executor, self._background = self._background, None
        running = self._pending is not None and not self._pending[1].done()
        self._pending = None
        if running:
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                process.terminate()
        executor.shutdown(wait=True, cancel_futures=True)

    def _exploitability(self, spec: str, rules: dict, steps: int) -> dict[str, float]:
        """``eval/br_bb100`` (a learned best response's winnings against the learner, when one
        is due) and ``eval/exploitability`` (exact, soko_mini), as the config asks (the local
        best response's ``eval/lbr_bb100``: :func:`play_evaluation`)."""
        from agents.registry import make_agent

        cfg = self.cfg.eval
        values: dict[str, float] = {}
        every, mark = cfg.br_every, self.br_mark
        self.br_mark = steps
        if cfg.br_steps and (every == 0 or steps == 0 or steps // every > mark // every):
            values.update(self._learned_best_response(spec, rules, steps))
        if cfg.exploitability:
            from arena.exact import agent_strategy, bb_per_100, exploitability
            from envs.engine.rules import get_rules

            if getattr(self, "_tree", None) is None:
                self._tree = exact_tree(get_rules(self.cfg.env.game, **rules))
            start = time.perf_counter()
            known = self.pool.exploitability_at if self.pool is not None else None
            if known is not None and known[0] == steps and not cfg.deterministic:
                value = known[1]   # the pool's refresh at this step: the same policy, the same value
            else:
                value = exploitability(self._tree, agent_strategy(self._tree, make_agent(spec)))[0]
            values["eval/exploitability"] = bb_per_100(self._tree, value)
            values["eval/exploitability_seconds"] = time.perf_counter() - start
        return values

    def _learned_best_response(self, spec: str, rules: dict, steps: int) -> dict[str, float]:
        """Train a best response against the learner's checkpoint (a separate program: this
        process's generators are left alone), play it, keep it in ``best_responses/at_STEPS``."""
        from agents.registry import make_agent
        from arena.exploit import lower_bound, train_best_response
        from envs.engine.rules import get_rules

        cfg, game = self.cfg, self.cfg.env.game
        folder = self.run_dir / "best_responses" / f"at_{steps}"
        seed = cfg.run.seed + 3
        start = time.perf_counter()
        model, info = train_best_response(game, spec, folder, steps=cfg.eval.br_steps, seed=seed, rules=rules,
                                          players=cfg.env.players, config=repo_path(cfg.eval.br_config))
        learner = make_agent(spec)
        learner.name = LEARNER
        result = lower_bound(get_rules(game, **rules), f"ppo:{model},name=best_response", learner,
                             hands=cfg.eval.br_hands, seed=seed, players=cfg.env.players)
        result.update({"timesteps": steps, "best_response_agent": f"ppo:{model}", **info,
                       "seconds": {**info["seconds"], **result["seconds"]}})
        write_json(folder / "results.json", result)
        low, high = result["ci95"]
        return {"eval/br_bb100": result["exploitability_bb_per_100"], "eval/br_bb100_ci95_low": low,
                "eval/br_bb100_ci95_high": high, "eval/br_seconds": time.perf_counter() - start}


def play_evaluation(cfg: Config, spec: str) -> tuple[list, dict[str, float]]:
    """One evaluation's hands for the model ``spec``: a duplicate match against each of
    ``eval.baselines`` (seated as ``"learner"``: the deals are keyed by the seats' names, so the
    same weights get the same deals whatever the run folder's path) and ``eval.lbr_hands`` of a
    local best response. Returns the rows (opponent, hands, estimate, seconds), the field last,
    and the ``eval/*`` values: ``bb100_vs_*`` with their intervals, ``seconds``, ``lbr_bb100``."""
    from agents.registry import make_agent
    from arena.match import play_match
    from arena.stats import combine

    rules = cfg.env.rule_overrides()
    rows, estimates = [], {}
    for opponent in cfg.eval.baselines:
        learner = make_agent(spec)
        learner.name = LEARNER
        seats = [learner] + [opponent] * (cfg.env.players - 1)
        start = time.perf_counter()
        result = play_match(cfg.env.game, seats, hands=cfg.eval.hands, seed=cfg.run.seed + 1,
                            workers=cfg.eval.workers, engine=cfg.eval.engine,
                            luck_correction=cfg.eval.luck_correction, **rules)
        est = result.estimates[LEARNER]
        estimates[opponent] = est
        rows.append((opponent, result.hands, est, time.perf_counter() - start))
    field = combine(list(estimates.values()))
    rows.append(("field", sum(r[1] for r in rows), field, sum(r[3] for r in rows)))
    values: dict[str, float] = {}
    for opponent, _, est, _ in rows:
        name = "eval/bb100_vs_field" if opponent == "field" else f"eval/bb100_vs_{tag_name(opponent)}"
        values[name] = est.mean
        values[f"{name}_ci95_low"] = est.low
        values[f"{name}_ci95_high"] = est.high
    values["eval/seconds"] = sum(r[3] for r in rows[:-1])
    if cfg.eval.lbr_hands:
        from arena.lbr import LBRAgent

        learner = make_agent(spec)
        learner.name = LEARNER
        start = time.perf_counter()
        result = play_match(cfg.env.game, [LBRAgent(learner), learner], hands=cfg.eval.lbr_hands,
                            seed=cfg.run.seed + 2, engine=cfg.eval.engine, **rules)
        est = result.estimates[result.agents[0]]
        values.update({"eval/lbr_bb100": est.mean, "eval/lbr_bb100_ci95_low": est.low,
                       "eval/lbr_bb100_ci95_high": est.high,
                       "eval/lbr_seconds": time.perf_counter() - start})
    return rows, values


EVAL_NICENESS = 19
"""How much lower the background evaluation process's scheduling priority is than training's
(``os.nice``): it plays on the CPU time training leaves (the gradient updates leave the core's
second thread idle), and no longer takes the second core from the rollouts' threads when both
want it: the same weights and evaluation numbers in less wall time (docs/results.md, "The default
config")."""


def _one_thread() -> None:
    """The background evaluation process: one torch and one BLAS thread (training has the rest),
    at a lower priority than training (:data:`EVAL_NICENESS`)."""
    import torch

    from agents.trained import limit_blas_threads

    if hasattr(os, "nice"):   # (not on Windows)
        os.nice(EVAL_NICENESS)
    torch.set_num_threads(1)
    limit_blas_threads(1)


@functools.lru_cache(maxsize=1)
def exact_tree(rules):
    """The exact solver's tree of ``rules`` (``arena.exact.build_tree``), one per process: the
    pool's best responses and the evaluation's exploitability share it, and with it the
    observations it keeps for the learner's policy (``arena.exact._observation_plan``)."""
    from arena.exact import build_tree

    return build_tree(rules)


def write_now(logger, values: dict[str, Any], step: int) -> None:
    """Write ``values`` to the logger's outputs at ``step`` now, leaving SB3's pending values
    (the last update's ``train/*``) for its own next dump."""
    for output in logger.output_formats:
        output.write(values, {key: None for key in values}, step)
