"""Train a stud poker agent with MaskablePPO against a pool of baselines and its own snapshots.

    python train/ppo.py --config configs/soko_ppo.yaml
    python train/ppo.py --config configs/soko_ppo.yaml --seed 3 --set ppo.learning_rate=1e-4
    python train/ppo.py --resume runs/soko_ppo__s0__20260101-120000
    tensorboard --logdir runs

One run folder per run, ``runs/<config name>__s<seed>__<YYYYmmdd-HHMMSS>/``:

==================== =====================================================================
``config.yaml``      the resolved config (every key, defaults included)
``command.txt``      the command line (each ``--resume`` adds a line)
``git_commit.txt``   ``git rev-parse HEAD`` (``unknown`` outside a git checkout)
``tb/``              TensorBoard: SB3's own tags plus ``eval/``, ``poker/``, ``selfplay/``
``checkpoints/``     ``ckpt_<timesteps>.zip`` + ``.json`` (pool state), written atomically
``snapshots/``       the learner's frozen copies in the self-play pool
``final_model.zip``  the trained policy (SB3's zip, which ``--resume`` and SB3 read)
``final_model.safetensors``  the same policy as an agent file, safe to share (``agents.agent_file``):
                     ``ppo:runs/<run>`` in a tournament loads it
``eval.csv``         every evaluation: bb/100 and 95% interval against each baseline
==================== =====================================================================

A first checkpoint is written at step 0, and Ctrl-C or an exception saves a last one before the
error propagates. ``--resume`` loads the newest checkpoint that loads (saying so when it falls
back past a broken one) and its opponent pool, and continues the same step count in the same
TensorBoard folder. From a periodic checkpoint (and the one at step 0) it is exact: the run
ends with the weights and ``eval.csv`` of the run that never stopped, however it was stopped
(SIGKILL included), because each such checkpoint keeps Python's, NumPy's and PyTorch's
generators and the evaluation's counters (``train.rng_state``, JSON), and the run starts new
hands there from a seed of the step whether or not it is ever resumed
(``train.callbacks.restart_hands``). The checkpoint written when a run stops mid-rollout keeps
the steps but not the hands under way: a resume from it goes on with new hands (it says so);
the evaluations and TensorBoard points logged after that checkpoint are dropped, since
training repeats those steps. ``--resume`` of a finished run says so and exits with code 0;
``--set`` with ``--resume`` changes only run length, checkpoints, ``eval.*`` and
``opponents.*``. A usage error or a bad config stops with one line and exit code 2.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from envs.cli import OneLineParser
from envs.files import atomic_write_text, make_folder
from train.checks import check_config, checked_config_from_dict, load_checked_config
from train.config import (
    Config,
    ConfigError,
    apply_override,
    dump_config,
    read_yaml,
)

REPO = Path(__file__).resolve().parent.parent


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = out.stdout.strip()
    if out.returncode or not commit:
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True, timeout=10).stdout.strip()
    return commit + ("\n(with uncommitted changes)" if dirty else "")


def new_run_dir(cfg: Config) -> Path:
    """``<out_dir>/<name>__s<seed>__<YYYYmmdd-HHMMSS>`` (a suffix if that exists already)."""
    base = Path(cfg.run.out_dir) / f"{cfg.run.name}__s{cfg.run.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    path, k = base, 2
    while True:   # mkdir, not an exists() check: two runs started in the same second race
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            path, k = base.with_name(f"{base.name}-{k}"), k + 1


def check_agents(cfg: Config) -> None:
    """Every baseline of ``cfg`` (opponents and evaluation; a ``--target`` is both) must play its
    game: a ``ppo`` model or a strategy table made for another game or rules variant is a
    one-line ConfigError here, before a run folder is made (``agents.registry.check_spec``)."""
    from agents.registry import check_spec
    from envs.engine.rules import get_rules

    rules = get_rules(cfg.env.game, **cfg.env.rule_overrides())
    baselines = {"opponents.baselines": cfg.opponents.baselines, "eval.baselines": cfg.eval.baselines}
    for where, specs in baselines.items():
        for spec in specs:
            try:
                check_spec(spec, rules)
            except (ValueError, KeyError, FileNotFoundError) as exc:
                raise ConfigError(f"{where}: {exc}") from None


def _remove_unstarted(run_dir: Path) -> None:
    """Remove the folder of a new run that failed before its first checkpoint: it holds only what
    this start wrote (``new_run_dir`` made it, so no earlier run's work), and an empty run would
    sit in TensorBoard and in ``runs/`` as clutter."""
    import shutil

    if not list((run_dir / "checkpoints").glob("ckpt_*.zip")):
        shutil.rmtree(run_dir, ignore_errors=True)
        print(f"removed {run_dir}: the run stopped before its first checkpoint", file=sys.stderr, flush=True)


def _policy_kwargs(cfg: Config) -> dict:
    """The network of ``ppo.*``, built by ``agents.agent_file.policy_kwargs`` (the whitelist an
    agent file can hold); ``card_planes`` reads the card blocks of this env's layout."""
    from agents.agent_file import policy_kwargs

    extra = {}
    if cfg.ppo.features_extractor == "card_planes":
        from agents.networks import card_blocks
        from envs.engine.rules import get_rules
        from envs.observation import build_layout

        rules = get_rules(cfg.env.game, **cfg.env.rule_overrides())
        extra = dict(blocks=card_blocks(build_layout(rules, cfg.env.observation_features)))
    return policy_kwargs(list(cfg.ppo.net_arch), cfg.ppo.activation_fn, cfg.ppo.features_extractor, extra)


def _learning_rate(cfg: Config):
    from stable_baselines3.common.utils import LinearSchedule

    if cfg.ppo.lr_schedule == "linear":
        return LinearSchedule(cfg.ppo.learning_rate, 0.0, 1.0)
    return cfg.ppo.learning_rate


def training_env(cfg: Config, *, seed: int | None = None):
    """The training VecEnv: ``ppo.n_envs`` hands at once on the compiled core
    (``train/batched_vec.py``), the core stepping on ``ppo.env_threads`` threads."""
    from train.batched_vec import make_batched_vec_env

    return make_batched_vec_env(cfg.env, n_envs=cfg.ppo.n_envs, seed=cfg.run.seed if seed is None else seed,
                                threads=cfg.ppo.env_threads, same_table=cfg.opponents.same_table,
                                checkdown_baseline=cfg.ppo.checkdown_baseline)


class RunFinished(Exception):
    """``--resume`` of a run that has trained its ``run.total_timesteps`` already."""


def main(cfg: Config, *, resume: str | Path | None = None, command: Sequence[str] | None = None,
         progress: bool = True, run_dir: str | Path | None = None,
         on_evaluation: Callable[[int, dict], None] | None = None, allow_files: Sequence[str] = ()) -> Path:
    """Train as ``cfg`` says (or continue the run folder ``resume``); returns the run folder.

    ``run_dir``: the folder of a new run (default: :func:`new_run_dir`; it may hold only the
    files named in ``allow_files``). ``on_evaluation(timesteps, values)``: called after each
    evaluation with its ``eval/*`` values (a sweep reports them to Ray Tune). Resuming a
    finished run (its final model saved and its newest checkpoint at ``run.total_timesteps`` or
    beyond) changes nothing and raises :class:`RunFinished`.
    """
    import torch
    from stable_baselines3.common.callbacks import CallbackList

    from agents.agent_file import FINAL_AGENT, checkpoint_files
    from train import rng_state
    from train.callbacks import (
        Checkpoints,
        EntropySchedule,
        Evaluation,
        FinishAhead,
        OpponentPool,
        PokerStats,
        ProgressBar,
        SelfPlay,
        TimeShares,
        hands_seed,
        latest_checkpoint,
        restart_hands,
        save_agent,
        save_model,
    )
    from train.vec import TimedVecEnv
    command_line = shlex.join(command if command is not None else [sys.executable, *sys.argv])

    # ---- The run folder ----------------------------------------------------------------------
    check_config(cfg)   # before any folder is made, whatever built cfg (train/checks.py)
    check_agents(cfg)
    if resume is None:
        try:   # a file in the way or no permission: one line, not a traceback
            make_folder(cfg.run.out_dir if run_dir is None else Path(run_dir).parent)
        except ValueError as exc:
            raise ConfigError(f"run.out_dir: {exc}" if run_dir is None else str(exc)) from None
        if run_dir is None:
            run_dir = new_run_dir(cfg)
        else:
            run_dir = Path(run_dir)
            if run_dir.exists() and any(p.name not in allow_files for p in run_dir.iterdir()):
                raise ConfigError(f"{run_dir} holds files already; a new run needs an empty folder")
            run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "checkpoints").mkdir()
        (run_dir / "config.yaml").write_text(dump_config(cfg))
        (run_dir / "command.txt").write_text(command_line + "\n")
        (run_dir / "git_commit.txt").write_text(_git_commit() + "\n")
    else:
        run_dir = Path(resume)
        newest = latest_checkpoint(run_dir / "checkpoints")
        if newest is None:
            if checkpoint_files(run_dir / "checkpoints"):
                raise ConfigError(f"--resume {run_dir}: no checkpoint in {run_dir / 'checkpoints'} has a "
                                  f"readable state file (its ckpt_<steps>.json damaged or removed); start it "
                                  f"again with --config")
            raise ConfigError(f"--resume {run_dir}: no complete checkpoint in {run_dir / 'checkpoints'} "
                              f"(the run stopped before its first one was written); start it again "
                              f"with --config")
        if (run_dir / "final_model.zip").exists() and newest[1]["timesteps"] >= cfg.run.total_timesteps:
            raise RunFinished(f"the run {run_dir} is finished: {newest[1]['timesteps']} timesteps trained "
                              f"(run.total_timesteps is {cfg.run.total_timesteps}), final model "
                              f"{run_dir / 'final_model.zip'}; to train on, raise run.total_timesteps "
                              f"with --set")
    print(f"run folder: {run_dir}", flush=True)

    # ---- Seeding: every generator in one place -------------------------------------------------
    seed = cfg.run.seed   # (in range: checked with the config)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(cfg.ppo.torch_threads)
    # The masked categorical is rebuilt for every forward pass; argument checks cost ~40% of a step.
    torch.distributions.Distribution.set_default_validate_args(False)

    ppo = cfg.ppo
    # A new run that fails before its step-0 checkpoint leaves no folder behind (a resumed
    # run's folder holds its earlier work: never removed).
    started = resume is not None
    venv = model = logger = evaluation = None
    try:
        venv = TimedVecEnv(training_env(cfg))   # time/env_share in TensorBoard
        pool = OpponentPool(cfg, venv, run_dir / "snapshots", run_dir / "checkpoints")
        if resume is None:
            venv.seed(seed)
            model = _new_model(cfg, venv, seed)
            if cfg.run.init_from:
                _init_weights(model, Path(cfg.run.init_from))
            pool.push()
            done_before = 0
        else:
            model, state = _load_newest_checkpoint(run_dir / "checkpoints",
                                                   lambda: _new_model(cfg, venv, seed), device=ppo.device)
            done_before = model.num_timesteps
            missing = pool.restore(state.get("pool", {}))
            if missing:
                print(f"warning: the checkpoint's self-play pool lists {', '.join(missing)}, which "
                      f"could not be loaded; the pool has {len(pool.snapshots)} snapshots",
                      file=sys.stderr, flush=True)
            # The hands the checkpoint's run dealt next (Checkpoints: it restarted them there).
            venv.seed(hands_seed(seed, done_before))
            model._last_obs = venv.reset()
            model._last_episode_starts = np.ones((venv.num_envs,), dtype=bool)
            if state.get("exact") and "generators" in state:
                try:
                    rng_state.restore(state["generators"])
                except ValueError as exc:
                    raise ConfigError(f"--resume {run_dir}: checkpoint {done_before}'s generators: "
                                      f"{exc}") from exc
            else:   # stopped mid-rollout: the steps are kept, the env's state is not
                model.set_random_seed(hands_seed(seed, done_before))
                model._last_obs = venv.reset()
                print(f"note: the checkpoint at {done_before} timesteps was saved when the run stopped "
                      f"mid-rollout; the run goes on from it with new hands (not bit for bit as if it "
                      f"had never stopped)", file=sys.stderr, flush=True)
            # Atomic: a resume killed here still leaves the config the next --resume reads.
            atomic_write_text(run_dir / "config.yaml", dump_config(cfg))
            with (run_dir / "command.txt").open("a") as f:
                f.write(command_line + "\n")
        # TensorBoard in <run>/tb (SB3's own naming would open tb/MaskablePPO_<n+1> on resume);
        # a resumed run hides the points logged after its checkpoint, which it logs again.
        logger = _tensorboard_logger(run_dir / "tb", purge_step=done_before + 1 if resume else None)
        model.set_logger(logger)
        _eval_layout(model, cfg)

        bar = ProgressBar(cfg.run.total_timesteps, disable=not progress)
        evaluation = Evaluation(cfg, run_dir, progress=bar, on_result=on_evaluation, pool=pool)
        checkpoints = Checkpoints(run_dir / "checkpoints", cfg.run.checkpoint_every,
                                  cfg.run.keep_checkpoints, pool, seed=seed, evaluation=evaluation)
        if resume is None:
            text = "    " + dump_config(cfg).replace("\n", "\n    ")
            model.logger.record("config", text)
            model.logger.record("command", command_line)
            model.logger.dump(0)
            if cfg.eval.every and cfg.eval.at_start:
                # the untrained policy: where the curves start
                evaluation.evaluate(model, wait=not evaluation.background)
            restart_hands(model, pool, seed)   # the first hands, as a resume from step 0 deals them
            checkpoints.save(model)   # a run killed before its first periodic checkpoint can resume
            started = True
        else:
            checkpoints.last_saved = done_before
            dropped = evaluation.resume_at(done_before, state.get("evaluation"))
            if dropped:
                print(f"eval.csv: dropped {dropped} rows logged after step {done_before} "
                      f"(training repeats those steps)", flush=True)
            if evaluation.missing is not None and cfg.eval.every:
                evaluation.evaluate(model)   # under way in the background when the run stopped
        # At each step: snapshot, then evaluation, then the checkpoint (which saves the pool), so
        # a checkpoint on disk means everything before it is recorded.
        callbacks = [bar, PokerStats(), FinishAhead(), TimeShares(),
                     SelfPlay(pool, cfg.opponents.self_play.every), evaluation, checkpoints]
        if ppo.ent_schedule == "linear":
            callbacks.insert(0, EntropySchedule(ppo.ent_coef, ppo.ent_coef_end, cfg.run.total_timesteps))

        remaining = cfg.run.total_timesteps - model.num_timesteps
        # SIGTERM saves a checkpoint too; handlers can only be set from the main thread (a Ray
        # Tune trial runs in another: Ray stops it its own way).
        in_main = threading.current_thread() is threading.main_thread()
        previous_term = signal.signal(signal.SIGTERM, _terminate) if in_main else None
        # Python's cycle collector every 20,000 allocations instead of 700: a rollout allocates
        # hundreds of thousands of short-lived objects, nearly none in cycles, and the default
        # spent about 1% of a default run's wall time collecting (docs/results.md, "The default
        # config"). The setting is the process's: only from the main thread (not beside other
        # Ray Tune trials), put back when training ends.
        thresholds = gc.get_threshold()
        if in_main:
            gc.set_threshold(20_000, *thresholds[1:])
        try:
            if remaining > 0:
                # The env was reset above (restart_hands, or the resume): learn goes on from there.
                model.learn(remaining, callback=CallbackList(callbacks), reset_num_timesteps=False,
                            progress_bar=False)
        except BaseException:
            # Ctrl-C, SIGTERM or a crash: keep what was learned. The save is atomic, so even an
            # interrupted save leaves the previous checkpoint whole.
            bar.close()
            path = checkpoints.save(model, exact=False)
            print(f"\nstopped at {model.num_timesteps} timesteps; checkpoint {path} "
                  f"(continue with --resume {run_dir})", file=sys.stderr, flush=True)
            raise
        finally:
            if in_main:
                gc.set_threshold(*thresholds)
                signal.signal(signal.SIGTERM, previous_term)

        # The final update is the final model: evaluate it, then checkpoint it, then save it.
        if cfg.eval.every:
            evaluation.evaluate(model)
        model.logger.dump(model.num_timesteps)
        checkpoints.save(model)
        save_model(model, run_dir / "final_model.zip")
        save_agent(model, run_dir / FINAL_AGENT, cfg)
    finally:
        if evaluation is not None:
            evaluation.close()
        if venv is not None:
            try:
                venv.close()
            except (EOFError, BrokenPipeError, ConnectionError, OSError):
                pass
        if logger is not None:
            logger.close()
        if not started:  # (a new run that got this far has started: here only on a failed start)
            _remove_unstarted(run_dir)
    _report(run_dir, evaluation.results if cfg.eval.every else None, model.num_timesteps, cfg)
    return run_dir


def _new_model(cfg: Config, venv, seed: int):
    """The MaskablePPO model of ``cfg`` on ``venv``, as a new run starts it."""
    from sb3_contrib import MaskablePPO

    ppo = cfg.ppo
    model = MaskablePPO(
        "MlpPolicy", venv, learning_rate=_learning_rate(cfg), n_steps=ppo.n_steps,
        batch_size=ppo.batch_size, n_epochs=ppo.n_epochs, gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda, clip_range=ppo.clip_range, clip_range_vf=ppo.clip_range_vf,
        normalize_advantage=ppo.normalize_advantage, ent_coef=ppo.ent_coef, vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm, target_kl=ppo.target_kl,
        stats_window_size=ppo.stats_window_size, policy_kwargs=_policy_kwargs(cfg),
        device=ppo.device, seed=seed, verbose=0)
    # Saved with the model (its zip's data), so a PPOAgent encodes as the env did.
    model.observation_features = list(cfg.env.observation_features)
    _fast_update(model)
    return model


def _fast_update(model) -> None:
    """The update's costliest parts done another way, the same parameters and state dict
    (docs/results.md, "The default config"): the layers that read the observation skip its zeros
    (``agents/sparse_input.py``; about 25 of Soko's 715 values are not zero), Adam takes its
    fused step (one pass over each tensor instead of several), and with torch on one thread and
    a second core the policy's and the value's networks run side by side on two threads
    (``agents/side_by_side.py``, the same floats), and the update's Python around its operators
    is leaner (``train/update.py``, the same floats). The first two differ from torch's dense
    product and Adam's per-tensor steps by roundings; every run is reproducible as before. A
    checkpoint's optimizer settings replace these where it is resumed (``set_parameters``)."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.side_by_side import use_side_by_side
    from agents.sparse_input import use_sparse_input
    from train.update import LeanMaskablePPO

    use_sparse_input(model.policy)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if torch.get_num_threads() == 1 and cpus > 1 and model.device.type == "cpu":
        use_side_by_side(model.policy)
    if type(model) is MaskablePPO:
        model.__class__ = LeanMaskablePPO
    optimizer = model.policy.optimizer
    if type(optimizer) is torch.optim.Adam and model.device.type == "cpu":
        model.policy.optimizer = torch.optim.Adam(model.policy.parameters(),
                                                  **{**optimizer.defaults, "foreach": None, "fused": True})


def _init_weights(model, path: Path) -> None:
    """``run.init_from``: the network's weights (policy and value) from the model zip ``path``,
    read with ``torch.load(weights_only=True)`` (nothing unpickled); ConfigError in one line
    when it is not a zip of the same network."""
    from agents.agent_file import zip_state

    try:
        state = zip_state(path)
        model.policy.load_state_dict(state, strict=True)
    except (ValueError, RuntimeError, KeyError, OSError) as exc:
        reason = " ".join(str(exc).split())[:300]
        raise ConfigError(f"run.init_from {path}: not a model of this run's network ({reason})") from None


# The counters of a checkpoint's model that training reads, from the readable JSON of its zip.
_RESUMED_COUNTERS = {"num_timesteps": int, "_n_updates": int, "_episode_num": int,
                     "_current_progress_remaining": float}


def _restore_checkpoint(model, path: Path, state: dict, *, device: str) -> None:
    """Put checkpoint ``path`` into ``model`` (a new one of the run's config) without unpickling
    anything: the policy's and the optimizer's tensors through SB3's ``set_parameters``
    (``torch.load(weights_only=True)``), the counters from the zip's JSON ``data``
    (:data:`_RESUMED_COUNTERS`; ``MaskablePPO.load`` would run the pickles stored beside them,
    so a run folder from someone else could run code), the episode statistics from the state
    file. The rest of a model's saved state is the config's, which a resume keeps."""
    from agents.agent_file import zip_data

    data = zip_data(path)
    for name, kind in _RESUMED_COUNTERS.items():
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"its data has no readable {name}")
        setattr(model, name, kind(value))
    model.set_parameters(str(path), exact_match=True, device=device)
    for name, key in (("ep_info_buffer", "episodes"), ("ep_success_buffer", "successes")):
        saved = state.get(key)   # None (or absent): learn() starts the buffer
        setattr(model, name, None if saved is None else deque(saved, maxlen=model._stats_window_size))


def _load_newest_checkpoint(folder: Path, new_model, *, device: str):
    """The newest checkpoint in ``folder`` that loads, and its state, in a model made by
    ``new_model()`` (:func:`_restore_checkpoint`). One that does not (a broken file, or a state
    file missing because the run stopped while writing it) is renamed ``*.broken`` and the next
    older one is tried; each fallback is printed."""
    from agents.agent_file import checkpoint_files
    from train.callbacks import read_checkpoint_state

    skipped = []
    for steps, path in checkpoint_files(folder):
        try:
            state = read_checkpoint_state(path)
            model = new_model()
            _restore_checkpoint(model, path, state, device=device)
        except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint: fall back to an older one
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            print(f"warning: checkpoint {path} cannot be loaded ({reason}); trying an older one",
                  file=sys.stderr, flush=True)
            for part in (path, path.with_suffix(".json")):
                if part.exists():
                    part.replace(part.with_name(part.name + ".broken"))
            skipped.append(steps)
            continue
        if skipped:
            print(f"resuming from {path.name} ({steps} timesteps) instead of the newest checkpoint",
                  file=sys.stderr, flush=True)
        return model, state
    raise ConfigError(f"no checkpoint in {folder} can be loaded (the broken ones are renamed *.broken)")


def _tensorboard_logger(folder: Path, *, purge_step: int | None):
    """SB3's logger writing TensorBoard events to ``folder``. ``purge_step``: TensorBoard hides
    the points at that step or later logged before (SB3's ``configure`` cannot pass it)."""
    from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
    from torch.utils.tensorboard import SummaryWriter

    class TensorBoard(TensorBoardOutputFormat):
        def __init__(self) -> None:
            self.writer = SummaryWriter(log_dir=str(folder), purge_step=purge_step)
            self._is_closed = False

    folder.mkdir(parents=True, exist_ok=True)
    return Logger(folder=str(folder), output_formats=[TensorBoard()])


def _eval_layout(model, cfg: Config) -> None:
    """TensorBoard's Custom Scalars tab: each eval/bb100_vs_<agent> as a band between its
    95% bounds."""
    from stable_baselines3.common.logger import TensorBoardOutputFormat

    from train.callbacks import tag_name

    if not cfg.eval.every:
        return
    charts = {}
    for name in [tag_name(b) for b in cfg.eval.baselines] + ["field"]:
        tag = f"eval/bb100_vs_{name}"
        charts[f"bb/100 vs {name}"] = ["Margin", [tag, f"{tag}_ci95_low", f"{tag}_ci95_high"]]
    for output in model.logger.output_formats:
        if isinstance(output, TensorBoardOutputFormat):
            output.writer.add_custom_scalars({"eval (95% intervals)": charts})


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _report(run_dir: Path, results, timesteps: int, cfg: Config) -> None:
    print(f"\ntrained {timesteps} timesteps; final model: {run_dir / 'final_model.zip'} "
          f"(agent file to share: {run_dir / 'final_model.safetensors'})")
    if results:
        print("evaluation (bb/100, 95% interval):")
        for name, est in results.items():
            if name != "timesteps":
                print(f"  vs {name:12} {est.mean:+8.1f}  [{est.low:+.1f}, {est.high:+.1f}]")
    def text(value) -> str:   # as python -m arena's --rule reads it
        if isinstance(value, bool):
            return str(value).lower()
        return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)

    rules = "".join(f" --rule {shlex.quote(f'{k}={text(v)}')}" for k, v in cfg.env.rules.items())
    print(f"put it in a tournament: python -m arena --game {cfg.env.game} --players {cfg.env.players}{rules} "
          f"--agents ppo:{run_dir / 'final_model.safetensors'} random call raise tag equity")


# What ``--set`` may change on ``--resume``: the rest (env, ppo, seed, names) is the checkpoint's.
RESUME_SETTABLE = ("run.total_timesteps", "run.checkpoint_every", "run.keep_checkpoints", "eval.",
                   "opponents.")


def parse_args(argv: Sequence[str] | None = None) -> tuple[Config, Path | None, bool]:
    """The config a command line asks for; a bad config raises ConfigError."""
    parser = OneLineParser(
        hint=" (see --help)",
        prog="train/ppo.py",
        description="Train a stud poker agent with MaskablePPO.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Writes runs/<config>__s<seed>__<time>/ (config.yaml, command.txt, git_commit.txt, tb/, "
               "checkpoints/,\nfinal_model.zip, eval.csv). Watch it with: tensorboard --logdir runs\n"
               "A usage error or a bad config exits with code 2; --resume of a finished run exits with 0.")
    parser.add_argument("--config", help="a YAML experiment, e.g. configs/soko_ppo.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override a config key, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--seed", type=int, default=None, help="override run.seed")
    parser.add_argument("--resume", metavar="RUN_FOLDER",
                        help="continue a run from its newest checkpoint and opponent pool, with its "
                             "config.yaml; --set can change run.total_timesteps, run.checkpoint_every, "
                             "run.keep_checkpoints, eval.* and opponents.* (saved in config.yaml), "
                             "the rest comes from the checkpoint")
    parser.add_argument("--target", metavar="SPEC",
                        help="train a best response to this agent: it becomes the only opponent "
                             "(weight 1), self-play is off and evaluation plays it alone "
                             "(configs/best_response.yaml)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.target is not None and args.resume:
        parser.error("--target sets the opponents of a new run; leave out --resume")
    if args.resume:
        if args.config:
            parser.error("--resume uses the run folder's config.yaml; leave out --config")
        if args.seed is not None:
            parser.error("--resume keeps the run's seed; leave out --seed")
        run_dir = Path(args.resume)
        data = read_yaml(run_dir / "config.yaml")
        before = checked_config_from_dict(data)
        for assignment in args.overrides:
            key = assignment.partition("=")[0].strip()
            if not any(key == k or (k.endswith(".") and key.startswith(k)) for k in RESUME_SETTABLE):
                raise ConfigError(f"--set {key} cannot change on --resume (the checkpoint keeps the env, "
                                  f"ppo and seed settings); these can: run.total_timesteps, "
                                  f"run.checkpoint_every, run.keep_checkpoints, eval.*, opponents.*")
            apply_override(data, assignment)
        cfg = checked_config_from_dict(data)
        for key, old, new in _changes(before, cfg):
            print(f"--resume: {key} {old!r} -> {new!r}", flush=True)
        return cfg, run_dir, not args.no_progress
    if not args.config:
        parser.error("give --config CONFIG.yaml (or --resume RUN_FOLDER)")
    cfg = load_checked_config(args.config, overrides=args.overrides, seed=args.seed, target=args.target)
    return cfg, None, not args.no_progress


def _changes(before: Config, after: Config) -> list[tuple[str, object, object]]:
    """The dotted keys whose values differ between two configs, with both values."""
    from train.config import config_to_dict

    def flat(data: dict, prefix: str = "") -> dict:
        out = {}
        for k, v in data.items():
            if isinstance(v, dict) and k != "baselines":
                out.update(flat(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
        return out

    a, b = flat(config_to_dict(before)), flat(config_to_dict(after))
    return [(k, a[k], b[k]) for k in a if a[k] != b[k]]


def cli(argv: Sequence[str] | None = None) -> int:
    """The command line: 0 when the run trained (or was finished already), 2 for a usage or
    config error, 130 after Ctrl-C."""
    # Ctrl-C must reach the training loop (it saves a checkpoint), even when the shell started
    # this process with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cfg, resume, progress = parse_args(argv)
        from agents.trained import limit_blas_threads

        limit_blas_threads(cfg.ppo.torch_threads)   # opponents' and LBR's NumPy passes, as torch
        command = None if argv is None else [sys.executable, "train/ppo.py", *argv]
        main(cfg, resume=resume, command=command, progress=progress)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    except RunFinished as exc:
        print(exc, flush=True)
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(cli())
