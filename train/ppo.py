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
``final_model.zip``  the trained policy: ``ppo:runs/<run>/final_model.zip`` in a tournament
``eval.csv``         every evaluation: bb/100 and 95% interval against each baseline
==================== =====================================================================

Ctrl-C or an exception saves a last checkpoint before the error propagates; ``--resume`` loads
the newest checkpoint and its opponent pool and continues the same step count in the same
TensorBoard folder. A bad config stops with a message naming the key and exit code 2.
"""

from __future__ import annotations

import argparse
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from train.config import (Config, ConfigError, apply_override, config_from_dict, dump_config,  # noqa: E402
                          load_config, read_yaml)

REPO = Path(__file__).resolve().parent.parent


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
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
    while path.exists():
        path, k = base.with_name(f"{base.name}-{k}"), k + 1
    path.mkdir(parents=True)
    return path


def _policy_kwargs(cfg: Config) -> dict:
    import torch

    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[cfg.ppo.activation_fn]
    return dict(net_arch=list(cfg.ppo.net_arch), activation_fn=activation)


def _learning_rate(cfg: Config):
    from stable_baselines3.common.utils import LinearSchedule

    if cfg.ppo.lr_schedule == "linear":
        return LinearSchedule(cfg.ppo.learning_rate, 0.0, 1.0)
    return cfg.ppo.learning_rate


def main(cfg: Config, *, resume: str | Path | None = None, command: Sequence[str] | None = None,
         progress: bool = True) -> Path:
    """Train as ``cfg`` says (or continue the run folder ``resume``); returns the run folder."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.logger import configure

    from train.callbacks import (Checkpoints, Evaluation, OpponentPool, PokerStats, ProgressBar, SelfPlay,
                                 latest_checkpoint, save_model)
    from train.vec import make_vec_env

    command_line = shlex.join(command if command is not None else [sys.executable, *sys.argv])

    # ---- The run folder ----------------------------------------------------------------------
    if resume is None:
        run_dir = new_run_dir(cfg)
        (run_dir / "checkpoints").mkdir()
        (run_dir / "config.yaml").write_text(dump_config(cfg))
        (run_dir / "command.txt").write_text(command_line + "\n")
        (run_dir / "git_commit.txt").write_text(_git_commit() + "\n")
        checkpoint = None
    else:
        run_dir = Path(resume)
        checkpoint = latest_checkpoint(run_dir / "checkpoints")
        if checkpoint is None:
            raise ConfigError(f"--resume {run_dir}: no complete checkpoint in {run_dir / 'checkpoints'}")
        (run_dir / "config.yaml").write_text(dump_config(cfg))
        with (run_dir / "command.txt").open("a") as f:
            f.write(command_line + "\n")
    print(f"run folder: {run_dir}", flush=True)

    # ---- Seeding: every generator in one place -------------------------------------------------
    seed = cfg.run.seed
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(cfg.ppo.torch_threads)
    # The masked categorical is rebuilt for every forward pass; argument checks cost ~40% of a step.
    torch.distributions.Distribution.set_default_validate_args(False)
    done_before = int(checkpoint[1]["timesteps"]) if checkpoint else 0
    env_seed = seed + done_before  # a resumed run deals new hands, still reproducibly

    venv = make_vec_env(cfg.env, n_envs=cfg.ppo.n_envs, kind=cfg.ppo.vec_env,
                        start_method=cfg.ppo.start_method, torch_threads=cfg.ppo.torch_threads,
                        workers=cfg.ppo.workers)
    venv.seed(env_seed)
    pool = OpponentPool(cfg, venv, run_dir / "snapshots")
    model = None

    try:
        ppo = cfg.ppo
        if checkpoint is None:
            model = MaskablePPO(
                "MlpPolicy", venv, learning_rate=_learning_rate(cfg), n_steps=ppo.n_steps,
                batch_size=ppo.batch_size, n_epochs=ppo.n_epochs, gamma=ppo.gamma,
                gae_lambda=ppo.gae_lambda, clip_range=ppo.clip_range, clip_range_vf=ppo.clip_range_vf,
                normalize_advantage=ppo.normalize_advantage, ent_coef=ppo.ent_coef, vf_coef=ppo.vf_coef,
                max_grad_norm=ppo.max_grad_norm, target_kl=ppo.target_kl,
                stats_window_size=ppo.stats_window_size, policy_kwargs=_policy_kwargs(cfg),
                device=ppo.device, seed=seed, verbose=0)
            pool.push()
        else:
            model = MaskablePPO.load(str(checkpoint[0]), env=venv, device=ppo.device)
            model.set_random_seed(env_seed)
            pool.restore(checkpoint[1].get("pool", {}))
        # Pin TensorBoard to <run>/tb: a resumed run appends to the same folder (SB3's own naming
        # would open tb/MaskablePPO_<n+1>).
        model.set_logger(configure(str(run_dir / "tb"), ["tensorboard"]))
        _eval_layout(model, cfg)
        if checkpoint is None:
            text = "    " + dump_config(cfg).replace("\n", "\n    ")
            model.logger.record("config", text)
            model.logger.record("command", command_line)
            model.logger.dump(0)

        bar = ProgressBar(cfg.run.total_timesteps, disable=not progress)
        checkpoints = Checkpoints(run_dir / "checkpoints", cfg.run.checkpoint_every, cfg.run.keep_checkpoints, pool)
        evaluation = Evaluation(cfg, run_dir, progress=bar)
        # Order matters at a rollout's end: snapshot, then checkpoint (which saves the pool), then eval.
        callbacks = [bar, PokerStats(), SelfPlay(pool, cfg.opponents.self_play.every), checkpoints, evaluation]

        remaining = cfg.run.total_timesteps - model.num_timesteps
        previous_term = signal.signal(signal.SIGTERM, _terminate)
        try:
            if remaining > 0:
                model.learn(remaining, callback=CallbackList(callbacks), reset_num_timesteps=checkpoint is None,
                            progress_bar=False)
            else:
                print(f"the run has {model.num_timesteps} timesteps already (run.total_timesteps is "
                      f"{cfg.run.total_timesteps}); nothing to train", flush=True)
        except BaseException:
            # Ctrl-C, SIGTERM or a crash: keep what was learned. The save is atomic, so even an
            # interrupted save leaves the previous checkpoint whole.
            bar.close()
            path = checkpoints.save(model)
            print(f"\nstopped at {model.num_timesteps} timesteps; checkpoint {path} "
                  f"(continue with --resume {run_dir})", file=sys.stderr, flush=True)
            raise
        finally:
            signal.signal(signal.SIGTERM, previous_term)

        checkpoints.save(model)
        if cfg.eval.every:
            evaluation.evaluate(model)
            model.logger.dump(model.num_timesteps)
        save_model(model, run_dir / "final_model.zip")
    finally:
        try:
            venv.close()
        except (EOFError, BrokenPipeError, ConnectionError, OSError):
            pass
        if model is not None:
            model.logger.close()
    _report(run_dir, evaluation.results if cfg.eval.every else None, model.num_timesteps)
    return run_dir


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


def _report(run_dir: Path, results, timesteps: int) -> None:
    print(f"\ntrained {timesteps} timesteps; final model: {run_dir / 'final_model.zip'}")
    if results:
        print("evaluation (bb/100, 95% interval):")
        for name, est in results.items():
            if name != "timesteps":
                print(f"  vs {name:12} {est.mean:+8.1f}  [{est.low:+.1f}, {est.high:+.1f}]")
    print(f"put it in a tournament: python train/tournament.py --agents ppo:{run_dir / 'final_model.zip'} "
          f"random call raise tag")


def parse_args(argv: Sequence[str] | None = None) -> tuple[Config, Path | None, bool]:
    """The config a command line asks for; a bad config raises ConfigError."""
    parser = argparse.ArgumentParser(
        description="Train a stud poker agent with MaskablePPO.", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Writes runs/<config>__s<seed>__<time>/ (config.yaml, command.txt, git_commit.txt, tb/, "
               "checkpoints/,\nfinal_model.zip, eval.csv). Watch it with: tensorboard --logdir runs\n"
               "A bad config exits with code 2.")
    parser.add_argument("--config", help="a YAML experiment, e.g. configs/soko_ppo.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override a config key, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--seed", type=int, default=None, help="override run.seed")
    parser.add_argument("--resume", metavar="RUN_FOLDER",
                        help="continue a run from its newest checkpoint and opponent pool, with its "
                             "config.yaml; --set can raise run.total_timesteps or change eval.*, "
                             "while the PPO settings come from the checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.resume:
        if args.config:
            parser.error("--resume uses the run folder's config.yaml; leave out --config")
        if args.seed is not None:
            parser.error("--resume keeps the run's seed; leave out --seed")
        run_dir = Path(args.resume)
        data = read_yaml(run_dir / "config.yaml")
        for assignment in args.overrides:
            apply_override(data, assignment)
        cfg = config_from_dict(data)
        return cfg, run_dir, not args.no_progress
    if not args.config:
        parser.error("give --config CONFIG.yaml (or --resume RUN_FOLDER)")
    cfg = load_config(args.config, overrides=args.overrides, seed=args.seed)
    return cfg, None, not args.no_progress


def cli(argv: Sequence[str] | None = None) -> int:
    # Ctrl-C must reach the training loop (it saves a checkpoint), even when the shell started
    # this process with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cfg, resume, progress = parse_args(argv)
        main(cfg, resume=resume, progress=progress)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(cli())
