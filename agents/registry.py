"""Agents by spec string: ``NAME`` or ``NAME:OPTION=VALUE,OPTION=VALUE``.

=============================  ==============================================================
spec                           agent
=============================  ==============================================================
``random``                     uniform over the legal actions
``call``                       calling station: always checks or calls
``raise``                      maniac: bets or raises whenever it may
``tag``                        tight-aggressive rules on made hands and draws
``equity:samples=300``         Monte-Carlo equity vs pot odds (``raise_edge``, ``call_margin``)
``ppo:PATH``                   a trained policy: an agent file (``.safetensors``), a run folder or
                               an SB3 zip, loaded without unpickling (``deterministic=false``)
``champion:GAME``              the shipped champion of a game (``agents/champions/``): ``soko``
                               (the default), ``soko_6max``, ``follow_the_bitch``,
                               ``follow_the_bitch_low_chicago``
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
>>> make_agent("tight")  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
ValueError: unknown agent 'tight'; valid agents: random, call, raise, tag, equity, ppo, champion,
cfr, br (e.g. ...)
>>> make_agent("equity:sample=5")  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
ValueError: unknown option 'sample' for agent 'equity'; valid options: samples (int, default 300),
raise_edge (float, default 0.3), call_margin (float, default 0.0)
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable

from agents.agent_file import FINAL_AGENT, FINAL_MODEL, plays_deterministic, resolve_model
from agents.base import Agent
from agents.equity import EquityAgent
from agents.heuristic import CallAgent, RaiseAgent, RandomAgent, TagAgent

__all__ = ["AGENTS", "CHAMPIONS", "make_agent", "parse_spec", "check_spec", "describe_agents", "display_name",
           "canonical_spec", "champion_path", "champion_for", "bind_spec", "shipped_champions"]


def _ppo_factory(**options) -> Agent:
    from agents.trained import PPOAgent  # torch and sb3 load only when a ppo agent is asked for
    return PPOAgent(**options)


def _ppo_signature(*, path: str = "", deterministic: bool | None = None,
                   trust_pickled_code: bool = False) -> None:
    """The options of ``ppo:``; kept here so parsing a spec never imports torch.
    ``trust_pickled_code=true`` loads an SB3 zip through ``MaskablePPO.load``, which runs code
    from the file: only for files you made yourself."""


CHAMPIONS_DIR = Path(__file__).resolve().parent / "champions"
CHAMPIONS = {
    "soko": "heads-up Soko",
    "soko_6max": "Soko at six seats",
    "follow_the_bitch": "heads-up Follow the Bitch",
    "follow_the_bitch_low_chicago": "heads-up Follow the Bitch with Low Chicago",
}
"""The shipped champions: ``agents/champions/<name>.safetensors`` (see docs/agents.md)."""


def shipped_champions() -> list[str]:
    """The champions whose agent files are installed (all of :data:`CHAMPIONS` on a full checkout)."""
    return [game for game in CHAMPIONS if (CHAMPIONS_DIR / f"{game}.safetensors").is_file()]


def champion_path(game: str) -> Path:
    """The agent file of a shipped champion; a one-line ValueError for an unknown or missing one."""
    if game not in CHAMPIONS:
        raise ValueError(f"no champion for {game!r}; champions: {', '.join(CHAMPIONS)}")
    path = CHAMPIONS_DIR / f"{game}.safetensors"
    if not path.is_file():
        raise ValueError(f"champion:{game} is not installed ({path} is missing)")
    return path


def champion_for(rules, players: int = 2) -> str | None:
    """The champion spec of a game (``champion:soko_6max`` for Soko at more than two seats), or
    None when none ships for it."""
    from agents.agent_file import model_info

    for game in ((f"{rules.name}_6max", rules.name) if players > 2 else (rules.name,)):
        if game in CHAMPIONS and (CHAMPIONS_DIR / f"{game}.safetensors").is_file():
            try:
                if model_info(CHAMPIONS_DIR / f"{game}.safetensors").rules == rules:
                    return f"champion:{game}"
            except ValueError:
                return None
    return None


def bind_spec(spec, rules, players: int = 2):
    """A ``champion`` that names no game made the champion of the game being played
    (``champion:GAME``), where one ships, its options kept (``champion:deterministic=false`` ->
    ``champion:soko,deterministic=false``); any other spec unchanged. Harnesses that know the
    game call it."""
    if not isinstance(spec, str):
        return spec
    try:
        name, options = parse_spec(spec)
    except ValueError:
        return spec   # the harness's check_spec says what is wrong
    if name != "champion" or "game" in options:
        return spec
    bound = champion_for(rules, players)
    rest = spec.strip().partition(":")[2].strip()
    return spec if bound is None else ",".join([bound, rest] if rest else [bound])


def _champion_factory(*, game: str = "soko", deterministic: bool | None = None) -> Agent:
    from agents.trained import PPOAgent

    return PPOAgent(path=str(champion_path(game)), deterministic=deterministic)


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
    "ppo": (_ppo_factory, _ppo_signature, "path",
            "a trained policy: agent file (.safetensors), run folder or SB3 zip, never unpickled"),
    "champion": (_champion_factory, _champion_factory, "game",
                 f"a shipped champion ({', '.join(CHAMPIONS)}; soko by default)"),
    "cfr": (_cfr_factory, _table_signature, "path", "a CFR+ average strategy (arena/exact.py, soko_mini)"),
    "br": (_br_factory, _table_signature, "path",
           "an exact best response (python -m arena.exploit --method exact writes it)"),
}
_EXAMPLES = "random, call, raise, tag, equity:samples=300, champion, ppo:runs/<run>"


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
    return ", ".join(f"{k} (str, required)" if v == "" else
                     f"{k} (bool, default: as its training run evaluated it)" if v is None else
                     f"{k} ({type(v).__name__}, default {v!r})"
                     for k, v in options.items())


def describe_agents() -> str:
    """One line per agent with its options, for --help texts."""
    return ("\n".join(f"  {name:8} {AGENTS[name][3]}; options: {_describe_options(name)}" for name in AGENTS)
            + "\n  any agent also takes name=NAME, the name its results are shown under")


def _convert(name: str, key: str, text: str, default: Any) -> Any:
    def bad(kind: str) -> ValueError:
        return ValueError(f"option {key}={text!r} of agent {name!r} must be {kind}")

    if isinstance(default, bool) or default is None:   # None: a switch whose default the model says
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
        head = name.partition(",")[0].strip()
        if head in AGENTS:   # "champion,deterministic=false": the options without their colon
            raise ValueError(f"agent {spec.strip()!r}: options follow a colon, as in "
                             f"{head}:{name.partition(',')[2].strip()}")
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


def _trained_for(info) -> str:
    """What a model was trained for: its header's or its run's rules, else the presets whose
    observations have its size."""
    from envs.engine.rules import RULES, rules_label
    from envs.observation import build_layout

    if info.rules is not None:
        return rules_label(info.rules)
    games = [name for name in RULES if build_layout(name, info.features).size == info.obs_size]
    return " or ".join(games) if games else "another game"


def check_spec(spec: str, rules=None) -> None:
    """Raise a one-line ValueError if ``spec`` cannot make an agent: a bad name or option, or a
    ``ppo`` path that is missing, a folder without ``final_model.zip``, not a model, or (given
    ``rules``, the game to be played) a model whose observation or action sizes are another
    game's. An agent file is checked whole (its tensors' hash, its layout hash, its game:
    ``agents.agent_file.check_model``); of a zip only the ``data`` entry is read. No network is
    built."""
    name, options = parse_spec(spec)
    if name == "champion":
        try:
            path = champion_path(options.get("game", "soko"))
        except ValueError as exc:
            raise ValueError(f"agent {spec.strip()!r}: {exc}") from None
        try:
            check_spec(f"ppo:{path}", rules)
        except ValueError as exc:
            better = champion_for(rules) if rules is not None else None
            hint = f" (for this game: {better})" if better else " (no champion ships for this game)"
            raise ValueError(f"agent {spec.strip()!r}: {str(exc).partition(': ')[2]}{hint}") from None
        return
    if name == "ppo":
        from agents.agent_file import check_model

        try:
            info = check_model(options["path"], rules)
        except ValueError as exc:
            raise ValueError(f"agent {spec.strip()!r}: {exc}") from None
        if rules is not None:
            from envs.actions import num_actions
            from envs.engine.rules import rules_label
            from envs.observation import build_layout

            want_obs, want_actions = build_layout(rules, info.features).size, num_actions(rules)
            if (info.obs_size, info.n_actions) != (want_obs, want_actions):
                what = (f"observation {info.obs_size}; this tournament plays {rules_label(rules)}, {want_obs}"
                        if info.obs_size != want_obs else
                        f"{info.n_actions} actions; this tournament plays {rules_label(rules)}, "
                        f"{want_actions}")
                raise ValueError(f"agent {spec.strip()!r}: {info.path} was trained for "
                                 f"{_trained_for(info)}, {what}")
    elif name in ("cfr", "br"):
        from agents.table import load_table

        try:
            meta, _ = load_table(options["path"])
        except ValueError as exc:
            raise ValueError(f"agent {spec.strip()!r}: {exc}") from None
        from envs.engine.rules import get_rules, rules_label

        if rules is not None and get_rules(meta["game"], **meta["rules"]) != rules:
            raise ValueError(f"agent {spec.strip()!r}: {options['path']} plays {meta['game']} "
                             f"{meta['rules'] or ''}; this tournament plays "
                             f"{rules_label(rules)}".replace("  ", " "))
    else:
        options.pop("name", None)
        if options:
            AGENTS[name][0](**options)  # value checks in the constructor (cheap for built-ins)


def display_name(spec) -> str:
    """The short name tables and pictures show: ``name=...`` if given, a ``ppo`` model's run
    folder, otherwise the spec as written (an :class:`Agent` object: its ``name``, or where
    :func:`make_agent` named it, its spec's display name: the same for every spelling of a path).

    >>> display_name("equity:samples=50"), display_name("tag:name=tight")
    ('equity:samples=50', 'tight')
    >>> display_name("ppo:runs/soko_ppo__s0__20260101-120000/final_model.zip,deterministic=false")
    'soko_ppo__s0__20260101-120000'
    >>> display_name("ppo:runs/soko_ppo__s0__20260101-120000/checkpoints/ckpt_1000.zip")
    'soko_ppo__s0__20260101-120000/ckpt_1000'
    """
    if not isinstance(spec, str):
        name, made_from = getattr(spec, "name", None), getattr(spec, "spec", None)
        if isinstance(made_from, str) and name == made_from:
            return display_name(made_from)   # made by make_agent: named as its spec is
        return name or type(spec).__name__
    name, options = parse_spec(spec)
    if "name" in options:
        return options["name"]
    if name == "champion":
        return "champion" if options.get("game", "soko") == "soko" else f"champion:{options['game']}"
    if name != "ppo":
        return spec.strip()
    path = Path(options["path"])
    if path.is_dir() or path.name in (FINAL_MODEL, FINAL_AGENT):
        folder = path if path.is_dir() else path.parent
        return folder.resolve().name if folder.name in ("", ".", "..") else folder.name
    stem = path.name
    for suffix in (".zip", ".safetensors"):
        stem = stem[:-len(suffix)] if stem.endswith(suffix) else stem
    if path.parent.name in ("checkpoints", "snapshots"):
        return f"{path.parent.parent.name}/{stem}"
    return stem


def canonical_spec(spec: str) -> str:
    """One spelling per agent: options in the order of the class's signature, defaults and
    ``name=`` left out, and a ``ppo`` path resolved to its absolute model file (relative or
    absolute, run folder or ``final_model.zip``: the same model gives the same string);
    ``deterministic=`` left out where it says what the model plays anyway.

    >>> canonical_spec(" equity:raise_edge=0.2,samples=50,call_margin=0.0 ")
    'equity:samples=50,raise_edge=0.2'
    """
    name, options = parse_spec(spec)
    options.pop("name", None)
    defaults = _options(name)
    if name == "ppo":
        try:
            options["path"] = str(resolve_model(options["path"]).resolve())
            defaults["deterministic"] = plays_deterministic(options["path"])
        except ValueError:
            options["path"] = str(Path(options["path"]).resolve())
    if name == "champion":
        try:
            defaults["deterministic"] = plays_deterministic(champion_path(options.get("game", "soko")))
        except ValueError:
            pass
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
