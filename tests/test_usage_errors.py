"""What a new user's mistakes get: one line, exit code 2, nothing half-made left behind, nothing
earlier overwritten. Training (``train/ppo.py``), tournaments (``python -m arena``) and
exploitability (``python -m arena.exploit``); and the one table-size check everything asks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "configs" / "smoke.yaml"


def one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text.strip()


# ---------------------------------------------------------------------------------------------
# The number of players: one rule function, one sentence everywhere


def test_every_table_size_check_is_the_rules_one():
    from arena.tournament import TournamentConfig, check_config
    from envs import SingleAgentEnv, follow_the_bitch_v0
    from envs.batched import BatchedGame
    from envs.engine.game import Game
    from envs.engine.rules import RULES, check_players
    from train.checks import checked_config_from_dict
    from train.config import ConfigError

    rules = RULES["follow_the_bitch"]
    sentence = "follow_the_bitch takes 2 to 7 players, not 8"
    with pytest.raises(ValueError, match=f"^{sentence}$"):
        check_players(rules, 8)
    for make in (lambda: Game(rules, 8), lambda: BatchedGame(rules, 8, 1),
                 lambda: follow_the_bitch_v0.raw_env(num_players=8),
                 lambda: follow_the_bitch_v0.raw_env(num_players=8, engine="reference"),
                 lambda: SingleAgentEnv("follow_the_bitch", num_players=8),
                 lambda: check_config(TournamentConfig(game="follow_the_bitch", players=8,
                                                       agents=["call"] * 8))):
        with pytest.raises(ValueError, match=f"^{sentence}$"):
            make()
    with pytest.raises(ConfigError, match=f"^env.players: {sentence}$"):
        checked_config_from_dict({"env": {"game": "follow_the_bitch", "players": 8}})
    for n in (1, 2.0, np.int64(2), True):  # a whole number (an int), in range
        with pytest.raises(ValueError, match="takes 2 to 7 players"):
            check_players(rules, n)
    check_players(rules, 2)
    check_players(rules, 7)


# ---------------------------------------------------------------------------------------------
# Training: checked before a run folder is made; a failed start leaves none


def train_cli(argv, capsys) -> tuple[int, str]:
    from train.ppo import cli

    code = cli([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed must be from 0 to 2147483647 (2**31 - 1), not -1"),
    (["--seed", "99999999999"], "--seed must be from 0 to 2147483647 (2**31 - 1), not 99999999999"),
    (["--set", "run.seed=-5"], "run.seed must be from 0 to 2147483647 (2**31 - 1), not -5"),
    (["--set", "run.seed=4294967296"], "run.seed must be from 0 to 2147483647 (2**31 - 1), not 4294967296"),
])
def test_a_seed_out_of_range_is_one_line_and_no_folder(argv, message, tmp_path, capsys):
    code, err = train_cli(["--config", SMOKE, "--set", f"run.out_dir={tmp_path}", *argv], capsys)
    assert code == 2 and one_line(err) == f"config error: {message}"
    assert list(tmp_path.iterdir()) == []


def test_an_empty_config_file_is_refused(tmp_path, capsys):
    for text in ("", "# only a comment\n", "{}\n"):
        empty = tmp_path / "empty.yaml"
        empty.write_text(text)
        code, err = train_cli(["--config", empty, "--set", f"run.out_dir={tmp_path}"], capsys)
        assert code == 2
        assert one_line(err).startswith(f"config error: {empty} is empty: a config sets at least one section")
    assert [p.name for p in tmp_path.iterdir()] == ["empty.yaml"]


@pytest.fixture(scope="module")
def soko_model(tmp_path_factory) -> Path:
    """A freshly initialised Soko policy saved as a model zip (not trained)."""
    from sb3_contrib import MaskablePPO

    from envs.single_agent import SingleAgentEnv

    path = tmp_path_factory.mktemp("model") / "soko_model.zip"
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("soko", num_players=2), n_steps=64, batch_size=32,
                        seed=0, device="cpu", policy_kwargs={"net_arch": [8]})
    model.save(str(path))
    return path


def test_a_target_model_of_another_game_is_one_line_and_no_folder(soko_model, tmp_path, capsys):
    code, err = train_cli(["--config", SMOKE, "--set", "env.game=follow_the_bitch", "--target",
                           f"ppo:{soko_model}", "--set", f"run.out_dir={tmp_path}", "--no-progress"], capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"config error: opponents.baselines: agent 'ppo:{soko_model}': {soko_model} "
                           f"was trained for soko")
    assert line.endswith("follow_the_bitch, 590")
    assert list(tmp_path.iterdir()) == []
    # The same model as an opponent in the config is refused the same way.
    code, err = train_cli(["--config", SMOKE, "--set", "env.game=follow_the_bitch",
                           "--set", f'opponents.baselines={{"ppo:{soko_model}": 1}}',
                           "--set", f"run.out_dir={tmp_path}"], capsys)
    assert code == 2 and "opponents.baselines: agent" in one_line(err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [RuntimeError("no env for you"), KeyboardInterrupt()])
def test_a_failed_start_leaves_no_run_folder(error, tmp_path, monkeypatch):
    import train.ppo
    from train.config import load_config

    def fail(cfg, **kw):
        raise error

    monkeypatch.setattr(train.ppo, "training_env", fail)
    cfg = load_config(SMOKE, overrides=[f"run.out_dir={tmp_path}"])
    with pytest.raises(type(error)):
        train.ppo.main(cfg, command=["python"], progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_resume_keeps_the_run_folder(smoke_run, tmp_path, monkeypatch):
    import train.ppo
    from train.config import config_from_dict, read_yaml

    cfg, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    before = sorted(p.relative_to(run_dir) for p in run_dir.rglob("*"))
    data = read_yaml(run_dir / "config.yaml")
    data["run"]["total_timesteps"] = cfg.run.total_timesteps + 512

    def fail(cfg, **kw):
        raise RuntimeError("no env for you")

    monkeypatch.setattr(train.ppo, "training_env", fail)
    with pytest.raises(RuntimeError):
        train.ppo.main(config_from_dict(data), resume=run_dir, command=["python"], progress=False)
    assert sorted(p.relative_to(run_dir) for p in run_dir.rglob("*")) == before


def test_a_resume_whose_checkpoint_states_are_damaged_says_so(smoke_run, tmp_path, capsys):
    _, original = smoke_run
    run_dir = tmp_path / original.name
    shutil.copytree(original, run_dir)
    for state in (run_dir / "checkpoints").glob("ckpt_*.json"):
        state.write_text("{")
    code, err = train_cli(["--resume", run_dir], capsys)
    assert code == 2 and one_line(err) == (
        f"config error: --resume {run_dir}: no checkpoint in {run_dir / 'checkpoints'} has a readable state "
        "file (its ckpt_<steps>.json damaged or removed); start it again with --config")


# ---------------------------------------------------------------------------------------------
# Tournaments and exploitability: options named, no result overwritten


QUICK = ["--hands", "4", "--workers", "1", "--no-progress"]


def arena_cli(argv, capsys) -> tuple[int, str]:
    from arena.tournament import cli

    try:
        code = cli([str(a) for a in argv])
    except SystemExit as exc:  # usage errors exit from parse_args
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed must be at least 0, not -1"),
    (["--workers", "-3"], "--workers must be at least 0 (0: one per core), not -3"),
    (["--ray", "nohost"], "--ray: a Ray address is auto, HOST:PORT or ray://HOST:PORT, not 'nohost'"),
])
def test_tournament_options_out_of_range_are_named(argv, message, capsys):
    code, err = arena_cli(["--agents", "random", "call", *QUICK, "--no-write", *argv], capsys)
    assert code == 2 and one_line(err) == f"python -m arena: error: {message}"


def test_a_ray_address_where_nothing_answers_is_a_usage_error(capsys):
    argv = ["--agents", "random", "call", *QUICK, "--no-write", "--ray", "127.0.0.1:1"]
    code, err = arena_cli(argv, capsys)
    assert code == 2 and one_line(err).startswith(
        "python -m arena: error: --ray: cannot join the Ray cluster at '127.0.0.1:1': nothing answers there")


def test_a_tournament_never_overwrites_an_earlier_result(tmp_path, capsys):
    from arena.tournament import TournamentConfig, main

    argv = ["--agents", "random", "call", *QUICK, "--out", tmp_path, "--name", "mine"]
    assert arena_cli(argv, capsys)[0] == 0
    first = (tmp_path / "mine" / "results.json").read_text()
    code, err = arena_cli([*argv, "--seed", "1"], capsys)
    assert code == 2 and one_line(err) == (f"python -m arena: error: --name mine: {tmp_path / 'mine'} exists "
                                           "already (an earlier result?); choose another name or remove it")
    assert (tmp_path / "mine" / "results.json").read_text() == first
    # From Python (or a folder made while a tournament played): the result goes beside it.
    main(TournamentConfig(agents=["random", "call"], hands=4, workers=1, progress=False,
                          out_dir=str(tmp_path), name="mine", seed=1))
    assert (tmp_path / "mine" / "results.json").read_text() == first
    assert json.loads((tmp_path / "mine-2" / "results.json").read_text())["config"]["seed"] == 1


def exploit(argv, capsys) -> tuple[int, str]:
    from arena.exploit import main

    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed must be at least 0, not -1"),
    (["--workers", "-3"], "--workers must be at least 0 (0: one per core), not -3"),
])
def test_exploit_options_out_of_range_are_named(argv, message, tmp_path, capsys):
    code, err = exploit(["--game", "soko", "--agent", "call", "--method", "lbr", "--out", tmp_path, *argv],
                        capsys)
    assert code == 2 and one_line(err) == f"error: {message}"
    assert list(tmp_path.iterdir()) == []


def test_exploit_never_overwrites_an_earlier_result_nor_leaves_an_empty_folder(tmp_path, capsys):
    argv = ["--game", "soko_mini", "--agent", "call", "--out", tmp_path, "--name", "x"]
    assert exploit(argv, capsys)[0] == 0
    first = (tmp_path / "x" / "results.json").read_text()
    code, err = exploit([*argv[:-4], "--agent", "raise", *argv[-4:]], capsys)
    assert code == 2 and one_line(err) == (f"error: --name x: {tmp_path / 'x'} exists already (an earlier "
                                           "result?); choose another name or remove it")
    assert (tmp_path / "x" / "results.json").read_text() == first
    # A method that fails (LBR cannot play wild cards) leaves no empty run folder.
    code, err = exploit(["--game", "follow_the_bitch", "--agent", "call", "--method", "lbr",
                         "--out", tmp_path], capsys)
    assert code == 2 and "wild cards" in one_line(err)
    assert [p.name for p in tmp_path.iterdir()] == ["x"]


# ---------------------------------------------------------------------------------------------
# An output folder that cannot be made: one line at the start, before any work


def test_an_output_folder_in_a_file_is_one_line_before_any_work(tmp_path, capsys, monkeypatch):
    import arena.tournament
    import train.ppo
    from arena.play.__main__ import main as play_main
    from arena.play.__main__ import parse_args as play_args

    blocker = tmp_path / "a_file"
    blocker.write_text("keep me")
    inside = blocker / "runs"
    why = f"cannot make the folder {inside}: {blocker} is a file, not a folder"

    def never(*args, **kwargs):
        raise AssertionError("the work started before the folder was checked")

    monkeypatch.setattr(arena.tournament, "run_tournament", never)
    code, err = arena_cli(["--agents", "random", "call", *QUICK, "--out", inside], capsys)
    assert code == 2 and one_line(err) == f"python -m arena: error: --out: {why}"

    code, err = exploit(["--game", "soko_mini", "--agent", "call", "--out", inside], capsys)
    assert code == 2 and one_line(err) == f"error: --out: {why}"

    monkeypatch.setattr(train.ppo, "training_env", never)
    code, err = train_cli(["--config", SMOKE, "--set", f"run.out_dir={inside}"], capsys)
    assert code == 2 and one_line(err) == f"config error: run.out_dir: {why}"

    assert play_main(play_args(["--game", "soko", "--opponent", "call", "--phh-dir", str(inside)])) == 2
    assert one_line(capsys.readouterr().err) == f"error: --phh-dir: {why}"
    assert blocker.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_a_hand_that_cannot_be_saved_says_so_and_the_game_goes_on(tmp_path):
    from arena.play.table import Table, TableConfig
    from arena.play.terminal import save_phh
    from envs.actions import action_mask
    from envs.engine.phh import read_phh

    table = Table(TableConfig(game="soko", players=2, opponents=("call",), seed=3))
    table.play_agents()
    while not table.game.is_over:
        table.act(1)   # check or call to the end
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    said = []
    assert save_phh(table, blocker / "hands", said.append) is None
    assert said == [f"Could not save the hand: cannot make the folder {blocker / 'hands'}: {blocker} is a "
                    f"file, not a folder"]
    path = save_phh(table, tmp_path / "hands", said.append)
    assert said[-1] == f"Saved {path}" and path.parent == tmp_path / "hands"
    assert read_phh(path.read_text()).payoffs == table.game.payoffs
    # Saved twice: one file. The same seed played otherwise at another sitting: a second file.
    assert save_phh(table, tmp_path / "hands", said.append) == path
    again = Table(TableConfig(game="soko", players=2, opponents=("call",), seed=3))
    again.play_agents()
    while not again.game.is_over:
        again.act(0 if action_mask(again.game)[0] else 1)   # fold where it can
    other = save_phh(again, tmp_path / "hands", said.append)
    assert other == path.with_name(path.stem + "-2.phh")
    assert read_phh(path.read_text()).payoffs == table.game.payoffs
    assert read_phh(other.read_text()).payoffs == again.game.payoffs != table.game.payoffs


# ---------------------------------------------------------------------------------------------
# Ctrl-C: one line, exit code 130, no run folder half-made


def test_ctrl_c_stops_a_tournament_and_an_exploit_run_in_one_line(tmp_path, capsys, monkeypatch):
    import arena.exploit
    import arena.tournament

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(arena.tournament, "run_tournament", interrupted)
    code, err = arena_cli(["--agents", "random", "call", *QUICK, "--out", tmp_path / "t"], capsys)
    assert code == 130 and one_line(err.lstrip("\n")) == "python -m arena: interrupted; nothing written"
    assert list((tmp_path / "t").iterdir()) == []

    monkeypatch.setitem(arena.exploit.METHODS, "lbr", interrupted)
    argv = ["--game", "soko", "--agent", "call", "--method", "lbr", "--out", tmp_path / "x"]
    code, err = exploit(argv, capsys)
    assert code == 130 and one_line(err.lstrip("\n")) == "interrupted; nothing written"
    assert list((tmp_path / "x").iterdir()) == []


def test_match_workers_leave_ctrl_c_to_the_parent():
    import signal

    from arena.match import _init_worker
    from envs.engine.rules import get_rules

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        options = {"seed": 0, "duplicate": True, "histories": 0}
        _init_worker((get_rules("soko"), 2, {"a": "call", "b": "call"}, options))
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_output_cut_short_by_a_pipe_keeps_the_results_and_says_nothing(tmp_path, buffered):
    """`python -m arena ... | head -1`: the run folder is written before the tables are printed,
    and the closed pipe is no traceback, whether Python's output is buffered (the pipe found
    closed at the last flush) or not (at a print)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    command = (f"{sys.executable} -m arena --agents random call --hands 4 --workers 1 --no-progress "
               f"--out {tmp_path} --name cut | head -1")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("soko, 2 players")
    assert json.loads((tmp_path / "cut" / "results.json").read_text())["config"]["hands"] == 4


@pytest.mark.parametrize("module", ["arena.tournament", "arena.exploit", "arena.play.__main__",
                                    "agents.convert", "train.sweep", "train.ppo"])
def test_a_mistyped_option_is_one_line_in_every_command(module, capsys):
    """argparse's own errors (an unknown option) are one line too, not its usage block."""
    import importlib

    parse_args = importlib.import_module(module).parse_args   # each command's parser
    with pytest.raises(SystemExit) as info:
        parse_args(["--no-such-option"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "usage:" not in err, err
    assert "error: " in err


@pytest.mark.parametrize("name", ["../elsewhere", "a/b", "..", ".", ""])
def test_a_run_name_that_is_a_path_is_refused_by_both_commands(name, tmp_path, capsys):
    out = tmp_path / "out"
    message = f"--name: {name!r} is not a plain folder name (no '/', not '.' or '..', not empty)"
    code, err = arena_cli(["--agents", "random", "call", *QUICK, "--out", out, "--name", name], capsys)
    assert code == 2 and one_line(err) == f"python -m arena: error: {message}"
    code, err = exploit(["--game", "soko_mini", "--agent", "call", "--out", out, "--name", name], capsys)
    assert code == 2 and one_line(err) == f"error: {message}"
    assert list(tmp_path.iterdir()) == []   # nothing beside --out nor in it
