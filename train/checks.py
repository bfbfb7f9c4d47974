"""The checks of a training config that need the rest of the project.

``train/config.py`` is a leaf: it reads the YAML into typed dataclasses and checks keys, types
and ranges with nothing but the standard library and ``yaml``. Whether the config can be played
needs the layers below: the rules presets (``envs.engine.rules``), the games with a training env
(``envs.single_agent.GAMES``), the observation pieces (``envs.observation``), the local best
response's games (``arena.lbr``) and the agent registry (``agents.registry``). Those checks are
:func:`check_config`, and every loader runs it right after reading: :func:`load_checked_config`
(``train/ppo.py``'s command line, ``train/sweep.py``, ``bench/train_throughput.py``) and
:func:`checked_config_from_dict` (a run folder's ``config.yaml`` on ``--resume``); ``train.ppo.main``
runs it again before a run folder is made, for a ``Config`` built any other way.

Each problem is a :class:`train.config.ConfigError` whose message names the key, as the
schema's are.

>>> from train.config import config_from_dict
>>> cfg = config_from_dict({"env": {"game": "holdem"}})   # the schema knows no games
>>> check_config(cfg)
Traceback (most recent call last):
...
train.config.ConfigError: env: unknown game 'holdem'; presets are ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from train.config import Config, ConfigError, config_from_dict, load_config

__all__ = ["check_config", "checked_config_from_dict", "load_checked_config"]


def check_config(cfg: Config) -> None:
    """Raise a :class:`ConfigError` naming the key when ``cfg`` (already checked by the schema:
    keys, types, ranges) cannot be played: an unknown game, rules or observation piece, a table
    size the game cannot seat, a best response its game cannot have, an unknown agent spec."""
    from agents.registry import check_spec
    from arena.lbr import check_rules
    from envs.engine.rules import check_players, get_rules
    from envs.observation import check_features
    from envs.single_agent import GAMES

    def need(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    try:
        rules = get_rules(cfg.env.game, **cfg.env.rule_overrides())
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"env: {exc}") from None
    presets = [p for family in GAMES.values() for p in family]
    try:
        check_features(cfg.env.observation_features)
    except ValueError as exc:
        raise ConfigError(f"env.observation_features: {exc}") from None
    need(cfg.env.game in presets,
         f"env.game {cfg.env.game!r} has no training env; games are {', '.join(presets)}")
    try:
        check_players(rules, cfg.env.players)
    except ValueError as exc:
        raise ConfigError(f"env.players: {exc}") from None

    sp = cfg.opponents.self_play
    if sp.exact_br > 0:
        need(rules.name == "soko_mini" and cfg.env.players == 2,
             f"opponents.self_play.exact_br is exact for heads-up soko_mini only, not {rules.name} with "
             f"{cfg.env.players} players")
    if sp.lbr > 0:
        try:
            check_rules(rules, cfg.env.players)
        except ValueError as exc:
            raise ConfigError(f"opponents.self_play.lbr: {exc}") from None
    need(sp.lbr_win_samples is None or cfg.ppo.features_extractor == "flat",
         "opponents.self_play.lbr_win_samples needs the core to run the snapshots' networks: "
         f"ppo.features_extractor flat, not {cfg.ppo.features_extractor}")

    ev = cfg.eval
    if ev.lbr_hands:
        try:
            check_rules(rules, cfg.env.players)
        except ValueError as exc:
            raise ConfigError(f"eval.lbr_hands: {exc}") from None
    need(not ev.exploitability or (rules.name == "soko_mini" and cfg.env.players == 2),
         f"eval.exploitability is exact for heads-up soko_mini only, not {rules.name} with "
         f"{cfg.env.players} players (use eval.lbr_hands)")

    # Agent specs must name known agents, so a typo fails before training.
    specs = [("opponents.baselines", s) for s in cfg.opponents.baselines]
    specs += [("eval.baselines", s) for s in cfg.eval.baselines]
    for where, spec in specs:
        try:
            check_spec(spec)
        except (ValueError, KeyError, FileNotFoundError) as exc:
            raise ConfigError(f"{where}: {exc}") from None


def checked_config_from_dict(data: dict | None) -> Config:
    """:func:`train.config.config_from_dict`, then :func:`check_config`."""
    cfg = config_from_dict(data)
    check_config(cfg)
    return cfg


def load_checked_config(path: str | Path | None = None, *, overrides: Sequence[str] = (),
                        seed: int | None = None, target: str | None = None) -> Config:
    """:func:`train.config.load_config` (the file, ``--set`` overrides, ``--seed`` and
    ``--target``, the schema's checks), then :func:`check_config`."""
    cfg = load_config(path, overrides=overrides, seed=seed, target=target)
    check_config(cfg)
    return cfg
