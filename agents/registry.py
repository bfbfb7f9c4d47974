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
=============================  ==============================================================

The options of an agent are the keyword arguments of its class, with their defaults; a
value is read as the default's type. ``ppo`` takes the checkpoint path as its first, unnamed
option (``ppo:runs/x/final_model.zip`` is ``ppo:path=runs/x/final_model.zip``).

>>> make_agent("equity:samples=50").samples
50
>>> make_agent("tight")
Traceback (most recent call last):
...
ValueError: unknown agent 'tight'; valid agents: random, call, raise, tag, equity, ppo (e.g. random, call, raise, tag, equity:samples=300, ppo:runs/<run>/final_model.zip)
>>> make_agent("equity:sample=5")
Traceback (most recent call last):
...
ValueError: unknown option 'sample' for agent 'equity'; valid options: samples (int, default 300), raise_edge (float, default 0.3), call_margin (float, default 0.0)
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable

from agents.base import Agent
from agents.equity import EquityAgent
from agents.heuristic import CallAgent, RaiseAgent, RandomAgent, TagAgent

__all__ = ["AGENTS", "make_agent", "parse_spec", "check_spec", "describe_agents"]


def _ppo_factory(**options) -> Agent:
    from agents.trained import PPOAgent  # torch and sb3 load only when a ppo agent is asked for
    return PPOAgent(**options)


def _ppo_signature(*, path: str = "", deterministic: bool = True) -> None:
    """The options of ``ppo:``; kept here so parsing a spec never imports torch."""


# name -> (factory, signature source, positional option, one-line description)
AGENTS: dict[str, tuple[Callable[..., Agent], Callable, str | None, str]] = {
    "random": (RandomAgent, RandomAgent, None, "uniform over the legal actions"),
    "call": (CallAgent, CallAgent, None, "calling station: always checks or calls"),
    "raise": (RaiseAgent, RaiseAgent, None, "maniac: bets or raises whenever it may"),
    "tag": (TagAgent, TagAgent, None, "tight-aggressive rules on made hands and draws"),
    "equity": (EquityAgent, EquityAgent, None, "Monte-Carlo equity against pot odds"),
    "ppo": (_ppo_factory, _ppo_signature, "path", "a MaskablePPO checkpoint"),
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
    return "\n".join(f"  {name:8} {AGENTS[name][3]}; options: {_describe_options(name)}" for name in AGENTS)


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


def check_spec(spec: str) -> None:
    """Raise if ``spec`` cannot make an agent: a bad name or option (ValueError), or a ``ppo``
    checkpoint that does not exist (FileNotFoundError). Loads nothing."""
    name, options = parse_spec(spec)
    if name == "ppo":
        path = Path(options["path"])
        if not path.exists() and not path.with_suffix(".zip").exists():
            raise FileNotFoundError(f"agent {spec!r}: no checkpoint at {path}")
    elif options:
        AGENTS[name][0](**options)  # value checks in the constructor (cheap for built-ins)


def make_agent(spec: str | Agent) -> Agent:
    """The agent a spec names (an :class:`Agent` passes through), its ``name`` set to the spec."""
    if isinstance(spec, Agent) or (not isinstance(spec, str) and hasattr(spec, "act")):
        return spec
    name, options = parse_spec(spec)
    agent = AGENTS[name][0](**options)
    agent.name = spec.strip()
    return agent
