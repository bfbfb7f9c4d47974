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

from typing import Any, Sequence

import numpy as np

from agents.trained import PPOAgent

__all__ = ["pool_weights", "baseline_opponent", "build_pool"]


def pool_weights(baselines: dict[str, float], *, snapshots: int, self_play_weight: float,
                 lbr_weight: float = 0.0) -> list[float]:
    """Draw chances: the baselines share ``1 - self_play_weight - lbr_weight`` by their weights,
    the snapshots share ``self_play_weight`` evenly, and the local best response to the newest
    snapshot (last) gets ``lbr_weight`` (the baselines get everything until the first
    snapshot)."""
    base = np.array(list(baselines.values()), dtype=np.float64)
    share = self_play_weight if snapshots else 0.0
    lbr = lbr_weight if snapshots else 0.0
    out = list(base / base.sum() * (1 - share - lbr)) if base.sum() > 0 else [0.0] * len(base)
    if snapshots:
        out += [share / snapshots] * snapshots
    if lbr:
        out.append(lbr)
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
        key = (options["path"], options.get("deterministic", True))
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
               lbr_engine: str = "auto") -> tuple[list[Any], list[float]]:
    """The opponent pool and weights for one env; ``seed`` gives its agents their own streams
    (until the env re-seeds them for their first hand). With ``lbr_weight`` and snapshots, the
    last entry is ``arena.lbr.LBRAgent`` against the newest snapshot (its ``engine``: ``lbr_engine``)."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = seq.spawn(len(baselines) + len(snapshots) + 1)
    pool: list[Any] = []
    for spec, child in zip(baselines, children):
        pool.append(baseline_opponent(spec, seed=child, rules=rules))
    for snapshot, child in zip(snapshots, children[len(baselines):]):
        copy = snapshot.clone()
        copy.reset(child)
        pool.append(copy)
    if lbr_weight > 0 and snapshots:
        from arena.lbr import LBRAgent

        lbr = LBRAgent(snapshots[-1].clone(), samples=lbr_samples, engine=lbr_engine)
        lbr.reset(children[-1])
        if rules is not None:
            lbr.warm_up(rules)   # one target policy (its encoder and tables) for every hand's copy
        pool.append(lbr)
    weights = pool_weights(baselines, snapshots=len(snapshots), self_play_weight=self_play_weight,
                           lbr_weight=lbr_weight)
    keep = [i for i, w in enumerate(weights) if w > 0]
    return [pool[i] for i in keep], [weights[i] for i in keep]
