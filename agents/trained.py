"""Trained policies as agents: ``ppo:PATH`` loads an agent file or a MaskablePPO checkpoint.

:class:`PPOAgent` is the one way a trained model plays, wherever it sits: in tournaments
(``ppo:`` specs), in the training evaluation, and as a training opponent (``ppo:`` baselines
and the learner's own snapshots, ``train/opponents.py``).

``PATH`` is an agent file (``.safetensors``), a model ``.zip`` (either suffix may be left
out), a training run folder (its ``final_model.safetensors``, else ``final_model.zip``) or a
snapshot ``runs/<run>/snapshots/*``: ``agents.agent_file`` finds it and loads it without
unpickling anything (``trust_pickled_code=true`` loads a zip through ``MaskablePPO.load``,
which runs code from the file). A model still in memory (the learner being snapshotted)
becomes an agent with :meth:`PPOAgent.from_model`.

**Input.** The policy's input is the env's observation vector, so the agent encodes the game
with ``envs.observation.ObservationEncoder``, the encoder the training env uses, with the optional
pieces the model was trained with (:attr:`PPOAgent.features`: ``train/ppo.py`` stores
``env.observation_features`` in the model zip's data as ``observation_features``; older models
have none).
``act_game(game, seat, action_mask)`` encodes the game (harnesses prefer it, through
``envs.actions.choose_action``); ``act(view, action_mask)`` and ``policy(view, action_mask)``
encode ``agents.base.game_from_view(view)``, a replay of the view with stand-in cards for the
other seats' face-down cards. ``tests/test_agents.py`` checks that the choice never depends on
other seats' face-down cards.

**Forward pass.** For the policies we train (SB3's ``MlpPolicy``: flat observation, an actor
MLP of ``Linear`` layers with ``Tanh`` or ``ReLU`` between them, a ``Linear`` action head,
masked categorical actions) the actor's weights are copied into NumPy once and the forward
pass is a few matrix products: microseconds, where a torch call costs far more per action.
Any other network is run by torch (:class:`TorchActor`). Either way the probabilities are the
masked softmax of the logits, computed here, and ``tests/test_trained.py`` checks them against
sb3's own distribution.

**Choice.** As the model's training run evaluated it (its config's ``eval.deterministic``,
:func:`agents.agent_file.plays_deterministic`), unless the spec says: the most likely legal
action (as ``model.predict(..., deterministic=True)``; every config but ``soko_mini_ppo.yaml``
and ``soko_near_nash_ppo.yaml``, and any zip outside a run folder), or a draw from the policy
(``ppo:PATH,deterministic=false``) with one ``rng.random()`` of the agent's generator, which
the harness re-seeds before every hand (:meth:`agents.base.Agent.reset`).
:meth:`PPOAgent.policy` is exactly the distribution ``act`` draws from (a one-hot for
deterministic play), so the luck correction can use it.

Torch and sb3-contrib are imported when a model is first loaded; an agent carries its NumPy
weights when pickled to worker processes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.agent_file import global_generators_kept, load_mlp_layers, load_policy
from agents.base import Agent, game_from_view
from envs.engine.game import Game, PlayerView

__all__ = ["PPOAgent", "NumpyActor", "TorchActor", "actor_of", "model_features", "limit_blas_threads"]

RECENT_OBSERVATIONS = 32
"""Observations a PPOAgent keeps by state (``PPOAgent._encode``): a hand's worth and more."""

ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
}


def _activate(name: str, x: np.ndarray) -> np.ndarray:
    """``ACTIVATIONS[name](x)`` computed in place (``x`` is a temporary of the caller's)."""
    if name == "Tanh":
        return np.tanh(x, out=x)
    if name == "ReLU":
        return np.maximum(x, 0.0, out=x)
    return ACTIVATIONS[name](x)


class NumpyActor:
    """The actor of an MLP policy in NumPy: ``logits(observation)``, float32 as torch computes."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray, str | None]]) -> None:
        self.layers = layers   # (weight, bias, activation name after the layer or None)
        self.obs_size = int(layers[0][0].shape[1])
        # Contiguous transposed weights for the batched passes (see logits_with_ones).
        self._transposed = [np.ascontiguousarray(w.T) for w, _, _ in layers]

    def logits(self, observation: np.ndarray) -> np.ndarray:
        x = np.asarray(observation, dtype=np.float32).reshape(-1)
        for w, b, activation in self.layers:
            x = w @ x + b
            if activation is not None:
                x = ACTIVATIONS[activation](x)
        return x

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        """(N, actions): the logits of N observations (rows) in one pass, multiplying by the
        contiguous transposed weights (see :meth:`logits_with_ones`)."""
        return self.logits_from_linear(self.linear_input(observations))

    def linear_input(self, observations: np.ndarray) -> np.ndarray:
        """(N, width): the linear start of the forward pass of N observation rows, here the first
        layer's weights times them (no bias). Linear in the observations, so parts of them can be
        mapped apart and summed: :meth:`logits_from_linear` of the sum is :meth:`logits_batch`
        of the whole (the exact solver maps the cards' part of every information set once and
        each betting node's part apart, ``arena/exact.py``)."""
        return np.asarray(observations, dtype=np.float32) @ self._transposed[0]

    def logits_from_linear(self, values: np.ndarray) -> np.ndarray:
        """(N, actions): the logits of rows that :meth:`linear_input` mapped (or sums of them)."""
        return self._after_first(np.asarray(values, dtype=np.float32) + self.layers[0][1])

    @property
    def input_bias(self) -> np.ndarray:
        """(width,): what :meth:`logit_columns` expects added to a sum of :meth:`linear_input`
        rows: the first layer's bias."""
        return self.layers[0][1]

    def logit_columns(self, values: np.ndarray, actions) -> np.ndarray:
        """(len(actions), N): the logits of ``actions`` only, for the columns of ``values``
        (width, N), each a sum of :meth:`linear_input` rows plus :attr:`input_bias`, transposed.
        The same numbers as :meth:`logits_from_linear` up to float32 rounding, laid out so that
        each layer multiplies a small weight matrix into a wide one and the reductions over
        actions run along contiguous rows: 1.5-2x as fast over a batch (the exact solver's
        policy over the tree, ``arena/exact.py``). ``values`` is overwritten."""
        rows = list(actions)
        x = np.asarray(values, dtype=np.float32)
        if len(self.layers) == 1:                  # the first layer gives the logits
            x = x[rows]
        for k, (w, b, activation) in enumerate(self.layers):
            if k > 0:
                last = k == len(self.layers) - 1
                x = (w[rows] if last else w) @ x
                x += (b[rows] if last else b)[:, None]
            if activation is not None:
                x = _activate(activation, x)
        return x

    def logits_with_ones(self, observation: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """(len(columns), actions): the logits of ``observation`` with a 1 written at each of
        ``columns`` in turn (each must be 0 in ``observation``): the same player's spot with
        each of several cards (``arena/lbr.py``). The first layer is linear, so this is one
        matrix-vector product plus one weight column per row; the later layers multiply by
        contiguous transposed weights (OpenBLAS runs ``x @ w.T`` on many threads, which on a
        busy machine is a hundred times slower)."""
        w, b, _ = self.layers[0]
        return self._after_first((w @ np.asarray(observation, dtype=np.float32) + b)[None, :]
                                 + self._transposed[0][columns])

    def logits_with_values(self, observation: np.ndarray, columns: np.ndarray,
                           values: np.ndarray) -> np.ndarray:
        """(len(values), actions): the logits of ``observation`` with row ``i`` of ``values``
        written at ``columns`` (each 0 in ``observation``): a spot with each of several cards
        where more than the card's one-hot depends on it (hand-strength features)."""
        w, b, _ = self.layers[0]
        return self._after_first((w @ np.asarray(observation, dtype=np.float32) + b)[None, :]
                                 + np.asarray(values, dtype=np.float32) @ self._transposed[0][columns])

    def _after_first(self, x: np.ndarray) -> np.ndarray:
        """The rest of the forward pass of rows ``x`` that went through the first linear layer."""
        activation = self.layers[0][2]
        if activation is not None:
            x = ACTIVATIONS[activation](x)
        for (_, b, activation), wT in zip(self.layers[1:], self._transposed[1:]):
            x = x @ wT + b
            if activation is not None:
                x = ACTIVATIONS[activation](x)
        return x


class TorchActor:
    """Any other MaskablePPO policy, run by torch: ``logits(observation)`` are its categorical
    distribution's (normalised) logits, so the masked softmax is the policy's own."""

    def __init__(self, policy) -> None:
        import threading

        self.policy = policy
        self.obs_size = int(np.prod(policy.observation_space.shape))
        # SB3's get_distribution stores the distribution on the policy's one action_dist and
        # returns that object: two threads in it at once (the exact solver's batches) could read
        # each other's logits. One forward pass at a time per actor.
        self._lock = threading.Lock()

    def logits(self, observation: np.ndarray) -> np.ndarray:
        return self._batch_logits(np.asarray(observation, dtype=np.float32)[None, :])[0]

    def logits_batch(self, observations: np.ndarray) -> np.ndarray:
        """As :meth:`NumpyActor.logits_batch`, one batch through torch."""
        return self._batch_logits(np.asarray(observations, dtype=np.float32))

    def linear_input(self, observations: np.ndarray) -> np.ndarray:
        """As :meth:`NumpyActor.linear_input`: the observations themselves (torch runs the whole
        network, which need not start with a linear layer)."""
        return np.asarray(observations, dtype=np.float32)

    def logits_from_linear(self, values: np.ndarray) -> np.ndarray:
        """As :meth:`NumpyActor.logits_from_linear`: :meth:`logits_batch`."""
        return self.logits_batch(values)

    @property
    def input_bias(self) -> np.ndarray:
        """As :attr:`NumpyActor.input_bias`: zeros (the values are the observations)."""
        return np.zeros(self.obs_size, dtype=np.float32)

    def logit_columns(self, values: np.ndarray, actions) -> np.ndarray:
        """As :meth:`NumpyActor.logit_columns`: :meth:`logits_batch` of the rows, transposed."""
        return np.ascontiguousarray(self.logits_batch(np.asarray(values).T)[:, list(actions)].T)

    def logits_with_ones(self, observation: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """As :meth:`NumpyActor.logits_with_ones`, one batch through torch."""
        batch = np.repeat(np.asarray(observation, dtype=np.float32)[None, :], len(columns), axis=0)
        batch[np.arange(len(columns)), columns] = 1.0
        return self._batch_logits(batch)

    def logits_with_values(self, observation: np.ndarray, columns: np.ndarray,
                           values: np.ndarray) -> np.ndarray:
        """As :meth:`NumpyActor.logits_with_values`, one batch through torch."""
        batch = np.repeat(np.asarray(observation, dtype=np.float32)[None, :], len(values), axis=0)
        batch[:, columns] = values
        return self._batch_logits(batch)

    def _batch_logits(self, batch: np.ndarray) -> np.ndarray:
        import torch

        with self._lock, torch.no_grad():
            self.policy.set_training_mode(False)
            obs, _ = self.policy.obs_to_tensor(batch)
            return self.policy.get_distribution(obs).distribution.logits.cpu().numpy()


def limit_blas_threads(threads: int = 1):
    """Keep NumPy's BLAS (OpenBLAS) to ``threads`` threads for the rest of the process; returns
    threadpoolctl's limiter (``restore_original_limits()`` undoes it). The NumPy forward passes
    here multiply small matrices, which BLAS threads do not speed up; on a busy machine its
    spinning threads make them several times slower (``bench/lbr.py`` at load 3-5: 24-34 hands/s
    with one thread, 7-11 with two; docs/results.md). The training, tournament and exploit
    commands call it."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=max(1, int(threads)), user_api="blas")


def _numpy_layers(policy) -> list[tuple[np.ndarray, np.ndarray, str | None]] | None:
    """The actor's (weight, bias, activation) layers if ``policy`` is a plain MLP policy whose
    NumPy forward pass is exactly its torch one (or, for the training's ``SparseInputLinear``
    layers, a rounding apart: the sums in another order); None otherwise."""
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    from agents.side_by_side import SideBySideExtractor
    from agents.sparse_input import SparseInputLinear

    linear = (torch.nn.Linear, SparseInputLinear)   # the same function (the training's sums skip zeros)
    extractors = (MlpExtractor, SideBySideExtractor)   # and the training's on two threads
    if not (type(policy) is MaskableActorCriticPolicy
            and type(policy.pi_features_extractor) is FlattenExtractor
            and isinstance(policy.observation_space, spaces.Box) and len(policy.observation_space.shape) == 1
            and type(policy.action_dist) is MaskableCategoricalDistribution
            and type(policy.mlp_extractor) in extractors
            and type(policy.action_net) in linear):
        return None
    layers: list[tuple[np.ndarray, np.ndarray, str | None]] = []
    for module in [*policy.mlp_extractor.policy_net, policy.action_net]:
        if type(module) in linear and module.bias is not None:
            layers.append((module.weight.detach().cpu().numpy().astype(np.float32).copy(),
                           module.bias.detach().cpu().numpy().astype(np.float32).copy(), None))
        elif (type(module) in (torch.nn.Tanh, torch.nn.ReLU) and layers and layers[-1][2] is None):
            w, b, _ = layers[-1]
            layers[-1] = (w, b, type(module).__name__)
        else:
            return None
    return layers


def _frozen_copy(policy):
    """A copy of a policy's network and weights for play (not its optimizer, whose state a deep
    copy cannot take mid-training), built without touching the global generators."""
    with global_generators_kept():
        frozen = type(policy)(**policy._get_constructor_parameters())
    frozen.load_state_dict(policy.state_dict())
    frozen.set_training_mode(False)
    return frozen.to(policy.device)


def model_features(model) -> tuple[str, ...]:
    """The optional observation pieces a MaskablePPO model was trained with (none if it does
    not say: models from before the option)."""
    from envs.observation import check_features

    return check_features(getattr(model, "observation_features", None) or ())


def actor_of(policy) -> NumpyActor | TorchActor:
    """The fastest exact forward pass for a MaskablePPO policy: NumPy for a plain MLP, else torch."""
    layers = _numpy_layers(policy)
    return NumpyActor(layers) if layers is not None else TorchActor(policy)


class PPOAgent(Agent):
    """A trained MaskablePPO policy; from a file it is loaded lazily (on first use) on the CPU."""

    @property
    def randomises(self) -> bool:
        """Sampling play draws from :meth:`policy`; a deterministic agent's one-hot policy
        would give the luck correction decision and coin-flip terms that are exactly zero
        (so it is not asked: the same numbers, without a forward pass per decision)."""
        return not self.deterministic

    def __init__(self, *, path: str = "", deterministic: bool | None = None,
                 trust_pickled_code: bool = False) -> None:
        super().__init__()
        if not path:
            raise ValueError("ppo needs a model path: ppo:runs/<run> or ppo:FILE.safetensors")
        self.path = Path(path)
        self._deterministic = deterministic
        self.trust_pickled_code = trust_pickled_code
        self._actor: NumpyActor | TorchActor | None = None
        self._features: tuple[str, ...] = ()
        self._encoders: dict = {}
        # The newest observations by the state they encode (rules, seat, starting stacks and the
        # whole log): a decision asked again (the luck correction's decision terms replay the
        # hand) is not encoded twice.
        self._recent: dict[tuple, np.ndarray] = {}

    @property
    def deterministic(self) -> bool:
        """Whether it plays its most likely action (else it samples from its policy): as its
        spec says, else as its training run evaluated it (``agents.agent_file.plays_deterministic``:
        a run of ``configs/soko_near_nash_ppo.yaml`` plays the mixture it learned), read from
        the file the first time it is asked."""
        if self._deterministic is None:
            from agents.agent_file import plays_deterministic

            self._deterministic = plays_deterministic(self.path)
        return self._deterministic

    @classmethod
    def from_model(cls, model, *, name: str, deterministic: bool = True) -> PPOAgent:
        """The agent of a MaskablePPO model in memory (a snapshot of the learner): its actor is
        copied now, so later training does not change it."""
        agent = cls(path=name, deterministic=deterministic)
        agent.name = name
        layers = _numpy_layers(model.policy)
        agent._actor = NumpyActor(layers) if layers is not None else TorchActor(_frozen_copy(model.policy))
        agent._features = model_features(model)
        return agent

    def clone(self, *, name: str | None = None) -> PPOAgent:
        """Another agent playing the same (shared, read-only) network, with its own generator and
        encoders: one per training env, so each re-seeds and encodes its own hands."""
        other = type(self)(path=str(self.path), deterministic=self.deterministic,
                           trust_pickled_code=self.trust_pickled_code)
        other.name = self.name if name is None else name
        other._actor = self.actor
        other._features = self._features
        return other

    @property
    def actor(self) -> NumpyActor | TorchActor:
        if self._actor is None:
            layers, info = (None, None) if self.trust_pickled_code else load_mlp_layers(self.path)
            if layers is not None:           # a plain MLP: no torch policy to build
                self._actor = NumpyActor(layers)
            else:
                policy, info = load_policy(self.path, trust_pickled_code=self.trust_pickled_code)
                self._actor = actor_of(policy)
            self._features = info.features
        return self._actor

    @property
    def features(self) -> tuple[str, ...]:
        """The optional observation pieces the network was trained with (``envs.observation.FEATURES``)."""
        self.actor  # loads the model (and its features) if not yet loaded
        return self._features

    @property
    def observation_features(self) -> tuple[str, ...]:
        """It decides from the observation vector (``agents.base.Agent.observation_features``)."""
        return self.features

    @property
    def numpy_layers(self) -> list | None:
        """The network as NumPy layers ``(weight, bias, activation name)`` (``NumpyActor``), or
        None for a network that only torch runs."""
        actor = self.actor
        return actor.layers if isinstance(actor, NumpyActor) else None

    def core_network(self) -> tuple[list, bool] | None:
        """Its network and whether it plays the argmax (``agents.base.Agent.core_network``),
        when the actor is a NumPy MLP with activations the core knows."""
        layers = self.numpy_layers if type(self) is PPOAgent else None
        if layers is None or any(act not in (None, "Tanh", "ReLU") for _, _, act in layers):
            return None
        return layers, bool(self.deterministic)

    def batched(self, rules) -> PPOAgent:
        """Itself: :meth:`act_slots` is one forward pass over every slot where it acts."""
        return self

    def act_slots(self, game, slots, *, rng: np.random.Generator, stream=None) -> np.ndarray:
        """:meth:`choose_batch` on the core's observations of ``slots`` (``agents.base.BatchedPolicy``),
        with one ``rng`` draw per slot when sampling."""
        uniforms = None if self.deterministic else rng.random(len(slots))
        return self.choose_batch(game.observations[slots], game.action_mask[slots], uniforms)

    @property
    def obs_size(self) -> int:
        """The length of the observation the network was trained on."""
        return self.actor.obs_size

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_encoders"] = {}   # rebuilt on first use; the network travels, the encoders need not
        state["_recent"] = {}
        return state

    def _encode(self, game: Game, seat: int) -> np.ndarray:
        key = (game.rules, seat, tuple(game.starting_stacks), tuple(game.log))
        seen = self._recent.get(key)
        if seen is not None:
            return seen.copy()
        encoder = self._encoders.get(game.rules)
        if encoder is None:
            from envs.backends import make_encoder

            encoder = self._encoders[game.rules] = make_encoder(game.rules, features=self.features)
        observation = encoder.encode(game, seat)
        if len(self._recent) >= RECENT_OBSERVATIONS:
            self._recent.pop(next(iter(self._recent)))
        self._recent[key] = observation.copy()
        return observation

    def _logits(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The network's logits with the illegal ids at minus infinity."""
        return np.where(np.asarray(action_mask, dtype=bool), self.actor.logits(observation), -np.inf)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked softmax of the network's logits for an observation vector (float64)."""
        logits = self._logits(observation, action_mask).astype(np.float64)
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def probabilities_with_ones(self, observation: np.ndarray, columns: np.ndarray,
                                action_mask: np.ndarray) -> np.ndarray:
        """What :meth:`policy` gives with a 1 written at each of ``columns`` of the observation
        in turn, (len(columns), actions), in one pass: local best response asks this for every
        face-down card the player might hold (``arena/lbr.py``)."""
        return self.probabilities_from_logits(self.actor.logits_with_ones(observation, np.asarray(columns)),
                                              action_mask)

    def probabilities_with_values(self, observation: np.ndarray, columns: np.ndarray, values: np.ndarray,
                                  action_mask: np.ndarray) -> np.ndarray:
        """What :meth:`policy` gives with row ``i`` of ``values`` written at ``columns`` of the
        observation, (len(values), actions), in one pass: local best response's question for a
        network with hand-strength features, where a card changes more than its one-hot."""
        return self.probabilities_from_logits(
            self.actor.logits_with_values(observation, np.asarray(columns), values), action_mask)

    def probabilities_from_logits(self, logits: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """What :meth:`policy` gives for N rows of the network's logits with the same legal
        actions, (N, actions): the masked softmax (float64), or a one-hot on the most likely
        legal action when deterministic. The exact solver runs the network itself, a batch of
        information sets at a time (``arena/exact.py``)."""
        legal = np.asarray(action_mask, dtype=bool)
        logits = np.where(legal, logits, -np.inf).astype(np.float64)
        if self.deterministic:
            return np.eye(len(legal))[logits.argmax(axis=1)]
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)

    def probabilities_from_logit_columns(self, logits: np.ndarray) -> np.ndarray:
        """:meth:`probabilities_from_logits` with the logits of the legal actions only, one row
        per action in id order and one column per spot, (legal, N) in and out (float64): the
        softmax down each column, or a one-hot on the first largest when deterministic."""
        z = np.asarray(logits, dtype=np.float64)
        if self.deterministic:
            return (np.arange(len(z))[:, None] == z.argmax(axis=0)).astype(np.float64)
        z = z - z.max(axis=0)
        np.exp(z, out=z)
        z /= z.sum(axis=0)
        return z

    def choose(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action for an observation vector: the most likely legal one (ties: the lowest id,
        as torch's argmax), or one ``rng.random()`` draw from the masked softmax."""
        logits = self._logits(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(logits))
        cumulative = np.cumsum(np.exp(logits - logits.max()))
        return int(min(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"),
                       len(logits) - 1))

    def choose_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                     uniforms: np.ndarray | None = None) -> np.ndarray:
        """:meth:`choose` for N observation rows in one forward pass (the batched training env's
        opponents, ``train/batched_vec.py``): the most likely legal ids, or with ``uniforms``
        (N draws in [0, 1), needed when sampling) one draw each from the masked softmax."""
        logits = np.where(np.asarray(action_masks, dtype=bool), self.actor.logits_batch(observations),
                          -np.inf)
        if self.deterministic:
            return logits.argmax(axis=1)
        if uniforms is None:
            raise ValueError("a sampling PPOAgent needs one uniform draw per row")
        cumulative = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
        targets = np.asarray(uniforms)[:, None] * cumulative[:, -1:]
        return np.minimum((cumulative <= targets).sum(axis=1), logits.shape[1] - 1)

    def act_game(self, game: Game, seat: int, action_mask: np.ndarray) -> int:
        return self.choose(self._encode(game, seat), action_mask)

    def act(self, view: PlayerView, action_mask: np.ndarray) -> int:
        return self.act_game(game_from_view(view), view.seat, action_mask)

    def policy(self, view: PlayerView, action_mask: np.ndarray) -> np.ndarray:
        """What :meth:`act` draws from: the masked softmax, or for deterministic play a one-hot
        on the most likely legal action."""
        return self.policy_game(game_from_view(view), view.seat, action_mask)

    def policy_game(self, game: Game, seat: int, action_mask: np.ndarray) -> np.ndarray:
        """:meth:`policy` from the referee's game, as :meth:`act_game` is :meth:`act` (the
        encoding reads only what ``seat`` sees; no game rebuilt from a view)."""
        observation = self._encode(game, seat)
        if self.deterministic:
            out = np.zeros(len(action_mask))
            out[int(np.argmax(self._logits(observation, action_mask)))] = 1.0
            return out
        return self.probabilities(observation, action_mask)
