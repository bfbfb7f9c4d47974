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


# ---------------------------------------------------------------------------------------------
# Action ids are whole numbers; the dead-step convention holds to the end of the hand


@pytest.mark.parametrize("engine", ["core", "reference"])
@pytest.mark.parametrize("action", [1.7, 1.0, "1", True, [1], np.float32(1.0), np.array([1])])
def test_a_non_integer_action_id_is_refused_and_changes_nothing(engine, action):
    raw = soko_v0.raw_env(num_players=2, engine=engine)
    raw.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    pot, events = raw.game.pot, len(raw.game.log)
    with pytest.raises(TypeError, match="an action id is a whole number"):
        raw.step(action)
    assert raw.agent_selection == "player_0" and raw.game.pot == pot and len(raw.game.log) == events
    raw.step(np.int64(1))  # NumPy integers are ids: seat 0 posts the bring-in
    raw.step(np.array(1))  # so is a 0-d integer array (Discrete.contains takes one): seat 1 calls
    assert raw.game.pot == pot + 4
    assert [e.kind for e in raw.game.log[events:events + 2]] == ["bring_in", "call"]


@pytest.mark.parametrize("engine", ["core", "reference"])
def test_steps_after_every_agent_is_done_warn_as_the_wrappers_do(engine, caplog):
    raw = soko_v0.raw_env(num_players=3, engine=engine)
    raw.reset(seed=4)
    while not raw.terminations[raw.agent_selection]:
        raw.step(0 if raw.observe(raw.agent_selection)["action_mask"][0] else 1)
    payoffs = raw.game.payoffs
    for _ in range(3):  # each dead agent takes its None step and leaves
        raw.step(None)
    assert raw.agents == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw.step(None)  # one more: nothing to do, a warning (not KeyError)
        raw.step(None)
    texts = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert any("step() called after all agents are terminated" in t for t in texts)
    assert raw.agents == [] and raw.game.payoffs == payoffs
    raw.reset(seed=5)  # and the next hand starts as usual
    assert raw.agents == raw.possible_agents


def test_both_engines_sit_behind_one_backend_interface():
    from envs.backends import CoreBackend, ReferenceBackend, make_backend

    def members(cls):
        return {name for name in dir(cls) if not name.startswith("_")}

    assert members(CoreBackend) == members(ReferenceBackend) == {
        "name", "reset", "step", "observe", "payoffs", "showdown", "game"}
    env = soko_v0.raw_env(num_players=2)
    with pytest.raises(ValueError, match="engine must be one of core, reference, not 'fast'"):
        make_backend("fast", env.rules, 2, stacks=None, encoder=env.encoder)
    for engine, cls in (("core", CoreBackend), ("reference", ReferenceBackend)):
        backend = make_backend(engine, env.rules, 2, stacks=None, encoder=env.encoder)
        assert type(backend) is cls and backend.name == engine and backend.game is None
        seat = backend.reset(np.random.default_rng(0), {"deck": "Ah 2c Kd 3c", "button": 0})
        assert seat == 0 and backend.observe(0)[1].tolist() == [0, 1, 1]  # bring in or complete, no fold
        assert backend.observe(1)[1].tolist() == [0, 0, 0]
        seat = backend.step(1)
        assert seat == 1 and backend.game.pot == 4 and backend.observe(1)[1].tolist() == [1, 1, 1]
        with pytest.raises(ValueError, match="not legal"):
            backend.step(7)
