"""Local best response with the core computing the target's policy over its range
(``LBRAgent(engine="core")``, ``arena.lbr.CoreTargetPolicy``, ``src/arena/lbr.h``): held equal to
the Python reference (``engine="python"``) decision for decision on seeded hands."""

from __future__ import annotations

import numpy as np
import pytest

from arena.lbr import CoreTargetPolicy, LBRAgent, _TargetPolicy, core_target_supported
from arena.match import play_match
from envs.actions import action_mask, apply_action
from envs.batched import BatchedGame
from envs.engine.game import Game
from envs.engine.rules import get_rules
from envs.observation import FEATURES

torch = pytest.importorskip("torch")


def _model(features, *, activation="tanh", deterministic=False, seed=0, net_arch=(32, 32)):
    """A ppo agent with random weights (big enough that every card changes its policy)."""
    from sb3_contrib import MaskablePPO

    from agents.trained import PPOAgent
    from envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv("soko", num_players=2, observation_features=tuple(features))
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU}[activation]
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=seed, device="cpu",
                        policy_kwargs=dict(net_arch=list(net_arch), activation_fn=act))
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    model.observation_features = list(features)
    return PPOAgent.from_model(model, name=f"m{seed}", deterministic=deterministic)


def _played(lbr: LBRAgent, target, hands: int, seed: int) -> list[tuple]:
    """Every decision of ``lbr`` in a duplicate match: (action, the values it compared, its
    range normalised, the number of cards it cannot see)."""
    out = []
    act = lbr.act

    def recorded(view, mask):
        a = act(view, mask)
        r = lbr.range
        unseen = 52 - len(view.hole_cards) - sum(len(up) for up in view.up_cards)
        out.append((a, dict(lbr.last_values) if np.flatnonzero(mask).size > 1 else {},
                    None if r is None or r.sum() <= 0 else r / r.sum(), unseen))
        return a

    lbr.act = recorded
    play_match("soko", [lbr, target], hands=hands, seed=seed)
    return out


@pytest.mark.parametrize("features, deterministic, activation", [
    (tuple(FEATURES), False, "tanh"),    # featured: each card changes hand_class and win_probability too
    (tuple(FEATURES), True, "relu"),     # a one-hot policy: the range keeps only the cards that explain it
    ((), False, "tanh"),                 # unfeatured: the card's one-hot only
])
def test_core_lbr_makes_the_python_lbrs_decisions(features, deterministic, activation):
    target = _model(features, activation=activation, deterministic=deterministic, seed=len(features))
    assert core_target_supported(target)
    python = _played(LBRAgent(target, samples=20, engine="python"), target, hands=200, seed=4)
    core = _played(LBRAgent(target, samples=20, engine="core"), target, hands=200, seed=4)
    assert len(python) == len(core) > 150
    assert [d[0] for d in core] == [d[0] for d in python]   # decision for decision
    for (_, pv, pr, _), (_, cv, cr, _) in zip(python, core):
        assert pv.keys() == cv.keys()
        assert all(abs(pv[a] - cv[a]) < 1e-4 for a in pv)
        assert (pr is None) == (cr is None)
        if pr is not None:
            assert np.allclose(pr, cr, atol=1e-6)
    # The ranges did move (the test sees the updates, not only uniform ranges).
    assert any(r is not None and ((r > 0).sum() < unseen or r.max() > 2 * r[r > 0].min())
               for _, _, r, unseen in core)


def _random_spots(rules, hands: int, seed: int):
    """Every spot of ``hands`` random hands, as (the reference game, its core mirror, the seat to
    act, the cards that seat's opponent cannot see); the hand moves on after each one."""
    mirror = BatchedGame(rules, 2, 1, auto_reset=False)
    rng = np.random.default_rng(seed)
    for deal in range(hands):
        g = Game(rules, 2, seed=deal)
        mirror.reset(decks=[[int(c) for c in g.deck]], buttons=[g.button])
        while g.current_player is not None:
            seat = g.current_player
            seen = ({int(c) for s in range(2) for c in g.up_cards(s)}
                    | {int(c) for c in g.hole_cards(1 - seat)})
            yield g, mirror, seat, np.array([c for c in range(52) if c not in seen])
            a = int(rng.choice(np.flatnonzero(action_mask(g))))
            apply_action(g, a)
            mirror.step([a])


def test_the_core_policy_is_the_reference_policy_in_every_spot():
    target = _model(FEATURES, seed=5)
    rules = get_rules("soko")
    core, reference = CoreTargetPolicy(target, rules), _TargetPolicy(target, rules)
    for g, mirror, seat, candidates in _random_spots(rules, hands=6, seed=0):
        got = core.spots(mirror, [0], [seat], [-1], [candidates])[0]
        assert np.allclose(got, reference(g, seat, candidates), atol=1e-6), g.street
        # Each row on its own: asking fewer cards gives the same floats for those.
        assert np.array_equal(core.spots(mirror, [0], [seat], [-1], [candidates[::3]])[0], got[::3])


@pytest.mark.parametrize("net_arch", [(20, 13), (8,), (40, 24, 9)])
def test_layers_of_any_width_are_the_reference_policy(net_arch):
    # The core's dense layers work sixteen and eight outputs at a time over six rows at a time;
    # widths that are not multiples of those (and an output layer of a few actions) keep every
    # output, and every row is its own, however many rows are asked together.
    target = _model(FEATURES, seed=3, net_arch=net_arch)
    rules = get_rules("soko")
    core, reference = CoreTargetPolicy(target, rules), _TargetPolicy(target, rules)
    spots = 0
    for g, mirror, seat, candidates in _random_spots(rules, hands=3, seed=2):
        got = core.spots(mirror, [0], [seat], [-1], [candidates])[0]
        assert np.allclose(got, reference(g, seat, candidates), atol=1e-6), g.street
        for rows in (1, 5, 7):
            assert np.array_equal(core.spots(mirror, [0], [seat], [-1], [candidates[:rows]])[0], got[:rows])
        spots += 1
    assert spots > 10


def test_the_target_networks_tanh_is_tanh_correctly_rounded():
    # tanh_in_place (the target network's activation) against float64's tanh rounded to float32,
    # over the magnitudes activations take (log-spaced from 1e-30 to 30, both signs), a normal
    # sample, and the edges: signed zeros, the saturated tail, infinities. Equal but where
    # float64's own tanh falls within its rounding of a float boundary (about one in 1e8).
    from envs import _stud_core

    rng = np.random.default_rng(0)
    mags = np.exp(rng.uniform(np.log(1e-30), np.log(30.0), 400_000)).astype(np.float32)
    x = np.concatenate([mags, -mags, rng.normal(0.0, 2.0, 200_000).astype(np.float32),
                        np.float32([0.0, -0.0, 9.0, 9.1, 20.0, 1e30, -1e30, np.inf, -np.inf])])
    got = _stud_core.tanh_float32(x)
    want = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == x.shape
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and np.count_nonzero(ulps) <= 2
    assert np.array_equal(np.signbit(got), np.signbit(x))   # odd, -0 included
    assert got[-2] == 1.0 and got[-1] == -1.0
    assert np.isnan(_stud_core.tanh_float32(np.float32([np.nan, -np.nan]))).all()
    assert _stud_core.tanh_float32(np.zeros((3, 0), np.float32)).shape == (3, 0)


def test_a_target_modelled_on_fewer_deals_is_the_reference_on_those_deals(monkeypatch):
    # win_samples: the core computes each candidate's win_probability on that many deals, as the
    # target's own encoder would if the piece had that many (the reference with WIN_SAMPLES
    # patched); streets where the piece is sampled, not enumerated, then give other rows.
    import envs.observation

    target = _model(FEATURES, seed=8)
    rules = get_rules("soko")
    full, few = CoreTargetPolicy(target, rules), CoreTargetPolicy(target, rules, win_samples=4)
    monkeypatch.setattr(envs.observation, "WIN_SAMPLES", 4)
    reference = _TargetPolicy(target, rules)
    differ = 0
    for g, mirror, seat, candidates in _random_spots(rules, hands=4, seed=1):
        got = few.spots(mirror, [0], [seat], [-1], [candidates])[0]
        assert np.allclose(got, reference(g, seat, candidates), atol=1e-6), g.street
        differ += not np.allclose(got, full.spots(mirror, [0], [seat], [-1], [candidates])[0], atol=1e-6)
    assert differ > 0


def test_win_samples_checks_and_refusals():
    target = _model(FEATURES, seed=9)
    rules = get_rules("soko")
    for bad in (0, -3, 2.5, "16"):
        with pytest.raises(ValueError, match="win_samples is a whole number of deals"):
            LBRAgent(target, win_samples=bad)
    with pytest.raises(ValueError, match="win_samples needs the core engine"):
        LBRAgent(target, engine="python", win_samples=16).warm_up(rules)
    with pytest.raises(ValueError, match="no recipe to travel as"):
        LBRAgent("tag", win_samples=16).recipe()
    assert LBRAgent("tag", samples=30).recipe() == ("lbr", "tag", 30)


def test_engine_choice_and_refusals():
    target = _model((), seed=6)
    assert LBRAgent(target).uses_core(get_rules("soko"))
    assert not LBRAgent(target, engine="python").uses_core(get_rules("soko"))
    assert not LBRAgent("call").uses_core(get_rules("soko"))   # auto: the reference for other agents
    with pytest.raises(ValueError, match="engine must be one of"):
        LBRAgent(target, engine="gpu")
    with pytest.raises(ValueError, match="needs a ppo target with a plain MLP"):
        LBRAgent("tag", engine="core").warm_up(get_rules("soko"))
    assert not core_target_supported(_model((), activation="elu", seed=7))   # torch runs that one


def test_a_subclass_that_decides_otherwise_is_asked_hand_by_hand():
    # The core runs a target's network only when the target says its policy is that network
    # (Agent.core_network); a subclass of the ppo agent may decide otherwise (here it always
    # calls), so local best response must ask it through its own policy.
    from agents.trained import PPOAgent

    class AlwaysCallingModel(PPOAgent):
        def policy(self, view, action_mask):
            out = np.zeros(len(action_mask))
            out[1] = 1.0
            return out

        def act(self, view, action_mask):
            return 1

    network = _model((), seed=8)
    caller = AlwaysCallingModel(path="x")
    caller._actor, caller._features = network.actor, network.features
    assert network.core_network() is not None and caller.core_network() is None
    assert not LBRAgent(caller).uses_core(get_rules("soko"))


def test_the_batched_envs_lbr_plays_the_hand_by_hand_lbrs_hands():
    # The training env's local best response on the core (arena.lbr.BatchedLBR: every slot at
    # once, the range updated from the learner's actions as they are played) against the
    # hand-by-hand LBRAgent on a reference Game per hand (engine="python"): the same seed gives
    # the same hands, decisions and rewards.
    from train.batched_vec import BatchedVecEnv

    # The core's LbrTarget.policies is spread over the batch's threads, each slot's spots taken
    # by the next free thread (1 and 3 here): the same decisions either way. On 3 the env computes
    # the likelihoods of the learner's next actions ahead (finished at times as a rollout's end
    # finishes them): the same decisions again.
    target = _model(FEATURES, seed=8)
    runs = {}
    for engine, threads in (("python", 1), ("auto", 1), ("auto", 3)):
        env = BatchedVecEnv("soko", 2, 8, observation_features=FEATURES, seed=3, threads=threads,
                            opponents=["random", LBRAgent(target, samples=20, engine=engine)],
                            opponent_weights=[1, 3])
        assert bool(env._lbr) == (engine == "auto")
        rng = np.random.default_rng(0)
        seen = [env.reset()]
        rewards, dones = [], []
        for step in range(60):
            masks = env.action_masks()
            if step % 3 == 0:
                env.finish_ahead()
            obs, reward, done, _ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
            seen.append(obs)
            rewards.append(reward)
            dones.append(done)
        runs[engine, threads] = np.array(seen), np.array(rewards), np.array(dones)
        if engine == "auto":
            read = sum(lbr.player.asked_ahead for lbr in env._lbr.values())
            assert (read > 20) if threads > 1 else read == 0
    po, pr, pd = runs["python", 1]
    assert pd.sum() > 40
    for threads in (1, 3):
        co, cr, cd = runs["auto", threads]
        assert np.array_equal(pd, cd) and np.array_equal(pr, cr) and np.array_equal(po, co), threads


def test_the_roll_outs_first_cards_are_argsorts():
    # equity_by_hole's random deals: the core's selection of the k smallest draws of each row
    # must be NumPy's argsort (the same deals as before, so the same decisions).
    from envs import _stud_core

    rng = np.random.default_rng(0)
    for p, k in [(45, 8), (40, 0), (10, 10), (49, 3), (1, 1)]:
        u = rng.random((200, p))
        assert np.array_equal(_stud_core.smallest_k(u, k), np.argsort(u, axis=1)[:, :k]), (p, k)
    with pytest.raises(ValueError, match="0 <= k <= p"):
        _stud_core.smallest_k(np.zeros((2, 3)), 4)


def _batched_against_random(target, hands: int, seed: int, *, threads: int = 1, reference: bool = True,
                            watch=None, ahead: bool = False, seed_base: int = 1000
                            ) -> tuple[list[int], list[int]]:
    """``hands`` hands in a BatchedGame (no new deals): the batched local best response
    (``BatchedLBR``, the core's ``LbrPlayer``) at seat ``slot % 2`` of each slot against
    ``target``'s seat playing random legal actions (mostly checks and calls). Beside each slot a reference
    ``Game`` of the same deal where the hand-by-hand ``LBRAgent(engine="python")``, seeded as the
    batched hand, decides from its view (when ``reference``). Returns the batched and the
    reference decisions. ``watch(lbr, game, slots, seats, actions)``, called before each
    ``observe``, returns a function called after the step. ``ahead``: ``lbr.ahead()`` at each
    step's start, as the training env calls it. Slot ``s``'s hand is seeded ``seed_base + s``
    (the core draws the roll-outs of a seed below 2**64, Python those of a larger one)."""
    from arena.lbr import BatchedLBR

    rules = get_rules("soko")
    game = BatchedGame(rules, 2, hands, auto_reset=False, threads=threads)
    game.reset(seeds=np.arange(hands, dtype=np.uint64) + seed)
    lbr = BatchedLBR(LBRAgent(target, samples=20), game)
    refs, agents = [], []
    for slot in range(hands):
        state = game.state(slot)
        refs.append(Game(rules, 2, deck=state["deck"], button=state["button"],
                         stacks=state["starting_stacks"]))
        lbr.start(slot, slot % 2)
        lbr.seed(slot, seed_base + slot)
        agent = LBRAgent(target, samples=20, engine="python")
        agent.reset(seed_base + slot)
        agents.append(agent)
    rng = np.random.default_rng(seed)
    got, expected = [], []
    while any(not r.is_over for r in refs):
        if ahead:
            lbr.ahead()
        current = game.current_player.astype(np.int64)
        actions = np.full(hands, -1, dtype=np.int64)
        mine = [s for s in range(hands) if not refs[s].is_over and current[s] == s % 2]
        theirs = [s for s in range(hands) if not refs[s].is_over and current[s] == 1 - s % 2]
        if mine:
            actions[mine] = lbr.act(np.array(mine), current[mine], game.action_mask[mine])
            got += actions[mine].tolist()
            if reference:
                expected += [agents[s].act(refs[s].view(s % 2), action_mask(refs[s])) for s in mine]
        for s in theirs:   # folds seldom, calls most: the local best response bets for value, and checks
            weights = game.action_mask[s] * np.array([1.0, 6.0] + [3.0] * (game.num_actions - 2))
            actions[s] = rng.choice(game.num_actions, p=weights / weights.sum())
        after = None
        if theirs:
            if watch is not None:
                after = watch(lbr, game, theirs, current[theirs], actions[theirs])
            lbr.observe(np.array(theirs), current[theirs], actions[theirs])
        for s in mine + theirs:
            apply_action(refs[s], int(actions[s]))
        game.step(actions)
        if after is not None:
            after()
    return got, expected


def test_a_slot_listed_twice_in_one_decision_is_refused():
    # One decision a hand: the core keeps each hand's range, equities and generator per slot and
    # decides the slots on several threads, so a slot given twice is refused, not raced.
    from arena.lbr import BatchedLBR

    game = BatchedGame(get_rules("soko"), 2, 2, auto_reset=False, threads=2)
    game.reset(seeds=np.arange(2, dtype=np.uint64))
    lbr = BatchedLBR(LBRAgent(_model(tuple(FEATURES)), samples=20), game)
    seat = int(game.current_player[0])
    lbr.start(0, seat)
    lbr.seed(0, 1)
    with pytest.raises(ValueError, match="listed twice"):
        lbr.act(np.array([0, 0]), np.array([seat, seat]), game.action_mask[[0, 0]])
    assert lbr.act(np.array([0]), np.array([seat]), game.action_mask[[0]])[0] in np.flatnonzero(
        game.action_mask[0])


def test_the_core_draws_for_hands_seeded_below_two_to_the_64():
    # A seed the core's copy of default_rng takes (an int or NumPy integer in [0, 2**64)) leaves
    # no generator in Python; a larger seed, or none, draws from NumPy's own, made at the first
    # decision that needs draws (the first street's roll-outs do: more deals than samples).
    from arena.lbr import BatchedLBR

    slots = 5
    game = BatchedGame(get_rules("soko"), 2, slots, auto_reset=False)
    game.reset(seeds=np.arange(slots, dtype=np.uint64))
    lbr = BatchedLBR(LBRAgent(_model(tuple(FEATURES)), samples=20), game)
    seats = game.current_player.astype(np.int64)
    for slot, seed in enumerate([7, np.int64(7), 2 ** 64 - 1, 2 ** 64, None]):
        lbr.start(slot, int(seats[slot]))
        if seed is not None:
            lbr.seed(slot, seed)
    everyone = np.arange(slots)
    lbr.act(everyone, seats, game.action_mask)
    assert [lbr.hands[s].rng is not None for s in range(slots)] == [False, False, False, True, True]


@pytest.mark.parametrize("deterministic, features, threads, ahead, seed_base", [
    (False, tuple(FEATURES), 1, False, 1000),
    (True, tuple(FEATURES), 3, False, 1000),   # one-hot policies: ranges over equal weights (exact ties)
    (False, (), 2, False, 1000),
    (False, tuple(FEATURES), 2, True, 1000),   # the likelihoods computed ahead on the second thread
    (False, tuple(FEATURES), 2, False, 2 ** 64 - 20),   # half the hands' draws made in Python
])
def test_the_batched_lbr_decides_as_the_hand_by_hand_lbr(deterministic, features, threads, ahead, seed_base):
    # The core's LbrPlayer (range, likelihoods, equities, values and choice for every slot at
    # once) against LBRAgent replaying each hand from its log in Python, seeded alike: decision
    # for decision, on one thread and spread over several, with and without ahead(), the
    # roll-outs' draws made by the core (NumPy's generator copied) or by NumPy.
    target = _model(features, deterministic=deterministic, activation="relu" if deterministic else "tanh",
                    seed=20 + len(features))
    read = []
    watch = (lambda lbr, *_: lambda: read.append(lbr.player.asked_ahead)) if ahead else None
    got, expected = _batched_against_random(target, 40, seed=7, threads=threads, ahead=ahead, watch=watch,
                                            seed_base=seed_base)
    assert len(got) > 100
    assert got == expected
    assert {0, 1, 2} <= set(got)   # it folds, checks or calls, and bets
    if ahead:
        assert read[-1] > 20   # observe() read rows that ahead() computed


@pytest.mark.parametrize("ahead", [False, True])
def test_the_batched_lbr_reads_the_rows_it_weighed_its_bet_with(ahead):
    # After a bet or raise of the local best response the target acts in the very spot LBR
    # weighed that bet in: observe() takes those rows instead of asking the target's policy
    # again, and asks nothing for a fold or for an action that ends the hand (never read). The
    # likelihoods it keeps must be the ones a fresh core call gives, to the bit. With ahead()
    # (two threads) the rows it asks for were computed before it was called: the same floats.
    from envs.actions import FOLD

    target = _model(FEATURES, seed=9)
    tally = {"reused": 0, "asked": 0, "folds": 0}
    players = []

    def watch(lbr, game, slots, seats, actions):
        player, before = lbr.player, lbr.player.asked
        players.append(player)
        cards = {}
        for slot, seat in zip(slots, seats.tolist()):
            hole, up = game.cards([slot])[1][0, 1 - seat], game.cards([slot])[2][0].ravel()
            cards[slot] = np.array([c for c in range(52) if c not in hole and c not in up])
        kept = {s: player.after_bet(s) for s in slots}
        counts = {s: len(player.pending(s)) for s in slots}
        fresh = {s: lbr.core.spots(game, [s], [seat], [-1], [cards[s]])[0][:, a]
                 for s, seat, a in zip(slots, seats.tolist(), actions.tolist()) if a != FOLD}

        def after():
            asked = 0
            for slot, action in zip(slots, actions.tolist()):
                new = player.pending(slot)[counts[slot]:]
                reused = kept[slot] is not None and np.array_equal(kept[slot][0], cards[slot])
                if action == FOLD:
                    tally["folds"] += 1
                    assert not new
                else:   # (rows it weighed a bet with are kept even for a call that ends the hand)
                    ((got_cards, likelihood),) = new
                    assert np.array_equal(got_cards, cards[slot])
                    assert np.array_equal(likelihood, fresh[slot]), slot
                    tally["reused" if reused else "asked"] += 1
                    asked += not reused
            assert player.asked - before == asked   # a core call for each of these, no other
        return after

    _batched_against_random(target, 48, seed=5, reference=False, watch=watch, ahead=ahead,
                            threads=2 if ahead else 1)
    assert tally["reused"] > 20 and tally["asked"] > 20 and tally["folds"] > 5
    read = players[-1].asked_ahead   # spots whose rows ahead() had computed
    assert (read >= tally["asked"] - 5) if ahead else read == 0


def test_rows_computed_ahead_for_a_hand_that_changed_are_not_read():
    # ahead() copies each hand: a slot dealt again before observe() (another deal, the same
    # seats) gets its likelihoods from its new hand, not the rows computed for the old one.
    from arena.lbr import BatchedLBR

    target = _model(FEATURES, seed=9)
    rules = get_rules("soko")
    game = BatchedGame(rules, 2, 16, auto_reset=False, threads=2)
    game.reset(seeds=np.arange(16, dtype=np.uint64))
    lbr = BatchedLBR(LBRAgent(target, samples=20), game)
    current = game.current_player.astype(np.int64)
    for slot in range(16):
        lbr.start(slot, 1 - int(current[slot]))   # the target (the other seat) is to act
    lbr.ahead()
    game.reset(seeds=np.arange(16, dtype=np.uint64) + 100)
    lbr.forget(np.arange(16))
    current = game.current_player.astype(np.int64)
    for slot in range(16):
        lbr.start(slot, 1 - int(current[slot]))
    slots = np.arange(16)
    actions = np.ones(16, dtype=np.int64)   # check or call: the hand goes on
    fresh = []
    for slot, seat in zip(slots.tolist(), current.tolist()):
        hole, up = game.cards([slot])[1][0, 1 - seat], game.cards([slot])[2][0].ravel()
        cards = np.array([c for c in range(52) if c not in hole and c not in up])
        fresh.append(lbr.core.spots(game, [slot], [seat], [-1], [cards])[0][:, 1])
    lbr.ahead()                          # the new hands' rows, being computed ...
    game.reset(seeds=np.arange(16, dtype=np.uint64) + 100)   # ... for the same deals again
    lbr.observe(slots, current, actions)
    assert lbr.player.asked == 16
    assert lbr.player.asked_ahead == 16   # the same bytes: read
    for slot in range(16):
        ((_, likelihood),) = lbr.player.pending(slot)
        assert np.array_equal(likelihood, fresh[slot])
    for slot in range(16):
        lbr.start(slot, 1 - int(current[slot]))   # (a new hand state: nothing pending)
    lbr.ahead()
    game.reset(seeds=np.arange(16, dtype=np.uint64) + 200)   # other deals, the same buttons
    current = game.current_player.astype(np.int64)
    lbr.observe(slots, current, actions)
    assert lbr.player.asked == 32 and lbr.player.asked_ahead == 16   # none read: other hands


def test_the_batched_lbr_keeps_nothing_for_an_action_that_ends_the_hand():
    # A check or call that ends the hand leaves the local best response no decision: observe()
    # asks no policy for it and keeps no likelihood, while a bet in the same spot is kept.
    import copy

    from arena.lbr import BatchedLBR
    from envs.actions import CHECK_CALL, FIRST_BET

    rules = get_rules("soko")
    game = BatchedGame(rules, 2, 2, auto_reset=False)
    game.reset(seeds=np.array([11, 11], dtype=np.uint64))   # the same deal twice
    state = game.state(0)
    ref = Game(rules, 2, deck=state["deck"], button=state["button"], stacks=state["starting_stacks"])
    while True:   # check and call down to the action that would end the hand
        after = copy.deepcopy(ref)
        apply_action(after, CHECK_CALL)
        if after.is_over:
            break
        apply_action(ref, CHECK_CALL)
        game.step(np.full(2, CHECK_CALL))
    seat = int(game.current_player[0])
    assert ref.current_player == seat and game.action_mask[0, FIRST_BET]
    lbr = BatchedLBR(LBRAgent(_model(FEATURES, seed=3), samples=20), game)
    for slot in (0, 1):
        lbr.start(slot, 1 - seat)
    lbr.observe(np.array([0, 1]), np.array([seat, seat]), np.array([CHECK_CALL, FIRST_BET]))
    assert lbr.player.asked == 1
    assert lbr.player.pending(0) == [] and len(lbr.player.pending(1)) == 1


def _in_a_new_thread(fn):
    """``fn()`` on a new thread: the core's first-street tables are per thread, so a new one
    computes every value afresh."""
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def _first_streets(rules, n_decks=6, seed=2):
    """A batch of first streets dealt the same cards in other slots, with the button moved and
    the up cards swapped."""
    rng = np.random.default_rng(seed)
    decks, buttons = [], []
    for _ in range(n_decks):
        deck = [int(c) for c in rng.permutation(52)]
        for button in (0, 1):
            decks += [deck, deck[:2] + deck[3:4] + deck[2:3] + deck[4:]]   # the up cards swapped
            buttons += [button, button]
    game = BatchedGame(rules, 2, len(decks), auto_reset=False)
    game.reset(decks=decks, buttons=buttons)
    return game


def _spot(game, slot):
    seat = int(game.current_player[slot])
    candidates = np.array([c for c in range(52) if c not in game.cards([slot])[1][0, 1 - seat]
                           and c not in game.cards([slot])[2][0].ravel()])
    return seat, candidates


def test_first_street_win_probabilities_kept_across_hands_are_the_computed_ones():
    # LbrTarget keeps the target's first-street win_probability by the whole seat view across
    # hands and slots (later streets per slot only). Hands dealt the same first-street cards in
    # other slots, with the button or the seat moved, must get what a target with nothing kept
    # computes, to the bit, for every candidate card.
    target = _model(FEATURES, seed=10)
    rules = get_rules("soko")
    kept = CoreTargetPolicy(target, rules)
    mirror = _first_streets(rules)
    for _ in range(2):   # a first street's actions: the bring-in, then the next player's
        for slot in range(len(mirror.current_player)):
            seat, candidates = _spot(mirror, slot)
            got = kept.spots(mirror, [slot], [seat], [-1], [candidates])[0]
            fresh = _in_a_new_thread(lambda: CoreTargetPolicy(target, rules).spots(
                mirror, [slot], [seat], [-1], [candidates])[0])
            assert np.array_equal(got, fresh), slot
        mirror.step([int(np.flatnonzero(m)[-1]) for m in mirror.action_mask])


def test_first_street_tables_outlive_a_target_and_keep_games_apart():
    # The tables outlive the target (training builds one for each snapshot): a later target
    # with other weights reads the values an earlier one kept, which are its own to the bit; a
    # game whose hands rank otherwise (no Canadian hands) has a table of its own.
    rules = get_rules("soko")
    mirror = _first_streets(rules, n_decks=3, seed=5)
    spots = [_spot(mirror, slot) for slot in range(len(mirror.current_player))]
    slots = list(range(len(mirror.current_player)))

    def ask(target, game, r):
        return CoreTargetPolicy(target, r).spots(game, slots, [s for s, _ in spots], [-1] * len(slots),
                                                 [c for _, c in spots])

    ask(_model(FEATURES, seed=11), mirror, rules)                     # fills this thread's table
    later = _model(FEATURES, seed=12)
    for got, fresh in zip(ask(later, mirror, rules), _in_a_new_thread(lambda: ask(later, mirror, rules))):
        assert np.array_equal(got, fresh)
    plain = get_rules("soko", canadian_hands=False)
    other = _first_streets(plain, n_decks=3, seed=5)
    got = ask(later, other, plain)
    for a, fresh in zip(got, _in_a_new_thread(lambda: ask(later, other, plain))):
        assert np.array_equal(a, fresh)
    assert any(not np.array_equal(a, b) for a, b in zip(got, ask(later, mirror, rules)))


def _observe_in_child(lbr, slots, seats, actions, asked_ahead):
    lbr.observe(slots, seats, actions)   # the parent's job is not this process's: its own rows
    assert lbr.player.asked_ahead == asked_ahead
    assert all(len(lbr.player.pending(s)) == 1 for s in slots.tolist())


def test_a_child_forked_while_rows_are_computed_ahead_computes_its_own():
    # A forked child has none of its parent's threads: a job launched before the fork is not
    # waited for there (it would never end), and observe() asks the target itself.
    import multiprocessing

    from arena.lbr import BatchedLBR

    target = _model(FEATURES, seed=9)
    game = BatchedGame(get_rules("soko"), 2, 64, auto_reset=False, threads=2)
    game.reset(seeds=np.arange(64, dtype=np.uint64))
    lbr = BatchedLBR(LBRAgent(target, samples=20), game)
    current = game.current_player.astype(np.int64)
    for slot in range(64):
        lbr.start(slot, 1 - int(current[slot]))
    slots, actions = np.arange(64), np.ones(64, dtype=np.int64)
    lbr.ahead()
    child = multiprocessing.get_context("fork").Process(
        target=_observe_in_child, args=(lbr, slots, current, actions, 0))
    child.start()
    child.join(timeout=120)
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0
    lbr.observe(slots, current, actions)
    assert lbr.player.asked == 64 and lbr.player.asked_ahead == 64
