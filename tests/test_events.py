"""The hand's log: typed records whose fields mean one thing, and the history they read as."""

from __future__ import annotations

import dataclasses
import random

import pytest

from envs.engine.events import (
    ACTION_KINDS,
    BET_KINDS,
    Action,
    Ante,
    Deal,
    End,
    EventKind,
    Show,
    StreetStart,
    Wild,
    Win,
    WinReason,
)
from envs.engine.game import Game
from envs.engine.rules import RULES
from tests.helpers import call_down, deal, play

RECORD = {EventKind.ANTE: Ante, EventKind.DEAL: Deal, EventKind.WILD: Wild,
          EventKind.STREET: StreetStart, EventKind.SHOW: Show, EventKind.WIN: Win,
          EventKind.END: End, **{k: Action for k in ACTION_KINDS}}


def test_a_scripted_hand_reads_as_its_history():
    # Soko heads-up, button 0 (passes: seat 1, seat 0). Seat 0 shows 3c and brings in; seat 1
    # completes to 4, seat 0 raises to 8, seat 1 calls; then both check to the showdown.
    g = Game("soko", 2, deck=deal(2, 0, {1: "Kd 9h 5c 6d 7h", 0: "Qs 3c 4s 8d Jh"}))
    play(g, "0:c 1:b4 0:r8 1:c /")
    call_down(g)
    lines = g.history().splitlines()
    assert lines[:12] == [
        "soko: 2 players, button seat 0, stacks 800 800",
        "Seat 1 antes 1",
        "Seat 0 antes 1",
        "Seat 1 is dealt Kd down",
        "Seat 0 is dealt Qs down",
        "Seat 1 is dealt 9h up",
        "Seat 0 is dealt 3c up",
        "*** Betting round 1 (bet size 4) ***",
        "Seat 0 brings in for 2",
        "Seat 1 completes to 4",
        "Seat 0 raises to 8",
        "Seat 1 calls 4",
    ]
    # Seat 1's K-9-7-6-5 beats seat 0's Q-J-8-4-3 (king high against queen high).
    assert lines[-4:] == ["Seat 1 shows Kd: King high",
                          "Seat 0 shows Qs: Queen high",
                          "Seat 1 wins 18 from the main pot (King high)",
                          "*** Hand over: showdown ***"]
    win = [e for e in g.log if e.kind == EventKind.WIN]
    assert win == [Win(EventKind.WIN, 1, 18, 0, WinReason.BEST_HAND, g.hand_values[1])]
    assert g.payoffs == (-9, 9)


@pytest.mark.parametrize("preset", list(RULES))
def test_every_record_has_the_fields_of_its_kind(preset):
    rules = dataclasses.replace(RULES[preset], betting="no_limit")
    rng = random.Random(preset)
    for hand in range(30):
        n = rng.randint(rules.min_players, rules.max_players)
        g = Game(rules, n, stacks=[rng.choice((6, 40, 800)) for _ in range(n)], seed=hand)
        while not g.is_over:
            p = g.current_player
            options = [g.check_or_call] + ([g.fold] if g.can_fold() else [])
            options += [lambda s=s: g.bet_or_raise(s) for s in g.raise_to_amounts()]
            before, street, stack = len(g.log), g.street, g.stacks[p]
            rng.choice(options)()
            act = g.log[before]
            assert type(act) is Action and act.seat == p
            assert act.amount == stack - (g.stacks[p] if g.payoffs is None else
                                          g.starting_stacks[p] - g.total_committed[p])
            if g.street == street and not g.is_over:
                # round_total: the seat's chips in this round after the action
                assert act.round_total == g.committed[p]
            assert act.all_in == (stack == act.amount and act.amount > 0)
        for e in g.log:
            assert type(e) is RECORD[e.kind], e
            text = e.describe()
            assert text and "None" not in text, e
            if e.kind in BET_KINDS:
                assert e.round_total > 0
            if e.kind == EventKind.WIN:
                assert 0 <= e.pot < max(1, len(g.pots))
                assert (e.value is not None) == (e.reason == WinReason.BEST_HAND)


def test_a_view_hides_other_seats_face_down_cards_in_its_log():
    g = Game("follow_the_bitch", 3, seed=5)
    for e in g.view(1).log:
        if e.kind == EventKind.DEAL:
            hidden = not e.up and e.seat != 1
            assert (e.card is None) == hidden
            assert "a card" in e.describe() if hidden else str(e.card) in e.describe()


def test_an_action_describes_only_actions():
    with pytest.raises(ValueError, match="not an action"):
        Action(EventKind.DEAL, 0).describe()
