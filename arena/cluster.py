"""Matches on a Ray cluster: the deal groups of ``arena.match`` played by Ray actors.

``python -m arena ... --ray [ADDRESS]`` and ``python -m arena.exploit ... --ray [ADDRESS]`` split
a match's deal groups into the chunks ``--workers`` uses and hand them to one actor per CPU of
the cluster (without an address: a local Ray instance sized to this machine; ``auto``: the
cluster this machine belongs to; ``HOST:PORT`` or ``ray://HOST:10001``: that one). Every
group's deck and agent seeds come from ``(seed, match, group)`` alone and the chunks are put
back in group order, so the results are those of ``--workers 1``, bit for bit.

Agents travel to the actors as recipes of plain strings and numbers, never as pickled agents:
an agent spec (``agents.registry``; a ``ppo`` path made absolute, so the model file must be
where every node sees it) or, for a local best response, ``("lbr", target spec, samples)``.
:func:`agent_recipe` makes one; :func:`build_agent` makes the agent back on the actor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.registry import canonical_spec, make_agent
from arena.lbr import LBRAgent

__all__ = ["agent_recipe", "build_agent", "check_address", "cluster_cpus", "connect", "play_chunks"]

REPO = Path(__file__).resolve().parent.parent


def connect(address: str | None) -> bool:
    """Join Ray at ``address`` (None or "": start a local instance on every core of this
    machine) unless this process is connected already; True if this call connected (the caller
    shuts it down). The workers get this checkout on their PYTHONPATH. A cluster that cannot be
    reached is a ValueError with one line."""
    import logging

    import ray

    if ray.is_initialized():
        return False
    check_address(address)
    pythonpath = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    runtime_env = {"env_vars": {"PYTHONPATH": pythonpath}}
    try:
        if address:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                     logging_level=logging.ERROR)
        else:
            ray.init(num_cpus=os.cpu_count(), runtime_env=runtime_env, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.ERROR)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"cannot join the Ray cluster at {address!r}: {first}") from exc
    return True


def check_address(address: str | None, seconds: float = 5.0) -> None:
    """A ValueError at once for a ``HOST:PORT`` nobody listens on (Ray itself retries for
    minutes); ``auto``, ``ray://`` and no address are left to Ray."""
    import socket

    if not address or address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"a Ray address is auto, HOST:PORT or ray://HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        raise ValueError(f"cannot join the Ray cluster at {address!r}: nothing answers there "
                         f"({exc.strerror or exc})") from exc


def agent_recipe(agent: str | Agent) -> str | tuple:
    """What travels to a Ray actor for ``agent``: its spec (canonical: a ``ppo`` path
    absolute), or ``("lbr", target spec, samples)``; ValueError for an agent that was not made
    from a spec (it would have to be pickled)."""
    recipe = agent if isinstance(agent, str) else agent.recipe()   # Agent.recipe
    if isinstance(recipe, tuple):
        kind, target, samples = recipe
        return (kind, canonical_spec(target), samples)
    if not isinstance(recipe, str):
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} was not made from a spec; with --ray, "
                         f"agents travel to the workers as specs")
    return canonical_spec(recipe)


def build_agent(recipe: str | tuple) -> Agent:
    """The agent of a recipe (:func:`agent_recipe`)."""
    if isinstance(recipe, tuple):
        kind, target, samples = recipe
        if kind != "lbr":
            raise ValueError(f"unknown agent recipe {kind!r}")
        return LBRAgent(target, samples=int(samples))
    return make_agent(recipe)


class _Actor:
    """One Ray actor: a match runner for every chunk it is given (``arena.match._Runner``)."""

    def __init__(self, make_runner: Callable, rules, n: int, recipes: dict[str, Any], kwargs: dict) -> None:
        try:   # one thread per actor: the actors already use every core
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass
        agents = {name: build_agent(r) for name, r in recipes.items()}
        for agent in agents.values():
            warm = getattr(agent, "warm_up", None)
            if warm is not None:
                warm(rules)
        self.runner = make_runner(rules, n, agents, **kwargs)

    def play(self, task: tuple) -> tuple:
        match, g0, g1 = task
        chips, luck, stories = self.runner.play(match, g0, g1)
        return match.index, g0, chips, luck, stories


def cluster_cpus() -> int:
    """The CPUs of the Ray cluster this process is connected to (:func:`connect`)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def play_chunks(make_runner: Callable, rules, n: int, agents: dict[str, Any], kwargs: dict,
                tasks: Sequence[tuple], collect: Callable, *, actors: int) -> None:
    """Play ``tasks`` (match, first group, end group) on ``actors`` Ray actors of the cluster
    this process is connected to, passing each result to ``collect`` as it comes."""
    import ray
    from ray.util import ActorPool

    recipes = {name: agent_recipe(a) for name, a in agents.items()}
    count = max(1, min(actors, len(tasks)))
    remote = ray.remote(num_cpus=1)(_Actor)
    handles = [remote.remote(make_runner, rules, n, recipes, kwargs) for _ in range(count)]
    try:
        for result in ActorPool(handles).map_unordered(lambda a, t: a.play.remote(t), tasks):
            collect(result)
    finally:
        for handle in handles:
            ray.kill(handle)
