"""The batched training VecEnv (train/batched_vec.py) and the core pieces it plays with.

The tag opponent and the learner's action kinds come from the compiled core; here they are
held equal to the reference (``agents.heuristic.TagAgent``, the engine's log) on random states
of every preset, and the VecEnv's accounting is checked against the rules: chips conserved,
rewards equal to the learner's payoff, legal masks, reproducible seeds, and a short
MaskablePPO run on it.
"""

import numpy as np
import pytest

from agents.heuristic import BatchedTag, TagAgent
from envs.actions import action_mask, apply_action, random_action
from envs.batched import BatchedGame
from envs.engine.events import ACTION_KINDS
from envs.engine.game import Game
from envs.engine.rules import RULES, get_rules


def _lockstep(rules, num_players, hands, seed, *, short_stacks=False):
    """Random play on the reference and the core from the same decks: yields (games, core,
    live slots) before each step; the caller compares, then the step is played on both."""
    rng = np.random.default_rng(seed)
    cards = np.array([int(c) for c in rules.deck])
    decks = np.stack([rng.permutation(cards) for _ in range(hands)])
    buttons = rng.integers(num_players, size=hands)
    if short_stacks:
        stacks = rng.integers(1, 12 * rules.big_bet, size=(hands, num_players))
    else:
        stacks = np.full((hands, num_players), rules.stack)
    games = [Game(rules, num_players, stacks=stacks[i].tolist(), button=int(buttons[i]), deck=decks[i].tolist())
             for i in range(hands)]
    core = BatchedGame(rules, num_players, hands, auto_reset=False)
    core.reset(decks=decks, buttons=buttons, stacks=stacks)
    while True:
        live = [i for i, g in enumerate(games) if not g.is_over]
        if not live:
            return
        actions = np.full(hands, -1, dtype=np.int64)
        for i in live:
            actions[i] = random_action(action_mask(games[i]), rng)
        yield games, core, live, actions
        for i in live:
            apply_action(games[i], int(actions[i]))
        core.step(actions)


VARIANTS = [(r, p) for r in RULES.values() for p in sorted({r.min_players, min(4, r.max_players)})]
VARIANTS += [(RULES["soko"].replace(betting=b), 3) for b in ("spread_limit", "pot_limit", "no_limit")]
VARIANTS += [(RULES["follow_the_bitch_low_chicago"].replace(betting="no_limit", queens_wild=True), 3)]


@pytest.mark.parametrize("rules,players", VARIANTS, ids=lambda v: getattr(v, "name", str(v)))
def test_core_tag_is_the_reference_tag_agent(rules, players):
    tag, batched = TagAgent(), BatchedTag(rules)
    states = 0
    for short in (False, True):
        for games, core, live, _ in _lockstep(rules, players, 200, seed=players + 7 * short, short_stacks=short):
            got = batched.act(core, live)
            for k, i in enumerate(live):
                g = games[i]
                want = tag.act(g.view(g.current_player), action_mask(g))
                assert got[k] == want, f"{rules.name} hand {i}: core tag {got[k]}, reference {want}\n{g.history()}"
            states += len(live)
    assert states > 1000


@pytest.mark.parametrize("name", list(RULES))
def test_action_kinds_name_what_the_reference_logs(name):
    rules = RULES[name]
    players = min(3, rules.max_players)
    pending = None
    checked = 0
    for games, core, live, actions in _lockstep(rules, players, 80, seed=3, short_stacks=True):
        if pending is not None:  # the previous step has been played on the reference now
            for i, before, kind, street in pending:
                assert games[i].log[before].kind == ACTION_KINDS[kind]
                checked += 1
        kinds, streets = core.action_kinds(actions)
        assert (kinds[actions < 0] == -1).all()
        pending = [(i, len(games[i].log), kinds[i], streets[i]) for i in live]
        for i in live:
            assert streets[i] == games[i].street
    assert checked > 150

def test_tag_refuses_a_hand_with_nobody_to_act():
    core = BatchedGame("soko", 2, 2, auto_reset=False)
    core.reset(seeds=[0, 1])
    while not core.dones[0]:
        core.step(np.where(core.current_player >= 0, 1, -1))
    with pytest.raises(ValueError, match="nobody to act"):
        BatchedTag("soko").act(core, [0])
