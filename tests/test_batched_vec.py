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
from envs.actions import CHECK_CALL, action_mask, apply_action, random_action
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
    games = [Game(rules, num_players, stacks=stacks[i].tolist(), button=int(buttons[i]),
                  deck=decks[i].tolist())
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
        for games, core, live, _ in _lockstep(rules, players, 200, seed=players + 7 * short,
                                              short_stacks=short):
            got = batched.act(core, live)
            for k, i in enumerate(live):
                g = games[i]
                want = tag.act(g.view(g.current_player), action_mask(g))
                assert got[k] == want, (f"{rules.name} hand {i}: core tag {got[k]}, reference {want}\n"
                                        f"{g.history()}")
            states += len(live)
    assert states > 1000


@pytest.mark.parametrize("rules,players", VARIANTS[::3], ids=lambda v: getattr(v, "name", str(v)))
def test_checkdown_payoffs_are_the_reference_hand_checked_down_with_its_deck(rules, players):
    import copy

    states = 0
    for short in (False, True):
        for games, core, live, _ in _lockstep(rules, players, 60, seed=players + 3 * short,
                                              short_stacks=short):
            got = core.checkdown_payoffs(live)
            for k, i in enumerate(live):
                g = copy.deepcopy(games[i])
                while not g.is_over:
                    apply_action(g, CHECK_CALL)
                assert tuple(got[k]) == g.payoffs, f"{rules.name} hand {i}\n{games[i].history()}"
            states += len(live)
    assert states > 300


@pytest.mark.parametrize("name,shifts", [("soko", (2, -3)), ("soko", (-3, 2)), ("follow_the_bitch", (4, 3))])
def test_core_tag_takes_the_shift_options(name, shifts):
    options = dict(raise_shift=shifts[0], call_shift=shifts[1])
    tag, batched, default = TagAgent(**options), BatchedTag(name, **options), TagAgent()
    states = differ = 0
    for games, core, live, _ in _lockstep(RULES[name], 2, 200, seed=5):
        got = batched.act(core, live)
        for k, i in enumerate(live):
            g = games[i]
            view, mask = g.view(g.current_player), action_mask(g)
            assert got[k] == tag.act(view, mask), f"{name} hand {i}\n{g.history()}"
            differ += tag.act(view, mask) != default.act(view, mask)
        states += len(live)
    assert states > 500 and differ > 20   # the shifted bars do change decisions


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


# ---------------------------------------------------------------------------------------------
# The VecEnv

from agents.heuristic import CallAgent, RaiseAgent  # noqa: E402
from envs.actions import FOLD  # noqa: E402
from envs.single_agent import SingleAgentEnv  # noqa: E402
from train.batched_vec import BatchedVecEnv, make_batched_vec_env  # noqa: E402

POOL = ["random", CallAgent(), RaiseAgent(), TagAgent()]


def _random_policy(rng):
    def act(masks):
        return np.argmax(rng.random(masks.shape) * masks, axis=1)
    return act


def _run(env, policy, steps):
    """Play ``steps`` VecEnv steps; returns the finished hands' (reward, info) and checks every
    step's masks and observations on the way."""
    obs = env.reset()
    finished = []
    for _ in range(steps):
        masks = np.stack(env.env_method("action_masks"))
        assert masks.dtype == bool and masks[:, CHECK_CALL].all()
        before = obs.copy()
        obs, rewards, dones, infos = env.step(policy(masks))
        for i in np.flatnonzero(dones):   # the learner's observation at its last decision
            np.testing.assert_array_equal(infos[i]["terminal_observation"], before[i])
        base = env.unwrapped if hasattr(env, "unwrapped") else env
        for i in range(0, base.num_envs, max(1, base.num_envs // 4)):   # the learner's own view
            np.testing.assert_array_equal(obs[i], base.game.observe(i, int(base.learner_seat[i])))
        assert (base.game.current_player == base.learner_seat).all()
        assert (rewards[~dones] == 0).all()
        finished += [(float(rewards[i]), infos[i]) for i in np.flatnonzero(dones)]
    return finished


@pytest.mark.parametrize("game,players,rules", [("soko", 2, {}), ("soko", 4, {"betting": "no_limit"}),
                                                ("follow_the_bitch_low_chicago", 3, {})])
def test_rewards_are_the_learners_payoff_and_chips_are_conserved(game, players, rules):
    rules = get_rules(game, **rules)
    env = BatchedVecEnv(rules, players, 32, opponents=POOL, seed=1)
    finished = _run(env, _random_policy(np.random.default_rng(0)), 150)
    assert len(finished) > 200
    seats = set()
    for reward, info in finished:
        seat = info["learner_seat"]
        seats.add(seat)
        assert sum(info["payoffs"]) == 0                      # chips are conserved
        assert reward * rules.big_bet == info["payoff"] == info["payoffs"][seat]
        assert info["opponents"][seat] is None and all(o is not None for s, o in enumerate(info["opponents"])
                                                        if s != seat)
        assert info["terminal_observation"].shape == env.observation_space.shape
        assert info["TimeLimit.truncated"] is False
        assert sum(info["actions"].values()) >= 1 and info["illegal_actions"] == 0
        if info["folded"]:
            assert info["actions"]["fold"] == 1 and not info["learner_showdown"]
    assert seats == set(range(players))


def test_against_call_opponents_a_calling_learner_shows_down_every_hand():
    env = BatchedVecEnv("soko", 3, 16, opponents=[CallAgent()], seed=2)
    finished = _run(env, lambda masks: np.full(len(masks), CHECK_CALL), 100)
    assert len(finished) > 100
    for reward, info in finished:
        assert info["showdown"] and info["learner_showdown"] and not info["folded"]
        assert info["actions"]["fold"] == info["actions"]["bet"] == info["actions"]["raise"] == 0
        # the learner's chips are exactly what the other seats lost between them
        assert info["payoff"] == -sum(p for s, p in enumerate(info["payoffs"]) if s != info["learner_seat"])


def test_a_raise_opponent_raises_whenever_it_may():
    env = BatchedVecEnv("soko", 2, 16, opponents=[RaiseAgent()], seed=3)
    finished = _run(env, lambda masks: np.full(len(masks), CHECK_CALL), 60)
    calls = sum(info["actions"]["call"] for _, info in finished)
    bets = sum(info["actions"]["bet"] + info["actions"]["raise"] + info["actions"]["complete"]
               for _, info in finished)
    assert calls > len(finished) and bets == 0   # the learner only ever calls the maniac's bets


def test_opponents_are_drawn_by_weight():
    env = BatchedVecEnv("soko", 2, 64, opponents=[CallAgent(), RaiseAgent()], opponent_weights=[1, 3], seed=4)
    finished = _run(env, _random_policy(np.random.default_rng(1)), 100)
    drawn = np.array([next(o for o in info["opponents"] if o is not None) for _, info in finished])
    assert len(drawn) > 1000
    assert abs(drawn.mean() - 0.75) < 0.05



@pytest.mark.parametrize("same_table", [0.0, 0.5])
def test_a_share_of_six_seat_hands_seats_a_table_of_copies(same_table):
    env = BatchedVecEnv("soko", 6, 64, opponents=[CallAgent(), RaiseAgent(), TagAgent()],
                        opponent_weights=[1, 3, 2], seed=4, same_table=same_table)
    finished = _run(env, _random_policy(np.random.default_rng(1)), 60)
    tables = [[o for o in info["opponents"] if o is not None] for _, info in finished]
    assert len(tables) > 500 and all(len(t) == 5 for t in tables)
    copies = np.mean([len(set(t)) == 1 for t in tables])
    chance = sum(w ** 5 for w in (1 / 6, 3 / 6, 2 / 6))        # five independent draws alike
    assert abs(copies - (same_table + (1 - same_table) * chance)) < 0.06
    # Either way every seat draws by the pool's weights.
    seats = np.array(tables).ravel()
    assert abs(np.mean(seats == 1) - 0.5) < 0.05 and abs(np.mean(seats == 2) - 1 / 3) < 0.05


def test_a_table_share_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="same_table"):
        BatchedVecEnv("soko", 6, 4, opponents=[CallAgent()], same_table=1.5)


@pytest.mark.parametrize("game,players", [("soko", 2), ("follow_the_bitch", 3)])
def test_the_checkdown_baseline_shapes_rewards_only(game, players):
    """With ppo.checkdown_baseline c the learner sees the same hands and observations; each step
    earns c times the change of its check-down payoff, so a hand's rewards sum to its payoff
    minus c times the check-down payoff at its first decision; infos keep the payoff."""
    rules = get_rules(game)
    plain = BatchedVecEnv(rules, players, 32, opponents=POOL, seed=5)
    shaped = BatchedVecEnv(rules, players, 32, opponents=POOL, seed=5, checkdown_baseline=0.5)
    pick = _random_policy(np.random.default_rng(2))
    obs_plain, obs = plain.reset(), shaped.reset()
    rows = np.arange(32)

    def potential():
        return 0.5 * shaped.game.checkdown_payoffs()[rows, shaped.learner_seat] / rules.big_bet

    first, before, total, hands, moved = potential(), potential(), np.zeros(32), 0, 0
    for _ in range(120):
        np.testing.assert_array_equal(obs, obs_plain)
        actions = pick(shaped.action_masks())
        obs_plain, rewards_plain, dones_plain, _ = plain.step(actions)
        obs, rewards, dones, infos = shaped.step(actions)
        np.testing.assert_array_equal(dones, dones_plain)
        now = potential()
        going = ~dones
        np.testing.assert_allclose(rewards[going], (now - before)[going], atol=1e-6)
        moved += int((rewards[going] != 0).sum())
        total += rewards
        for i in np.flatnonzero(dones):
            assert infos[i]["hand_reward"] == rewards_plain[i]
            assert total[i] == pytest.approx(rewards_plain[i] - first[i], abs=1e-5)
            total[i], first[i] = 0.0, now[i]
            hands += 1
        before = now
    assert hands > 300 and moved > 100   # (bets and raises between decisions move the potential)


def test_a_checkdown_baseline_outside_zero_to_two_is_refused():
    with pytest.raises(ValueError, match="checkdown_baseline"):
        BatchedVecEnv("soko", 2, 4, opponents=[CallAgent()], checkdown_baseline=-0.5)


def _trajectory(env, steps: int = 40) -> np.ndarray:
    """Observations, rewards and dones of ``steps`` steps of random legal actions (a fixed
    generator), one row per slot: equal arrays mean the env replayed the same hands."""
    rng = np.random.default_rng(0)
    out = [env.reset()]
    for _ in range(steps):
        masks = env.action_masks()
        obs, rewards, dones, _ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        out += [obs, rewards[:, None], dones[:, None]]
    return np.concatenate([o.reshape(len(o), -1) for o in out], axis=1)


def test_the_same_seed_replays_the_same_hands():
    def play(seed):
        return _trajectory(BatchedVecEnv("follow_the_bitch", 3, 8, opponents=POOL,
                                         opponent_weights=[1, 1, 1, 2], seed=seed))

    np.testing.assert_array_equal(play(5), play(5))
    assert not np.array_equal(play(5), play(6))
    # Two tag entries with different bars: each plays its own (the same hands, other actions).
    tight = _trajectory(BatchedVecEnv("soko", 2, 8, opponents=[TagAgent(raise_shift=6, call_shift=6)],
                                      seed=5))
    loose = _trajectory(BatchedVecEnv("soko", 2, 8, opponents=[TagAgent(raise_shift=-6, call_shift=-6)],
                                      seed=5))
    assert not np.array_equal(tight, loose)
    env = BatchedVecEnv("soko", 2, 4, seed=0)
    env.seed(5)
    assert env.seed() == [5] * 4


def _stats(finished):
    rewards = np.array([r for r, _ in finished])
    return {
        "reward": (rewards.mean(), rewards.std() / np.sqrt(len(rewards))),
        **{key: _share([bool(info[key]) for _, info in finished])
           for key in ("folded", "learner_showdown", "vpip")},
        "decisions": _mean([sum(info["actions"].values()) for _, info in finished]),
    }


def _share(values):
    p = float(np.mean(values))
    return p, np.sqrt(max(p * (1 - p), 1e-4) / len(values))


def _mean(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std() / np.sqrt(len(values))


def test_hands_are_distributed_as_in_the_single_agent_env():
    """Random learner, the same pool: the batched env's hands look like SingleAgentEnv's
    (mean reward, fold, showdown and VPIP rates, decisions per hand) within 4.5 standard errors."""
    rng = np.random.default_rng(0)
    batched = _stats(_run(BatchedVecEnv("soko", 2, 200, opponents=POOL, opponent_weights=[1, 1, 1, 2],
                                        seed=7),
                          _random_policy(rng), 60))
    env = SingleAgentEnv("soko", num_players=2, opponents=[POOL[0], CallAgent(), RaiseAgent(), TagAgent()],
                         opponent_weights=[1, 1, 1, 2])
    finished = []
    obs, info = env.reset(seed=7)
    while len(finished) < 3000:
        mask = env.action_masks()
        action = int(np.argmax(rng.random(mask.shape) * mask))
        obs, reward, done, _, info = env.step(action)
        if done:
            finished.append((reward, info))
            env.reset()
    single = _stats(finished)
    for key, (mean, se) in batched.items():
        other, other_se = single[key]
        assert abs(mean - other) < 4.5 * np.hypot(se, other_se), (key, mean, other)


def test_trained_opponents_play_one_batch_as_they_play_one_hand():
    """A PPOAgent's batched choice is its per-observation choice (deterministic and sampled)."""
    from agents.trained import NumpyActor, PPOAgent

    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(16, 30)).astype(np.float32), rng.normal(size=16).astype(np.float32), "Tanh"),
              (rng.normal(size=(5, 16)).astype(np.float32), rng.normal(size=5).astype(np.float32), None)]
    obs = rng.random((40, 30), dtype=np.float32)
    masks = rng.random((40, 5)) < 0.6
    masks[:, CHECK_CALL] = True
    for deterministic in (True, False):
        agent = PPOAgent(path="test", deterministic=deterministic)
        agent._actor = NumpyActor(layers)
        uniforms = rng.random(40)
        batch = agent.choose_batch(obs, masks, None if deterministic else uniforms)

        class Fixed:  # replays the same uniform draws one at a time
            def __init__(self):
                self.values = iter(uniforms)

            def random(self):
                return next(self.values)

        agent._rng = Fixed()
        single = [agent.choose(o, m) for o, m in zip(obs, masks)]
        assert batch.tolist() == single
        assert masks[np.arange(40), batch].all()


def test_the_observation_features_are_written_for_the_learner():
    from envs.observation import FEATURES, build_layout

    env = BatchedVecEnv("soko", 3, 16, observation_features=tuple(FEATURES), opponents=POOL, seed=3)
    layout = build_layout("soko", FEATURES)
    assert env.observation_space.shape == (layout.size,)
    finished = _run(env, _random_policy(np.random.default_rng(1)), 40)  # the learner's own views
    assert len(finished) > 20
    obs = env.reset()
    wp = obs[:, layout.slice("win_probability")]
    assert ((wp > 0) & (wp < 1)).all() and (obs[:, layout.slice("hand_class")].sum(axis=1) == 1).all()


def test_refused_opponents_name_the_reason_and_every_agent_plays(tmp_path):
    from agents.equity import EquityAgent
    from train.config import ConfigError, load_config
    from train.ppo import training_env

    class Cautious(EquityAgent):   # a subclass may act otherwise: it plays hand by hand
        pass

    env = BatchedVecEnv("soko", 2, 2)
    env.set_opponents([Cautious()])
    assert env._forms == [None]
    with pytest.raises(ValueError, match="'tight' is not an agent"):
        env.set_opponents(["tight"])
    with pytest.raises(ValueError, match="weights"):
        env.set_opponents(["random"], [-1])
    env.set_opponents([EquityAgent(samples=10)])                           # equity has one now
    assert env._forms[0] is not None
    # The training env is the batched one for every config; the keys that chose another are
    # dropped from old run folders when they meant this one, and refused otherwise.
    assert isinstance(training_env(load_config()).unwrapped, BatchedVecEnv)
    assert isinstance(training_env(load_config("configs/soko_ppo.yaml")).unwrapped, BatchedVecEnv)
    assert load_config(overrides=["ppo.pipeline=auto", "ppo.vec_env=dummy"]) == load_config()
    with pytest.raises(ConfigError, match="ppo.pipeline 'single_agent' is no longer a choice"):
        load_config(overrides=["ppo.pipeline=single_agent"])
    with pytest.raises(ConfigError, match="ppo.vec_env 'subproc' is no longer a choice"):
        load_config(overrides=["ppo.vec_env=subproc"])


def test_a_smaller_pool_lets_the_hands_under_way_finish_with_their_opponents():
    """A pool that shrinks (entries of weight 0 are left out of a training pool) used to crash
    on the hands begun under the larger one: an index past the new pool's end."""
    old = ["random", CallAgent(), RaiseAgent(), TagAgent()]
    env = BatchedVecEnv("soko", 2, 16, opponents=old, seed=2)
    env.reset()
    needed = int(env.seat_opponents.max()) + 1
    assert needed >= 3
    env.set_opponents([CallAgent()])
    assert env._drawable == 1 and len(env.opponents) == needed
    assert all(env.opponents[i] is old[i] for i in range(1, needed))   # the earlier pool's entries
    for _ in range(40):
        masks = env.action_masks()
        env.step_async(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        env.step_wait()
    # Every hand dealt since then has the new pool's one entry in its opponent seats.
    seats = env.seat_opponents[env.seat_opponents >= 0]
    assert (seats == 0).all()


def test_a_ppo_opponent_with_other_observation_pieces_plays_hand_by_hand():
    """A model that reads other pieces than the env's core writes cannot take the core's
    observations: it plays on a reference copy of each hand, encoding its own (as it does in
    SingleAgentEnv), instead of being refused."""
    from envs.observation import build_layout

    rules = get_rules("soko")
    plain = build_layout(rules, ()).size
    batched: list = []
    agent = _recording_ppo(plain, BatchedGame("soko", 2, 1).num_actions, batched)
    agent._features = ()
    own: list = []
    choose = agent.choose

    def recorded(observation, mask):
        own.append(np.array(observation))
        return choose(observation, mask)

    agent.choose = recorded
    env = BatchedVecEnv("soko", 2, 4, observation_features=["hand_class"], opponents=[agent], seed=3)
    assert env._forms == [None] and env.observation_space.shape[0] > plain
    env.reset()
    for _ in range(20):
        masks = env.action_masks()
        env.step_async(np.array([int(np.flatnonzero(m)[-1]) for m in masks]))
        env.step_wait()
    assert not batched and len(own) > 10 and all(o.shape == (plain,) for o in own)


def test_a_short_maskable_ppo_run_learns_on_it():
    from sb3_contrib import MaskablePPO

    from train.callbacks import PokerStats
    from train.config import EnvConfig

    venv = make_batched_vec_env(EnvConfig(), n_envs=16, seed=0)
    venv.unwrapped.set_opponents(POOL)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=128, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})
    stats = PokerStats()
    model.learn(1024, callback=stats)
    assert model.num_timesteps == 1024
    assert len(model.ep_info_buffer) > 50                       # the monitor saw whole hands
    assert all(abs(e["r"]) <= 2 * get_rules("soko").stack / get_rules("soko").big_bet
               for e in model.ep_info_buffer)


def test_the_episode_monitor_gives_vec_monitors_infos():
    from stable_baselines3.common.vec_env import VecMonitor

    from train.vec import EpisodeMonitor

    envs = [monitor(BatchedVecEnv("soko", 2, 32, seed=5, opponents=POOL))
            for monitor in (VecMonitor, EpisodeMonitor)]
    for env in envs:
        env.reset()
    policy = _random_policy(np.random.default_rng(5))
    episodes = 0
    for _ in range(60):
        actions = policy(envs[0].unwrapped.action_masks())
        (obs, rewards, dones, infos), (obs2, rewards2, dones2, infos2) = (env.step(actions) for env in envs)
        np.testing.assert_array_equal(obs, obs2)
        np.testing.assert_array_equal(rewards, rewards2)
        np.testing.assert_array_equal(dones, dones2)
        assert len(infos) == len(infos2) == 32
        for info, info2 in zip(infos, infos2):
            assert info.keys() == info2.keys()
            if "episode" in info:
                episodes += 1
                assert {k: v for k, v in info["episode"].items() if k != "t"} == \
                    {k: v for k, v in info2["episode"].items() if k != "t"}
                assert type(info["episode"]["r"]) is type(info2["episode"]["r"])
                assert abs(info["episode"]["t"] - info2["episode"]["t"]) < 1.0
    assert episodes > 100 and envs[0].episode_count == envs[1].episode_count == episodes


def test_with_the_checkdown_baseline_the_episode_monitor_reports_the_hands_payoffs():
    from train.vec import EpisodeMonitor

    plain, shaped = (EpisodeMonitor(BatchedVecEnv("soko", 2, 32, seed=5, opponents=POOL,
                                                  checkdown_baseline=c))
                     for c in (0.0, 1.0))
    plain.reset(), shaped.reset()
    policy = _random_policy(np.random.default_rng(5))
    episodes = 0
    for _ in range(60):
        actions = policy(plain.unwrapped.action_masks())
        (_, rewards, dones, infos), (_, shaped_rewards, _, shaped_infos) = (plain.step(actions),
                                                                             shaped.step(actions))
        assert not np.array_equal(rewards, shaped_rewards)
        for i in np.flatnonzero(dones):
            assert shaped_infos[i]["episode"]["r"] == infos[i]["episode"]["r"] == rewards[i]
            assert shaped_infos[i]["hand_reward"] == rewards[i] and "hand_reward" not in infos[i]
            episodes += 1
    assert episodes > 100


def test_a_training_run_with_snapshots_and_a_hand_by_hand_opponent(tmp_path):
    from tests.test_train import smoke
    from train.ppo import main

    # The local best response to a card_planes snapshot has no batched form (the core runs plain
    # MLPs only): it plays hand by hand beside the batched opponents.
    cfg = smoke(tmp_path, "run.total_timesteps=512", "eval.every=0", "opponents.self_play.every=256",
                "ppo.features_extractor=card_planes", "opponents.self_play.lbr=0.5",
                "opponents.self_play.lbr_samples=4")
    run_dir = main(cfg, command=["python", "train/ppo.py"], progress=False)
    assert (run_dir / "final_model.zip").exists()
    assert len(list((run_dir / "snapshots").glob("snapshot_*.zip"))) >= 1   # snapshots joined the pool


def _recording_ppo(size, actions, seen, seed=0):
    """A PPOAgent on a small random network that records the observations it is given."""
    from agents.trained import NumpyActor, PPOAgent
    from envs.observation import FEATURES

    rng = np.random.default_rng(seed)
    agent = PPOAgent(path=f"ppo-test-{seed}", deterministic=False)
    agent._actor = NumpyActor([(rng.normal(size=(8, size)).astype(np.float32),
                                rng.normal(size=8).astype(np.float32), "Tanh"),
                               (rng.normal(size=(actions, 8)).astype(np.float32),
                                np.zeros(actions, np.float32), None)])
    agent._features = tuple(FEATURES)
    choose = agent.choose_batch

    def recorded(observations, masks, uniforms=None):
        seen.append(np.array(observations))
        return choose(observations, masks, uniforms)

    agent.choose_batch = recorded
    return agent


@pytest.mark.parametrize("players", [2, 3])
def test_the_learner_and_trained_opponents_see_what_they_saw_with_every_seat_observed(players):
    """Only the learner's and the PPO opponents' observations are written; theirs are those
    the env gives when it writes every seat's (same seeds, same actions), pool changes included."""
    from envs.observation import FEATURES, build_layout

    size = build_layout("soko", FEATURES).size
    runs = {}
    for every in (False, True):
        seen_a, seen_b = [], []
        ppo_a, ppo_b = _recording_ppo(size, 3, seen_a, 1), _recording_ppo(size, 3, seen_b, 2)
        env = BatchedVecEnv("soko", players, 32, observation_features=tuple(FEATURES), seed=5,
                            opponents=["random", TagAgent(), ppo_a], opponent_weights=[1, 1, 2],
                            observe_every_seat=every)
        rng = np.random.default_rng(9)
        obs = [env.reset()]
        rewards, terminals, skipped = [], [], 0
        for step in range(80):
            if step == 40:   # a new pool: the hands under way now play ppo_b at index 0
                             # (read by nobody before)
                env.set_opponents([ppo_b, CallAgent(), "random"], [2, 1, 1])
            masks = env.action_masks()
            o, r, d, infos = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
            obs.append(o)
            rewards.append(r)
            terminals += [infos[i]["terminal_observation"] for i in np.flatnonzero(d)]
            current = env.game.current_player   # the learner everywhere after a step: its row written
            assert (current == env.learner_seat).all()
            skipped += int((~env.game.observed_seats).sum())
        runs[every] = obs, rewards, terminals, seen_a, seen_b, skipped
    ((obs, rewards, terminals, seen_a, seen_b, skipped),
     (obs_all, rewards_all, terminals_all, *seen_all, none)) = runs[False], runs[True]
    np.testing.assert_array_equal(np.stack(obs), np.stack(obs_all))
    np.testing.assert_array_equal(np.stack(rewards), np.stack(rewards_all))
    np.testing.assert_array_equal(np.stack(terminals), np.stack(terminals_all))
    for mine, theirs in zip((seen_a, seen_b), seen_all):
        assert len(mine) == len(theirs) > 10
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)
            assert a.any(axis=1).all()   # written: a seat always sees its own cards
    assert skipped > 0 and none == 0   # some seats were left out, and none with every seat observed


def test_env_threads_change_nothing_but_the_speed():
    """The core's kept threads (ppo.env_threads) step the hands and make the tag and equity
    opponents' decisions; the hands, observations and rewards are those of one thread."""
    from agents.equity import EquityAgent

    def play(threads):
        env = BatchedVecEnv("soko", 2, 192, opponents=[TagAgent(), EquityAgent(samples=20), "random"],
                            observation_features=("hand_class", "win_probability"), seed=4, threads=threads)
        return _trajectory(env, steps=30)

    one = play(1)
    np.testing.assert_array_equal(play(2), one)
    np.testing.assert_array_equal(play(3), one)   # calls that need fewer threads than are kept
    with pytest.raises(ValueError, match="threads must be a whole number of at least 1, not 0"):
        BatchedGame("soko", 2, 4, threads=0)


def test_kept_threads_survive_a_fork_and_report_an_illegal_action():
    """A forked child (SB3's SubprocVecEnv, multiprocessing's fork) has none of its parent's
    threads: the core starts its own there instead of waiting for them."""
    import multiprocessing

    g = BatchedGame("soko", 2, 256, threads=2, observations=True)
    g.reset(seeds=range(256))
    g.step(np.argmax(g.action_mask, axis=1))
    child = multiprocessing.get_context("fork").Process(target=_step_a_while, args=(g,))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0
    bad = np.argmax(g.action_mask, axis=1)
    bad[200] = g.num_actions   # no such action, in the second thread's half
    with pytest.raises(ValueError, match="is not legal in hand 200"):
        g.step(bad)


def _step_a_while(g):
    for _ in range(20):
        g.step(np.argmax(g.action_mask, axis=1))


class _PythonTag(TagAgent):
    """tag as any other agent: no batched form, so the env plays it hand by hand."""


def test_an_agent_without_a_batched_form_plays_hand_by_hand_as_the_core_plays_it():
    """A TagAgent subclass plays on the reference copy of each hand; the core's tag plays the
    same decisions, so the env replays the same hands, actions and rewards either way, with
    the copies built at any point of a hand (tag acting first or after the learner)."""
    from agents.equity import EquityAgent

    for players in (2, 3):
        pool = [EquityAgent(samples=10), "random"]
        core = _trajectory(BatchedVecEnv("soko", players, 12, opponents=[TagAgent(), *pool], seed=3),
                           steps=60)
        env = BatchedVecEnv("soko", players, 12, opponents=[_PythonTag(), *pool], seed=3)
        np.testing.assert_array_equal(_trajectory(env, steps=60), core)
        assert env._copies and len(env._log) < 60   # copies made, the log pruned as hands end
    with pytest.raises(ValueError, match="is not an agent"):
        BatchedVecEnv("soko", 2, 4, opponents=[object()])


def test_local_best_response_trains_against_in_the_batched_env():
    """LBR (a stateful agent: the target's range, per hand) in the pool: each hand its own copy,
    and it beats a learner that always calls (over 10 bb/100), as it does in a match."""
    from arena.lbr import LBRAgent

    env = BatchedVecEnv("soko", 2, 16, opponents=[LBRAgent("call", samples=20)], seed=1)
    env.reset()
    total, hands = 0.0, 0
    for _ in range(120):
        _, rewards, dones, infos = env.step(np.full(16, CHECK_CALL))
        total += rewards.sum()
        hands += int(dones.sum())
        assert all(sum(info["payoffs"]) == 0 for info, done in zip(infos, dones) if done)
    assert hands > 100 and total / hands < -0.1   # LBR value-bets its good cards against a caller


def _solved_tables(tmp_path):
    """A best response (actions) and a strategy (probabilities) of soko_mini on 8 cards."""
    from arena.exact import best_response, build_tree, merge_best, save_table, uniform_strategy

    rules = get_rules("soko_mini", deck_ranks="KA")
    tree = build_tree(rules)
    target = uniform_strategy(tree)
    best = merge_best(tree, best_response(tree, target, 0)[1], best_response(tree, target, 1)[1])
    rng = np.random.default_rng(4)
    mixed = [rng.random(s.shape) for s in target]
    return rules, save_table(tree, tmp_path / "br.npz", actions=best), save_table(tree, tmp_path / "s.npz",
                                                                               probabilities=mixed)


def test_strategy_tables_play_every_slot_at_once_as_they_play_hand_by_hand(tmp_path):
    """A br: table decides for many slots from the core's hands and the game's action ids
    (agents.table.BatchedTable): the same hands, actions and rewards as the table played on a
    reference copy of each hand (a subclass that overrides act has no batched form); a cfr:
    table (probabilities) draws its own uniforms, so it plays the same distribution."""
    from agents.registry import make_agent
    from agents.table import BestResponseAgent

    rules, br, mixed = _solved_tables(tmp_path)

    class OnACopy(BestResponseAgent):
        def act(self, view, action_mask):
            return super().act(view, action_mask)

    batched, copy_ = make_agent(f"br:{br}"), OnACopy(path=str(br))
    assert batched.batched(rules) is not None and copy_.batched(rules) is None
    assert batched.batched(get_rules("soko")) is None     # another game's hands: not its table
    core = BatchedVecEnv(rules, 2, 16, opponents=[batched, "random"], seed=2)
    hand_by_hand = BatchedVecEnv(rules, 2, 16, opponents=[copy_, "random"], seed=2)
    np.testing.assert_array_equal(_trajectory(core, steps=80), _trajectory(hand_by_hand, steps=80))
    assert core._copies == {}                              # nothing played hand by hand
    # The mixed table's choices in one step: from its probabilities at each slot's spot.
    game = BatchedGame(rules, 2, 64, keep_betting=True)
    game.reset(seeds=np.arange(64))
    game.step(np.ones(64, dtype=np.int64))                 # everyone checks/calls (or posts)
    table = make_agent(f"cfr:{mixed}")
    picks = table.batched(rules).act_slots(game, np.arange(64), rng=np.random.default_rng(0))
    for slot, pick in enumerate(picks.tolist()):
        state = game.state(slot)
        seat = state["current_player"]
        node, entry = table._entry_at(game.betting(slot), state["button"], state["up_cards"],
                                      state["hole_cards"][seat][0])
        assert game.betting(slot) == (1,) and table._policy_at(node, entry, game.action_mask[slot])[pick] > 0


def test_a_table_decides_for_all_slots_at_once_as_slot_by_slot(tmp_path):
    # BatchedTable.act_slots (nodes, card indices and draws for every slot at once) against its
    # slot-by-slot form (TableAgent._entry_at on each slot's state), with the same uniforms, at
    # every decision of random play over both rounds: the same actions, for a table of actions
    # and one of probabilities. BatchedGame.cards and betting_ids are the state's and betting's.
    from agents.registry import make_agent

    rules, br, mixed = _solved_tables(tmp_path)
    game = BatchedGame(rules, 2, 48, keep_betting=True)
    game.reset(seeds=np.arange(48), buttons=np.arange(48) % 2)
    forms = [make_agent(f"br:{br}").batched(rules), make_agent(f"cfr:{mixed}").batched(rules)]
    rng = np.random.default_rng(5)
    rounds, kinds = set(), set()
    for step in range(60):
        slots = np.flatnonzero(game.current_player >= 0)
        buttons, hole, up = game.cards(slots)
        counts, ids = game.betting_ids(slots)
        for k, slot in enumerate(slots.tolist()):
            state = game.state(slot)
            assert buttons[k] == state["button"] and game.current_player[slot] == state["current_player"]
            for seat in (0, 1):
                assert [c for c in hole[k, seat] if c >= 0] == state["hole_cards"][seat]
                assert [c for c in up[k, seat] if c >= 0] == state["up_cards"][seat]
            assert tuple(ids[k, :counts[k]].tolist()) == game.betting(slot)
            rounds.add(len(state["up_cards"][0]))
        for form in forms:
            together = form.act_slots(game, slots, rng=np.random.default_rng(step))
            uniforms = np.random.default_rng(step).random(len(slots)) if form.table.probabilities else None
            one_by_one = form._act_each(game, slots, uniforms)
            np.testing.assert_array_equal(together, one_by_one)
            assert (game.action_mask[slots, together] == 1).all()
            kinds.add(len(set(together.tolist())))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in game.action_mask])
        game.step(np.where(game.current_player >= 0, actions, -1))
    assert rounds == {1, 2} and max(kinds) > 1       # both rounds, and more than one action chosen


def test_the_core_keeps_each_hands_action_ids():
    # BatchedGame.betting: the ids each hand took, a new hand starting empty; an illegal id in
    # one hand (left as it was) does not enter its betting, the others' ids do.
    with pytest.raises(ValueError, match="keep_betting=True"):
        BatchedGame("soko", 2, 3).betting(0)
    g = BatchedGame("soko", 2, 3, keep_betting=True)
    g.reset(seeds=[1, 2, 3])
    assert [g.betting(i) for i in range(3)] == [(), (), ()]
    g.step([1, 1, -1])
    assert [g.betting(i) for i in range(3)] == [(1,), (1,), ()]
    assert g.action_mask[0, FOLD] == 1                     # facing the bring-in
    g.step([FOLD, -1, 1])                                  # hand 0 ends and is dealt again
    assert g.dones[0] and g.betting(0) == () and g.betting(2) == (1,)
    illegal = 9
    with pytest.raises(ValueError, match="not legal in hand 1"):
        g.step([-1, illegal, 1])
    assert g.betting(1) == (1,) and g.betting(2) == (1, 1)
