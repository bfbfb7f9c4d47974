"""The training opponents: baseline agents and frozen snapshots of the learner, in one pool.

Each hand, every opponent seat of :class:`envs.single_agent.SingleAgentEnv` draws one entry of
the pool by weight. The pool is built here and handed to the envs with
``vec_env.env_method("set_opponents", pool, weights, indices=[i])``, so it reaches
``SubprocVecEnv`` workers too (entries are pickled: plain strings, agents, and
:class:`SnapshotPolicy` objects that carry their weights as NumPy arrays).

A snapshot plays through the env's own observation vector, ``policy(observation, mask)``. Its
forward pass is the policy network copied into NumPy, which costs a few microseconds, instead
of a torch call through ``model.predict`` per opponent action.

>>> weights = pool_weights({"random": 1.0, "tag": 3.0}, snapshots=2, self_play_weight=0.5)
>>> [round(w, 3) for w in weights]
[0.125, 0.375, 0.25, 0.25]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["SnapshotPolicy", "pool_weights", "baseline_opponent", "build_pool"]

_ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
}


class SnapshotPolicy:
    """A frozen MaskablePPO actor as a callable ``policy(observation, action_mask) -> action id``.

    ``deterministic``: the most likely legal action; otherwise sampled from the policy's
    distribution with the object's own generator (``reseed`` gives each env its own stream).
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray, str | None]], *, name: str,
                 deterministic: bool = False, seed: int | None = None, obs_size: int | None = None) -> None:
        self.layers = layers
        self.name = name
        self.deterministic = deterministic
        self.obs_size = obs_size if obs_size is not None else layers[0][0].shape[1]
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_model(cls, model, *, name: str, deterministic: bool = False, seed: int | None = None) -> SnapshotPolicy:
        """Copy the actor of a MaskablePPO MLP policy (flat Box observations) into NumPy."""
        import torch

        policy = model.policy
        extractor = policy.pi_features_extractor
        if type(extractor).__name__ != "FlattenExtractor":
            raise ValueError(f"snapshots need a flat observation (FlattenExtractor), not {type(extractor).__name__}")
        modules = list(policy.mlp_extractor.policy_net) + [policy.action_net]
        layers: list[tuple[np.ndarray, np.ndarray, str | None]] = []
        for module in modules:
            if isinstance(module, torch.nn.Linear):
                layers.append((module.weight.detach().cpu().numpy().astype(np.float32).copy(),
                               module.bias.detach().cpu().numpy().astype(np.float32).copy(), None))
            elif type(module).__name__ in _ACTIVATIONS and layers:
                w, b, _ = layers[-1]
                layers[-1] = (w, b, type(module).__name__)
            else:
                raise ValueError(f"snapshots support Linear, Tanh and ReLU layers, not {module}")
        size = int(np.prod(policy.observation_space.shape))
        return cls(layers, name=name, deterministic=deterministic, seed=seed, obs_size=size)

    @classmethod
    def from_path(cls, path: str | Path, *, deterministic: bool = False, seed: int | None = None,
                  name: str | None = None) -> SnapshotPolicy:
        """Load a saved MaskablePPO model (``.zip``) as a snapshot."""
        from sb3_contrib import MaskablePPO

        path = Path(path)
        if not path.exists() and path.with_suffix(".zip").exists():
            path = path.with_suffix(".zip")
        if not path.exists():
            raise FileNotFoundError(f"no model at {path}")
        model = MaskablePPO.load(str(path), device="cpu")
        return cls.from_model(model, name=name or str(path), deterministic=deterministic, seed=seed)

    def reseed(self, seed: int | np.random.SeedSequence | None) -> SnapshotPolicy:
        self.rng = np.random.default_rng(seed)
        return self

    def logits(self, observation: np.ndarray) -> np.ndarray:
        x = np.asarray(observation, dtype=np.float32).reshape(-1)
        for w, b, activation in self.layers:
            x = w @ x + b
            if activation is not None:
                x = _ACTIVATIONS[activation](x)
        return x

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        logits = self.logits(observation)
        legal = np.asarray(action_mask, dtype=bool)
        logits = np.where(legal, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        cumulative = np.cumsum(p)
        return int(min(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"),
                       len(p) - 1))

    def __repr__(self) -> str:
        return f"<SnapshotPolicy {self.name}>"


def pool_weights(baselines: dict[str, float], *, snapshots: int, self_play_weight: float) -> list[float]:
    """Draw chances: the baselines share ``1 - self_play_weight`` by their weights, the
    snapshots share ``self_play_weight`` evenly (the baselines get everything until the first
    snapshot)."""
    base = np.array(list(baselines.values()), dtype=np.float64)
    share = self_play_weight if snapshots else 0.0
    out = list(base / base.sum() * (1 - share)) if base.sum() > 0 else [0.0] * len(base)
    if snapshots:
        out += [share / snapshots] * snapshots
    return [float(x) for x in out]


_LOADED: dict[tuple[str, bool], SnapshotPolicy] = {}


def baseline_opponent(spec: str, *, seed: int, obs_size: int | None = None) -> Any:
    """A pool entry for an agent spec: ``"random"`` as the env's own random opponent, ``ppo:``
    checkpoints as fast :class:`SnapshotPolicy` objects, any other spec as its agent."""
    from agents.registry import make_agent, parse_spec

    name, options = parse_spec(spec)
    if name == "random" and not options:
        return "random"
    if name == "ppo":
        key = (options["path"], options.get("deterministic", True))
        if key not in _LOADED:
            _LOADED[key] = SnapshotPolicy.from_path(key[0], deterministic=key[1], name=spec)
        loaded = _LOADED[key]
        policy = SnapshotPolicy(loaded.layers, name=spec, deterministic=loaded.deterministic,
                                seed=seed, obs_size=loaded.obs_size)
        if obs_size is not None and policy.obs_size != obs_size:
            raise ValueError(f"opponent {spec!r} was trained on observations of size {policy.obs_size}, "
                             f"but this game's are {obs_size} (another game or table size?)")
        return policy
    agent = make_agent(spec)
    agent.reset(seed)
    return agent


def build_pool(baselines: dict[str, float], snapshots: Sequence[SnapshotPolicy], *,
               self_play_weight: float, seed: int | np.random.SeedSequence,
               obs_size: int | None = None) -> tuple[list[Any], list[float]]:
    """The opponent pool and weights for one env; ``seed`` gives its agents their own streams."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = seq.spawn(len(baselines) + len(snapshots))
    pool: list[Any] = []
    for spec, child in zip(baselines, children):
        pool.append(baseline_opponent(spec, seed=child, obs_size=obs_size))
    for snapshot, child in zip(snapshots, children[len(baselines):]):
        copy = SnapshotPolicy(snapshot.layers, name=snapshot.name, deterministic=snapshot.deterministic,
                              obs_size=snapshot.obs_size)
        pool.append(copy.reseed(child))
    weights = pool_weights(baselines, snapshots=len(snapshots), self_play_weight=self_play_weight)
    keep = [i for i, w in enumerate(weights) if w > 0]
    return [pool[i] for i in keep], [weights[i] for i in keep]
