"""Training configs: typed sections, clear errors for unknown keys and wrong types, overrides."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from train.checks import check_config, checked_config_from_dict, load_checked_config
from train.config import (
    Config,
    ConfigError,
    apply_override,
    config_from_dict,
    config_to_dict,
    dump_config,
    load_config,
)

REPO = Path(__file__).resolve().parent.parent
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


def test_the_shipped_configs_exist():
    names = {p.name for p in CONFIGS}
    assert {"soko_ppo.yaml", "soko_6max_ppo.yaml", "follow_the_bitch_ppo.yaml",
            "follow_the_bitch_low_chicago_ppo.yaml", "smoke.yaml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_loads_and_round_trips(path):
    cfg = load_checked_config(path)
    assert cfg.run.name == path.stem
    again = config_from_dict(yaml.safe_load(dump_config(cfg)))
    assert again == cfg
    assert config_to_dict(again) == config_to_dict(cfg)


def test_an_empty_config_is_all_defaults():
    assert config_from_dict({}) == Config()
    assert config_from_dict(None) == Config()
    assert Config().ppo.n_steps == 2048 and Config().ppo.batch_size == 64   # MaskablePPO's own


def test_sections_are_typed_dataclasses():
    cfg = load_config(REPO / "configs" / "soko_ppo.yaml")
    assert cfg.env.game == "soko" and cfg.env.players == 2
    assert cfg.env.observation_features == ["hand_class", "showing_class", "win_probability"]
    assert isinstance(cfg.ppo.learning_rate, float)
    assert isinstance(cfg.run.total_timesteps, int)
    assert all(isinstance(w, float) for w in cfg.opponents.baselines.values())
    assert dataclasses.is_dataclass(cfg.opponents.self_play)


@pytest.mark.parametrize("data, message", [
    ({"ppo": {"learnig_rate": 1e-4}}, "unknown key ppo.learnig_rate (did you mean learning_rate?)"),
    ({"pp0": {}}, "unknown key pp0 (did you mean ppo?)"),
    ({"run": {"xyzzy": 1}}, "unknown key run.xyzzy; the keys of run are name, total_timesteps"),
    ({"ppo": {"n_steps": "abc"}}, "ppo.n_steps must be a whole number, not 'abc' (str)"),
    ({"ppo": {"n_steps": 1.5}}, "ppo.n_steps must be a whole number, not 1.5 (float)"),
    ({"ppo": {"n_steps": True}}, "ppo.n_steps must be a whole number, not True (bool)"),
    ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate must be a number, not 'fast' (str)"),
    ({"ppo": {"net_arch": 64}}, "ppo.net_arch must be a list, not 64 (int)"),
    ({"ppo": {"net_arch": [64, "x"]}}, "ppo.net_arch[1] must be a whole number"),
    ({"ppo": {"activation_fn": "gelu"}}, "ppo.activation_fn must be one of tanh, relu, not 'gelu'"),
    ({"ppo": {"pipeline": "single_agent"}}, "ppo.pipeline 'single_agent' is no longer a choice: every"),
    ({"ppo": {"vec_env": "subproc"}}, "ppo.vec_env 'subproc' is no longer a choice"),
    ({"ppo": {"normalize_advantage": "yes"}}, "ppo.normalize_advantage must be true or false"),
    ({"ppo": 3}, "ppo must be a mapping of keys, not 3 (int)"),
    ({"opponents": {"baselines": ["random"]}}, "opponents.baselines must be a mapping, not ['random']"),
    ({"opponents": {"baselines": {"random": "lots"}}}, "opponents.baselines.random must be a number"),
    ({"opponents": {"baselines": {"tight": 1}}}, "opponents.baselines: unknown agent 'tight'"),
    ({"opponents": {"baselines": {"random": 0}}}, "opponents.baselines needs a positive weight"),
    ({"opponents": {"self_play": {"weight": 1.5}}}, "opponents.self_play.weight must be from 0 to 1"),
    ({"opponents": {"same_table": -0.1}}, "opponents.same_table must be from 0 to 1, not -0.1"),
    ({"eval": {"baselines": ["tag", "ppo:nowhere.zip"]}},
     "eval.baselines: agent 'ppo:nowhere.zip': no model at"),
    ({"env": {"game": "holdem"}}, "env: unknown game 'holdem'"),
    ({"env": {"players": 9}}, "env.players: soko takes 2 to 8 players, not 9"),
    ({"env": {"rules": {"antee": 2}}}, "env: unknown rules field(s) antee"),
    ({"env": {"rules": {"bring_in": "middle"}}}, "bring_in must be 'lowest', 'highest' or None"),
    ({"ppo": {"n_steps": 16, "n_envs": 2, "batch_size": 64}},
     "ppo.batch_size (64) must not exceed the rollout"),
    ({"run": {"total_timesteps": 0}}, "run.total_timesteps must be at least 1"),
    ({"ppo": {"device": "gpu"}}, "ppo.device must be auto, cpu, cuda, cuda:N or mps, not 'gpu'"),
    ({"ppo": {"env_threads": 0}}, "ppo.env_threads must be at least 1, not 0"),
    ({"ppo": {"checkdown_baseline": 2.5}}, "ppo.checkdown_baseline is a weight from 0 to 2, not 2.5"),
    ({"opponents": {"self_play": {"every": 10, "weight": 0.5, "lbr": 0.6}}},
     "opponents.self_play.lbr must be from 0 to 1 - self_play.weight (0.5), not 0.6"),
    ({"opponents": {"self_play": {"lbr": 0.1}}}, "opponents.self_play.lbr needs snapshots to respond to"),
    ({"opponents": {"self_play": {"every": 10, "keep": 3, "lbr": 0.1, "lbr_keep": 4}}},
     "opponents.self_play.lbr_keep must be from 1 to self_play.keep (3), not 4"),
    ({"env": {"game": "follow_the_bitch"}, "opponents": {"self_play": {"every": 10, "lbr": 0.1}}},
     "opponents.self_play.lbr: local best response needs a game without wild cards"),
    ({"env": {"players": 3}, "opponents": {"self_play": {"every": 10, "lbr": 0.1}}},
     "opponents.self_play.lbr: local best response is heads-up only, not 3 players"),
    ({"opponents": {"self_play": {"every": 10, "weight": 0.5, "lbr": 0.2, "exact_br": 0.4}}},
     "opponents.self_play.exact_br must be from 0 to 1 - self_play.weight - self_play.lbr (0.3), not 0.4"),
    ({"env": {"game": "soko_mini"}, "opponents": {"self_play": {"exact_br": 0.5}}},
     "opponents.self_play.exact_br needs snapshots to respond to"),
    ({"opponents": {"self_play": {"every": 10, "exact_br": 0.5}}},
     "opponents.self_play.exact_br is exact for heads-up soko_mini only, not soko with 2 players"),
    ({"env": {"game": "soko_mini"},
      "opponents": {"self_play": {"every": 10, "exact_br": 0.5, "exact_br_keep": 0}}},
     "opponents.self_play.exact_br_keep must be at least 1, not 0"),
    ({"opponents": {"self_play": {"every": 10, "weight": 0.5, "lbr": 0.2, "learned_br": 0.4}}},
     "opponents.self_play.learned_br must be from 0 to 1 - self_play.weight - self_play.lbr "
     "- self_play.exact_br (0.3), not 0.4"),
    ({"opponents": {"self_play": {"learned_br": 0.5}}},
     "opponents.self_play.learned_br needs snapshots to respond to"),
    ({"env": {"game": "soko_mini"},
      "opponents": {"self_play": {"every": 10, "exact_br": 0.3, "learned_br": 0.3}}},
     "opponents.self_play.learned_br and exact_br cannot both be on"),
    ({"opponents": {"self_play": {"every": 10, "learned_br": 0.3, "learned_br_steps": 0}}},
     "opponents.self_play.learned_br_steps must be at least 1, not 0"),
    ({"opponents": {"self_play": {"every": 10, "learned_br": 0.3, "learned_br_keep": 0}}},
     "opponents.self_play.learned_br_keep must be at least 1, not 0"),
    ({"opponents": {"self_play": {"every": 10, "learned_br": 0.3,
                                  "learned_br_config": "configs/nowhere.yaml"}}},
     "opponents.self_play.learned_br_config: no file configs/nowhere.yaml"),
    ({"eval": {"every": 10, "br_steps": -1}}, "eval.br_steps must be at least 0, not -1"),
    ({"eval": {"every": 10, "br_hands": 0}}, "eval.br_hands must be at least 1, not 0"),
    ({"eval": {"every": 0, "br_steps": 1000}}, "eval.br_steps is set but eval.every is 0"),
    ({"eval": {"every": 10, "br_steps": 1000, "br_config": "configs/nowhere.yaml"}},
     "eval.br_config: no file configs/nowhere.yaml"),
])
def test_bad_configs_name_the_key(data, message):
    with pytest.raises(ConfigError) as excinfo:
        checked_config_from_dict(data)
    assert message in str(excinfo.value)


@pytest.mark.parametrize("data, message", [
    ({"env": {"game": "holdem"}}, "env: unknown game 'holdem'"),
    ({"env": {"players": 9}}, "env.players: soko takes 2 to 8 players, not 9"),
    ({"env": {"observation_features": ["hand_clas"]}}, "env.observation_features: unknown observation"),
    ({"eval": {"baselines": ["tight"]}}, "eval.baselines: unknown agent 'tight'"),
    ({"eval": {"exploitability": True}}, "eval.exploitability is exact for heads-up soko_mini only"),
])
def test_the_schema_alone_leaves_the_game_checks_to_train_checks(data, message, tmp_path):
    # train/config.py imports no other module of the project: what needs the engine, the envs,
    # LBR or the registry is train.checks.check_config, which every loader runs after it.
    cfg = config_from_dict(data)
    with pytest.raises(ConfigError) as excinfo:
        check_config(cfg)
    assert message in str(excinfo.value)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_config(path) == dataclasses.replace(cfg, run=dataclasses.replace(cfg.run, name="c"))
    with pytest.raises(ConfigError) as excinfo:
        load_checked_config(path)
    assert message in str(excinfo.value)


def test_numbers_as_yaml_writes_them():
    cfg = config_from_dict(yaml.safe_load("ppo: {learning_rate: 3e-4}\nrun: {total_timesteps: 2_000_000}"))
    assert cfg.ppo.learning_rate == 3e-4      # YAML 1.1 reads 3e-4 as text; a float field takes it
    assert cfg.run.total_timesteps == 2_000_000
    assert config_from_dict({"run": {"total_timesteps": "1e6"}}).run.total_timesteps == 1_000_000
    assert config_from_dict({"ppo": {"learning_rate": 1}}).ppo.learning_rate == 1.0


def test_overrides_and_seed(tmp_path):
    path = REPO / "configs" / "smoke.yaml"
    cfg = load_config(path, overrides=["ppo.learning_rate=1e-4", "ppo.net_arch=[256, 256]",
                                       "opponents.baselines.tag=3", "env.rules.bring_in=highest",
                                       "run.name=mine"], seed=7)
    assert cfg.ppo.learning_rate == 1e-4
    assert cfg.ppo.net_arch == [256, 256]
    assert cfg.opponents.baselines["tag"] == 3.0
    assert cfg.env.rules == {"bring_in": "highest"}
    assert cfg.run.seed == 7 and cfg.run.name == "mine"
    with pytest.raises(ConfigError, match=r"unknown key ppo.learning_rat \(did you mean learning_rate\?\)"):
        load_config(path, overrides=["ppo.learning_rat=1e-4"])
    with pytest.raises(ConfigError, match="--set takes KEY=VALUE"):
        load_config(path, overrides=["ppo.learning_rate"])
    with pytest.raises(ConfigError, match="ppo.n_envs is a value, not a section"):
        apply_override({"ppo": {"n_envs": 2}}, "ppo.n_envs.x=1")


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert str(info.value) == (f"{bad} is not valid YAML: line 2, column 1: expected ',' or ']', but got "
                               "'<stream end>' (while parsing a flow sequence)")   # one line, where and what
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "configs" / "smoke.yaml", overrides=["ppo.net_arch=[1,"])
    assert "\n" not in str(info.value) and str(info.value).startswith(
        "--set ppo.net_arch: cannot read the value '[1,' as YAML (line 1, column 4: ")
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="a config is a mapping of sections"):
        load_config(bad)


def test_a_colon_without_a_space_is_named(tmp_path):
    """YAML reads {tag:2} as the key 'tag:2' with no value; the error says so, not 'must be a
    number'. An agent spec with a colon as a key, given a weight, stays a key."""
    path = REPO / "configs" / "smoke.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides=["opponents.baselines={tag:2, call: 1}"])
    assert str(info.value) == ("--set opponents.baselines: 'tag:2' reads as one key with no value; YAML "
                               "needs a space after the colon (tag: 2)")
    bad = tmp_path / "bad.yaml"
    bad.write_text("env:\n  rules: {bring_in:highest}\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert str(info.value) == (f"{bad}: 'bring_in:highest' reads as one key with no value; YAML needs a "
                               "space after the colon (bring_in: highest)")
    cfg = load_config(path, overrides=['opponents.baselines={"equity:samples=100": 2}'])
    assert cfg.opponents.baselines == {"equity:samples=100": 2.0}


def _train_cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, str(REPO / "train" / "ppo.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_script_stops_a_bad_config_with_exit_code_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  learnig_rate: 1.0e-4\n")
    out = _train_cli("--config", str(bad))
    assert out.returncode == 2
    assert "config error: unknown key ppo.learnig_rate (did you mean learning_rate?)" in out.stderr
    assert "Traceback" not in out.stderr
    out = _train_cli("--config", str(REPO / "configs" / "smoke.yaml"), "--set", "ppo.n_steps=many")
    assert out.returncode == 2
    assert "ppo.n_steps must be a whole number, not 'many' (str)" in out.stderr
    out = _train_cli("--resume", str(tmp_path))
    assert out.returncode == 2 and "cannot read config" in out.stderr
    assert not list(tmp_path.glob("*__s*"))          # nothing was created


def test_the_config_module_s_examples_run():
    import doctest

    import train.checks
    import train.config

    for module in (train.config, train.checks):
        assert not doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed, module.__name__
