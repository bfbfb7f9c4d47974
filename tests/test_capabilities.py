"""A new agent, written here and nowhere else, plays everywhere: a match, local best response,
the exact solver and the batched training env, which ask it what it can do (``agents.base``
"Capabilities"), never what class it is.

``Prober`` decides from the legal ids alone: it bets when checking is free, folds to a bet it
could raise, and calls otherwise. ``PlainProber`` is the same player with no capability beyond
``act`` and ``policy``; ``Prober`` also says that its policy is blind (``blind_policy``) and
gives a batched form (``batched``). Each harness must play the two alike, taking the fast path
for ``Prober`` only.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import CHECK_CALL, FIRST_BET, FOLD, Agent
from arena.exact import _view_strategy, agent_strategy, build_tree, exploitability
from arena.lbr import LBRAgent
from arena.match import play_match
from envs.engine.rules import get_rules
from train.batched_vec import BatchedVecEnv


def _choice(mask) -> int:
    mask = np.asarray(mask)
    if not mask[FOLD]:   # checking is free (fold is not offered): bet if it may
        return FIRST_BET if len(mask) > FIRST_BET and mask[FIRST_BET] else CHECK_CALL
    return FOLD if len(mask) > FIRST_BET and mask[FIRST_BET] else CHECK_CALL


class PlainProber(Agent):
    calls = {"policy": 0, "blind_policy": 0, "act_slots": 0}

    def __init__(self) -> None:
        super().__init__()
        self.name = "prober"

    def act(self, view, action_mask) -> int:
        return _choice(action_mask)

    def policy(self, view, action_mask) -> np.ndarray:
        PlainProber.calls["policy"] += 1
        out = np.zeros(len(action_mask))
        out[_choice(action_mask)] = 1.0
        return out


class _ProberSlots:
    observation_features = None   # it reads the masks only

    def act_slots(self, game, slots, *, rng, stream) -> np.ndarray:
        PlainProber.calls["act_slots"] += 1
        return np.array([_choice(mask) for mask in game.action_mask[slots]], dtype=np.int64)


class Prober(PlainProber):
    def blind_policy(self, action_mask) -> np.ndarray:
        PlainProber.calls["blind_policy"] += 1
        out = np.zeros(len(action_mask))
        out[_choice(action_mask)] = 1.0
        return out

    def batched(self, rules) -> _ProberSlots:
        return _ProberSlots()


def _counted(run):
    for key in PlainProber.calls:
        PlainProber.calls[key] = 0
    result = run()
    return result, dict(PlainProber.calls)


def test_a_new_agent_plays_a_match():
    for cls in (Prober, PlainProber):
        result = play_match("soko", [cls(), "call"], hands=200, seed=3)
        assert result.hands == 200 and set(result.bb_per_100) == {"prober", "call"}
        # The prober bets into the calling station whenever it is checked to, so chips move.
        assert result.bb_per_100["prober"] != 0
    fast = play_match("soko", [Prober(), "tag"], hands=100, seed=1)
    slow = play_match("soko", [PlainProber(), "tag"], hands=100, seed=1)
    assert fast.bb_per_100 == slow.bb_per_100
    # On the core, every hand at once through its batched form; without one it cannot go there.
    core = play_match("soko", [Prober(), "tag"], hands=100, seed=1, engine="batched")
    assert core.bb_per_100 == fast.bb_per_100
    with pytest.raises(ValueError, match="'prober' has no batched form"):
        play_match("soko", [PlainProber(), "tag"], hands=100, seed=1, engine="batched")


def test_local_best_response_reads_a_new_agent():
    # A blind policy says nothing about the cards: LBR reads it once per spot, not per card.
    fast, fast_calls = _counted(lambda: play_match("soko_mini", [LBRAgent(Prober(), samples=20), Prober()],
                                                   hands=60, seed=2))
    slow, slow_calls = _counted(lambda: play_match("soko_mini", [LBRAgent(PlainProber(), samples=20),
                                                                 PlainProber()], hands=60, seed=2))
    assert fast.bb_per_100["lbr:prober"] == slow.bb_per_100["lbr:prober"] > 0
    assert fast_calls["blind_policy"] > 0 and fast_calls["policy"] == 0
    assert slow_calls["policy"] > fast_calls["blind_policy"]   # one call per candidate card


def test_the_exact_solver_writes_a_new_agent_s_strategy():
    tree = build_tree(get_rules("soko_mini", deck_ranks="KA", max_raises=1))
    fast, fast_calls = _counted(lambda: agent_strategy(tree, Prober()))
    slow, slow_calls = _counted(lambda: agent_strategy(tree, PlainProber()))   # every information set
    assert fast_calls["blind_policy"] == len(tree.nodes) and fast_calls["policy"] == 0
    assert slow_calls["policy"] > len(tree.nodes)
    # The same probabilities at every entry the general path writes (the face-down cards each
    # seat may hold there; the others are unreachable, and stay uniform there).
    probe = [np.full_like(a, np.nan) for a in fast]
    _view_strategy(tree, PlainProber(), probe, (0, 1))
    written = [~np.isnan(a) for a in probe]
    assert sum(int(w.sum()) for w in written) > 0.5 * sum(a.size for a in fast)
    assert all(np.array_equal(a[w], b[w]) for a, b, w in zip(fast, slow, written))
    assert exploitability(tree, fast) == exploitability(tree, slow)
    assert exploitability(tree, fast)[0] > 0   # a policy blind to its cards can be exploited


def _trajectory(env, steps: int) -> np.ndarray:
    env.seed(5)
    env.reset()
    out = []
    for _ in range(steps):
        obs, rewards, dones, _ = env.step(np.full(env.num_envs, CHECK_CALL))
        out.append(np.concatenate([obs.ravel(), rewards, dones]))
    return np.array(out)


def test_the_batched_training_env_plays_a_new_agent_for_all_its_slots():
    fast_env = BatchedVecEnv("soko", 2, 8, opponents=[Prober(), "random"], seed=1)
    fast, fast_calls = _counted(lambda: _trajectory(fast_env, 40))
    slow_env = BatchedVecEnv("soko", 2, 8, opponents=[PlainProber(), "random"], seed=1)
    slow = _trajectory(slow_env, 40)   # hand by hand, on a reference copy of each hand
    np.testing.assert_array_equal(fast, slow)
    assert fast_calls["act_slots"] > 0 and not fast_env._copies and slow_env._copies


def test_registered_it_plays_a_tournament_and_trains_batched(monkeypatch):
    # Adding an agent touches agents/ and the registry only: once registered, its spec plays a
    # tournament, and a training run has it in its pool (in batches or hand by hand).
    from agents import registry
    from arena.tournament import TournamentConfig, run_tournament
    from train.config import load_config
    from train.ppo import training_env
    from train.vec import set_pool

    monkeypatch.setitem(registry.AGENTS, "prober", (Prober, Prober, None, "bets when checked to"))
    monkeypatch.setitem(registry.AGENTS, "plain",
                        (PlainProber, PlainProber, None, "the same, no capabilities"))
    result = run_tournament(TournamentConfig(game="soko", agents=["prober", "plain", "call"], hands=100,
                                             luck_correction=False, workers=1, progress=False, write=False))
    assert set(result.field) == {"prober", "plain", "call"}
    # The same player in both seats of every duplicate deal: exactly even; against the calling
    # station it bets whenever checked to, so chips move.
    assert result.crosstable["prober"]["plain"].mean == 0 and result.crosstable["prober"]["call"].mean != 0
    for spec, batched in (("prober", True), ("plain", False)):
        env = training_env(load_config(overrides=[f'opponents.baselines={{"{spec}": 1}}', "ppo.n_envs=4"]))
        set_pool(env, {spec: 1}, [], self_play_weight=0.0, seed=0, generation=0)
        assert (_trajectory(env, 10).shape == (10, 4 * env.observation_space.shape[0] + 8)
                and (env.unwrapped._forms[0] is not None) == batched)


def test_arena_and_train_never_ask_an_agent_its_class():
    """No module of arena/ or train/ tests an agent against a subclass of Agent (only against
    ``Agent`` itself, to tell an agent from a spec) outside the module that defines it."""
    import ast
    import inspect
    from pathlib import Path

    import agents.registry  # noqa: F401  (the registered agent classes)
    import agents.trained  # noqa: F401  (ppo)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    names = {c.__name__: inspect.getsourcefile(c) for c in subclasses(Agent)}
    assert {"LBRAgent", "PPOAgent"} <= set(names)
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in [*root.glob("arena/**/*.py"), *root.glob("train/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
                    and len(node.args) == 2):
                for name in ast.walk(node.args[1]):
                    ident = getattr(name, "id", None) or getattr(name, "attr", None)
                    if ident in names and Path(names[ident]).resolve() != path.resolve():
                        found.append(f"{path.relative_to(root)}:{node.lineno} {ident}")
    assert not found, found
