"""The shipped champions (agents/champions/*.safetensors): each loads as an agent file, plays
the game it names, and beats ``random`` in a short duplicate match. ``bench/champions.py``
re-measures them against every baseline (too slow for ``make test``)."""

from __future__ import annotations

import pytest

from agents.agent_file import check_model, model_info
from agents.registry import (
    CHAMPIONS,
    CHAMPIONS_DIR,
    bind_spec,
    champion_path,
    check_spec,
    display_name,
    make_agent,
    parse_spec,
    shipped_champions,
)
from arena.match import play_match
from envs.engine.rules import get_rules


def test_every_file_in_the_champions_folder_is_a_named_champion():
    files = sorted(p.stem for p in CHAMPIONS_DIR.glob("*.safetensors"))
    assert files == sorted(shipped_champions()) and set(files) <= set(CHAMPIONS)
    assert "soko" in files   # the README's `--agents champion equity tag` needs it


@pytest.mark.parametrize("game", shipped_champions())
def test_a_champion_loads_matches_its_game_and_beats_random(game):
    path = champion_path(game)
    assert path.stat().st_size < 600_000                # a few hundred KB
    info = check_model(path)
    preset = game.removesuffix("_6max")
    assert info.rules == get_rules(preset) and info.kind == "agent file"
    players = info.header["players"]
    assert players == (6 if game.endswith("_6max") else 2)
    made = info.header["made"]
    assert made["seed"] == 0 and made["steps"] > 0 and "train/ppo.py" in made["command"]
    check_spec(f"champion:{game}", info.rules)
    other = "follow_the_bitch" if preset.startswith("soko") else "soko"
    with pytest.raises(ValueError, match=f"this game is {other}"):
        check_spec(f"champion:{game}", get_rules(other))
    result = play_match(preset, [f"champion:{game}"] + ["random"] * (players - 1), hands=240, seed=3)
    est = result.estimates[f"champion:{game}"]
    assert est.low > 0, (game, est)


def test_a_bare_champion_is_the_champion_of_the_game_played():
    for game in shipped_champions():
        preset = game.removesuffix("_6max")
        players = 6 if game.endswith("_6max") else 2
        result = play_match(preset, ["champion"] + ["random"] * (players - 1), hands=12, seed=0)
        assert "champion" in result.estimates          # keyed by the spec as given
    assert model_info(champion_path("soko")).rules == get_rules("soko")


def test_a_champion_with_options_and_no_game_is_the_champion_of_the_game_played():
    # The near-Nash numbers are the sampling policy's (docs/results.md): `champion:deterministic=false`
    # plays it, and still as the champion of the game at hand.
    for game in shipped_champions():
        preset = game.removesuffix("_6max")
        players = 6 if game.endswith("_6max") else 2
        bound = bind_spec("champion:deterministic=false,name=mixed", get_rules(preset), players)
        assert parse_spec(bound) == ("champion", {"game": game, "deterministic": False, "name": "mixed"})
        agent = make_agent(bound)
        assert agent.deterministic is False and display_name(agent) == "mixed"
        assert model_info(agent.path).rules == get_rules(preset)
    # a spec that names its game is left as it is, whatever the game played
    assert bind_spec("champion:soko,deterministic=false", get_rules("follow_the_bitch")) == \
        "champion:soko,deterministic=false"
    assert bind_spec("champion:game=soko", get_rules("follow_the_bitch")) == "champion:game=soko"
    result = play_match("soko", ["champion:deterministic=false", "random"], hands=12, seed=0)
    assert "champion:deterministic=false" in result.estimates   # keyed by the spec as given


@pytest.mark.parametrize("game", shipped_champions())
def test_a_champion_plays_as_its_run_evaluated_it_unless_told(game):
    path = champion_path(game)
    evaluated = model_info(path).header["made"]["config"]["eval"].get("deterministic", True)
    assert make_agent(f"champion:{game}").deterministic is evaluated
    other = make_agent(f"champion:{game},deterministic={str(not evaluated).lower()}")
    assert other.deterministic is (not evaluated) and other.path == path
    if game == "soko":   # configs/soko_near_nash_ppo.yaml ships the mixture it learned
        assert evaluated is False and make_agent("champion:soko").randomises
