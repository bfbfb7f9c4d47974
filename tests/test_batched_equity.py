"""The equity agent in the compiled core (``agents.equity.BatchedEquity``) and in the batched
training VecEnv.

The core's decision is held equal to the reference's, ``EquityAgent.decide`` with the same
key, on random states of every preset and player count (the same deals, the same float
equity bit for bit, the same bars and bet sizes); ``EquityAgent.act`` is ``decide`` with a key
from its generator; bad input is refused with a reason; and ``BatchedVecEnv`` plays equity
opponents reproducibly, with chips conserved.
"""

import numpy as np
import pytest

from agents.equity import KEY_LIMIT, BatchedEquity, EquityAgent
from envs.actions import CHECK_CALL, FIRST_BET, FOLD, action_mask
from envs.batched import BatchedGame
from envs.engine.equity import equity
from envs.engine.game import Game
from envs.engine.rules import get_rules
from tests.test_batched_vec import VARIANTS, _lockstep, _random_policy, _run, _trajectory

# (samples, raise_edge, call_margin): the default bars, and looser ones that bet and call more
SETTINGS = [(24, 0.3, 0.0), (16, 0.1, -0.05)]


@pytest.mark.parametrize("rules,players", VARIANTS, ids=lambda v: getattr(v, "name", str(v)))
def test_core_equity_is_the_reference_decide(rules, players):
    rng = np.random.default_rng(players)
    states, chosen = 0, set()
    for samples, raise_edge, call_margin in SETTINGS:
        agent = EquityAgent(samples=samples, raise_edge=raise_edge, call_margin=call_margin)
        batched = BatchedEquity(samples=samples, raise_edge=raise_edge, call_margin=call_margin)
        for short in (False, True):
            for games, core, live, _ in _lockstep(rules, players, 40, seed=samples + short,
                                                  short_stacks=short):
                keys = rng.integers(KEY_LIMIT, size=len(live))
                got = batched.act(core, live, keys)
                estimates = batched.estimates(core, live, keys)
                for k, i in enumerate(live):
                    g = games[i]
                    view = g.view(g.current_player)
                    want = agent.decide(view, action_mask(g), int(keys[k]))
                    assert got[k] == want, (f"{rules.name} hand {i} key {keys[k]}: core {got[k]}, "
                                            f"reference {want}\n{g.history()}")
                    assert estimates[k] == equity(view, samples, key=int(keys[k]))   # the same float
                    chosen.add(want)
                states += len(live)
    assert states > 500
    assert {FOLD, CHECK_CALL, FIRST_BET} <= chosen   # the states cover all three kinds of decision


def test_the_key_decides_the_estimate():
    g = BatchedGame("follow_the_bitch", 4, 8)
    g.reset(seeds=range(8))
    batched = BatchedEquity(samples=30)
    slots = np.arange(8)
    a = batched.estimates(g, slots, np.arange(8))
    np.testing.assert_array_equal(a, batched.estimates(g, slots, np.arange(8)))
    b = batched.estimates(g, slots, np.arange(8) + 100)
    assert (a != b).any()                                   # another key, other deals
    many = BatchedEquity(samples=4000).estimates(g, slots, np.arange(8))
    assert (np.abs(many - BatchedEquity(samples=4000).estimates(g, slots, np.arange(8) + 9)) < 0.05).all()


def test_act_is_decide_with_a_key_from_the_agents_generator():
    game = Game("soko", 3, seed=4)
    game.check_or_call()            # past the bring-in: fold, call and bets are offered
    view, mask = game.view(game.current_player), action_mask(game)
    assert mask.sum() > 1
    agent = EquityAgent(samples=50)
    agent.reset(11)
    first = agent.act(view, mask)
    key = int(np.random.default_rng(11).integers(KEY_LIMIT))
    assert first == agent.decide(view, mask, key)
    assert agent.last_equity == equity(view, 50, key=key)
    agent.reset(11)
    assert agent.act(view, mask) == first                   # reproducible by the seed


def test_a_forced_choice_draws_no_key():
    game = Game("soko", 2, seed=0)
    view = game.view(game.current_player)
    agent = EquityAgent(samples=50)
    agent.reset(3)
    forced = np.zeros_like(action_mask(game))
    forced[CHECK_CALL] = 1
    assert agent.act(view, forced) == CHECK_CALL
    assert agent.rng.integers(KEY_LIMIT) == np.random.default_rng(3).integers(KEY_LIMIT)   # untouched


def test_equity_takes_a_generator_or_a_key():
    view = Game("soko", 2, seed=0).view(0)
    with pytest.raises(ValueError, match="either rng or key"):
        equity(view, 10)
    with pytest.raises(ValueError, match="either rng or key"):
        equity(view, 10, np.random.default_rng(0), key=1)
    with pytest.raises(ValueError, match="key must be an int"):
        equity(view, 10, key=-1)
    with pytest.raises(ValueError, match="samples must be at least 1"):
        equity(view, 0, key=1)


def test_bad_input_is_refused_with_a_reason():
    g = BatchedGame("soko", 2, 4, auto_reset=False)
    g.reset(seeds=range(4))
    batched = BatchedEquity(samples=10)
    with pytest.raises(ValueError, match="one key per slot"):
        batched.act(g, [0, 1], [5])
    with pytest.raises(ValueError, match=r"keys are ints in \[0, 2\*\*63\)"):
        batched.act(g, [0], [-1])
    with pytest.raises(ValueError, match=r"keys are ints"):
        batched.act(g, [0], [0.5])
    with pytest.raises(ValueError, match="no hand 4 in a batch of 4"):
        batched.act(g, [4], [1])
    with pytest.raises(ValueError, match="no hand -1"):
        batched.act(g, [-1], [1])
    while not g.dones[0]:           # play hand 0 to its end: nobody is to act there
        g.step([CHECK_CALL, -1, -1, -1])
    with pytest.raises(ValueError, match="hand 0 has nobody to act"):
        batched.act(g, [0], [1])
    with pytest.raises(ValueError, match="samples must be at least 1"):
        BatchedEquity(samples=0)
    with pytest.raises(ValueError, match="raise_edge"):
        BatchedEquity(raise_edge=2.0)
    assert BatchedEquity.like(EquityAgent(samples=7, call_margin=0.1)).act(g, [1, 2], [1, 2]).shape == (2,)


# ---------------------------------------------------------------------------------------------
# In the training VecEnv

from train.batched_vec import BatchedVecEnv  # noqa: E402


@pytest.mark.parametrize("game,players", [("soko", 2), ("follow_the_bitch_low_chicago", 3)])
def test_a_vec_env_with_equity_opponents_conserves_chips(game, players):
    rules = get_rules(game)
    env = BatchedVecEnv(rules, players, 16, opponents=["random", EquityAgent(samples=30)], seed=1)
    finished = _run(env, _random_policy(np.random.default_rng(0)), 80)
    assert len(finished) > 80
    against_equity = 0
    for reward, info in finished:
        seat = info["learner_seat"]
        assert sum(info["payoffs"]) == 0
        assert reward * rules.big_bet == info["payoff"] == info["payoffs"][seat]
        against_equity += 1 in info["opponents"]
    assert against_equity > 20


def test_equity_opponents_replay_with_the_seed_and_play_their_keys():
    def play(seed, samples=30):
        return _trajectory(BatchedVecEnv("soko", 2, 8, opponents=[EquityAgent(samples=samples)], seed=seed))

    np.testing.assert_array_equal(play(5), play(5))
    assert not np.array_equal(play(5), play(6))
