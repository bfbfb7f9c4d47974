"""Model files: the safe agent file (``.safetensors``), SB3 zips read without unpickling, run folders.

An **agent file** is one `safetensors <https://huggingface.co/docs/safetensors>`_ file: the
actor's tensors (features extractor, policy MLP, action head; not the value net, which play never
uses) and, in its metadata under ``stud_arena``, a JSON header:

==================  ===========================================================================
``format``          ``"stud-arena-agent"``; ``version`` is :data:`VERSION`
``game``, ``rules`` the preset name and every ``Rules`` field (``envs.engine.rules``)
``players``         the number of players it was trained at
``observation``     ``size``, ``features``, ``pieces`` (name, size), ``layout_sha256``
``actions``         ``count`` and ``ids`` (0 fold, 1 check/call, 2.. bet/raise sizes)
``network``         ``architecture`` (``mlp``), ``net_arch``, ``activation``, ``features_extractor``
                    by registered name (:data:`EXTRACTORS`) with its JSON ``kwargs``
``normalisation``   ``null`` (no run of this project normalises observations)
``tensors_sha256``  sha256 over every tensor's name, dtype, shape and bytes
``made``            how: ``config`` (the resolved training config; its ``eval.deterministic``
                    is how the model plays unless a spec says: :func:`plays_deterministic`),
                    ``seed``, ``commit``, ``steps``, ``command``
==================  ===========================================================================

**Loading never unpickles.** The tensors are read by safetensors (raw little-endian arrays);
the network is built from :data:`EXTRACTORS` and :data:`ACTIVATION_NAMES` (a whitelist,
:func:`policy_kwargs`) and the tensors go in with ``load_state_dict(strict=True)``; a plain MLP that
only plays is read straight into NumPy layers instead (:func:`load_mlp_layers`: every key and
shape checked as strictly, the same numbers, no torch policy built). Before any hand is dealt
(:func:`check_model`, called by ``agents.registry.check_spec``) a file is refused with one line
when it is not a readable safetensors file (a truncated body included), when its tensors do not
hash to ``tensors_sha256`` (tampered or damaged), when its observation layout hash is not what
this version of the project builds for its rules and features, or when its game is not the one
about to be played.

**SB3 zips** (``final_model.zip``, checkpoints, snapshots) are read the same safe way by
default: the observation and action sizes, ``net_arch``, activation and features extractor from
the zip's JSON ``data`` entry (only its readable fields; the ``:serialized:`` cloudpickle
blobs in it are never decoded) and the weights from ``policy.pth`` with
``torch.load(weights_only=True)``, which refuses anything but tensors. ``MaskablePPO.load``, which
runs ``cloudpickle.loads`` on the file and so runs any code in it, is used only with
``trust_pickled_code=True`` (``ppo:PATH,trust_pickled_code=true``). ``--resume`` of a training run
reads its checkpoints without unpickling too (``train/ppo.py`` ``_restore_checkpoint``).

A **run folder** names its ``final_model.safetensors`` when there is one, else its
``final_model.zip``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from envs.files import atomic_write_bytes, check_folder, make_folder

__all__ = ["AgentFileError", "ModelInfo", "FORMAT", "VERSION", "FINAL_MODEL", "FINAL_AGENT",
           "EXTRACTORS", "ACTIVATION_NAMES", "policy_kwargs", "checkpoint_files", "resolve_model",
           "model_info", "check_model",
           "load_policy", "load_mlp_layers", "save_agent_file", "convert", "rules_to_json", "rules_from_json",
           "layout_sha256",
           "global_generators_kept", "run_record", "plays_deterministic"]

FORMAT = "stud-arena-agent"
VERSION = 1
FINAL_MODEL = "final_model.zip"            # what train/ppo.py leaves in a run folder (SB3, for --resume)
FINAL_AGENT = "final_model.safetensors"    # the same policy as an agent file
METADATA_KEY = "stud_arena"
ACTIVATION_NAMES = ("tanh", "relu")
"""Activations a network may use (the ``ppo.activation_fn`` values of a training config)."""
EXTRACTORS = ("flat", "card_planes")
"""Features extractors by registered name (``ppo.features_extractor``): ``flat`` is SB3's
``FlattenExtractor``, ``card_planes`` is ``agents.networks.CardPlanes``."""
_ACTOR = ("features_extractor", "policy_net", "action_net")


class AgentFileError(ValueError):
    """A model file that cannot be played: the message is one line that says why."""


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """What a model file says about itself, read without building the network."""

    path: Path
    kind: str                       # "agent file" or "SB3 zip"
    obs_size: int
    n_actions: int
    features: tuple[str, ...]
    rules: Any = None               # the Rules it was trained for, when the file or its run says
    header: dict | None = None      # an agent file's header


@contextlib.contextmanager
def global_generators_kept():
    """Building or loading a network draws from (and SB3's load re-seeds) Python's, NumPy's and
    torch's global generators. A training run draws its minibatch shuffles and its actions from
    those, so loading an opponent or an evaluation's agent mid-run would change what the run
    learns: the states are put back as they were."""
    import random

    import torch

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


# --------------------------------------------------------------------------------------------
# Rules and layouts as JSON


def rules_to_json(rules) -> dict:
    """Every ``Rules`` field as JSON values (streets as ``[[face_up, ...], bet]``)."""
    out = {}
    for f in dataclasses.fields(rules):
        value = getattr(rules, f.name)
        if f.name == "streets":
            value = [[list(s.cards), str(s.bet)] for s in value]
        elif isinstance(value, tuple):
            value = list(value)
        elif value is not None and not isinstance(value, (bool, int, float)):
            value = str(value)
        out[f.name] = value
    return out


def rules_from_json(fields: dict):
    """The ``Rules`` value :func:`rules_to_json` wrote; ValueError if it is not one."""
    from envs.engine.rules import Rules, Street

    try:
        fields = dict(fields)
        fields["streets"] = tuple(Street(tuple(bool(c) for c in cards), bet)
                                  for cards, bet in fields["streets"])
        for name in ("spread_sizes", "pot_fractions"):
            if name in fields:
                fields[name] = tuple(fields[name])
        return Rules(**fields)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"its rules are not rules of this project ({exc})") from None


def layout_sha256(layout) -> str:
    """The hash of an observation layout: its pieces' names and sizes, in order, and its features."""
    text = json.dumps({"pieces": [[p.name, p.size] for p in layout.pieces],
                       "features": list(layout.features)})
    return hashlib.sha256(text.encode()).hexdigest()


def _tensors_sha256(tensors: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        digest.update(json.dumps([name, str(array.dtype), list(array.shape)]).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------------------------
# Finding and describing a model file


_CKPT = re.compile(r"^ckpt_(\d+)\.zip$")


def checkpoint_files(folder: str | Path) -> list[tuple[int, Path]]:
    """``(timesteps, path)`` of every ``ckpt_<timesteps>.zip`` in ``folder`` (a run folder's
    ``checkpoints/``), newest first, whole or not; none for a missing folder."""
    found = [(int(m.group(1)), path) for path in Path(folder).glob("ckpt_*.zip")
             if (m := _CKPT.match(path.name))]
    return sorted(found, reverse=True)


def resolve_model(path: str | Path) -> Path:
    """The model file a ``ppo`` path names: the file itself, the same with ``.safetensors`` or
    ``.zip`` added, or a run folder's ``final_model.safetensors`` (else its ``final_model.zip``).
    A ValueError of one line says what is missing."""
    path = Path(path)
    if path.is_dir():
        for name in (FINAL_AGENT, FINAL_MODEL):
            if (path / name).is_file():
                return path / name
        newest = checkpoint_files(path / "checkpoints")[:1]
        hint = (f" (training has not finished; its newest checkpoint: {newest[0][1]})" if newest else "")
        raise ValueError(f"{path} is a folder without {FINAL_MODEL}{hint}")
    if path.is_file():
        return path
    for suffix in (".safetensors", ".zip"):
        if path.suffix != suffix and path.with_suffix(path.suffix + suffix).is_file():
            return path.with_suffix(path.suffix + suffix)
    raise ValueError(f"no model at {path}: no such file or folder")


def _is_agent_file(path: Path) -> bool:
    if path.suffix == ".safetensors":
        return True
    if path.suffix == ".zip":
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) != b"PK"
    except OSError:
        return False


def _read_header(path: Path) -> dict:
    """The ``stud_arena`` header of an agent file (no tensors read); AgentFileError if unreadable."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="np") as f:
            metadata = f.metadata() or {}
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types
        raise AgentFileError(f"{path} is not a readable agent file: {_one_line(exc)}") from None
    if METADATA_KEY not in metadata:
        raise AgentFileError(f"{path} is a safetensors file but not a Stud Arena agent "
                             f"(no {METADATA_KEY} header)")
    try:
        header = json.loads(metadata[METADATA_KEY])
    except json.JSONDecodeError:
        raise AgentFileError(f"{path}: its {METADATA_KEY} header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise AgentFileError(f"{path}: its header is not a {FORMAT} header")
    if header.get("version") != VERSION:
        raise AgentFileError(f"{path} is agent file version {header.get('version')!r}; this version of the "
                             f"project reads version {VERSION}")
    return header


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def zip_data(path: Path) -> dict:
    """A Stable-Baselines3 zip's ``data`` entry as JSON, nothing unpickled (its serialized
    entries stay base64 strings); ValueError in one line for anything else."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise ValueError(f"{path} is a zip file but not a Stable-Baselines3 model "
                                 f"(no data and policy.pth)")
            return json.loads(z.read("data"))
    except zipfile.BadZipFile:
        raise ValueError(f"{path} is not a model: neither an agent file (.safetensors) nor a MaskablePPO "
                         f".zip") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable model: {_one_line(exc)}") from None


def run_record(path: Path) -> dict:
    """What the run folder around a model file says (``config.yaml``, ``command.txt``,
    ``git_commit.txt``), beside ``final_model.zip`` or one folder up from ``checkpoints/`` or
    ``snapshots/``; empty when the file sits in no run folder."""
    import yaml

    for folder in (path.parent, path.parent.parent):
        config = folder / "config.yaml"
        if config.is_file():
            try:
                out = {"config": yaml.safe_load(config.read_text()) or {}}
            except (OSError, yaml.YAMLError):
                return {}
            for key, name in (("command", "command.txt"), ("commit", "git_commit.txt")):
                if (folder / name).is_file():
                    out[key] = (folder / name).read_text().strip()
            return out
    return {}


def plays_deterministic(path: str | Path) -> bool:
    """How a model plays when its spec does not say: as its training run evaluated it, the
    config's ``eval.deterministic`` (in an agent file's header, or in the run folder around a
    zip); its most likely action where nothing says so (a zip from elsewhere). A ValueError of
    one line when ``path`` names no readable model."""
    path = resolve_model(path)
    if _is_agent_file(path):
        config = (_read_header(path).get("made") or {}).get("config")
    else:
        config = run_record(path).get("config")
    evaluation = config.get("eval") if isinstance(config, dict) else None
    value = evaluation.get("deterministic", True) if isinstance(evaluation, dict) else True
    return value if isinstance(value, bool) else True


def _run_rules(path: Path):
    """The rules of the run a zip belongs to, or None."""
    from envs.engine.rules import get_rules

    env = run_record(path).get("config", {}).get("env", {})
    try:
        overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in (env.get("rules") or {}).items()}
        return get_rules(env["game"], **overrides)
    except (KeyError, TypeError, ValueError):
        return None


def model_info(path: str | Path) -> ModelInfo:
    """Sizes, features and (where known) rules of a model file, from its header or the zip's JSON
    ``data`` entry: no torch, no network built. ValueError (one line) if it is not a model."""
    from envs.observation import check_features

    path = resolve_model(path)
    if _is_agent_file(path):
        header = _read_header(path)
        try:
            rules = rules_from_json(header["rules"])
            obs, actions = header["observation"], header["actions"]
            return ModelInfo(path, "agent file", int(obs["size"]), int(actions["count"]),
                             check_features(obs.get("features") or ()), rules, header)
        except (KeyError, TypeError, ValueError) as exc:
            raise AgentFileError(f"{path}: its header is incomplete or wrong ({_one_line(exc)})") from None
    data = zip_data(path)
    try:
        (size,) = data["observation_space"]["_shape"]
        actions = int(data["action_space"]["n"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path} is not a model of this project: its spaces are not a flat observation "
                         f"and a discrete action") from None
    try:
        features = check_features(data.get("observation_features") or ())
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return ModelInfo(path, "SB3 zip", int(size), actions, features, _run_rules(path))


def check_model(path: str | Path, rules=None) -> ModelInfo:
    """:func:`model_info`, and for an agent file every check but the network's own: the tensors'
    hash, the layout hash, and (given ``rules``, the game to be played) the game; for an SB3 zip,
    that its ``policy.pth`` holds only tensors (``weights_only=True``). One-line
    ValueError (an :class:`AgentFileError` for agent files) when any fails."""
    return _checked(path, rules)[0]


def _checked(path, rules=None) -> tuple[ModelInfo, dict]:
    """:func:`check_model`'s info and the weights it read on the way (an agent file's tensors,
    a zip's ``policy.pth`` state), so that loading reads and checks them once."""
    info = model_info(path)
    if info.kind == "SB3 zip":
        state = zip_state(info.path)   # weights only: anything but tensors is refused here
        _check_finite(info, state)
        return info, state
    tensors = _load_tensors(info)
    _check_finite(info, tensors)
    _check_layout(info)
    if rules is not None and info.rules != rules:
        from envs.engine.rules import rules_label

        raise AgentFileError(f"{info.path} plays {rules_label(info.rules)}; "
                             f"this game is {rules_label(rules)}")
    return info, tensors


def _check_finite(info: ModelInfo, weights: dict) -> None:
    """A NaN or an infinity in a weight makes every probability NaN: the agent would still play
    (the first legal action) and every result of its matches read nan. Refused when loaded."""
    for name, value in weights.items():
        array = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            raise AgentFileError(f"{info.path}: its tensor {name} holds NaN or infinite values")


def _load_tensors(info: ModelInfo) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(info.path))
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types
        raise AgentFileError(f"{info.path} is not a readable agent file: {_one_line(exc)}") from None
    if _tensors_sha256(tensors) != info.header.get("tensors_sha256"):
        raise AgentFileError(f"{info.path}: its tensors do not match the hash in its header (the file was "
                             f"changed or damaged)")
    return tensors


def _check_layout(info: ModelInfo) -> None:
    from envs.observation import build_layout

    layout = build_layout(info.rules, info.features)
    if (layout_sha256(layout) != info.header["observation"].get("layout_sha256")
            or layout.size != info.obs_size):
        raise AgentFileError(f"{info.path}: its observation layout hash is not the layout this version "
                             f"builds for {info.rules.name} with features {list(info.features)} (made by "
                             f"another version, or edited)")


# --------------------------------------------------------------------------------------------
# Building the network (the whitelist)


def policy_kwargs(net_arch, activation: str, extractor: str = "flat", kwargs: dict | None = None) -> dict:
    """SB3's ``policy_kwargs`` for a network of the whitelist: ``net_arch`` layer sizes, an
    activation of :data:`ACTIVATION_NAMES`, a features extractor of :data:`EXTRACTORS` with its
    JSON ``kwargs`` (``card_planes``: ``blocks``, optionally ``channels``). Training builds its
    networks with it too (``train/ppo.py``), so every trained network is one an agent file can
    hold. ValueError for anything else."""
    import torch

    if activation not in ACTIVATION_NAMES:
        raise ValueError(f"activation {activation!r} is not one this project builds "
                         f"({', '.join(ACTIVATION_NAMES)})")
    if extractor not in EXTRACTORS:
        raise ValueError(f"features extractor {extractor!r} is not one this project builds "
                         f"({', '.join(EXTRACTORS)})")
    if not (isinstance(net_arch, list) and all(isinstance(n, int) and n > 0 for n in net_arch)):
        raise ValueError(f"net_arch {net_arch!r} is not a list of layer sizes")
    out: dict[str, Any] = dict(net_arch=list(net_arch),
                               activation_fn={"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation])
    if extractor == "card_planes":
        from agents.networks import CardPlanes

        kwargs = kwargs or {}
        blocks = kwargs.get("blocks")
        if not (isinstance(blocks, list) and all(isinstance(b, int) for b in blocks)):
            raise ValueError("card_planes needs kwargs.blocks, a list of column numbers")
        extra = {k: v for k, v in kwargs.items() if k != "blocks"}
        if set(extra) - {"channels"} or not all(isinstance(v, int) for v in extra.values()):
            raise ValueError(f"card_planes takes blocks and channels, not {sorted(extra)}")
        out.update(features_extractor_class=CardPlanes, features_extractor_kwargs=dict(kwargs))
    return out


class _NoOptimizer:
    """What a loaded policy gets for SB3's optimizer: a policy loaded here plays and is never
    trained (training builds its own model), and constructing a torch optimizer the first time
    in a process imports torch's compiler, about 1.4 s of every command that loads a model."""

    def __init__(self, params, lr: float = 0.0, **kwargs) -> None:
        pass


def _build_policy(obs_size: int, n_actions: int, net_arch, activation: str, extractor: str, kwargs: dict):
    """A fresh MaskableActorCriticPolicy of a whitelisted architecture (its weights to be loaded),
    for play: without an optimizer (:class:`_NoOptimizer`)."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    space = spaces.Box(low=-np.inf, high=np.inf, shape=(obs_size,), dtype=np.float32)
    kwargs = {**policy_kwargs(net_arch, activation, extractor, kwargs), "optimizer_class": _NoOptimizer}
    with global_generators_kept():
        policy = MaskableActorCriticPolicy(space, spaces.Discrete(n_actions), lambda _: 0.0, **kwargs)
    policy.set_training_mode(False)
    return policy


def _actor_modules(policy):
    """The parts of a policy that play: one ModuleDict whose state dict is the agent file's tensors."""
    from torch import nn

    return nn.ModuleDict({"features_extractor": policy.pi_features_extractor,
                          "policy_net": policy.mlp_extractor.policy_net,
                          "action_net": policy.action_net})


def network_of(policy) -> dict:
    """The ``network`` header of a policy built by this project; ValueError for any other network."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn

    from agents.networks import CardPlanes

    if type(policy) is not MaskableActorCriticPolicy:
        raise ValueError(f"a {type(policy).__name__} policy cannot be written as an agent file")
    activation = {nn.Tanh: "tanh", nn.ReLU: "relu"}.get(policy.activation_fn)
    extractor = {FlattenExtractor: "flat", CardPlanes: "card_planes"}.get(type(policy.pi_features_extractor))
    if activation is None or extractor is None:
        raise ValueError("only the networks train/ppo.py builds can be written as agent files")
    arch = policy.net_arch
    pi = list(arch["pi"]) if isinstance(arch, dict) else list(arch)
    kwargs = dict(policy.features_extractor_kwargs) if extractor != "flat" else {}
    return {"architecture": "mlp", "net_arch": pi, "activation": activation,
            "features_extractor": extractor, "kwargs": {k: (list(v) if isinstance(v, tuple) else v)
                                                        for k, v in kwargs.items()}}


def load_policy(path: str | Path, *, trust_pickled_code: bool = False, rules=None):
    """``(policy, ModelInfo)``: the network of a model file, on the CPU, in eval mode, built
    without unpickling (see the module docstring); ``trust_pickled_code`` loads an SB3 zip through
    ``MaskablePPO.load`` instead, which runs code from the file."""
    info, weights = _checked(path, rules)
    if info.kind == "agent file":
        net = info.header["network"]
        try:
            if net.get("architecture") != "mlp":
                raise ValueError(f"architecture {net.get('architecture')!r} is not one this project "
                                 f"builds (mlp)")
            policy = _build_policy(info.obs_size, info.n_actions, net.get("net_arch"), net.get("activation"),
                                   net.get("features_extractor"), net.get("kwargs") or {})
            import torch

            _actor_modules(policy).load_state_dict({k: torch.from_numpy(v.copy())
                                                    for k, v in weights.items()},
                                                   strict=True)
        except (ValueError, RuntimeError, TypeError) as exc:
            raise AgentFileError(f"{info.path}: its tensors do not fit its network: "
                                 f"{_one_line(exc)}") from None
        return policy, info
    if trust_pickled_code:
        from sb3_contrib import MaskablePPO

        with global_generators_kept():
            model = MaskablePPO.load(str(info.path), device="cpu")
        model.policy.set_training_mode(False)
        return model.policy, info
    return _zip_policy(info, weights), info


def load_mlp_layers(path: str | Path, *, rules=None) -> tuple[list | None, ModelInfo]:
    """``(layers, ModelInfo)``: the actor of a plain MLP (flat features) as float32 NumPy
    ``(weight, bias, activation)`` layers, activation ``"Tanh"``, ``"ReLU"`` or None (what
    ``agents.trained.NumpyActor`` plays), read and checked as :func:`load_policy` reads them but
    without building the torch policy: SB3 builds and initialises every layer, the value net's
    included, about half a second of every command that loads a model. The same numbers as the
    built policy's layers. ``(None, info)`` for any other network, and for tensors that do not fit
    the network exactly (every key, every shape): :func:`load_policy` builds those, or refuses
    them in its own words."""
    info, weights = _checked(path, rules)
    zipped = info.kind == "SB3 zip"   # the whole policy (its critic too), SB3's names
    prefix = "mlp_extractor.policy_net" if zipped else "policy_net"
    try:
        net = _zip_network(zip_data(info.path), weights) if zipped else info.header["network"]
    except (ValueError, TypeError, KeyError):
        return None, info
    arch, activation = net.get("net_arch"), net.get("activation")
    if (net.get("architecture") != "mlp" or net.get("features_extractor") != "flat"
            or activation not in ACTIVATION_NAMES
            or not (isinstance(arch, list) and all(isinstance(n, int) and n > 0 for n in arch))):
        return None, info
    sizes = [info.obs_size, *arch]
    shapes = {f"{prefix}.{2 * i}.{part}": (sizes[i + 1], sizes[i]) if part == "weight" else (sizes[i + 1],)
              for i in range(len(arch)) for part in ("weight", "bias")}
    shapes.update({"action_net.weight": (info.n_actions, sizes[-1]), "action_net.bias": (info.n_actions,)})
    if zipped:      # the critic: the same widths
        shapes.update({k.replace("policy_net", "value_net"): v for k, v in shapes.items()
                       if "policy_net" in k})
        shapes.update({"value_net.weight": (1, sizes[-1]), "value_net.bias": (1,)})
    if set(weights) != set(shapes) or any(tuple(weights[k].shape) != v for k, v in shapes.items()):
        return None, info

    def array(key: str) -> np.ndarray:
        value = weights[key]
        value = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        return value.astype(np.float32, copy=True)

    name = {"tanh": "Tanh", "relu": "ReLU"}[activation]
    layers = [(array(f"{prefix}.{2 * i}.weight"), array(f"{prefix}.{2 * i}.bias"), name)
              for i in range(len(arch))]
    layers.append((array("action_net.weight"), array("action_net.bias"), None))
    return layers, info


_CLASS = re.compile(r"^<class '([\w.]+)'>$")


def _zip_network(data: dict, state: dict) -> dict:
    """The network of an SB3 zip from the readable fields of its ``data`` entry, refused unless
    it is one this project builds."""
    kwargs = data.get("policy_kwargs") or {}
    if not isinstance(kwargs, dict):
        kwargs = {}
    policy_class = ((data.get("policy_class") or {}).get("__module__", "")
                    if isinstance(data.get("policy_class"), dict) else "")
    if policy_class and policy_class != "sb3_contrib.common.maskable.policies":
        raise ValueError(f"its policy class comes from {policy_class}, not a MaskablePPO policy")
    unknown = set(kwargs) - {":type:", ":serialized:", "net_arch", "activation_fn",
                             "features_extractor_class", "features_extractor_kwargs"}
    if unknown:
        raise ValueError(f"its policy options {sorted(unknown)} are not ones this project builds")
    activation = "tanh"
    if "activation_fn" in kwargs:
        m = _CLASS.match(str(kwargs["activation_fn"]))
        activation = {"torch.nn.modules.activation.Tanh": "tanh",
                      "torch.nn.modules.activation.ReLU": "relu"}.get(m.group(1) if m else "", "")
        if not activation:
            raise ValueError(f"its activation {kwargs['activation_fn']} is not one this project builds")
    extractor, extractor_kwargs = "flat", {}
    if "features_extractor_class" in kwargs:
        m = _CLASS.match(str(kwargs["features_extractor_class"]))
        extractor = {"agents.networks.CardPlanes": "card_planes",
                     "stable_baselines3.common.torch_layers.FlattenExtractor": "flat"}.get(
                         m.group(1) if m else "", "")
        if not extractor:
            raise ValueError(f"its features extractor {kwargs['features_extractor_class']} is not one "
                             f"this project builds")
        extractor_kwargs = kwargs.get("features_extractor_kwargs") or {}
        if not isinstance(extractor_kwargs, dict):
            raise ValueError("its features extractor options are not readable")
        extractor_kwargs = {k: v for k, v in extractor_kwargs.items() if not k.startswith(":")}
    net_arch = kwargs.get("net_arch")
    if net_arch is None:
        net_arch = [int(state[k].shape[0]) for k in sorted(
            (k for k in state if re.fullmatch(r"mlp_extractor\.policy_net\.\d+\.weight", k)),
            key=lambda k: int(k.split(".")[2]))]
    if isinstance(net_arch, dict):
        net_arch = net_arch.get("pi")
    return {"architecture": "mlp", "net_arch": net_arch, "activation": activation,
            "features_extractor": extractor, "kwargs": extractor_kwargs}


def zip_state(path: Path) -> dict:
    """The tensors of an SB3 zip's ``policy.pth`` (policy and value nets), read with
    ``torch.load(weights_only=True)``: anything but plain tensors is refused (ValueError in one
    line), nothing is unpickled."""
    import torch

    try:
        with zipfile.ZipFile(path) as z:
            raw = z.read("policy.pth")
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(f"{path}: cannot read its policy.pth: {_one_line(exc)}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # torch's notes on pickle protocols: not the user's business
            state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises UnpicklingError, RuntimeError, EOFError...
        found = re.search(r"WeightsUnpickler error: ([^\n]*?)(?:\. |\n|$)", str(exc))
        why = f" ({found.group(1)[:160]})" if found else ""
        raise ValueError(f"{path}: its policy.pth is not plain tensors{why}, so it is not loaded: loading it "
                         f"would run code from the file "
                         f"(ppo:PATH,trust_pickled_code=true does that)") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path}: its policy.pth is not a dictionary of tensors")
    return state


def _zip_policy(info: ModelInfo, state: dict):
    """The policy of an SB3 zip from its ``policy.pth`` state (read with ``weights_only=True``)
    and its network from the whitelist; the zip's pickled entries are never decoded."""
    data = zip_data(info.path)
    try:
        net = _zip_network(data, state)
        policy = _build_policy(info.obs_size, info.n_actions, net["net_arch"], net["activation"],
                               net["features_extractor"], net["kwargs"])
        policy.load_state_dict(state, strict=True)
    except (ValueError, RuntimeError, TypeError) as exc:
        raise ValueError(f"{info.path}: not loaded without running its pickled code: "
                         f"{_one_line(exc)[:300]}") from None
    policy.set_training_mode(False)
    return policy


# --------------------------------------------------------------------------------------------
# Writing


def save_agent_file(path: str | Path, policy, *, rules, features=(), players: int = 2,
                    made: dict | None = None) -> Path:
    """Write ``policy``'s actor as an agent file at ``path`` (atomically); returns the path.
    ``made``: how it was made (``config``, ``seed``, ``commit``, ``steps``, ``command``)."""
    from safetensors.numpy import save

    from envs.actions import num_actions
    from envs.observation import build_layout, check_features

    features = check_features(features)
    layout = build_layout(rules, features)
    obs_size = int(np.prod(policy.observation_space.shape))
    if obs_size != layout.size:
        raise ValueError(f"the policy reads {obs_size} observation values; {rules.name} with features "
                         f"{list(features)} has {layout.size}")
    n_actions = num_actions(rules)
    if int(policy.action_space.n) != n_actions:
        raise ValueError(f"the policy has {policy.action_space.n} actions; {rules.name} has {n_actions}")
    tensors = {k: v.detach().cpu().numpy().astype(np.float32, copy=True)
               for k, v in _actor_modules(policy).state_dict().items()}
    header = {
        "format": FORMAT, "version": VERSION,
        "game": rules.name, "rules": rules_to_json(rules), "players": int(players),
        "observation": {"size": layout.size, "features": list(features),
                        "pieces": [[p.name, p.size] for p in layout.pieces],
                        "layout_sha256": layout_sha256(layout)},
        "actions": {"count": n_actions,
                    "ids": ["fold", "check_call"] + [f"bet_{i}" for i in range(n_actions - 2)]},
        "network": network_of(policy),
        "normalisation": None,
        "tensors_sha256": _tensors_sha256(tensors),
        "made": _jsonable(made or {}),
    }
    data = save(tensors, metadata={METADATA_KEY: json.dumps(header, sort_keys=True)})
    path = Path(path)
    make_folder(path.parent)
    return atomic_write_bytes(path, data)   # a reader never sees half a file


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


def convert(source: str | Path, out: str | Path | None = None, *, rules=None) -> Path:
    """An SB3 zip (or a run folder's) as an agent file, read the safe way (weights only; the
    network and the game from the zip's readable fields and the run's ``config.yaml``, or
    ``rules`` when the zip sits in no run folder). ``out`` defaults to the zip's name with
    ``.safetensors``. Returns the written path."""
    source = Path(source)
    zip_path = source / FINAL_MODEL if source.is_dir() else resolve_model(source)
    info = model_info(zip_path)
    if info.kind != "SB3 zip":
        raise ValueError(f"{zip_path} is already an agent file")
    rules = info.rules if rules is None else rules
    if rules is None:
        raise ValueError(f"{zip_path} sits in no run folder (no config.yaml beside it): "
                         f"name its game with --game")
    out = Path(out) if out is not None else zip_path.with_suffix(".safetensors")
    _check_convert_target(out)   # before the work: a bad name is refused at once, nothing made
    policy = _zip_policy(info, zip_state(info.path))
    record = run_record(zip_path)
    data = zip_data(zip_path)
    config = record.get("config", {})
    made = {"config": config, "seed": (config.get("run") or {}).get("seed", data.get("seed")),
            "commit": record.get("commit", "unknown"), "steps": data.get("num_timesteps"),
            "command": record.get("command", ""), "converted_from": zip_path.name}
    players = int((config.get("env") or {}).get("players", 2) or 2)
    return save_agent_file(out, policy, rules=rules, features=info.features, players=players, made=made)


def _check_convert_target(out: Path) -> None:
    """``out`` may be written by :func:`convert`: a ``.safetensors`` name (what the loaders take for
    an agent file) that is new or an agent file already (converted again), never another file (a
    typo that names the source zip, or anything else), in a folder that can be made (nothing is
    made here: :func:`save_agent_file` makes it)."""
    if out.suffix != ".safetensors":
        raise ValueError(f"{out}: an agent file's name ends in .safetensors (the loaders tell it from a zip "
                         f"by that)")
    if out.is_dir():
        raise ValueError(f"{out} is a folder; name the agent file to write")
    if out.exists():
        try:
            _read_header(out)
        except AgentFileError:
            raise ValueError(f"{out} exists and is not an agent file; choose another name or remove "
                             f"it") from None
    check_folder(out.parent)
