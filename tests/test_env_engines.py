"""The two engines of the AEC envs play the same hands: ``engine="core"`` (the compiled core, the
default) and ``engine="reference"`` (the Python ``Game``) give, for the same seed and options,
the same agent to act, every agent's observation and mask, rewards, terminations, truncations
and infos at every step, over every variant the envs accept (``envs.differential.variants``:
each preset under each betting structure, and each rule option off its preset value) and every
table size; and the same refusal for an illegal id.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import follow_the_bitch_v0, soko_v0
from envs.actions import random_action
from envs.differential import variants


def module_for(rules):
    return follow_the_bitch_v0 if rules.follow_the_queen else soko_v0


def assert_same_state(core, ref, where: str) -> None:
    assert core.agent_selection == ref.agent_selection, where
    assert core.agents == ref.agents, where
    for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
        assert getattr(core, name) == getattr(ref, name), f"{where}: {name}"
    for agent in core.agents:
        a, b = core.observe(agent), ref.observe(agent)
        assert a["observation"].dtype == b["observation"].dtype == np.float32
        assert np.array_equal(a["observation"], b["observation"]), f"{where}: {agent}'s observation"
        assert a["action_mask"].dtype == b["action_mask"].dtype == np.int8
        assert np.array_equal(a["action_mask"], b["action_mask"]), f"{where}: {agent}'s mask"


def play_both(module, kwargs: dict, seed: int, hands: int, options=None) -> int:
    """``hands`` hands on both engines from one seed (reset without a seed after the first),
    random legal actions; the steps compared."""
    core = module.raw_env(engine="core", **kwargs)
    ref = module.raw_env(engine="reference", **kwargs)
    assert (core.engine, ref.engine) == ("core", "reference")
    rng = np.random.default_rng(seed)
    steps = 0
    for hand in range(hands):
        first = seed if hand == 0 else None
        core.reset(seed=first, options=options)
        ref.reset(seed=first, options=options)
        where = f"{kwargs} seed {seed} hand {hand}"
        assert_same_state(core, ref, where + " at the deal")
        while core.agents:
            agent = core.agent_selection
            if core.terminations[agent]:
                action = None
            else:
                action = random_action(core.observe(agent)["action_mask"], rng)
            core.step(action)
            ref.step(action)
            steps += 1
            assert_same_state(core, ref, f"{where} step {steps}")
        assert core.game.deck == ref.game.deck and core.game.payoffs == ref.game.payoffs
    return steps


VARIANTS = variants()


@pytest.mark.parametrize("rules", VARIANTS, ids=[f"{r.name}-{r.betting}" for r in VARIANTS])
def test_both_engines_play_the_same_hands(rules):
    module = module_for(rules)
    steps = 0
    for players in range(rules.min_players, rules.max_players + 1):
        steps += play_both(module, {"num_players": players, "rules": rules}, seed=players, hands=3)
        # Short stacks: all-ins and side pots (and hands decided by the antes).
        stacks = [int(s) for s in np.random.default_rng(players).integers(1, 12 * rules.big_bet, players)]
        steps += play_both(module, {"num_players": players, "rules": rules, "stacks": stacks},
                           seed=100 + players, hands=3)
    assert steps >= 12 * (rules.max_players - rules.min_players + 1)  # six hands, two steps or more each


@pytest.mark.parametrize("module, extra", [(soko_v0, {}), (follow_the_bitch_v0, {"low_chicago": True})])
def test_options_deal_the_same_hands_on_both_engines(module, extra):
    partial = {"deck": "As Kd 2c", "button": 1, "stacks": [30, 3, 60]}
    play_both(module, {"num_players": 3, **extra}, seed=4, hands=3, options=partial)
    full = [str(c) for c in module.raw_env(num_players=3, engine="reference", **extra).rules.deck][::-1]
    play_both(module, {"num_players": 3, **extra}, seed=5, hands=2, options={"deck": full})
    # Every seat all-in from the antes: the hand is over at the deal, a showdown.
    play_both(module, {"num_players": 3, **extra}, seed=6, hands=2, options={"stacks": [1, 1, 1]})
    ante_only = module.raw_env(num_players=3, **extra)
    ante_only.reset(seed=6, options={"stacks": [1, 1, 1]})
    assert all(ante_only.terminations.values()) and ante_only.infos["player_0"]["showdown"]


def test_soko_mini_deck_and_the_reward_in_chips():
    play_both(soko_v0, {"num_players": 2, "rules": "soko_mini", "reward": "chips"}, seed=3, hands=20)


def test_the_same_seed_is_the_same_deal_on_both_engines():
    for seed in range(20):
        envs = [soko_v0.raw_env(num_players=5, engine=e) for e in ("core", "reference")]
        for env in envs:
            env.reset(seed=seed)
        core, ref = (env.game for env in envs)
        assert core.deck == ref.deck and core.button == ref.button


def test_game_follows_the_core_once_read():
    env = follow_the_bitch_v0.raw_env(num_players=3, low_chicago=True)
    ref = follow_the_bitch_v0.raw_env(num_players=3, low_chicago=True, engine="reference")
    env.reset(seed=9)
    ref.reset(seed=9)
    assert env.engine == "core"
    for e in (env, ref):
        e.step(1)
    game = env.game  # rebuilt from the deal and the one action so far
    assert game.log == ref.game.log
    rng = np.random.default_rng(0)
    while not env.terminations[env.agent_selection]:
        assert game.current_player == int(env.agent_selection[-1])
        action = random_action(env.observe(env.agent_selection)["action_mask"], rng)
        for e in (env, ref):
            e.step(action)
    assert game.is_over and game.log == ref.game.log  # the Game read earlier was kept in step
    assert env.infos["player_0"]["payoffs"] == game.payoffs
    assert env.infos["player_0"]["showdown"] == bool(game.hand_values)
    env.reset(seed=10)
    assert env.game is not game and not env.game.is_over


@pytest.mark.parametrize("engine", ["core", "reference"])
def test_illegal_ids_give_the_reference_reason_on_both_engines(engine):
    raw = soko_v0.raw_env(num_players=2, engine=engine)
    raw.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    with pytest.raises(ValueError, match="bring-in"):
        raw.step(0)  # folding instead of the forced bring-in
    with pytest.raises(ValueError, match="not legal now: bet/raise ids are 2..2"):
        raw.step(3)
    with pytest.raises(ValueError, match="not legal"):
        raw.step(-1)
    with pytest.raises(ValueError, match="not legal"):
        raw.step(2**70)
    raw.step(1)  # the refusals changed nothing: seat 0 still posts the bring-in
    assert raw.agent_selection == "player_1" and raw.game.pot == 4


@pytest.mark.parametrize("module, extra", [(soko_v0, {"num_players": 3}),
                                           (follow_the_bitch_v0, {"num_players": 3, "low_chicago": True})])
def test_features_run_on_the_core_with_the_references_values(module, extra):
    from envs.batched import core_supports
    from envs.observation import FEATURES

    assert core_supports(()) and core_supports(list(FEATURES))
    with pytest.raises(ValueError, match="unknown observation feature"):
        core_supports(["hand_strength"])
    kwargs = {**extra, "observation_features": list(FEATURES)}
    assert module.raw_env(**kwargs).engine == "core"
    assert play_both(module, kwargs, seed=8, hands=4) > 8


def test_engine_keyword_is_checked():
    with pytest.raises(ValueError, match="engine must be one of core, reference"):
        soko_v0.env(engine="fast")


@pytest.mark.parametrize("engine", ["core", "reference"])
def test_bad_stacks_and_buttons_are_refused_at_reset_on_both_engines(engine):
    env = soko_v0.raw_env(num_players=3, stacks=[10, 0, 10], engine=engine)  # accepted here...
    with pytest.raises(ValueError, match="stack of seat 1 must be a whole number of chips >= 1"):
        env.reset(seed=0)  # ...refused when a hand is dealt, like the engine's Game
    env = soko_v0.raw_env(num_players=3, engine=engine)
    with pytest.raises(ValueError, match="stacks gives 2 stacks for 3 players"):
        env.reset(seed=0, options={"stacks": [5, 5]})
    with pytest.raises(ValueError, match="button must be a seat from 0 to 2, not 3"):
        env.reset(seed=0, options={"button": 3})
    with pytest.raises(ValueError, match="not in the soko_mini deck"):
        soko_v0.raw_env(rules="soko_mini", engine=engine).reset(options={"deck": "2c"})
