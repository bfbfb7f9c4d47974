"""The single-agent view: Gymnasium/SB3 conformance, the learner's own reward, opponents,
swapping the pool under vectorized envs, and a short MaskablePPO run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from envs import SingleAgentEnv
from envs.actions import CHECK_CALL, FOLD, action_mask
from envs.engine.game import PlayerView
from tests.helpers import deal


def always_call(observation, mask):
    return CHECK_CALL


def always_raise(observation, mask):
    return int(np.flatnonzero(mask)[-1])


class Recorder:
    """An agent-style opponent: ``act(view, action_mask)``, re-seeded by ``reset(seed)``."""

    def __init__(self):
        self.views = []
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act(self, view, mask):
        self.views.append((view, mask.copy()))
        return FOLD if mask[FOLD] else CHECK_CALL


@pytest.mark.parametrize("kwargs", [
    {"game": "soko", "num_players": 2},
    {"game": "soko", "num_players": 3, "betting": "no_limit"},
    {"game": "follow_the_bitch", "num_players": 3, "low_chicago": True},
    {"game": "follow_the_bitch", "num_players": 2, "dict_observation": True},
])
def test_gymnasium_and_sb3_check_env(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym_check_env(SingleAgentEnv(**kwargs))
        sb3_check_env(SingleAgentEnv(**kwargs))


@pytest.mark.parametrize("game,extra", [("soko", {}), ("follow_the_bitch", {"low_chicago": True}),
                                        ("soko", {"betting": "pot_limit", "stacks": 60})])
def test_reward_is_exactly_the_learners_payoff(game, extra):
    env = SingleAgentEnv(game, num_players=3, **extra)
    rng = np.random.default_rng(0)
    seats = set()
    for hand in range(60):
        obs, info = env.reset(seed=hand)
        seat = info["learner_seat"]
        seats.add(seat)
        assert env.game.current_player == seat  # the opponents acted inside reset
        total = 0.0
        done = False
        while not done:
            mask = env.action_masks()
            assert mask.tolist() == action_mask(env.game).astype(bool).tolist()
            assert env.game.current_player == seat
            obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not truncated and env.observation_space.contains(obs)
            if not done:
                assert reward == 0.0
            total += reward
        assert env.game.is_over
        assert total == reward == env.game.payoffs[seat] / env.rules.big_bet
        assert info["payoff"] == env.game.payoffs[seat]
        assert not env.action_masks().any()
    assert seats == {0, 1, 2}  # drawn each hand


def test_learner_that_folds_still_gets_its_exact_payoff():
    env = SingleAgentEnv("soko", num_players=4, opponents=[always_raise], learner_seat=2)
    for hand in range(10):
        obs, info = env.reset(seed=hand)
        assert info["learner_seat"] == 2
        mask = env.action_masks()
        action = FOLD if mask[FOLD] else CHECK_CALL
        while True:
            obs, reward, done, _, info = env.step(action)
            if done:
                break
            mask = env.action_masks()
            action = FOLD if mask[FOLD] else CHECK_CALL
        assert reward == env.game.payoffs[2] / 8
        assert env.game.is_over  # the others played the hand out inside step()


def test_scripted_hand_through_the_single_agent_view():
    # Learner at seat 1 (Ah down, Kd up); the opponent at seat 0 shows the 3c and brings in.
    env = SingleAgentEnv("soko", num_players=2, opponents=[always_call], learner_seat=1, reward="chips")
    hands = {1: "Ah Kd | 9c | 9d | 2s", 0: "2c 3c | 4h | 8h | Jd"}
    obs, info = env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    assert env.game.log[-1].kind == "bring_in"  # the opponent already acted
    assert env.action_masks().tolist() == [True, True, True]
    p = env.layout.unpack(obs)
    assert np.flatnonzero(p["hole_cards"]).tolist() == [50]  # Ah
    obs, reward, done, _, info = env.step(2)  # complete to 4; the opponent calls
    assert not done and env.game.street == 1
    while not done:
        obs, reward, done, _, info = env.step(2 if env.action_masks()[2] else 1)
    assert reward == env.game.payoffs[1] > 0  # raw chips
    assert info["showdown"] and info["learner_showdown"] and not info["folded"]
    assert info["vpip"] and info["actions"]["complete"] == 1
    assert info["opponents"] == (0, None)


def test_illegal_learner_actions():
    env = SingleAgentEnv("soko", num_players=2, learner_seat=0, opponents=[always_call])
    env.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})  # seat 0 must bring in
    obs, reward, done, _, info = env.step(0)  # fold is illegal: played as check/call
    assert any(e.kind == "bring_in" and e.seat == 0 for e in env.game.log)
    assert not done and info["action_mask"].any()
    strict = SingleAgentEnv("soko", num_players=2, learner_seat=0, illegal_action="raise")
    strict.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    with pytest.raises(ValueError, match="not legal for the learner"):
        strict.step(0)
    while not done:
        obs, reward, done, _, info = env.step(0)
    assert info["illegal_actions"] == info["actions"]["check"] + 1  # every fold was a free check


def test_opponent_kinds_and_weights():
    recorder = Recorder()
    seen = []

    def policy(observation, mask):
        seen.append((observation.shape, observation.dtype, mask.tolist()))
        return CHECK_CALL

    env = SingleAgentEnv("follow_the_bitch", num_players=3, opponents=[recorder, policy],
                         opponent_weights=[1, 0])
    for hand in range(5):
        env.reset(seed=hand)
        done = False
        while not done:
            _, _, done, _, info = env.step(CHECK_CALL)
        assert info["opponents"].count(0) == 2
    assert recorder.views and not seen and len(recorder.seeds) == 5
    view, mask = recorder.views[0]
    assert isinstance(view, PlayerView) and view.current_player == view.seat
    env.set_opponents([recorder, policy], weights=[0, 1])
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, info = env.step(CHECK_CALL)
    assert seen and seen[0][:2] == ((env.layout.size,), np.float32)
    assert info["opponents"].count(1) == 2
    with pytest.raises(ValueError, match="opponent"):
        env.set_opponents(["randm"])
    with pytest.raises(ValueError, match="weights"):
        env.set_opponents([policy], weights=[1, 1])


class GameAgent(Recorder):
    """An agent that encodes the game itself: ``act_game`` is preferred over ``act``."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def act_game(self, game, seat, mask):
        assert game.current_player == seat
        self.calls.append(seat)
        return CHECK_CALL


def test_agents_are_reseeded_each_hand_and_act_game_is_preferred():
    agent = GameAgent()
    env = SingleAgentEnv("soko", num_players=3, opponents=[agent], learner_seat=0)
    for seed in (1, 1, 2):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, _ = env.step(CHECK_CALL)
    assert agent.calls and not agent.views
    assert len(agent.seeds) == 3  # one reset per hand (the agent plays both opponent seats)
    assert agent.seeds[0] == agent.seeds[1] != agent.seeds[2]  # drawn from the env's generator


def test_illegal_opponent_action_is_a_clear_error():
    env = SingleAgentEnv("soko", num_players=2, opponents=[lambda obs, mask: 5], learner_seat=1)
    with pytest.raises(ValueError, match="chose illegal action 5"):
        env.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})


def test_seeded_hands_replay_with_random_opponents():
    def episode(env, seed):
        env.reset(seed=seed)
        done = False
        while not done:
            a = int(np.flatnonzero(env.action_masks())[0])
            _, reward, done, _, _ = env.step(a)
        return env.game.history(), reward

    a = SingleAgentEnv("soko", num_players=5)
    b = SingleAgentEnv("soko", num_players=5)
    assert episode(a, 7) == episode(b, 7)


def test_set_opponents_under_vectorized_envs():
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    def make():
        return SingleAgentEnv("soko", num_players=3)

    for vec in (DummyVecEnv([make, make]), SubprocVecEnv([make, make], start_method="fork")):
        try:
            vec.env_method("set_opponents", [always_call, "random"], [1.0, 0.0])
            vec.seed(0)
            vec.reset()
            assert [len(p) for p in vec.get_attr("opponents")] == [2, 2]
            masks = np.stack(vec.env_method("action_masks"))
            assert masks.shape == (2, 3) and masks.dtype == bool
        finally:
            vec.close()


def test_short_maskable_ppo_learn():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    env = make_vec_env(lambda: SingleAgentEnv("follow_the_bitch", num_players=2, low_chicago=True),
                       n_envs=2, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=64)
    env.close()
    sub = make_vec_env(lambda: SingleAgentEnv("soko", num_players=3), n_envs=2, seed=1,
                       vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "fork"})
    try:
        model = MaskablePPO("MlpPolicy", sub, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                            policy_kwargs={"net_arch": [32]})
        model.learn(total_timesteps=64)
        obs = sub.reset()
        actions, _ = model.predict(obs, action_masks=np.stack(sub.env_method("action_masks")))
        assert actions.shape == (2,)
    finally:
        sub.close()


def test_single_agent_env_pickles_mid_hand():
    import copy
    import pickle

    env = SingleAgentEnv("follow_the_bitch", num_players=3, low_chicago=True)
    env.reset(seed=0)
    for twin in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        a, b = env.encoder.encode(env.game, env.seat), twin.encoder.encode(twin.game, twin.seat)
        assert np.array_equal(a, b)
        assert twin.game.history() == env.game.history()


def test_the_learner_s_action_id_must_be_a_whole_number():
    env = SingleAgentEnv("soko", num_players=2)
    env.reset(seed=0)
    for action in (1.7, "1", True):
        with pytest.raises(TypeError, match="an action id is a whole number"):
            env.step(action)
    obs, reward, terminated, truncated, info = env.step(np.int64(1))  # NumPy integers are ids
    assert info["learner_seat"] == env.seat
