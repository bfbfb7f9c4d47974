"""The tournament harness: duplicate deals, reproducibility across workers, the statistics,
the outputs, and a short tag-versus-random match."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from arena.match import play_match
from arena.stats import combine, mean_ci, t_quantile
from arena.tournament import TournamentConfig, main, parse_args, run_tournament

DEAL = re.compile(r"^Seat (\d) is dealt (\S\S) (up|down)$", re.M)
SEATS = re.compile(r"^Seats: (.*)$", re.M)


def _deals(history: str) -> list[tuple[int, str, str]]:
    return [(int(s), c, how) for s, c, how in DEAL.findall(history)]


def _seating(history: str) -> dict[int, str]:
    line = SEATS.search(history).group(1)
    return {int(s): name for s, name in re.findall(r"seat (\d): ([^,]+)", line)}


def test_heads_up_duplicate_replays_each_deal_with_seats_swapped():
    result = play_match("soko", ["tag", "random"], hands=40, seed=3, histories=40)
    hands = result.histories
    assert len(hands) == 40
    for first, second in zip(hands[0::2], hands[1::2]):
        a, b = _deals(first), _deals(second)
        # The same cards go to the same seats, as far as both hands got (a fold ends a hand).
        common = min(len(a), len(b))
        assert common >= 4 and a[:common] == b[:common]
        # ... and the agents have swapped seats.
        sa, sb = _seating(first), _seating(second)
        assert sa == {0: "tag", 1: "random"} and sb == {0: "random", 1: "tag"}
    # Different groups are different deals.
    assert _deals(hands[0])[:4] != _deals(hands[2])[:4]


def test_three_handed_duplicate_gives_every_agent_every_seats_cards():
    result = play_match("follow_the_bitch", ["tag", "call", "random"], hands=12, seed=4, histories=12)
    for g in range(4):
        group = result.histories[3 * g:3 * g + 3]
        first_street = [_deals(h)[:9] for h in group]  # 3 passes x 3 seats: nobody has folded yet
        assert first_street[0] == first_street[1] == first_street[2]
        held = {name: set() for name in ("tag", "call", "random")}
        for h in group:
            for seat, name in _seating(h).items():
                held[name].add(seat)
        assert all(seats == {0, 1, 2} for seats in held.values())


def test_no_duplicate_deals_every_hand_afresh():
    result = play_match("soko", ["call", "random"], hands=10, seed=3, duplicate=False, histories=10)
    firsts = [tuple(_deals(h)[:4]) for h in result.histories]
    assert len(set(firsts)) == 10


def _comparable(result) -> dict:
    data = result.as_dict()
    for key in ("seconds", "warm_up_seconds", "hands_per_second", "config"):
        data.pop(key)
    return data


def test_same_seed_gives_identical_results_with_one_and_two_workers():
    base = dict(game="soko", agents=["tag", "equity:samples=30", "random"], hands=120, seed=7,
                progress=False, write=False)
    one = run_tournament(TournamentConfig(**base, workers=1))
    two = run_tournament(TournamentConfig(**base, workers=2))
    assert one.config.luck_correction  # the default in Soko: corrected and raw numbers both compared
    assert "raw" in _comparable(one) and one.raw_crosstable != one.crosstable
    assert json.dumps(_comparable(one)) == json.dumps(_comparable(two))
    assert all(np.array_equal(m1.group_results, m2.group_results) for m1, m2 in zip(one.matches, two.matches))
    other = run_tournament(TournamentConfig(**{**base, "seed": 8}, workers=1))
    assert json.dumps(_comparable(one)) != json.dumps(_comparable(other))


def test_student_t_critical_values_match_the_tables():
    # Two-sided 95% critical values from published t tables.
    for df, value in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452),
                      (99, 1.9842), (250, 1.9695), (10_000, 1.9602)]:
        assert abs(t_quantile(0.95, df) - value) < 5e-4


def test_confidence_intervals_match_a_direct_computation():
    sample = [3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0, 6.0, -5.0, 3.0]   # n = 10, df = 9
    mean = sum(sample) / 10
    sd = math.sqrt(sum((x - mean) ** 2 for x in sample) / 9)
    e = mean_ci(sample)
    assert e.mean == pytest.approx(1.7)
    assert e.half_width == pytest.approx(2.2622 * sd / math.sqrt(10), rel=1e-4)
    # Residuals of two fitted coefficients (the luck correction's): 7 degrees of freedom.
    r = mean_ci(sample, fitted=2)
    sd7 = math.sqrt(sum((x - mean) ** 2 for x in sample) / 7)
    assert r.df == 7 and r.half_width == pytest.approx(2.3646 * sd7 / math.sqrt(10), rel=1e-4)
    # Two independent halves: standard errors add in quadrature around the average.
    a, b = mean_ci(sample[:5]), mean_ci(sample[5:])
    c = combine([a, b])
    assert c.mean == pytest.approx((a.mean + b.mean) / 2)
    assert c.se == pytest.approx(math.sqrt(a.se ** 2 + b.se ** 2) / 2)
    assert c.df == 8 and c.half_width == pytest.approx(2.3060 * c.se, rel=1e-4)


def test_match_results_are_group_means_in_big_bets_per_100_hands():
    result = play_match("soko", ["tag", "call"], hands=200, seed=5, histories=200, luck_correction=True)
    assert result.groups == 100 and result.hands == 200
    # Rebuild the per-hand results from the histories: seat payoffs, agents by seat.
    per_hand = []
    for h in result.histories:
        seats = _seating(h)
        pay = dict((int(s), int(p)) for s, p in re.findall(r"seat (\d) ([+-]\d+)", h.splitlines()[-1]))
        per_hand.append({seats[s]: pay[s] for s in seats})
    tag = np.array([h["tag"] for h in per_hand], dtype=float).reshape(100, 2).mean(axis=1) / 8
    mean = tag.mean() * 100
    half = 1.9842 * tag.std(ddof=1) / math.sqrt(100) * 100     # t(0.975, df = 99)
    e = result.raw_estimates["tag"]   # the luck correction is on by default; raw kept aside
    assert e.mean == pytest.approx(mean) and e.half_width == pytest.approx(half, rel=1e-4)
    assert result.raw_estimates["call"].mean == pytest.approx(-mean)
    assert result.estimates["tag"].mean != pytest.approx(mean)
    plain = play_match("soko", ["tag", "call"], hands=200, seed=5, luck_correction=False)
    assert plain.estimates["tag"].mean == pytest.approx(mean) and plain.raw_estimates is None


def test_tag_beats_random_in_a_short_match():
    result = play_match("soko", ["tag", "random"], hands=800, seed=11)
    tag = result.estimates["tag"]
    assert tag.mean > 0 and tag.low > 0


def test_cli_writes_results_crosstable_heat_map_and_histories(tmp_path, capsys):
    cfg = parse_args(["--game", "follow_the_bitch", "--rule", "low_chicago=true", "--agents", "tag", "call",
                      "raise", "--hands", "30", "--players", "3", "--seed", "2", "--workers", "1",
                      "--out", str(tmp_path), "--name", "t", "--histories", "3", "--no-progress"])
    cfg.hands = 12  # the luck correction scores Follow the Bitch hands one by one at first: keep it short
    assert cfg.rules == {"low_chicago": True} and cfg.duplicate and cfg.luck_correction is None
    cfg.luck_correction = True  # on request in Follow the Bitch (off by default: slow there)
    main(cfg, argv=["python -m arena"])
    out = capsys.readouterr().out
    assert "Ranking against the field" in out and "Cross-table" in out
    folder = tmp_path / "t"
    data = json.loads((folder / "results.json").read_text())
    assert data["rules"]["low_chicago"] is True and data["hands"] == 12
    assert data["config"]["luck_correction"] and "raw" in data and "bb_per_100_raw" in data["matches"][0]
    assert [r["agent"] for r in data["ranking"]] and set(data["crosstable"]) == {"tag", "call", "raise"}
    lines = (folder / "crosstable.csv").read_text().splitlines()
    assert lines[0].startswith("agent,tag,call,raise,field") and len(lines) == 4
    assert (folder / "crosstable.png").stat().st_size > 1000
    history = (folder / "histories" / "tag_vs_call_vs_raise.txt").read_text()
    assert history.count("### Hand") == 3


@pytest.mark.parametrize("argv, words", [
    (["--agents", "tag", "tight"], "unknown agent 'tight'"),
    (["--agents", "equity:sample=3"], "unknown option 'sample'"),
    (["--rule", "low_chicgo=true"], "unknown rule 'low_chicgo'"),
    (["--rule", "low_chicago=maybe"], "true or false"),
])
def test_cli_rejects_bad_agents_and_rules_clearly(argv, words, capsys):
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert words in capsys.readouterr().err


def test_too_few_agents_for_the_table_is_a_clear_error():
    with pytest.raises(ValueError, match="3 players need at least 3 agents"):
        run_tournament(TournamentConfig(agents=["tag", "call"], players=3, hands=6, progress=False))


def test_repeated_specs_get_distinct_names():
    result = play_match("soko", ["random", "random"], hands=4, seed=0)
    assert set(result.estimates) == {"random", "random#2"}


def test_docstring_examples():
    import doctest

    import arena.match
    import arena.report
    import arena.stats

    for module in (arena.match, arena.report, arena.stats):
        assert not doctest.testmod(module).failed, module.__name__


def test_a_match_worker_dies_on_sigterm_whatever_handler_its_parent_had():
    """Pool.terminate ends the workers with SIGTERM; a forked worker that kept a parent's
    flag-setting handler (a server's, a library's) could block on the pool's queue forever."""
    import signal

    from arena import match
    from envs.engine.rules import get_rules

    flagged = []
    before = signal.signal(signal.SIGTERM, lambda *_: flagged.append(1))
    try:
        match._init_worker((get_rules("soko"), 2, {"call": "call", "random": "random"},
                            dict(seed=0, duplicate=True, histories=0, luck=False)))
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)
        match._WORKER = None
    # and a two-worker match under such a handler still finishes
    signal.signal(signal.SIGTERM, lambda *_: flagged.append(1))
    try:
        result = play_match("soko", ["call", "random"], hands=64, seed=1, workers=2)
        assert result.hands == 64
    finally:
        signal.signal(signal.SIGTERM, before)


def test_no_more_processes_than_chunks_to_play(monkeypatch):
    """--workers far above the work (a typo, a big machine's habit) starts one process per chunk
    of deals, not idle ones; the results are those of one worker."""
    import arena.match as match_module

    started = []
    real = match_module.mp.get_context

    def recording(method):
        ctx = real(method)

        class Recording:
            def Pool(self, processes, **kwargs):
                started.append(processes)
                return ctx.Pool(processes, **kwargs)

        return Recording()

    monkeypatch.setattr(match_module.mp, "get_context", recording)
    many = play_match("soko", ["call", "random"], hands=6, seed=3, workers=64)
    assert started == [3]   # 6 hands heads-up: 3 deal groups, one a chunk
    one = play_match("soko", ["call", "random"], hands=6, seed=3, workers=1)
    assert np.array_equal(many.group_results, one.group_results)
