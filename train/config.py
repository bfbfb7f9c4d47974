"""Training configuration: a YAML file read into typed, nested dataclasses.

One file per experiment in ``configs/``. The file is read with ``yaml.safe_load`` and checked
against the dataclasses below: an unknown key or a value of the wrong type is a
:class:`ConfigError` whose message names the key (``train/ppo.py`` prints it and exits with
code 2). Keys that are left out take the defaults below; the PPO defaults are MaskablePPO's own,
so a config lists only what it changes.

This module is a leaf: it imports no other module of the project, not even inside a function,
so it holds the schema, the YAML reading and the checks of types and ranges only
(``tests/test_imports.py``). The checks that need the lower layers (the game preset and its
table sizes, the observation pieces, whether a best response exists for the game, the agent
specs) are ``train.checks.check_config``; every loader of a training config runs them
(``train.checks.load_checked_config``, ``train.checks.checked_config_from_dict``).

Sections (see ``configs/soko_ppo.yaml`` for a commented example):

========== =====================================================================================
env        ``game`` (a preset of ``envs.engine.rules.RULES``), ``players``, ``rules`` (overrides of
           ``Rules`` fields, e.g. ``{bring_in: highest}``), ``observation_features`` (optional
           observation pieces, ``envs.observation.FEATURES``)
opponents  ``baselines`` (agent spec -> weight) and ``self_play`` (snapshots of the learner:
           how often, how many kept, their share of the hands, deterministic or sampled play)
ppo        MaskablePPO arguments under their own names, plus ``net_arch``, ``activation_fn``,
           ``features_extractor`` (``flat`` or ``card_planes``),
           ``lr_schedule`` and ``ent_schedule`` (``constant`` or ``linear``: the learning rate
           down to 0, the entropy bonus down to ``ent_coef_end``), ``n_envs`` (hands at once on
           the compiled core, ``train/batched_vec.py``), ``env_threads``, ``torch_threads``
eval       ``every`` timesteps (and at step 0 with ``at_start``) a duplicate tournament of
           ``hands`` hands against each of ``baselines``; exploitability: ``lbr_hands``,
           ``exploitability`` (exact), and a learned best response every ``br_every`` timesteps
           (``br_steps``, ``br_hands``)
run        ``name``, ``total_timesteps``, ``checkpoint_every``, ``seed``, ``out_dir``
========== =====================================================================================

Command-line overrides use dotted keys and YAML values: ``--set ppo.learning_rate=1e-4``,
``--set ppo.net_arch=[256,256]``, ``--set opponents.baselines.tag=2``.

>>> cfg = config_from_dict({"ppo": {"learning_rate": "1e-4"}, "run": {"total_timesteps": 1000}})
>>> cfg.ppo.learning_rate, cfg.env.game, cfg.run.total_timesteps
(0.0001, 'soko', 1000)
>>> config_from_dict({"ppo": {"learnig_rate": 1e-4}})
Traceback (most recent call last):
...
train.config.ConfigError: unknown key ppo.learnig_rate (did you mean learning_rate?)
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

ROOT = Path(__file__).resolve().parents[1]
SEED_MAX = 2**31 - 1
"""The largest ``run.seed``: NumPy's legacy seeding takes up to 2**32 - 1, and a resumed run
seeds with ``run.seed`` plus the timesteps done, which must stay below that."""


def repo_path(path: str | Path) -> Path:
    """A config's file path: as given when it exists (or is absolute), else under the repository."""
    given = Path(path)
    return given if given.is_absolute() or given.exists() else ROOT / given


class ConfigError(ValueError):
    """A config that cannot be used; the message names the key and says what is wrong."""


# --------------------------------------------------------------------------------------------
# The sections


@dataclass
class EnvConfig:
    """The table: which game, how many seats, and any rule changes."""

    game: str = "soko"
    players: int = 2
    # Fields of envs.engine.rules.Rules to change, e.g. {bring_in: highest, betting: pot_limit}.
    rules: dict[str, Any] = field(default_factory=dict)
    # Optional observation pieces (envs.observation.FEATURES), e.g. [hand_class, win_probability];
    # the trained model remembers them (PPOAgent encodes with the same ones).
    observation_features: list[str] = field(default_factory=list)

    def rule_overrides(self) -> dict[str, Any]:
        """``rules`` as ``Rules`` field values (YAML lists become the tuples ``Rules`` holds)."""
        return {k: tuple(v) if isinstance(v, list) else v for k, v in self.rules.items()}


@dataclass
class SelfPlayConfig:
    """Frozen copies of the learner that join the opponent pool as training goes on."""

    every: int = 0                 # timesteps between snapshots; 0 turns self-play off
    keep: int = 5                  # the most recent snapshots kept in the pool
    weight: float = 0.0            # share of hands against snapshots (split evenly) once any exist
    deterministic: bool = False    # snapshots play their most likely action instead of sampling
    # Share of hands against a local best response to the newest snapshot (arena.lbr.LBRAgent:
    # it bets and bluffs where that snapshot folds too often, and values with the snapshot's
    # range), from the first snapshot on; heads-up games with one face-down card only. Its
    # roll-outs of the cards to come per street: lbr_samples. On the batched env it plays in the
    # compiled core, every slot at once; still the run's costliest opponent (docs/results.md).
    # With lbr_keep above 1, local best responses to each of the newest lbr_keep snapshots
    # share the lbr hands evenly (an exploiter of the learner's recent past as well as of its
    # present, so that it does not chase one response's hole after another).
    lbr: float = 0.0
    lbr_samples: int = 50
    lbr_keep: int = 1
    # The deals of the snapshot's win_probability piece as the local best response computes it for
    # each card it supposes the learner holds (null: the piece's own 64, the snapshot's policy
    # exactly); fewer cost less and model the snapshot less exactly (docs/results.md, issue 25).
    lbr_win_samples: int | None = None
    # Share of hands against the exact best response (arena.exact, both seats) to the newest
    # snapshot's sampling policy, computed at every snapshot; the games the exact solver
    # enumerates (soko_mini) only. The learner then climbs its value against a best response
    # to itself: the gradient of its exploitability (exploitability descent). The newest
    # exact_br_keep responses share the hands evenly.
    exact_br: float = 0.0
    exact_br_keep: int = 1
    # Share of hands against a learned best response to the newest snapshot: at every snapshot a
    # policy is trained against that snapshot's sampling policy alone (arena.exploit's learned
    # method: train/ppo.py --target, learned_br_config, learned_br_steps timesteps, a second
    # program while training waits), any game; the newest learned_br_keep share the hands evenly.
    learned_br: float = 0.0
    learned_br_steps: int = 200_000
    learned_br_keep: int = 1
    learned_br_config: str = "configs/best_response.yaml"
    # Each learned best response after the first starts from the newest one before it (its
    # policy and value weights, run.init_from) instead of from scratch: it keeps what it learned
    # against the earlier snapshots and trains learned_br_steps more against the new one.
    learned_br_warm: bool = False


@dataclass
class OpponentsConfig:
    """Who the learner plays: each hand draws every opponent seat from this pool by weight."""

    baselines: dict[str, float] = field(default_factory=lambda: {"random": 1.0})
    self_play: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    # Share of hands (three or more seats) whose opponent seats all play one draw from the pool,
    # a table of copies: five tags, five snapshots. The other hands draw every seat on its own,
    # where a table of one kind is rare. 0 draws exactly as before.
    same_table: float = 0.0


@dataclass
class PPOConfig:
    """MaskablePPO's arguments by their own names (defaults are MaskablePPO's), and the setup."""

    learning_rate: float = 3e-4
    lr_schedule: Literal["constant", "linear"] = "constant"   # linear: down to 0 at the end
    n_steps: int = 2048            # per env, per rollout
    batch_size: int = 64
    n_epochs: int = 10
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    clip_range_vf: float | None = None
    normalize_advantage: bool = True
    ent_coef: float = 0.0
    # linear: the entropy bonus goes from ent_coef down to ent_coef_end at run.total_timesteps
    # (set at each rollout's start, so a resumed run picks up where it stopped).
    ent_schedule: Literal["constant", "linear"] = "constant"
    ent_coef_end: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    stats_window_size: int = 100
    # The policy network (separate actor and critic MLPs of these sizes).
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    activation_fn: Literal["tanh", "relu"] = "tanh"
    # What the MLP reads: flat, the observation as it is; card_planes, the card blocks as rank x
    # suit planes through small convolutions, then the other columns (agents/networks.py).
    features_extractor: Literal["flat", "card_planes"] = "flat"
    # How the environment runs: n_envs hands at once on the compiled core (train/batched_vec.py,
    # the one training env; opponents in batches, those without a batched form hand by hand).
    n_envs: int = 1
    torch_threads: int = 1         # torch's threads (and the opponents' NumPy passes')
    # A baseline for the learner's returns that knows the cards still to come: each decision's
    # return counts from its payoff if every player still in checked or called to the end with
    # the real deck, times this weight (0: off). Potential-based shaping, so the policy gradient
    # stays unbiased and the policy never sees it; it takes the cards' luck out of the returns
    # of the hands that are played on (docs/training.md). Heads-up and multiway alike.
    checkdown_baseline: float = 0.0
    # Threads the compiled core splits each step's hands (and its tag and equity opponents'
    # decisions) over; they sleep while torch works, so 2 on a 2-core machine.
    env_threads: int = 1
    device: str = "cpu"


@dataclass
class EvalConfig:
    """Duplicate tournaments of the current policy during training."""

    every: int = 0                 # timesteps between evaluations; 0 turns them off
    baselines: list[str] = field(default_factory=lambda: ["random", "call", "raise", "tag"])
    hands: int = 2000              # duplicate hands per baseline
    # The learner plays its most likely action (else it samples); its model files then play the same
    # way as ppo: agents unless a spec says otherwise (agents.agent_file.plays_deterministic).
    deterministic: bool = True
    workers: int = 1               # tournament processes (the training envs wait meanwhile)
    # Where the evaluation hands are played (arena/batched_play.py): auto, the compiled core,
    # every hand of a match at once, when the agents have batched forms (ppo, the heuristics,
    # equity, the local best response), else the reference Game; reference always there. The
    # same deals either way, and the same results for deterministic agents.
    engine: Literal["auto", "batched", "reference"] = "auto"
    at_start: bool = False         # also evaluate the untrained policy, at step 0
    # The baseline matches luck-corrected (arena/luck.py): the same mean in expectation, a
    # narrower interval (about 0.7x at six seats), more CPU per hand. Every evaluation plays
    # the same deals (run.seed + 1), so without it the curve's level carries those deals' luck.
    luck_correction: bool = False
    # Play the baseline and local best response hands in a second process while training goes
    # on (train/callbacks.py Evaluation): the same numbers, logged at their step once they are
    # in; at most one evaluation under way (the next one waits for it), the final one waited for.
    background: bool = False
    # Exploitability at each evaluation: local best response hands (heads-up Soko and soko_mini,
    # arena/lbr.py; eval/lbr_bb100, a lower bound; 0: off), and the exact value (soko_mini only,
    # arena/exact.py, any ppo model, features or not; eval/exploitability; about 25 s CPU per
    # evaluation for a [64, 64] network, docs/incoming_results_exact.md).
    lbr_hands: int = 0
    exploitability: bool = False
    # A learned best response (arena/exploit.py: train/ppo.py on br_config against the learner
    # alone for br_steps timesteps, then br_hands duplicate hands against it; eval/br_bb100, a
    # lower bound for any game and table size; about a minute per 500k steps). It runs at the
    # first evaluation at or past each multiple of br_every timesteps (0: at every evaluation)
    # and at step 0 (at_start); br_steps 0: off. The models stay in the run folder's
    # best_responses/.
    br_steps: int = 0
    br_every: int = 0
    br_hands: int = 2000
    br_config: str = "configs/best_response.yaml"


@dataclass
class RunConfig:
    """Length, checkpoints, seed and where the run folder goes."""

    name: str | None = None        # run folder prefix; None: the config file's name
    total_timesteps: int = 100_000
    checkpoint_every: int = 50_000  # timesteps between checkpoints (and one at every stop)
    keep_checkpoints: int = 3      # the most recent checkpoints kept on disk
    seed: int = 0                  # 0 to SEED_MAX
    out_dir: str = "runs"
    # A new run's network starts from this model's weights (an SB3 zip of the same network:
    # policy and value, read without unpickling) instead of a fresh initialisation; the
    # optimizer and the counters start fresh. "" (default): a fresh network. --resume ignores it.
    init_from: str = ""


@dataclass
class Config:
    """One experiment."""

    env: EnvConfig = field(default_factory=EnvConfig)
    opponents: OpponentsConfig = field(default_factory=OpponentsConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    run: RunConfig = field(default_factory=RunConfig)


# --------------------------------------------------------------------------------------------
# Reading and checking


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _convert(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against (and lightly coerced to) the type hint ``tp``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _convert(value, inner[0], where)
        raise TypeError(f"unsupported type {tp} at {where}")  # pragma: no cover - not used
    if tp is Any:
        return value
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{where} must be one of {', '.join(map(str, args))}, not {_describe(value)}")
        return value
    if dataclasses.is_dataclass(tp):
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping of keys, not {_describe(value)}")
        return _build(tp, value, where)
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where} must be a list, not {_describe(value)}")
        return [_convert(v, args[0], f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, not {_describe(value)}")
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(f"{where} keys must be text, not {_describe(k)}")
            out[k] = _convert(v, args[1], f"{where}.{k}")
        return out
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {_describe(value)}")
        return value
    if tp is int:
        # Whole numbers; 2e6 and "2e6" (YAML 1.1 reads an exponent without a dot as text) count.
        if isinstance(value, bool):
            raise ConfigError(f"{where} must be a whole number, not {_describe(value)}")
        if isinstance(value, int):
            return value
        number = _as_float(value)
        if number is not None and number.is_integer():
            return int(number)
        raise ConfigError(f"{where} must be a whole number, not {_describe(value)}")
    if tp is float:
        if isinstance(value, bool):
            raise ConfigError(f"{where} must be a number, not {_describe(value)}")
        number = _as_float(value)
        if number is None or not math.isfinite(number):
            raise ConfigError(f"{where} must be a number, not {_describe(value)}")
        return number
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be text, not {_describe(value)}")
        return value
    raise TypeError(f"unsupported type {tp} at {where}")  # pragma: no cover - a bug here


def _as_float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return None
    return None


def _build(cls: type, data: dict, where: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in names:
            label = f"{where}.{key}" if where else str(key)
            close = difflib.get_close_matches(str(key), names, n=1)
            of = f" of {where}" if where else ""
            hint = f" (did you mean {close[0]}?)" if close else f"; the keys{of} are {', '.join(names)}"
            raise ConfigError(f"unknown key {label}{hint}")
    kwargs = {name: _convert(data[name], hints[name], f"{where}.{name}" if where else name)
              for name in names if name in data}
    return cls(**kwargs)


def _check_ranges(cfg: Config) -> None:
    """Checks across fields, with the key in each message: ranges and the fields that need
    each other. The checks that need another module (the game, its table sizes, observation
    pieces, best responses, agent specs) are ``train.checks.check_config``."""

    def need(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    opp = cfg.opponents
    for spec, weight in opp.baselines.items():
        need(weight >= 0, f"opponents.baselines.{spec} must be a weight of at least 0, not {weight}")
    sp = opp.self_play
    need(sp.every >= 0, f"opponents.self_play.every must be at least 0, not {sp.every}")
    need(sp.keep >= 1, f"opponents.self_play.keep must be at least 1, not {sp.keep}")
    need(0 <= sp.weight <= 1, f"opponents.self_play.weight must be from 0 to 1, not {sp.weight}")
    need(0 <= opp.same_table <= 1, f"opponents.same_table must be from 0 to 1, not {opp.same_table}")
    need(sum(opp.baselines.values()) > 0 or (sp.every > 0 and sp.weight == 1),
         "opponents.baselines needs a positive weight (the learner must have opponents "
         "before its first snapshot)")
    need(sp.weight < 1 or sp.every > 0, "opponents.self_play.weight is 1 but self_play.every is 0")
    need(0 <= sp.lbr <= 1 - sp.weight, f"opponents.self_play.lbr must be from 0 to 1 - self_play.weight "
         f"({1 - sp.weight:g}), not {sp.lbr}")
    need(0 <= sp.exact_br <= 1 - sp.weight - sp.lbr,
         f"opponents.self_play.exact_br must be from 0 to 1 - self_play.weight - self_play.lbr "
         f"({1 - sp.weight - sp.lbr:g}), not {sp.exact_br}")
    need(sp.exact_br_keep >= 1,
         f"opponents.self_play.exact_br_keep must be at least 1, not {sp.exact_br_keep}")
    if sp.exact_br > 0:
        need(sp.every > 0, "opponents.self_play.exact_br needs snapshots to respond to: set self_play.every")
    need(0 <= sp.learned_br <= 1 - sp.weight - sp.lbr - sp.exact_br,
         f"opponents.self_play.learned_br must be from 0 to 1 - self_play.weight - self_play.lbr "
         f"- self_play.exact_br ({1 - sp.weight - sp.lbr - sp.exact_br:g}), not {sp.learned_br}")
    need(sp.learned_br == 0 or sp.exact_br == 0,
         "opponents.self_play.learned_br and exact_br cannot both be on (one kind of best response)")
    need(sp.learned_br_steps >= 1,
         f"opponents.self_play.learned_br_steps must be at least 1, not {sp.learned_br_steps}")
    need(sp.learned_br_keep >= 1,
         f"opponents.self_play.learned_br_keep must be at least 1, not {sp.learned_br_keep}")
    if sp.learned_br > 0:
        need(sp.every > 0,
             "opponents.self_play.learned_br needs snapshots to respond to: set self_play.every")
        need(repo_path(sp.learned_br_config).is_file(),
             f"opponents.self_play.learned_br_config: no file {sp.learned_br_config}")
    need(1 <= sp.lbr_keep <= max(sp.keep, 1),
         f"opponents.self_play.lbr_keep must be from 1 to self_play.keep ({sp.keep}), not {sp.lbr_keep}")
    need(sp.lbr_samples >= 1, f"opponents.self_play.lbr_samples must be at least 1, not {sp.lbr_samples}")
    need(sp.lbr_win_samples is None or sp.lbr_win_samples >= 1,
         f"opponents.self_play.lbr_win_samples must be null or at least 1, not {sp.lbr_win_samples}")
    if sp.lbr > 0:
        need(sp.every > 0, "opponents.self_play.lbr needs snapshots to respond to: set self_play.every")

    ppo = cfg.ppo
    need(ppo.learning_rate > 0, f"ppo.learning_rate must be positive, not {ppo.learning_rate}")
    need(ppo.n_envs >= 1, f"ppo.n_envs must be at least 1, not {ppo.n_envs}")
    need(ppo.n_steps >= 1, f"ppo.n_steps must be at least 1, not {ppo.n_steps}")
    need(ppo.batch_size >= 2, f"ppo.batch_size must be at least 2, not {ppo.batch_size}")
    need(ppo.batch_size <= ppo.n_steps * ppo.n_envs,
         f"ppo.batch_size ({ppo.batch_size}) must not exceed the rollout, "
         f"n_steps x n_envs = {ppo.n_steps * ppo.n_envs}")
    need(ppo.n_epochs >= 1, f"ppo.n_epochs must be at least 1, not {ppo.n_epochs}")
    need(0 <= ppo.gamma <= 1, f"ppo.gamma must be from 0 to 1, not {ppo.gamma}")
    need(0 <= ppo.gae_lambda <= 1, f"ppo.gae_lambda must be from 0 to 1, not {ppo.gae_lambda}")
    need(ppo.clip_range > 0, f"ppo.clip_range must be positive, not {ppo.clip_range}")
    need(all(n >= 1 for n in ppo.net_arch), f"ppo.net_arch sizes must be at least 1, not {ppo.net_arch}")
    need(ppo.torch_threads >= 1, f"ppo.torch_threads must be at least 1, not {ppo.torch_threads}")
    need(0 <= ppo.checkdown_baseline <= 2,
         f"ppo.checkdown_baseline is a weight from 0 to 2, not {ppo.checkdown_baseline}")
    need(ppo.env_threads >= 1, f"ppo.env_threads must be at least 1, not {ppo.env_threads}")
    need(re.fullmatch(r"(auto|cpu|cuda|mps)(:\d+)?", ppo.device) is not None,
         f"ppo.device must be auto, cpu, cuda, cuda:N or mps, not {ppo.device!r}")

    ev = cfg.eval
    need(ev.every >= 0, f"eval.every must be at least 0, not {ev.every}")
    need(ev.hands >= 1, f"eval.hands must be at least 1, not {ev.hands}")
    need(ev.workers >= 1, f"eval.workers must be at least 1, not {ev.workers}")
    need(bool(ev.baselines) or ev.every == 0, "eval.baselines is empty but eval.every is not 0")
    need(ev.lbr_hands >= 0, f"eval.lbr_hands must be at least 0, not {ev.lbr_hands}")
    need(ev.br_steps >= 0, f"eval.br_steps must be at least 0, not {ev.br_steps}")
    need(ev.br_every >= 0, f"eval.br_every must be at least 0, not {ev.br_every}")
    need(ev.br_hands >= 1, f"eval.br_hands must be at least 1, not {ev.br_hands}")
    if ev.br_steps:
        need(ev.every > 0, "eval.br_steps is set but eval.every is 0 (the best response runs at evaluations)")
        need(repo_path(ev.br_config).is_file(), f"eval.br_config: no file {ev.br_config}")

    run = cfg.run
    need(run.total_timesteps >= 1, f"run.total_timesteps must be at least 1, not {run.total_timesteps}")
    need(run.checkpoint_every >= 0, f"run.checkpoint_every must be at least 0, not {run.checkpoint_every}")
    need(run.keep_checkpoints >= 1, f"run.keep_checkpoints must be at least 1, not {run.keep_checkpoints}")
    need(0 <= run.seed <= SEED_MAX, f"run.seed must be from 0 to {SEED_MAX} (2**31 - 1), not {run.seed}")
    need(not run.init_from or (run.init_from.endswith(".zip") and Path(run.init_from).is_file()),
         f"run.init_from must be a model zip that exists, not {run.init_from!r}")
    need(run.name is None or (run.name and "/" not in run.name and "__" not in run.name),
         f"run.name must be a plain folder name without '/' or '__', not {run.name!r}")


# Keys of the ppo section that chose between two training pipelines until there was one (the
# batched env; the single-agent vec stack went, 2026-12-04), with the values that mean what
# training does now. Run folders and agent files written before keep them in their
# config.yaml: such a value is dropped, any other is refused, since the run cannot be redone.
RETIRED_PPO_KEYS: dict[str, tuple[str, ...]] = {
    "pipeline": ("auto", "batched"),
    "vec_env": ("dummy",),
    "start_method": ("fork", "forkserver", "spawn"),
}


def _drop_retired(data: dict) -> dict:
    """``data`` without the retired ppo keys (:data:`RETIRED_PPO_KEYS`) whose values mean what
    training does now; a ConfigError for any other value of them."""
    ppo = data.get("ppo")
    if not isinstance(ppo, dict) or not any(key in ppo for key in RETIRED_PPO_KEYS):
        return data
    ppo = dict(ppo)
    for key, kept in RETIRED_PPO_KEYS.items():
        if key in ppo:
            value = ppo.pop(key)
            if value not in kept:
                raise ConfigError(f"ppo.{key} {value!r} is no longer a choice: every config trains on the "
                                  f"batched env (train/batched_vec.py); remove the key")
    return {**data, "ppo": ppo}


def config_from_dict(data: dict | None) -> Config:
    """A :class:`Config` from plain data (as ``yaml.safe_load`` returns it), its keys, types and
    ranges checked (``train.checks.checked_config_from_dict`` adds the game's checks). The keys
    of :data:`RETIRED_PPO_KEYS` are dropped when their value means what training does now.

    >>> config_from_dict({"ppo": {"pipeline": "auto", "vec_env": "dummy"}}).ppo.n_envs
    1
    >>> config_from_dict({"ppo": {"pipeline": "single_agent"}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    train.config.ConfigError: ppo.pipeline 'single_agent' is no longer a choice: every config ...
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"a config is a mapping of sections (env, opponents, ppo, eval, run), "
                          f"not {_describe(data)}")
    cfg = _build(Config, _drop_retired(data), "")
    _check_ranges(cfg)
    return cfg


def config_to_dict(cfg: Config) -> dict:
    """Plain data that :func:`config_from_dict` turns back into an equal config."""
    return dataclasses.asdict(cfg)


def dump_config(cfg: Config) -> str:
    """The config as YAML text (every key, defaults included): what a run folder saves."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False, default_flow_style=None)


def apply_override(data: dict, assignment: str) -> None:
    """Apply ``"ppo.learning_rate=1e-4"`` to raw config data; the value is read as YAML."""
    key, sep, text = assignment.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set takes KEY=VALUE with a dotted key, e.g. ppo.learning_rate=1e-4; "
                          f"got {assignment!r}")
    try:
        value = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {key}: cannot read the value {text!r} as YAML "
                          f"({_yaml_error(exc)})") from None
    _check_colons(value, f"--set {key}")
    parts = key.split(".")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {'.'.join(parts[:depth + 1])} is a value, not a section")
        node = child
    node[parts[-1]] = value


def read_yaml(path: str | Path) -> dict:
    """The raw data of a YAML config file; a missing or unreadable file is a ConfigError."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {_yaml_error(exc)}") from None
    if data is None or data == {}:  # an empty file (or {}) would silently train the defaults
        raise ConfigError(f"{path} is empty: a config sets at least one section (env, opponents, ppo, "
                          f"eval, run); see configs/smoke.yaml")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config is a mapping of sections, not {_describe(data)}")
    _check_colons(data, str(path))
    return data


def _yaml_error(exc: yaml.YAMLError) -> str:
    """PyYAML's error in one line: what it found and where (its own text spans several lines,
    with a copy of the line and a caret)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem:
        return " ".join(str(exc).split())
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    return where + problem + (f" ({context})" if context else "")


def _check_colons(value: Any, where: str) -> None:
    """YAML reads ``{random:1}`` (no space after the colon) as the one key ``"random:1"`` with
    no value: say so, rather than a type error about a key the user did not write."""
    if isinstance(value, dict):
        for k, v in value.items():
            if v is None and isinstance(k, str) and ":" in k:
                name, _, rest = k.partition(":")
                raise ConfigError(f"{where}: {k!r} reads as one key with no value; YAML needs a space "
                                  f"after the colon ({name}: {rest})")
            _check_colons(v, where)
    elif isinstance(value, list):
        for v in value:
            _check_colons(v, where)


def load_config(path: str | Path | None = None, *, overrides: typing.Sequence[str] = (),
                seed: int | None = None, target: str | None = None) -> Config:
    """Read ``path`` (or the defaults), apply ``--set`` overrides, ``--target`` and ``--seed``,
    and check its keys, types and ranges (``train.checks.load_checked_config`` adds the checks
    that need the game, the envs, LBR and the agent registry).

    ``target``: an agent spec to train a best response to: the only opponent (weight 1), with
    self-play off and, when evaluations are on, the only evaluation baseline.
    ``run.name`` defaults to the file's name without ``.yaml``.
    """
    data = read_yaml(path) if path is not None else {}
    for assignment in overrides:
        apply_override(data, assignment)
    if target is not None:
        if not isinstance(target, str) or not target.strip():
            raise ConfigError("--target needs an agent spec, e.g. --target tag")
        for section in ("opponents", "eval"):
            if not isinstance(data.setdefault(section, {}), dict):
                raise ConfigError(f"{section} must be a mapping of keys, not {_describe(data[section])}")
        data["opponents"]["baselines"] = {target.strip(): 1.0}
        data["opponents"]["self_play"] = {"every": 0, "weight": 0.0}
        data["eval"]["baselines"] = [target.strip()]
    if seed is not None:
        if type(seed) is not int or not 0 <= seed <= SEED_MAX:
            raise ConfigError(f"--seed must be from 0 to {SEED_MAX} (2**31 - 1), not {seed!r}")
        data.setdefault("run", {})
        if not isinstance(data["run"], dict):
            raise ConfigError(f"run must be a mapping of keys, not {_describe(data['run'])}")
        data["run"]["seed"] = seed
    cfg = config_from_dict(data)
    if cfg.run.name is None:
        cfg.run.name = Path(path).stem if path is not None else "default"
    return cfg
