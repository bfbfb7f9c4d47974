"""The table behind both screens (seeds, labels, wild cards, replays) and the terminal table
driven by scripted input."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

from arena.play.__main__ import main, parse_args
from arena.play.table import Table, TableConfig, default_opponent, replay_frames
from arena.play.terminal import parse_choice, play_terminal
from envs.engine.events import ACTION_KINDS, EventKind, WinReason

SOKO_DECK = "Ah 2c Kd 3c 7s 3d 8s 5h 9h Jc"  # see tests/test_play_server.py: seat 0 wins 19
# Follow the Bitch heads-up, button 0 (seat 1 dealt first): seat 1 shows Qh, seat 0 then 7c:
# sevens wild; on the next street seat 1's Qs ends them and seat 0's 5d makes fives wild.
FTB_DECK = "2c 3c 4c 6s Qh 7c 8d 9d Qs 5d Td Jd Kc Kh"


def table(deck=None, **cfg):
    cfg = {"game": "soko", "players": 2, "opponents": ("call",), "seed": 5} | cfg
    return Table(TableConfig(**cfg), deck_for_hand=(lambda k: deck) if deck else None)


def play_calls(t):
    """The person checks or calls to the end of the hand; the final state."""
    frames = t.play_agents()
    while not t.game.is_over:
        frames = t.act(1)
    return frames[-1]


def test_same_seed_same_table():
    a = table(opponents=("equity:samples=30",), players=3, seed=42)
    b = table(opponents=("equity:samples=30",), players=3, seed=42)
    for _ in range(3):
        assert play_calls(a) == play_calls(b)
        assert a.game.log == b.game.log
        a.next_hand()
        b.next_hand()
    c = table(opponents=("equity:samples=30",), players=3, seed=43)
    assert c.game.deck != a.history[0].game.deck


def test_refused_actions_change_nothing():
    t = table(SOKO_DECK)
    t.play_agents()
    before = t.state()
    for bad, why in [(0, "action 0 is not legal now; legal ids: [1, 2]"), (3, "action 3 is not legal now"),
                     ("1", "an action is an action id"), (True, "an action is an action id"),
                     (None, "an action is an action id")]:
        with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
            t.act(bad)
        assert t.state() == before
    with pytest.raises(ValueError, match="the hand is not over yet"):
        t.next_hand()


def test_action_labels_follow_the_betting():
    t = table(SOKO_DECK)
    t.play_agents()
    assert [(a["id"], a["label"], a["kind"]) for a in t.state()["actions"]] == [
        (1, "Bring in 2", "bring_in"), (2, "Complete to 4", "complete")]
    t = table(SOKO_DECK, betting="no_limit")
    t.play_agents()
    s = t.state()
    assert [a["label"] for a in s["actions"]] == ["Bring in 2", "Complete to 4", "Complete to 799 (all-in)"]
    s = t.act(2)[-1]  # complete to 4; the caller calls; betting round 2: the caller checks
    assert [a["label"] for a in s["actions"]] == ["Check", "Bet 8", "Bet 10", "Bet 795 (all-in)"]
    assert [a["amount"] for a in s["actions"][1:]] == list(t.game.raise_to_amounts())
    with pytest.raises(ValueError, match="spread_limit"):
        table(betting="table_stakes")


def test_follow_the_queen_is_shown_as_it_changes():
    t = table(FTB_DECK, game="follow_the_bitch")
    s = t.state()
    assert s["wild"] == {"rank": "7", "ranks": ["7"], "queen": "Qh", "card": "7c", "ended": None,
                         "ended_by": None}
    s = t.act(1)[-1]   # check; the caller checks: betting round 2 is dealt
    assert s["street"] == 1
    assert s["wild"] == {"rank": "5", "ranks": ["5"], "queen": "Qs", "card": "5d", "ended": "7",
                         "ended_by": "Qs"}
    assert s["seats"][0]["showing"] == "Pair of sevens"  # 7c with the wild 5d
    assert t.game.wild_rank == s["wild"]["rank"]


def test_low_chicago_candidate_and_winner():
    t = table(FTB_DECK, game="follow_the_bitch_low_chicago")
    assert t.state()["low_chicago"] == {"card": "6s", "winner": None}
    s = play_calls(t)
    chicago = [e.seat for e in t.game.log if e.kind == EventKind.WIN and e.reason == WinReason.LOW_CHICAGO]
    assert s["low_chicago"]["winner"] == (chicago[0] if chicago else None)
    assert sum(s["result"]["payoffs"]) == 0


def test_replay_frames_walk_the_hand():
    t = table(SOKO_DECK)
    final = play_calls(t)
    game = t.history[0].game
    mine = replay_frames(game, seat=0, names=t.names())
    actions = [e for e in game.log if e.kind in ACTION_KINDS]
    assert len(mine) == len(actions) + 1
    assert mine[-1]["result"] == final["result"] and mine[0]["seats"][1]["hole"] == [None]
    everything = replay_frames(game, seat=None)
    assert everything[0]["seats"][1]["hole"] == ["Ah"] and everything[0]["seats"][0]["hole"] == ["2c"]


def test_default_opponent_falls_back_to_equity():
    assert default_opponent("champion") in ("champion", "equity")
    assert default_opponent("no_such_agent") == "equity"
    assert default_opponent("tag") == "tag"


def test_coach_policy_is_reproducible():
    t = table(SOKO_DECK, coach="equity:samples=20")
    t.play_agents()
    a, b = t.coach_advice(), t.coach_advice()
    assert a == b and a["known"] and abs(sum(c["p"] for c in a["choices"]) - 1) < 1e-3


def test_parse_choice():
    choices = [{"id": 0, "kind": "fold"}, {"id": 1, "kind": "call"}, {"id": 2, "kind": "raise"}]
    assert [parse_choice(x, choices) for x in ("1", "2", "3", "f", "c", "call", "r", " raise ")] == [
        0, 1, 2, 0, 1, 1, 2, 2]
    assert [parse_choice(x, choices) for x in ("0", "4", "", "check", "x", "bet!")] == [None] * 6


def test_terminal_scripted_hand():
    t = table(SOKO_DECK)
    lines = iter(["x", "0", "5", "1", "b", "check", "2", "", "q"])
    out = io.StringIO()
    played = play_terminal(t, input_fn=lambda prompt: next(lines), out=out, ascii_only=True)
    text = out.getvalue()
    assert played == 1
    assert text.count("is not a legal action here") == 3   # x, 0, 5: asked again each time
    assert "Your action: 1) Bring in 2  2) Complete to 4" in text
    assert "down [##]" in text and "down [2c]" in text and "up [Kd]" in text
    assert "You win 38 from the main pot: Pair of threes" in text
    assert "You: +19 chips (+2.375 BB). Running result: 2.375 BB over 1 hand." in text
    assert t.hand_number == 1 and text.rstrip().endswith("Bye.")


def test_terminal_stops_at_end_of_input():
    t = table(SOKO_DECK)
    out = io.StringIO()

    def eof(prompt):
        raise EOFError

    assert play_terminal(t, input_fn=eof, out=out) == 0
    assert out.getvalue().rstrip().endswith("Bye.")


def test_bad_arguments_exit_2(capsys):
    assert main(parse_args(["--opponent", "tight"])) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: unknown agent 'tight'")
    assert main(parse_args(["--players", "9"])) == 2
    with pytest.raises(SystemExit) as e:
        parse_args(["--game", "holdem"])
    assert e.value.code == 2


def test_command_line_plays_a_hand():
    command = [sys.executable, "-m", "arena.play", "--opponent", "call", "--seed", "3", "--hands", "1",
               "--ascii"]
    r = subprocess.run(command, check=False, input="c\n" * 30, capture_output=True, text=True, timeout=120,
                       cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    assert "*** Hand over" in r.stdout and "Running result" in r.stdout


def test_a_random_seed_is_never_shown():
    """With the seed anyone could deal every hidden card: a random one stays on the server."""
    t = table(seed=None)
    assert t.seed is not None and t.public_seed is None
    assert t.state()["seed"] is None and str(t.seed) not in str(play_calls(t))
    assert table(seed=7).state()["seed"] == 7


def test_the_web_table_on_a_port_in_use_is_one_line_before_its_address(capsys):
    """Another program listens on the port: one line and exit code 2, and the table's address
    is not printed (it was, before uvicorn's own error and exit code 3)."""
    import socket

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        assert main(parse_args(["--web", "--port", str(port)])) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"error: cannot listen on 127.0.0.1:{port}: the port is in use (another "
                                 "table or program listens there); choose another --port\n")


@pytest.mark.parametrize("argv, message", [
    (["--hands", "0"], "--hands must be at least 1, not 0"),
    (["--web", "--table-timeout", "0"], "--table-timeout must be positive, not 0"),
    (["--web", "--default-opponent", "bogus"], "--default-opponent bogus: unknown agent; valid agents: "),
    (["--game", "holdem"], "argument --game: invalid choice: 'holdem'"),
])
def test_bad_options_are_one_line(argv, message, capsys):
    """A given default opponent is checked, never swapped for equity (only the built-in default,
    champion, falls back where no champion is installed)."""
    with pytest.raises(SystemExit) as info:
        parse_args(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"python -m arena.play: error: {message}")
