"""The one class for trained models, agents.trained.PPOAgent: its NumPy forward pass against
sb3's torch policy, its choices against what the two classes it replaced did (``model.predict``
for ``ppo:`` agents, the seeded NumPy draw of the training snapshots), and its place in the
training env."""

import pickle

import numpy as np
import pytest

from agents.trained import NumpyActor, PPOAgent, TorchActor
from envs.actions import action_mask, apply_action, choose_action, random_action
from envs.engine.game import Game
from envs.observation import ObservationEncoder

torch = pytest.importorskip("torch")


def _model(tmp_path_factory, name: str, **policy_kwargs):
    """A Soko MaskablePPO model with weights scattered far from their small initial values, so
    the policy is far from uniform and argmax and sampling are tested on real differences."""
    from sb3_contrib import MaskablePPO

    from envs.single_agent import SingleAgentEnv

    model = MaskablePPO("MlpPolicy", SingleAgentEnv("soko", num_players=3), n_steps=64, batch_size=32,
                        seed=0, device="cpu", policy_kwargs=policy_kwargs)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    path = tmp_path_factory.mktemp(name) / "model.zip"
    model.save(str(path))
    return model, path


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return _model(tmp_path_factory, "mlp", net_arch=[32, 32])


@pytest.fixture(scope="module")
def relu(tmp_path_factory):
    return _model(tmp_path_factory, "relu", net_arch=[16], activation_fn=torch.nn.ReLU)


@pytest.fixture(scope="module")
def elu(tmp_path_factory):
    """An activation the NumPy forward pass does not know: torch runs it."""
    return _model(tmp_path_factory, "elu", net_arch=[16], activation_fn=torch.nn.ELU)


def spots(count: int, seed: int = 0):
    """(observation, mask) pairs from random Soko hands at 2-5 seats, plus random vectors."""
    rng = np.random.default_rng(seed)
    out = []
    encoder = ObservationEncoder("soko")
    while len(out) < count:
        n = int(rng.integers(2, 6))
        game = Game("soko", n, seed=int(rng.integers(2 ** 31)))
        while not game.is_over:
            mask = action_mask(game)
            out.append((encoder.encode(game, game.current_player).copy(), mask.astype(bool)))
            apply_action(game, random_action(mask, rng))
    for _ in range(count // 4):
        mask = rng.random(len(out[0][1])) < 0.5
        mask[1] = True
        out.append((rng.random(len(out[0][0]), dtype=np.float32), mask))
    return out[:count + count // 4]


def torch_probs(model, obs, mask) -> np.ndarray:
    """sb3's own masked distribution (what ``model.predict`` samples from)."""
    with torch.no_grad():
        obs_t, _ = model.policy.obs_to_tensor(obs)
        return model.policy.get_distribution(obs_t, action_masks=mask[None]).distribution.probs[0].numpy()


@pytest.mark.parametrize("which", ["mlp", "relu", "elu"])
def test_probabilities_are_sb3s_to_1e_5(which, request):
    model, path = request.getfixturevalue(which)
    # ELU is no network this project trains: only MaskablePPO.load (the flag) builds it.
    agent = PPOAgent(path=str(path), deterministic=False, trust_pickled_code=which == "elu")
    assert isinstance(agent.actor, TorchActor if which == "elu" else NumpyActor)
    assert agent.obs_size == model.observation_space.shape[0]
    for obs, mask in spots(400):
        probs = agent.probabilities(obs, mask)
        np.testing.assert_allclose(probs, torch_probs(model, obs, mask), atol=1e-5, rtol=0)
        assert probs[~mask].sum() == 0 and abs(probs.sum() - 1) < 1e-12


def test_a_network_outside_the_whitelist_needs_the_flag(elu):
    """Without trust_pickled_code an SB3 zip is built from the whitelist only: ELU is refused
    with a sentence that names it, before any play."""
    _, path = elu
    with pytest.raises(ValueError, match="ELU.*not one this project builds"):
        PPOAgent(path=str(path)).actor


def test_numpy_and_torch_forward_passes_agree(mlp):
    """The same network through both forward passes: the same probabilities and choices."""
    model, path = mlp
    fast = PPOAgent(path=str(path))
    slow = PPOAgent(path=str(path))
    slow._actor = TorchActor(model.policy)
    assert isinstance(fast.actor, NumpyActor)
    for obs, mask in spots(400, seed=1):
        np.testing.assert_allclose(fast.probabilities(obs, mask), slow.probabilities(obs, mask),
                                   atol=1e-5, rtol=0)
        assert fast.choose(obs, mask) == slow.choose(obs, mask)


@pytest.mark.parametrize("which", ["mlp", "relu", "elu"])
@pytest.mark.parametrize("deterministic", [False, True])
def test_logit_columns_give_the_rows_probabilities(which, deterministic, request):
    # The exact solver's layout (arena/exact.py): spots as columns of the first layer's linear
    # part plus its bias, the legal actions' logits only, the softmax (or argmax) down each
    # column: what the row layout gives (probabilities_from_logits, the solver's path before;
    # PPOAgent.probabilities for a sampling agent).
    model, path = request.getfixturevalue(which)
    agent = PPOAgent(path=str(path), deterministic=deterministic, trust_pickled_code=which == "elu")
    actor = agent.actor
    rows = spots(300, seed=3)
    for legal in ([1, 2], [0, 1, 2], [1]):
        mask = np.zeros(len(rows[0][1]), dtype=bool)
        mask[legal] = True
        obs = np.stack([o for o, _ in rows])
        values = np.ascontiguousarray((actor.linear_input(obs) + actor.input_bias).T)
        probs = agent.probabilities_from_logit_columns(actor.logit_columns(values, legal))
        assert probs.shape == (len(legal), len(rows))
        expected = agent.probabilities_from_logits(actor.logits_batch(obs), mask)
        if not deterministic:
            np.testing.assert_allclose(expected, np.stack([agent.probabilities(o, mask) for o, _ in rows]),
                                       atol=1e-6, rtol=0)
        if deterministic:   # argmax: ties are not expected between random float logits
            np.testing.assert_array_equal(probs.T, expected[:, legal])
        else:
            np.testing.assert_allclose(probs.T, expected[:, legal], atol=1e-6, rtol=0)
        assert np.allclose(probs.sum(axis=0), 1)
        assert len(legal) == 1 or probs.std(axis=1).max() > 0.01   # not constants compared


@pytest.mark.parametrize("which", ["mlp", "elu"])
def test_deterministic_play_is_model_predict(which, request):
    """As the old ``ppo:`` agent and the deterministic snapshots: the most likely legal action."""
    model, path = request.getfixturevalue(which)
    agent = PPOAgent(path=str(path), trust_pickled_code=which == "elu")
    for obs, mask in spots(300, seed=2):
        expected, _ = model.predict(obs, deterministic=True, action_masks=mask)
        assert agent.choose(obs, mask) == int(expected)


def old_snapshot_draw(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """How train/opponents.SnapshotPolicy sampled: one rng.random() against the cumulative
    unnormalised probabilities."""
    logits = np.where(mask, logits, -np.inf)
    p = np.exp(logits - logits.max())
    cumulative = np.cumsum(p)
    return int(min(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"), len(p) - 1))


def test_sampled_play_is_the_old_snapshot_draw_and_sb3s_distribution(mlp):
    model, path = mlp
    agent = PPOAgent(path=str(path), deterministic=False)
    data = spots(300, seed=3)
    for i, (obs, mask) in enumerate(data):
        agent.reset(i)
        with torch.no_grad():
            obs_t, _ = model.policy.obs_to_tensor(obs)
            logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(obs_t))[0].numpy()
        assert agent.choose(obs, mask) == old_snapshot_draw(logits, mask, np.random.default_rng(i))
    # The old ppo: agent sampled through torch from sb3's distribution; the draws here follow
    # the same probabilities.
    obs, mask = max(data, key=lambda om: np.sort(torch_probs(model, *om))[-2])   # a spot with a real choice
    agent.reset(0)
    draws = np.bincount([agent.choose(obs, mask) for _ in range(20000)], minlength=len(mask)) / 20000
    np.testing.assert_allclose(draws, torch_probs(model, obs, mask), atol=0.015)


def test_policy_is_what_act_draws_from(mlp):
    _, path = mlp
    sampled, greedy = PPOAgent(path=str(path), deterministic=False), PPOAgent(path=str(path))
    rng = np.random.default_rng(4)
    encoder = ObservationEncoder("soko")
    for hand in range(20):
        game = Game("soko", 3, seed=hand)
        while not game.is_over:
            seat, mask = game.current_player, action_mask(game)
            view = game.view(seat)
            obs = encoder.encode(game, seat)
            np.testing.assert_allclose(sampled.policy(view, mask), sampled.probabilities(obs, mask),
                                       atol=1e-12)
            one_hot = greedy.policy(view, mask)
            assert one_hot.sum() == 1 and one_hot[greedy.act(view, mask)] == 1
            apply_action(game, random_action(mask, rng))


def test_only_a_sampling_model_gives_the_luck_correction_its_policy(mlp):
    """A deterministic model's one-hot policy would add decision and coin-flip terms that are
    exactly zero: it does not say it randomises, and the luck features of its hands are those
    it would get with its policy asked at every decision, to the bit."""
    from arena.luck import LuckCorrector
    from arena.match import _known_policy

    _, path = mlp
    sampled, greedy = PPOAgent(path=str(path), deterministic=False), PPOAgent(path=str(path))
    assert sampled.randomises and _known_policy(sampled) is not None
    assert not greedy.randomises and _known_policy(greedy) is None
    corrector = LuckCorrector(Game("soko", 2).rules)
    decided = 0
    for hand in range(8):
        game = Game("soko", 2, seed=hand)
        while not game.is_over:
            mask = action_mask(game)
            apply_action(game, choose_action(greedy, game, mask))
            decided += 1
        asked = corrector.features(game, policies=[greedy.policy, greedy.policy])
        np.testing.assert_array_equal(asked, corrector.features(game, policies=None))
    assert decided > 16


def test_policy_from_the_game_is_the_policy_from_the_view(mlp, monkeypatch):
    """PPOAgent.policy_game (what the luck correction's decision terms ask, through
    envs.actions.policy_probabilities) gives policy(view)'s floats without rebuilding a game."""
    import copy

    from agents import trained
    from envs.actions import policy_probabilities

    _, path = mlp
    sampled, greedy = PPOAgent(path=str(path), deterministic=False), PPOAgent(path=str(path))
    rng = np.random.default_rng(5)
    spots = []
    for hand in range(12):
        game = Game("soko", 2, seed=hand)
        while not game.is_over:
            seat, mask = game.current_player, action_mask(game)
            for agent in (sampled, greedy):
                spots.append((agent, copy.deepcopy(game), seat, mask, agent.policy(game.view(seat), mask)))
            apply_action(game, random_action(mask, rng))
    monkeypatch.setattr(trained, "game_from_view", None)   # the game's own path only
    for agent, game, seat, mask, expected in spots:
        assert np.array_equal(policy_probabilities(agent.policy, game, seat, mask), expected)
    assert any(0 < p.max() < 1 for *_, p in spots)


def test_a_state_asked_again_is_not_encoded_again(mlp):
    """PPOAgent keeps its newest observations by state: the same hand played again (as the luck
    correction replays it) gets the same values without the encoder, and a caller writing into
    what it got changes nothing kept."""
    _, path = mlp
    agent = PPOAgent(path=str(path), deterministic=False)
    rng = np.random.default_rng(2)
    game, seen = Game("soko", 2, seed=3), []
    while not game.is_over:
        mask = action_mask(game)
        action = random_action(mask, rng) if rng.random() < 0.3 or not mask[1] else 1   # mostly check/call
        seen.append((game.current_player, agent._encode(game, game.current_player).copy(), action))
        apply_action(game, action)
    assert len(seen) >= 3
    encoder = next(iter(agent._encoders.values()))
    real, calls = encoder.encode, []
    encoder.encode = lambda *a, **k: calls.append(1) or real(*a, **k)
    replay = Game("soko", 2, seed=3)
    for seat, expected, action in seen:
        got = agent._encode(replay, seat)
        assert np.array_equal(got, expected)
        got[:] = -1
        assert np.array_equal(agent._encode(replay, seat), expected)
        apply_action(replay, action)
    assert not calls
    other = Game("soko", 2, seed=4)             # another deal: encoded afresh
    agent._encode(other, other.current_player)
    assert calls == [1]


def test_clones_and_pickles_play_alike(mlp):
    _, path = mlp
    agent = PPOAgent(path=str(path), deterministic=False)
    agent.name = "mine"
    clone = agent.clone()
    copy = pickle.loads(pickle.dumps(agent))
    assert clone.actor is agent.actor and clone.name == copy.name == "mine"
    for seed in range(10):
        game = Game("soko", 3, seed=seed)
        while not game.is_over:
            actions = set()
            for a in (agent, clone, copy):
                a.reset(seed)
                actions.add(choose_action(a, game))
            assert len(actions) == 1
            apply_action(game, actions.pop())


def test_a_trained_opponent_in_the_env_replays_with_the_seed(mlp):
    """The training env re-seeds a trained opponent before every hand, as the tournament does,
    so seeded hands replay."""
    from envs.single_agent import SingleAgentEnv

    _, path = mlp

    def hands(seed):
        env = SingleAgentEnv("soko", num_players=3,
                             opponents=[PPOAgent(path=str(path), deterministic=False), "random"])
        env.reset(seed=seed)
        out = []
        for _ in range(10):
            done = False
            while not done:
                _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
            out.append(env.game.history())
            env.reset()
        return out

    assert hands(3) == hands(3) != hands(4)


def test_loading_a_checkpoint_leaves_the_global_generators_alone(mlp):
    """sb3's load re-seeds the global generators with the checkpoint's seed; a training run
    draws its shuffles and actions from them, so an evaluation that loads an agent mid-run must
    not change what the run learns."""
    import random

    _, path = mlp
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    expected = random.random(), np.random.random(), torch.rand(1).item()
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    PPOAgent(path=str(path)).actor
    assert (random.random(), np.random.random(), torch.rand(1).item()) == expected


def test_torch_forward_passes_from_threads_are_each_their_own():
    """The exact solver runs batches on several threads; SB3 keeps the last distribution on the
    policy's one ``action_dist``, so without the actor's lock a thread could read another's
    logits (CI saw a 0.26 difference in a probability). Each thread's batches give the logits
    of a pass alone."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from envs.single_agent import SingleAgentEnv
    from tests.helpers import random_ppo_agent

    agent = random_ppo_agent(SingleAgentEnv("soko"), "elu", scale=0.5)
    assert isinstance(agent.actor, TorchActor)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, 2, size=(256, agent.actor.obs_size)).astype(np.float32) for _ in range(4)]
    alone = [agent.actor.logits_batch(b) for b in batches]
    assert not np.allclose(alone[0], alone[1])   # different batches, different logits
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # threads swap as often as they can: the race, if any, shows
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            got = list(pool.map(lambda k: agent.actor.logits_batch(batches[k % 4]), range(200)))
    finally:
        sys.setswitchinterval(interval)
    for k, logits in enumerate(got):
        assert np.array_equal(logits, alone[k % 4]), k
