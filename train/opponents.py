"""The training opponents: baseline agents and frozen snapshots of the learner, in one pool.

Each hand, every opponent seat of :class:`envs.single_agent.SingleAgentEnv` draws one entry of
the pool by weight. The pool is built here and handed to the envs with
``vec_env.env_method("set_opponents", pool, weights, indices=[i])``, so it reaches
``SubprocVecEnv`` workers too (entries are pickled: the string ``"random"`` and agents).

Trained opponents, ``ppo:`` baselines and the learner's snapshots alike, are
:class:`agents.trained.PPOAgent` objects, the class tournaments use: each env gets its own
clone (sharing the NumPy weights), which the env re-seeds before every hand as it does every
agent.

>>> weights = pool_weights({"random": 1.0, "tag": 3.0}, snapshots=2, self_play_weight=0.5)
>>> [round(w, 3) for w in weights]
[0.125, 0.375, 0.25, 0.25]
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from agents.trained import PPOAgent

__all__ = ["pool_weights", "baseline_opponent", "build_pool"]


def pool_weights(baselines: dict[str, float], *, snapshots: int, self_play_weight: float,
                 lbr_weight: float = 0.0, responses: int = 0, response_weight: float = 0.0,
                 lbrs: int = 1) -> list[float]:
    """Draw chances: the baselines share ``1 - self_play_weight - lbr_weight - response_weight``
    by their weights, the snapshots share ``self_play_weight`` evenly, the ``lbrs`` local best
    responses to the newest snapshots share ``lbr_weight`` evenly, and the ``responses`` exact
    best responses (last) share ``response_weight`` evenly (the baselines get everything until
    the first snapshot, and the share of responses until the first response).

    >>> w = pool_weights({"tag": 1}, snapshots=2, self_play_weight=0.2, responses=2, response_weight=0.5)
    >>> [round(x, 3) for x in w]
    [0.3, 0.1, 0.1, 0.25, 0.25]
    """
    base = np.array(list(baselines.values()), dtype=np.float64)
    share = self_play_weight if snapshots else 0.0
    lbr = lbr_weight if snapshots and lbrs else 0.0
    answer = response_weight if responses else 0.0
    rest = 1 - share - lbr - answer
    out = list(base / base.sum() * rest) if base.sum() > 0 else [0.0] * len(base)
    if snapshots:
        out += [share / snapshots] * snapshots
    if lbr:
        out += [lbr / lbrs] * lbrs
    if answer:
        out += [answer / responses] * responses
    return [float(x) for x in out]


_LOADED: dict[tuple[str, bool], PPOAgent] = {}


def baseline_opponent(spec: str, *, seed: int | np.random.SeedSequence, rules=None) -> Any:
    """A pool entry for an agent spec: ``"random"`` as the env's own random opponent (the same
    rule as the ``random`` agent, drawn from the env's generator), any other spec as its agent
    (``ppo:`` models loaded once per process and cloned)."""
    from agents.registry import make_agent, parse_spec

    name, options = parse_spec(spec)
    if name == "random" and not options:
        return "random"
    if name == "ppo":
        key = (options["path"], options.get("deterministic"))   # None: as the model's run evaluated it
        if key not in _LOADED:
            _LOADED[key] = make_agent(spec)
        agent = _LOADED[key].clone(name=spec.strip())
        if rules is not None:
            from envs.observation import build_layout

            obs_size = build_layout(rules, agent.features).size
            if agent.obs_size != obs_size:
                raise ValueError(f"opponent {spec!r} was trained on observations of size {agent.obs_size}, "
                                 f"but this game's are {obs_size} (another game?)")
    else:
        agent = make_agent(spec)
    agent.reset(seed)
    return agent


def build_pool(baselines: dict[str, float], snapshots: Sequence[PPOAgent], *,
               self_play_weight: float, seed: int | np.random.SeedSequence,
               rules=None, lbr_weight: float = 0.0, lbr_samples: int = 50,
               lbr_engine: str = "auto", responses: Sequence[Any] = (),
               response_weight: float = 0.0, lbr_keep: int = 1,
               lbr_win_samples: int | None = None) -> tuple[list[Any], list[float]]:
    """The opponent pool and weights for one env; ``seed`` gives its agents their own streams
    (until the env re-seeds them for their first hand). With ``lbr_weight`` and snapshots, the
    entries ``arena.lbr.LBRAgent`` against each of the newest ``lbr_keep`` snapshots, newest
    first (their ``engine``: ``lbr_engine``, their ``win_samples``: ``lbr_win_samples``);
    ``responses`` (agents, exact best responses to snapshots) come last, sharing
    ``response_weight``."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = seq.spawn(len(baselines) + len(snapshots) + 1 + len(responses))
    pool: list[Any] = []
    for spec, child in zip(baselines, children):
        pool.append(baseline_opponent(spec, seed=child, rules=rules))
    for snapshot, child in zip(snapshots, children[len(baselines):]):
        frozen = snapshot.clone()
        frozen.reset(child)
        pool.append(frozen)
    lbrs = min(lbr_keep, len(snapshots)) if lbr_weight > 0 else 0
    if lbrs:
        from arena.lbr import LBRAgent

        # the newest snapshot's response draws from the stream it always had; older ones from
        # streams spawned after (so lbr_keep 1 builds the pool it built before the option)
        for target, child in zip(snapshots[::-1], [children[-1], *seq.spawn(lbrs - 1)]):
            lbr = LBRAgent(target.clone(), samples=lbr_samples, engine=lbr_engine,
                           win_samples=lbr_win_samples)
            lbr.reset(child)
            if rules is not None:
                lbr.warm_up(rules)   # one target policy (its encoder and tables) for every hand's copy
            pool.append(lbr)
    for response, child in zip(responses if response_weight > 0 else (),
                               children[len(baselines) + len(snapshots) + 1:]):
        # its own generator (and encoders, for a learned response); the tables or weights are shared
        own = response.clone() if hasattr(response, "clone") else copy.copy(response)
        own.reset(child)
        pool.append(own)
    weights = pool_weights(baselines, snapshots=len(snapshots), self_play_weight=self_play_weight,
                           lbr_weight=lbr_weight, responses=len(responses), response_weight=response_weight,
                           lbrs=lbrs)
    keep = [i for i, w in enumerate(weights) if w > 0]
    return [pool[i] for i in keep], [weights[i] for i in keep]
