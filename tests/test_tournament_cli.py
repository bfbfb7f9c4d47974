"""The tournament command line: usage errors in one line with exit code 2, ``ppo:`` models
checked before any hand, short display names in the tables, the picture and results.json,
deals keyed independently of how a model's path is spelt, one interval per pair, and the run
folder's name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.match import play_match
from arena.report import crosstable_figure, format_table
from arena.stats import combine
from arena.tournament import TournamentConfig, main, parse_args, run_tournament, tables

REPO = Path(__file__).resolve().parent.parent
QUICK = ["--hands", "4", "--workers", "1", "--no-progress", "--no-write"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """``runs/soko_tiny__s0/``: a freshly initialised Soko model as a training run leaves it
    (``final_model.zip`` and ``config.yaml``), and a checkpoint-only run without a final model."""
    from sb3_contrib import MaskablePPO

    from envs.single_agent import SingleAgentEnv

    root = tmp_path_factory.mktemp("cwd")
    run = root / "runs" / "soko_tiny__s0"
    (run / "checkpoints").mkdir(parents=True)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("soko", num_players=2), n_steps=64, batch_size=32,
                        seed=0, device="cpu", policy_kwargs={"net_arch": [8]})
    model.save(str(run / "final_model.zip"))
    (run / "config.yaml").write_text("env:\n  game: soko\n  players: 2\n")
    unfinished = root / "runs" / "unfinished"
    (unfinished / "checkpoints").mkdir(parents=True)
    model.save(str(unfinished / "checkpoints" / "ckpt_512.zip"))
    for name in ("ckpt_1024.zip", "eval_model.zip"):   # the newest is 1024 by number, not by name
        shutil.copy(unfinished / "checkpoints" / "ckpt_512.zip", unfinished / "checkpoints" / name)
    (root / "notes.zip").write_bytes(b"not a zip")
    import zipfile

    with zipfile.ZipFile(root / "other.zip", "w") as z:
        z.writestr("readme.txt", "a zip, but not a model")
    return root


def _usage_error(argv, capsys) -> str:
    """parse_args must exit with code 2 and write exactly one line; that line, without its prefix."""
    with pytest.raises(SystemExit) as info:
        parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("python -m arena: error: ") and err.lower().count("error") == 1, err
    return err[len("python -m arena: error: "):-1]


# ---------------------------------------------------------------------------------------------
# Point 4: bad ppo agents fail when the arguments are parsed


@pytest.mark.parametrize("spec, game, message", [
    ("ppo:{root}/runs/missing.zip", "soko", "no model at {root}/runs/missing.zip: no such file or folder"),
    ("ppo:{root}/runs/unfinished", "soko",
     "{root}/runs/unfinished is a folder without final_model.zip (training has not finished; its "
     "newest checkpoint: {root}/runs/unfinished/checkpoints/ckpt_1024.zip)"),
    ("ppo:{root}/notes.zip", "soko",
     "{root}/notes.zip is not a model: neither an agent file (.safetensors) nor a MaskablePPO .zip"),
    ("ppo:{root}/other.zip", "soko",
     "{root}/other.zip is a zip file but not a Stable-Baselines3 model (no data and policy.pth)"),
    ("ppo:{root}/runs/soko_tiny__s0", "follow_the_bitch",
     "{root}/runs/soko_tiny__s0/final_model.zip was trained for soko, observation 606; "
     "this tournament plays follow_the_bitch, 590"),
])
def test_a_bad_ppo_agent_is_one_line_and_exit_code_2(runs, spec, game, message, capsys):
    spec = spec.format(root=runs)
    line = _usage_error(["--game", game, "--agents", spec, "tag", *QUICK], capsys)
    assert line == f"agent {spec!r}: " + message.format(root=runs)


def test_a_model_in_a_rules_variant_of_another_size_is_refused(runs, capsys):
    spec = f"ppo:{runs}/runs/soko_tiny__s0/final_model.zip"
    line = _usage_error(["--game", "follow_the_bitch", "--rule", "low_chicago=true", "--agents", spec, "tag",
                         *QUICK], capsys)
    assert line.endswith("was trained for soko, observation 606; this tournament plays "
                         "follow_the_bitch (low_chicago=true), 617")


def test_a_run_folder_plays_its_final_model(runs):
    cfg = parse_args(["--agents", f"ppo:{runs}/runs/soko_tiny__s0", "call", *QUICK])
    result = run_tournament(cfg)
    assert result.agents == ("soko_tiny__s0", "call")
    assert result.specs["soko_tiny__s0"] == (f"ppo:{runs}/runs/soko_tiny__s0",
                                             f"ppo:{runs}/runs/soko_tiny__s0/final_model.zip")


# ---------------------------------------------------------------------------------------------
# Point 6d: every usage error exits 2 with one line


@pytest.mark.parametrize("argv, message", [
    (["--players", "9"], "soko takes 2 to 8 players, not 9"),
    (["--players", "3", "--agents", "tag", "call"],
     "3 players need at least 3 agents; got 2 (repeat a spec, e.g. --agents tag random random, "
     "to fill seats)"),
    (["--players", "x"], "argument --players: invalid int value: 'x'"),
    (["--rule", "ante=abc"], "--rule ante= takes a whole number, not 'abc'"),
    (["--rule", "betting=foo"],
     "soko: betting must be 'fixed_limit', 'spread_limit', 'pot_limit' or 'no_limit', not 'foo'"),
    (["--rule", "low_chicago=maybe"], "--rule low_chicago= takes true or false, not 'maybe'"),
    (["--rule", "spread_sizes=a,b"], "--rule spread_sizes= takes numbers separated by commas, not 'a,b'"),
    (["--agents", "tag", "tight"], "unknown agent 'tight'; valid agents: random, call, raise, tag, equity, "
                                   "ppo, champion, cfr, br (e.g. random, call, raise, tag, "
                                   "equity:samples=300, champion, ppo:runs/<run>)"),
    (["--agents", "tag:name=x", "call:name=x"], "agents 'tag:name=x' and 'call:name=x' are both named 'x'; "
                                                "give them different name=..."),
    (["--engine", "core"],
     "argument --engine: invalid choice: 'core' (choose from 'reference', 'batched', 'auto')"),
])
def test_usage_errors_exit_2_with_one_line(argv, message, capsys):
    assert _usage_error([*argv, *QUICK], capsys) == message


@pytest.mark.parametrize("module", ["arena", "arena.tournament"])
def test_the_command_exits_2_with_one_line(module):
    out = subprocess.run([sys.executable, "-m", module, "--players", "9", *QUICK], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "python -m arena: error: soko takes 2 to 8 players, not 9\n"


# ---------------------------------------------------------------------------------------------
# Point 5: display names; seeding that does not depend on a path's spelling


def test_two_models_with_the_same_run_folder_name_are_refused(runs, tmp_path, capsys):
    copy = tmp_path / "elsewhere" / "soko_tiny__s0"
    copy.mkdir(parents=True)
    (copy / "final_model.zip").write_bytes((runs / "runs/soko_tiny__s0/final_model.zip").read_bytes())
    first, second = f"ppo:{runs}/runs/soko_tiny__s0", f"ppo:{copy}"
    line = _usage_error(["--agents", first, second, *QUICK], capsys)
    assert line == (f"agents {first!r} and {second!r} are both named 'soko_tiny__s0'; tell them apart with "
                    f"name=..., e.g. {second},name=soko_tiny__s0-2")
    cfg = parse_args(["--agents", first, f"{second},name=copy", *QUICK])   # name= tells them apart
    assert run_tournament(cfg).agents == ("soko_tiny__s0", "copy")


def test_the_same_model_by_relative_and_absolute_path_scores_identically(runs, monkeypatch):
    monkeypatch.chdir(runs)
    relative = "ppo:runs/soko_tiny__s0/final_model.zip,deterministic=false"
    absolute = f"ppo:{runs}/runs/soko_tiny__s0/final_model.zip,deterministic=false"
    folder = f"ppo:{os.path.relpath(runs / 'runs/soko_tiny__s0', runs / 'runs')}"  # not a path from here
    assert not Path(folder[4:]).exists()
    results = {}
    for spec in (relative, absolute, "ppo:./runs/soko_tiny__s0/,deterministic=false"):
        cfg = TournamentConfig(agents=[spec, "random"], hands=40, seed=3, workers=1, progress=False,
                               write=False)
        results[spec] = run_tournament(cfg)
    first, *others = results.values()
    assert first.agents == ("soko_tiny__s0", "random")
    for other in others:
        assert np.array_equal(other.matches[0].group_results, first.matches[0].group_results)
        assert other.as_dict()["crosstable"] == first.as_dict()["crosstable"]
    # The training API keys its results by the specs as given, and seeds them the same way.
    a = play_match("soko", [relative, "random"], hands=40, seed=3)
    b = play_match("soko", [absolute, "random"], hands=40, seed=3)
    assert set(a.estimates) == {relative, "random"} and set(b.estimates) == {absolute, "random"}
    assert a.estimates[relative] == b.estimates[absolute]
    # The key is the display name: renaming the agent deals other cards.
    c = play_match("soko", [f"{relative},name=other", "random"], hands=40, seed=3)
    assert not np.array_equal(c.group_results, a.group_results)


def test_display_names_in_the_table_the_json_and_the_picture(runs, tmp_path, capsys):
    spec = f"ppo:{runs}/runs/soko_tiny__s0/final_model.zip"
    cfg = parse_args(["--agents", spec, "tag", "random", "--hands", "6", "--workers", "1", "--no-progress",
                      "--out", str(tmp_path), "--name", "t", "--no-luck-correction"])
    main(cfg, argv=["python -m arena"])
    out = capsys.readouterr().out
    assert spec not in out and str(runs) not in out
    lines = out.splitlines()
    start = lines.index("Cross-table: row agent against column agent (bb/100 ± 95% half-width)")
    header, *rows = lines[start + 1:start + 5]
    assert header.split() == ["soko_tiny__s0", "tag", "random"] and len(header) == 15 + 3 * 14
    assert [r.split()[0] for r in rows] == ["soko_tiny__s0", "tag", "random"]
    data = json.loads((tmp_path / "t" / "results.json").read_text())
    assert data["agents"] == [
        {"name": "soko_tiny__s0", "spec": spec, "canonical": spec},
        {"name": "tag", "spec": "tag", "canonical": "tag"},
        {"name": "random", "spec": "random", "canonical": "random"}]
    assert data["config"]["agents"] == [spec, "tag", "random"]
    assert set(data["crosstable"]) == {"soko_tiny__s0", "tag", "random"}
    assert {r["agent"] for r in data["ranking"]} == {"soko_tiny__s0", "tag", "random"}


def test_one_deal_has_no_interval_and_the_outputs_say_so(tmp_path, capsys):
    """One deal (two hands) leaves the Student-t interval undefined: the tables show n/a and a
    line says why, results.json (strict JSON) has null where the bounds would be; two deals
    without the luck correction have an interval again."""
    cfg = parse_args(["--agents", "tag", "call", "--hands", "1", "--workers", "1", "--no-progress",
                      "--out", str(tmp_path), "--name", "one"])
    main(cfg)
    out = capsys.readouterr().out
    assert "(duplicate: 1 deal x 2 seatings)" in out and "nan" not in out
    assert "+0.0±n/a" in out and "[     n/a,      n/a]" in out
    assert ("n/a: 1 deal leaves no interval (it needs at least 2, and more than the luck correction fits "
            "terms); play more --hands") in out
    text = (tmp_path / "one" / "results.json").read_text()
    data = json.loads(text, parse_constant=lambda word: pytest.fail(f"{word} in results.json"))
    tag = next(r for r in data["ranking"] if r["agent"] == "tag")
    assert tag["ci95_low"] is None and tag["ci95_high"] is None and tag["mean"] is not None
    csv_rows = (tmp_path / "one" / "crosstable.csv").read_text().splitlines()
    assert [row.split(",")[-2:] for row in csv_rows[1:]] == [["", ""], ["", ""]]   # no interval, no "nan"
    two = run_tournament(TournamentConfig(agents=["tag", "call"], hands=4, workers=1, progress=False,
                                          write=False, luck_correction=False))
    assert "n/a" not in format_table(two) and "(duplicate: 2 deals x 2 seatings)" in format_table(two)


def test_long_names_are_numbered_in_the_cross_table():
    long = "equity:samples=8,raise_edge=0.25,call_margin=0.05"
    result = run_tournament(TournamentConfig(agents=[long, "tag"], hands=4, workers=1, progress=False,
                                             write=False, luck_correction=False))
    lines = format_table(result).splitlines()
    start = lines.index("Cross-table: row agent against column agent (bb/100 ± 95% half-width)")
    header, row1, row2 = lines[start + 1:start + 4]
    assert header.split() == ["1", "2"]
    assert row1.startswith(f" 1 {long}") and row2.startswith(" 2 tag")


def test_long_names_in_an_against_table_name_the_columns_under_it():
    long = "equity:samples=8,raise_edge=0.25,call_margin=0.05"
    result = run_tournament(TournamentConfig(agents=["tag"], against=[long, "random"], hands=4, workers=1,
                                             progress=False, write=False, luck_correction=False))
    lines = format_table(result).splitlines()
    start = lines.index("Cross-table: row agent against column agent (bb/100 ± 95% half-width)")
    header, row, legend = lines[start + 1:start + 4]
    assert header.split() == ["2", "3"] and row.startswith(" 1 tag") and len(row.split()) == 4
    assert legend == f"columns: 2 {long}, 3 random"


def _boxes_overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_the_picture_keeps_labels_title_and_colour_bar_apart():
    long = "soko_ppo_selfplay_long_experiment__s12__20260101-120000"
    agents = ["tag", "call", "random", "raise", "equity:samples=8", f"call:name={long}"]
    result = run_tournament(TournamentConfig(agents=agents, hands=4, workers=1, progress=False, write=False,
                                             luck_correction=False))
    fig = crosstable_figure(result)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax, bar = fig.axes
    title = fig._suptitle.get_window_extent(renderer)
    ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() + ax.get_yticklabels()]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["tag", "call", "random", "raise", "equity:samples=8", long]
    bar_box = bar.get_tightbbox(renderer)
    figure = fig.bbox
    for box in [title, bar_box, ax.get_window_extent(renderer), *ticks]:
        assert (figure.x0 <= box.x0 and box.x1 <= figure.x1 + 1
                and figure.y0 <= box.y0 and box.y1 <= figure.y1 + 1)
    for box in [ax.get_window_extent(renderer), *ticks]:
        assert not _boxes_overlap(box, title) and not _boxes_overlap(box, bar_box)
    assert not _boxes_overlap(bar_box, title)
    import matplotlib.pyplot as plt

    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Point 6a: one interval per pair; point 6f: the folder name


def test_the_cross_table_and_the_match_give_one_interval_per_pair():
    result = run_tournament(TournamentConfig(agents=["tag", "call"], hands=400, seed=1, workers=1,
                                             progress=False, write=False))
    data = result.as_dict()
    match = data["matches"][0]
    assert match["luck_fitted_terms"] > 0        # fitted coefficients cost degrees of freedom
    for a, b in (("tag", "call"), ("call", "tag")):
        cell, own = data["crosstable"][a][b], match["bb_per_100"][a]
        assert cell["half_width"] == pytest.approx(own["half_width"], rel=1e-12)
        assert cell["df"] == own["df"] == 200 - 1 - match["luck_fitted_terms"]
        assert cell["mean"] == pytest.approx(own["mean"], rel=1e-12)


def test_a_tournament_on_the_core_gives_the_reference_numbers(runs):
    """--engine batched plays every match's hands on the compiled core, the luck correction
    from each hand replayed: for deterministic agents (a ppo model among them) the cross-table,
    the field and the raw numbers are the reference engine's."""
    argv = ["--agents", "tag", "call", "raise", f"ppo:{runs}/runs/soko_tiny__s0", "--hands", "120",
            "--workers", "1", "--no-progress", "--no-write"]
    ref = run_tournament(parse_args(argv)).as_dict()
    core = run_tournament(parse_args([*argv, "--engine", "batched"])).as_dict()
    assert core["config"]["engine"] == "batched" and ref["config"]["engine"] == "reference"
    for key in ("crosstable", "ranking", "raw"):
        assert core[key] == ref[key]
    assert [m["bb_per_100"] for m in core["matches"]] == [m["bb_per_100"] for m in ref["matches"]]


def test_the_folder_name_says_which_rules_were_overridden(tmp_path):
    cfg = parse_args(["--game", "follow_the_bitch", "--rule", "low_chicago=true", "--agents", "tag", "call",
                      "--hands", "2", "--workers", "1", "--no-progress", "--out", str(tmp_path)])
    main(cfg)
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("follow_the_bitch_low_chicago=true_2p_dup_seed0_")
    assert (folder / "results.json").is_file()


# ---------------------------------------------------------------------------------------------
# --against: one list of agents against a field


def test_against_plays_each_agent_against_the_field_only_with_the_round_robins_numbers():
    """Heads-up, ``--against`` plays exactly each agent of ``--agents`` against each of the field,
    in that order; a match's deals follow the names at its table, so each match gives the same
    numbers as that pair in a full round robin."""
    quick = ["--hands", "200", "--seed", "4", "--workers", "1", "--no-progress", "--no-write"]
    field = run_tournament(parse_args(["--agents", "tag", "raise", "--against", "call", "random", *quick]))
    assert [m.agents for m in field.matches] == [("tag", "call"), ("tag", "random"), ("raise", "call"),
                                                 ("raise", "random")]
    assert field.config.against == ["call", "random"]
    assert "raise" not in field.crosstable["tag"] and "random" not in field.crosstable["call"]
    everyone = run_tournament(parse_args(["--agents", "tag", "raise", "call", "random", *quick]))
    assert len(everyone.matches) == 6
    for a, b in field.matches[0].agents, field.matches[3].agents:
        assert field.crosstable[a][b] == everyone.crosstable[a][b]
    # the field's ranking: each agent over its own matches only
    assert field.field["tag"] == combine([m.estimates["tag"] for m in field.matches[:2]])
    text = format_table(field)
    assert "Ranking against the field" in text and text.count("\n") > 8
    # the cross-table: the agents as rows, the field as columns, every cell played
    lines = text.splitlines()
    start = lines.index("Cross-table: row agent against column agent (bb/100 ± 95% half-width)")
    header, tag_row, raise_row, after = lines[start + 1:start + 5]
    assert header.split() == ["call", "random"] and after == ""
    assert tag_row.split()[0] == "tag" and raise_row.split()[0] == "raise"
    assert tag_row.split()[1:] == [f"{e.mean:+.1f}±{e.half_width:.1f}" for e in
                                   (field.crosstable["tag"]["call"], field.crosstable["tag"]["random"])]
    fig = crosstable_figure(field)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["call", "random"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tag", "raise"]
    assert len(ax.texts) == 4   # a value in each cell


def test_against_at_larger_tables_seats_one_agent_with_every_set_of_the_field():
    assert tables(["a", "b"], ["x", "y", "z"], 3) == [
        ("a", "x", "y"), ("a", "x", "z"), ("a", "y", "z"), ("b", "x", "y"), ("b", "x", "z"), ("b", "y", "z")]
    assert tables(["a", "b", "c"], [], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    result = run_tournament(parse_args(["--agents", "tag", "--against", "call", "random", "raise",
                                        "--players", "3", "--hands", "6", "--workers", "1",
                                        "--no-progress", "--no-write"]))
    assert [m.agents for m in result.matches] == [("tag", "call", "random"), ("tag", "call", "raise"),
                                                  ("tag", "random", "raise")]


def test_against_with_too_small_a_field_or_a_bad_spec_is_one_line(capsys):
    msg = _usage_error(["--agents", "tag", "--against", "random", "--players", "3", *QUICK], capsys)
    assert "3 players against a field need at least 2 agents in --against; got 1" in msg
    msg = _usage_error(["--agents", "tag", "--against", "nosuchagent", *QUICK], capsys)
    assert "nosuchagent" in msg
