"""Agents by spec string: ``NAME`` or ``NAME:OPTION=VALUE,OPTION=VALUE``.

=============================  ==============================================================
spec                           agent
=============================  ==============================================================
``random``                     uniform over the legal actions
``call``                       calling station: always checks or calls
``raise``                      maniac: bets or raises whenever it may
``tag``                        tight-aggressive rules on made hands and draws
``equity:samples=300``         Monte-Carlo equity vs pot odds (``raise_edge``, ``call_margin``)
``ppo:PATH``                   a MaskablePPO checkpoint (``ppo:PATH,deterministic=false``)
``cfr:PATH``                   a CFR+ average strategy saved by ``arena/exact.py`` (soko_mini)
``br:PATH``                    an exact best response saved by ``python -m arena.exploit``
=============================  ==============================================================

The options of an agent are the keyword arguments of its class, with their defaults; a
value is read as the default's type. ``ppo`` takes the checkpoint path as its first, unnamed
option (``ppo:runs/x/final_model.zip`` is ``ppo:path=runs/x/final_model.zip``); the path may
also be a training run folder (its ``final_model.zip``).

**Display names.** Tables and pictures show :func:`display_name`: ``name=...`` when the spec
gives one (any agent: ``equity:samples=50,name=eq50``), for ``ppo`` the run folder's name
(``runs/soko_ppo__s0__20260101-120000/final_model.zip`` is ``soko_ppo__s0__20260101-120000``;
a checkpoint ``runs/<run>/checkpoints/ckpt_1000.zip`` is ``<run>/ckpt_1000``), otherwise the
spec itself.

**Checking before playing.** :func:`check_spec` loads nothing: for ``ppo`` it finds the model
file, reads the observation and action sizes from the zip's ``data`` entry and, given the rules
to be played, compares them with that game's, so a model trained on another game is refused
in one line before any hand is dealt.

>>> make_agent("equity:samples=50").samples
50
>>> make_agent("tight")
Traceback (most recent call last):
...
ValueError: unknown agent 'tight'; valid agents: random, call, raise, tag, equity, ppo, cfr, br (e.g. random, call, raise, tag, equity:samples=300, ppo:runs/<run>/final_model.zip)
>>> make_agent("equity:sample=5")
Traceback (most recent call last):
...
ValueError: unknown option 'sample' for agent 'equity'; valid options: samples (int, default 300), raise_edge (float, default 0.3), call_margin (float, default 0.0)
"""

from __future__ import annotations

import inspect
import json
import zipfile
from pathlib import Path
from typing import Any, Callable

from agents.base import Agent
from agents.equity import EquityAgent
from agents.heuristic import CallAgent, RaiseAgent, RandomAgent, TagAgent

__all__ = ["AGENTS", "make_agent", "parse_spec", "check_spec", "describe_agents", "display_name",
           "canonical_spec", "resolve_checkpoint", "FINAL_MODEL"]

FINAL_MODEL = "final_model.zip"   # what train/ppo.py leaves in a run folder


def _ppo_factory(**options) -> Agent:
    from agents.trained import PPOAgent  # torch and sb3 load only when a ppo agent is asked for
    return PPOAgent(**options)


def _ppo_signature(*, path: str = "", deterministic: bool = True) -> None:
    """The options of ``ppo:``; kept here so parsing a spec never imports torch."""


def _cfr_factory(**options) -> Agent:
    from agents.table import CFRAgent
    return CFRAgent(**options)


def _br_factory(**options) -> Agent:
    from agents.table import BestResponseAgent
    return BestResponseAgent(**options)


def _table_signature(*, path: str = "") -> None:
    """The options of ``cfr:`` and ``br:``: the strategy file (``agents/table.py``)."""


# name -> (factory, signature source, positional option, one-line description)
AGENTS: dict[str, tuple[Callable[..., Agent], Callable, str | None, str]] = {
    "random": (RandomAgent, RandomAgent, None, "uniform over the legal actions"),
    "call": (CallAgent, CallAgent, None, "calling station: always checks or calls"),
    "raise": (RaiseAgent, RaiseAgent, None, "maniac: bets or raises whenever it may"),
    "tag": (TagAgent, TagAgent, None, "tight-aggressive rules on made hands and draws"),
    "equity": (EquityAgent, EquityAgent, None, "Monte-Carlo equity against pot odds"),
    "ppo": (_ppo_factory, _ppo_signature, "path", "a MaskablePPO checkpoint"),
    "cfr": (_cfr_factory, _table_signature, "path", "a CFR+ average strategy (arena/exact.py, soko_mini)"),
    "br": (_br_factory, _table_signature, "path",
           "an exact best response (python -m arena.exploit --method exact writes it)"),
}
_EXAMPLES = "random, call, raise, tag, equity:samples=300, ppo:runs/<run>/final_model.zip"


def _options(name: str) -> dict[str, Any]:
    """Option name -> default, from the keyword-only arguments of the agent's class."""
    source = AGENTS[name][1]
    params = inspect.signature(source).parameters.values()
    return {p.name: p.default for p in params
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty}


def _describe_options(name: str) -> str:
    options = _options(name)
    if not options:
        return "none"
    return ", ".join(f"{k} ({type(v).__name__}, default {v!r})" if v != "" else f"{k} (str, required)"
                     for k, v in options.items())


def describe_agents() -> str:
    """One line per agent with its options, for --help texts."""
    return ("\n".join(f"  {name:8} {AGENTS[name][3]}; options: {_describe_options(name)}" for name in AGENTS)
            + "\n  any agent also takes name=NAME, the name its results are shown under")


def _convert(name: str, key: str, text: str, default: Any) -> Any:
    def bad(kind: str) -> ValueError:
        return ValueError(f"option {key}={text!r} of agent {name!r} must be {kind}")

    if isinstance(default, bool):
        low = text.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise bad("true or false")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise bad("a whole number") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise bad("a number") from None
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"equity:samples=50"`` -> ``("equity", {"samples": 50})``; unknown names, unknown
    options and malformed values are ValueErrors that list what is valid.

    >>> parse_spec("ppo:runs/a/final_model.zip,deterministic=false")
    ('ppo', {'path': 'runs/a/final_model.zip', 'deterministic': False})
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string such as {_EXAMPLES}; got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; valid agents: {', '.join(AGENTS)} (e.g. {_EXAMPLES})")
    valid = _options(name)
    positional = AGENTS[name][2]
    options: dict[str, Any] = {}
    items = [item for item in rest.split(",")] if rest else []
    for i, item in enumerate(items):
        key, eq, value = item.partition("=")
        if not eq:
            if i == 0 and positional:
                key, value = positional, item
            else:
                raise ValueError(f"option {item!r} of agent {name!r} must be written NAME=VALUE; "
                                 f"valid options: {_describe_options(name)}")
        key = key.strip()
        if key == "name":  # every agent: the name tables show (display_name)
            if not value.strip():
                raise ValueError(f"option name= of agent {name!r} needs a name, e.g. name=mine")
            if key in options:
                raise ValueError(f"option 'name' given twice in agent spec {spec!r}")
            options[key] = value.strip()
            continue
        if key not in valid:
            raise ValueError(f"unknown option {key!r} for agent {name!r}; valid options: "
                             f"{_describe_options(name)}")
        if key in options:
            raise ValueError(f"option {key!r} given twice in agent spec {spec!r}")
        options[key] = _convert(name, key, value.strip(), valid[key])
    for key, default in valid.items():
        if default == "" and key not in options:
            raise ValueError(f"agent {name!r} needs {key}: write {name}:{key.upper()} (e.g. {_EXAMPLES})")
    return name, options


def resolve_checkpoint(path: str | Path) -> Path:
    """The model file a ``ppo`` path names: the file itself, the same with ``.zip`` added (as
    SB3 does), or a run folder's ``final_model.zip``. A ValueError of one line says what is
    missing."""
    path = Path(path)
    if path.is_dir():
        final = path / FINAL_MODEL
        if final.is_file():
            return final
        ckpts = sorted(p.name for p in (path / "checkpoints").glob("*.zip")) if (path / "checkpoints").is_dir() else []
        hint = (f" (training has not finished; its checkpoints: {path / 'checkpoints'}/{ckpts[-1]}, ...)"
                if ckpts else "")
        raise ValueError(f"{path} is a folder without {FINAL_MODEL}{hint}")
    if path.is_file():
        return path
    if path.suffix != ".zip" and path.with_suffix(path.suffix + ".zip").is_file():
        return path.with_suffix(path.suffix + ".zip")
    raise ValueError(f"no checkpoint at {path}: no such file or folder")


def _model_sizes(path: Path) -> tuple[int, int, tuple[str, ...]]:
    """(observation size, number of actions, optional observation pieces) of an SB3 model file,
    read from the zip's JSON ``data`` entry (no torch); a ValueError when the file is not such a
    model."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise ValueError(f"{path} is a zip file but not a Stable-Baselines3 model (no data and policy.pth)")
            data = json.loads(z.read("data"))
    except zipfile.BadZipFile:
        raise ValueError(f"{path} is not a model: not a zip file (expected a MaskablePPO .zip)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable model: {exc}") from None
    try:
        obs = data["observation_space"]["_shape"]
        actions = int(data["action_space"]["n"])
        (size,) = obs
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path} is not a model of this project: its spaces are not a flat observation "
                         f"and a discrete action") from None
    from envs.observation import check_features

    try:
        features = check_features(data.get("observation_features") or ())
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return int(size), actions, features


def _rules_label(rules) -> str:
    """``follow_the_bitch`` or ``follow_the_bitch (low_chicago=true)``: a preset and what differs."""
    import dataclasses

    from envs.engine.rules import RULES

    base = RULES.get(rules.name)
    if base is None or base == rules:
        return rules.name
    diff = [f"{f.name}={str(getattr(rules, f.name)).lower() if isinstance(getattr(rules, f.name), bool) else getattr(rules, f.name)}"
            for f in dataclasses.fields(rules) if f.name != "name" and getattr(rules, f.name) != getattr(base, f.name)]
    return f"{rules.name} ({', '.join(diff)})"


def _trained_for(path: Path, obs_size: int, features: tuple[str, ...] = ()) -> str:
    """What a model was trained for: the run's ``config.yaml`` (next to ``final_model.zip``, or
    one folder up from ``checkpoints/``), else the presets whose observations have its size."""
    from envs.engine.rules import RULES, get_rules
    from envs.observation import build_layout

    for folder in (path.parent, path.parent.parent):
        config = folder / "config.yaml"
        if config.is_file():
            try:
                import yaml

                env = (yaml.safe_load(config.read_text()) or {}).get("env", {})
                overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in (env.get("rules") or {}).items()}
                return _rules_label(get_rules(env["game"], **overrides))
            except Exception:  # an unreadable config: fall back on the sizes
                break
    games = [name for name in RULES if build_layout(name, features).size == obs_size]
    return " or ".join(games) if games else "another game"


def check_spec(spec: str, rules=None) -> None:
    """Raise a one-line ValueError if ``spec`` cannot make an agent: a bad name or option, or a
    ``ppo`` path that is missing, a folder without ``final_model.zip``, not a model, or (given
    ``rules``, the game to be played) a model whose observation or action sizes are another
    game's. Loads nothing: reads the model zip's ``data`` entry only."""
    name, options = parse_spec(spec)
    if name == "ppo":
        try:
            path = resolve_checkpoint(options["path"])
            obs_size, actions, features = _model_sizes(path)
        except ValueError as exc:
            raise ValueError(f"agent {spec.strip()!r}: {exc}") from None
        if rules is not None:
            from envs.actions import num_actions
            from envs.observation import build_layout

            want_obs, want_actions = build_layout(rules, features).size, num_actions(rules)
            if (obs_size, actions) != (want_obs, want_actions):
                what = (f"observation {obs_size}; this tournament plays {_rules_label(rules)}, {want_obs}"
                        if obs_size != want_obs else
                        f"{actions} actions; this tournament plays {_rules_label(rules)}, {want_actions}")
                raise ValueError(f"agent {spec.strip()!r}: {path} was trained for "
                                 f"{_trained_for(path, obs_size, features)}, {what}")
    elif name in ("cfr", "br"):
        from agents.table import load_table

        try:
            meta, _ = load_table(options["path"])
        except ValueError as exc:
            raise ValueError(f"agent {spec.strip()!r}: {exc}") from None
        from envs.engine.rules import get_rules

        if rules is not None and get_rules(meta["game"], **meta["rules"]) != rules:
            raise ValueError(f"agent {spec.strip()!r}: {options['path']} plays {meta['game']} "
                             f"{meta['rules'] or ''}; this tournament plays {_rules_label(rules)}".replace("  ", " "))
    else:
        options.pop("name", None)
        if options:
            AGENTS[name][0](**options)  # value checks in the constructor (cheap for built-ins)


def display_name(spec) -> str:
    """The short name tables and pictures show: ``name=...`` if given, a ``ppo`` model's run
    folder, otherwise the spec as written (an :class:`Agent` object: its ``name``).

    >>> display_name("equity:samples=50"), display_name("tag:name=tight")
    ('equity:samples=50', 'tight')
    >>> display_name("ppo:runs/soko_ppo__s0__20260101-120000/final_model.zip,deterministic=false")
    'soko_ppo__s0__20260101-120000'
    >>> display_name("ppo:runs/soko_ppo__s0__20260101-120000/checkpoints/ckpt_1000.zip")
    'soko_ppo__s0__20260101-120000/ckpt_1000'
    """
    if not isinstance(spec, str):
        return getattr(spec, "name", None) or type(spec).__name__
    name, options = parse_spec(spec)
    if "name" in options:
        return options["name"]
    if name != "ppo":
        return spec.strip()
    path = Path(options["path"])
    if path.is_dir() or path.name == FINAL_MODEL:
        folder = path if path.is_dir() else path.parent
        return folder.resolve().name if folder.name in ("", ".", "..") else folder.name
    stem = path.name[:-4] if path.name.endswith(".zip") else path.name
    if path.parent.name in ("checkpoints", "snapshots"):
        return f"{path.parent.parent.name}/{stem}"
    return stem


def canonical_spec(spec: str) -> str:
    """One spelling per agent: options in the order of the class's signature, defaults and
    ``name=`` left out, and a ``ppo`` path resolved to its absolute model file (relative or absolute, run folder or
    ``final_model.zip``: the same model gives the same string).

    >>> canonical_spec(" equity:raise_edge=0.2,samples=50,call_margin=0.0 ")
    'equity:samples=50,raise_edge=0.2'
    """
    name, options = parse_spec(spec)
    options.pop("name", None)
    if name == "ppo":
        try:
            options["path"] = str(resolve_checkpoint(options["path"]).resolve())
        except ValueError:
            options["path"] = str(Path(options["path"]).resolve())
    defaults = _options(name)
    positional = AGENTS[name][2]
    items = [(f"{k}=" if k != positional else "") + (str(v).lower() if isinstance(v, bool) else str(v))
             for k, v in sorted(options.items(), key=lambda kv: list(defaults).index(kv[0]))
             if v != defaults[k] or k == positional]
    return name + (":" + ",".join(items) if items else "")


def make_agent(spec: str | Agent) -> Agent:
    """The agent a spec names (an :class:`Agent` passes through), its ``name`` set to the spec."""
    if isinstance(spec, Agent) or (not isinstance(spec, str) and hasattr(spec, "act")):
        return spec
    name, options = parse_spec(spec)
    options.pop("name", None)
    agent = AGENTS[name][0](**options)
    agent.name = spec.strip()
    agent.spec = spec.strip()   # what it was made from (an agent travels as its spec: arena.cluster)
    return agent
