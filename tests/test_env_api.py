"""PettingZoo conformance of soko_v0 and follow_the_bitch_v0: api_test and seed_test at 2, 3 and
the maximum number of players, with Low Chicago, and with every betting structure."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from envs import follow_the_bitch_v0, soko_v0
from envs.actions import num_actions

STRUCTURES = ("fixed_limit", "spread_limit", "pot_limit", "no_limit")

CONFIGS = [
    (soko_v0, {"num_players": 2}),
    (soko_v0, {"num_players": 3}),
    (soko_v0, {"num_players": 8}),
    (soko_v0, {"num_players": 3, "rules": "soko_nordic"}),
    (follow_the_bitch_v0, {"num_players": 2}),
    (follow_the_bitch_v0, {"num_players": 3}),
    (follow_the_bitch_v0, {"num_players": 7}),
    (follow_the_bitch_v0, {"num_players": 2, "low_chicago": True}),
    (follow_the_bitch_v0, {"num_players": 3, "rules": "follow_the_bitch_low_chicago"}),
    (follow_the_bitch_v0, {"num_players": 7, "low_chicago": True}),
] + [
    (module, {"num_players": n, "betting": betting, **extra})
    for module, extra in ((soko_v0, {}), (follow_the_bitch_v0, {"low_chicago": True}))
    for betting in STRUCTURES[1:]
    for n in (2, 3)
] + [
    # Short stacks: all-ins and side pots every few hands.
    (soko_v0, {"num_players": 4, "betting": "no_limit", "stacks": [12, 30, 7, 60]}),
    (follow_the_bitch_v0, {"num_players": 3, "betting": "pot_limit", "stacks": 20, "low_chicago": True}),
]


def config_id(config) -> str:
    module, kwargs = config
    return module.__name__.split(".")[-1] + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("config", CONFIGS, ids=[config_id(c) for c in CONFIGS])
def test_api_and_seed(config, engine):
    module, kwargs = config
    with warnings.catch_warnings():
        # PettingZoo warns when a terminal observation's action mask is all zeros: that is
        # the convention of its own card games (no legal move once the hand is over).
        warnings.simplefilter("ignore")
        api_test(module.env(engine=engine, **kwargs), num_cycles=60)
        seed_test(lambda: module.env(engine=engine, **kwargs), num_cycles=60)
        api_test(module.raw_env(engine=engine, **kwargs), num_cycles=20)


@pytest.mark.parametrize("module", [soko_v0, follow_the_bitch_v0])
def test_spaces_follow_the_rules(module, engine):
    env = module.env(engine=engine, num_players=3)
    rules = env.unwrapped.rules
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    for agent in env.possible_agents:
        assert env.action_space(agent).n == num_actions(rules) == 3
        box = env.observation_space(agent)["observation"]
        assert box.dtype == np.float32 and box.shape == (env.unwrapped.layout.size,)
        assert env.observation_space(agent)["action_mask"].dtype == np.int8
    wide = module.env(engine=engine, num_players=2, betting="no_limit")
    assert wide.action_space("player_0").n == 6
    assert str(wide.unwrapped) == module.__name__.split(".")[-1]


def test_observation_size_does_not_depend_on_the_table_size(engine):
    sizes = {soko_v0.env(engine=engine, num_players=n).unwrapped.layout.size for n in range(2, 9)}
    assert sizes == {606}
    sizes = {follow_the_bitch_v0.env(engine=engine, num_players=n, low_chicago=True).unwrapped.layout.size
             for n in range(2, 8)}
    assert sizes == {617}


def test_docstring_examples():
    import doctest

    import envs.follow_the_bitch_v0
    import envs.observation
    import envs.single_agent
    import envs.soko_v0
    import envs.stud_env

    for module in (envs.observation, envs.stud_env, envs.soko_v0, envs.follow_the_bitch_v0,
                   envs.single_agent):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def test_envs_pickle_and_copy(engine):
    import copy
    import pickle

    env = soko_v0.env(engine=engine, num_players=3, betting="no_limit")
    env.reset(seed=1)
    clone = pickle.loads(pickle.dumps(env))
    clone.reset(seed=1)
    assert clone.unwrapped.rules.betting == "no_limit" and clone.unwrapped.engine == engine
    assert clone.unwrapped.game.deck == env.unwrapped.game.deck
    # Like PettingZoo's classic envs (EzPickle), a copy is a new env with the same arguments.
    raw = follow_the_bitch_v0.raw_env(engine=engine, num_players=2, low_chicago=True)
    twin = copy.deepcopy(raw)
    raw.reset(seed=4)
    twin.reset(seed=4)
    for agent in ("player_0", "player_1"):
        assert np.array_equal(twin.observe(agent)["observation"], raw.observe(agent)["observation"])
    twin.step(1)
    raw.step(1)
    assert np.array_equal(twin.observe(twin.agent_selection)["observation"],
                          raw.observe(raw.agent_selection)["observation"])
