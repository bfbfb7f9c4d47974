"""The optional observation pieces (``features``): hand_class, showing_class, win_probability.

Their values on scripted hands, what they may not depend on (other seats' face-down cards),
the option's errors, the envs' API with them on, and a model trained with them playing in a
tournament (it remembers its features)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from envs import follow_the_bitch_v0, soko_v0
from envs.actions import action_mask, apply_action
from envs.engine.game import Game
from envs.engine.hands import Category
from envs.engine.rules import get_rules
from envs.observation import FEATURES, ObservationEncoder, build_layout, check_features

ALL = tuple(FEATURES)


def unpack(encoder: ObservationEncoder, game: Game, seat: int) -> dict[str, np.ndarray]:
    return encoder.layout.unpack(encoder.encode(game, seat))


def category(one_hot: np.ndarray) -> Category | None:
    hot = np.flatnonzero(one_hot)
    assert len(hot) <= 1 and set(one_hot.tolist()) <= {0.0, 1.0}
    return Category(int(hot[0])) if len(hot) else None


def test_off_by_default_and_appended_after_every_other_piece():
    plain, wide = build_layout("soko"), build_layout("soko", ALL)
    assert plain.size == 606 and not plain.features
    assert [p.name for p in wide][:len(plain.pieces)] == [p.name for p in plain]
    assert [p.name for p in wide][len(plain.pieces):] == ["hand_class", "showing_class", "win_probability"]
    assert wide.size == 606 + 12 + 8 * 12 + 1
    assert (build_layout("soko", ["win_probability", "hand_class"]).features
            == ("hand_class", "win_probability"))


@pytest.mark.parametrize("bad", [["hand_strength"], ["hand_class", "equity"]])
def test_a_wrong_feature_name_is_one_line(bad):
    with pytest.raises(ValueError) as info:
        build_layout("soko", bad)
    message = str(info.value)
    assert "\n" not in message
    assert (message.startswith("unknown observation feature ")
            and "hand_class, showing_class, win_probability" in message)
    with pytest.raises(ValueError, match="unknown observation feature"):
        soko_v0.env(observation_features=bad)


def test_a_wrong_feature_in_the_config_is_one_line():
    from train.checks import checked_config_from_dict
    from train.config import ConfigError

    with pytest.raises(ConfigError) as info:
        checked_config_from_dict({"env": {"observation_features": ["hand_clas"]}})
    assert str(info.value) == ("env.observation_features: unknown observation feature 'hand_clas'; "
                               "the features are hand_class, showing_class, win_probability")
    cfg = checked_config_from_dict({"env": {"observation_features": ["win_probability"]}})
    assert cfg.env.observation_features == ["win_probability"]


def test_a_made_pair_shows_the_pair_category_and_each_seat_its_face_up_class():
    # Button 0, three seats: seat 1 is dealt first. Seat 0: 4h down, Kc up; seat 1: 2c / 9s;
    # seat 2: 3d / 9h; then 4d, 9d, Kh come up for seats 1, 2, 0 on the next street.
    game = Game("soko", 3, deck="2c 3d 4h 9s 9h Kc 4d 9d Kh", button=0, seed=0)
    encoder = ObservationEncoder("soko", features=ALL)
    view = unpack(encoder, game, 0)
    assert category(view["hand_class"]) == Category.HIGH_CARD
    while game.street == 0:
        apply_action(game, 1)  # bring-in, calls
    assert [len(game.up_cards(s)) for s in range(3)] == [2, 2, 2]
    for seat in range(3):
        view = unpack(encoder, game, seat)
        rows = view["showing_class"].reshape(8, 12)
        # Relative seats: slot r is seat (seat + r) % 3; slots 3..7 are padding.
        shown = [category(rows[r]) for r in range(8)]
        absolute = {0: Category.ONE_PAIR, 1: Category.HIGH_CARD, 2: Category.ONE_PAIR}  # Kc Kh; 9s 4d; 9h 9d
        assert shown == [absolute[(seat + r) % 3] for r in range(3)] + [None] * 5
    # Own cards: seat 0 holds 4h, Kc, Kh (a pair); seat 1 holds 2c, 9s, 4d (nothing).
    assert category(unpack(encoder, game, 0)["hand_class"]) == Category.ONE_PAIR
    assert category(unpack(encoder, game, 1)["hand_class"]) == Category.HIGH_CARD


def test_the_hand_class_counts_the_wild_cards_in_force():
    rules = get_rules("follow_the_bitch", queens_wild=True)
    game = Game(rules, 2, deck="2c 7c 3d 7d 4h Qs", button=0, seed=0)  # seat 0: 7c 7d down, Qs up
    view = unpack(ObservationEncoder(rules, features=ALL), game, 0)
    assert category(view["hand_class"]) == Category.THREE_OF_A_KIND   # a wild queen makes trips
    assert category(view["showing_class"][:12]) == Category.HIGH_CARD  # a lone wild shows ace high


def last_street(deck: str) -> Game:
    game = Game("soko", 2, deck=deck, button=0, seed=0)
    while game.street < 3:
        apply_action(game, 1)  # check and call down
    return game


def test_the_win_probability_on_the_last_street_is_exact():
    # Seat 0: Ad down, Kh 9h 5c 3s up (ace high); seat 1 shows Ks Qc 8d 2c. Of the 43 cards
    # seat 0 cannot see, seat 1 wins with a K (2 left), Q, 8, 2 or A (3 each) in the hole: 14.
    game = last_street("7d Ad Ks Kh Qc 9h 8d 5c 2c 3s")
    encoder = ObservationEncoder("soko", features=["win_probability"])
    assert unpack(encoder, game, 0)["win_probability"].tolist() == [np.float32(29 / 43)]
    # Nothing in it depends on seat 1's real face-down card: any other gives the same value.
    other = last_street("Jc Ad Ks Kh Qc 9h 8d 5c 2c 3s")
    assert (unpack(ObservationEncoder("soko", features=ALL), other, 0)["win_probability"][0]
            == np.float32(29 / 43))


def test_the_win_probability_before_the_last_street_is_seeded_by_what_the_seat_sees():
    # Monte-Carlo earlier: the same visible state gives the same number in any encoder, and the
    # other seat's face-down card does not change it.
    values = []
    for hidden in ("7d", "Jc", "As"):
        game = Game("soko", 2, deck=f"{hidden} 5d Ks 5h Qc 9h", button=0, seed=0)
        values.append(unpack(ObservationEncoder("soko", features=ALL), game, 0)["win_probability"][0])
    assert values[0] == values[1] == values[2]
    assert 0.5 < values[0] < 1.0  # a pair of fives against K-Q showing


def test_win_probability_is_zero_after_folding_and_the_share_won_at_the_end():
    game = Game("soko", 3, seed=2)
    encoder = ObservationEncoder("soko", features=ALL)
    apply_action(game, 1)                   # the bring-in
    folder = game.current_player
    apply_action(game, 0)                   # folds; the hand goes on
    assert not game.is_over and game.folded[folder]
    assert unpack(encoder, game, folder)["win_probability"][0] == 0.0
    while not game.is_over:
        apply_action(game, 1)               # check and call down to the showdown
    for seat in range(3):
        won = (game.payoffs[seat] + game.total_committed[seat]) / game.pot
        assert unpack(encoder, game, seat)["win_probability"][0] == np.float32(won)


@pytest.mark.parametrize("module, kwargs", [
    (soko_v0, {"num_players": 2}),
    (soko_v0, {"num_players": 4}),
    (follow_the_bitch_v0, {"num_players": 3, "low_chicago": True}),
])
def test_the_envs_pass_the_api_tests_with_every_feature(module, kwargs):
    from pettingzoo.test import api_test, seed_test

    kwargs = {**kwargs, "observation_features": list(ALL)}
    env = module.env(**kwargs)
    assert env.unwrapped.layout.features == ALL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # terminal masks are all zeros, as in PettingZoo's card games
        api_test(env, num_cycles=30)
        seed_test(lambda: module.env(**kwargs), num_cycles=30)


def test_the_single_agent_env_and_pickles_keep_the_features():
    import pickle

    from envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv("soko", observation_features=["hand_class"])
    obs, _ = env.reset(seed=3)
    assert env.observation_space.shape == (606 + 12,) and obs.shape == (618,)
    assert pickle.loads(pickle.dumps(env.encoder)).layout.features == ("hand_class",)
    raw = soko_v0.raw_env(observation_features=["showing_class"])
    assert pickle.loads(pickle.dumps(raw)).layout.features == ("showing_class",)


def test_a_model_trained_with_features_plays_in_a_tournament(tmp_path):
    from agents.registry import check_spec, make_agent
    from arena.tournament import parse_args, run_tournament
    from tests.test_train import smoke
    from train.ppo import main

    cfg = smoke(tmp_path, "env.observation_features=[hand_class,win_probability]", "eval.every=0",
                "opponents.self_play.every=0", "run.total_timesteps=256")
    run_dir = main(cfg, command=["python", "train/ppo.py"], progress=False)
    spec = f"ppo:{run_dir}"
    agent = make_agent(spec)
    assert agent.features == ("hand_class", "win_probability") and agent.obs_size == 606 + 12 + 1
    check_spec(spec, get_rules("soko"))  # its observation size is the one its features give
    result = run_tournament(parse_args(["--agents", spec, "call", "--hands", "6", "--workers", "1",
                                        "--no-progress", "--no-write"]))
    assert result.agents == (run_dir.name, "call")
    # The same choices from the real game and from a replay of its view (stand-in hidden cards).
    game = Game("soko", 2, seed=4)
    while not game.is_over:
        mask = action_mask(game)
        seat = game.current_player
        assert agent.act_game(game, seat, mask) == agent.act(game.view(seat), mask)
        apply_action(game, int(np.flatnonzero(mask)[-1]))
    # Local best response asks for the target's policy for every face-down card it might hold:
    # the features depend on that card, so patching one observation's one-hot column is not
    # enough; it writes each card's features too, and gets the policy of each swapped view.
    import dataclasses

    from arena.lbr import _TargetPolicy
    from envs.engine.cards import Card
    from envs.engine.events import EventKind

    target = _TargetPolicy(agent, get_rules("soko"))
    game = Game("soko", 2, seed=9)
    seat = game.current_player
    mask = action_mask(game)
    candidates = np.array([0, 17, 51])
    got = target(game, seat, candidates)
    view = game.view(seat)
    log = list(view.log)
    at = next(i for i, e in enumerate(log) if e.kind == EventKind.DEAL and not e.up and e.seat == seat)
    for row, c in zip(got, candidates.tolist()):
        log[at] = log[at]._replace(card=Card(c))
        swapped = dataclasses.replace(view, hole_cards=(Card(c),), log=tuple(log))
        assert np.allclose(row, agent.policy(swapped, mask))


def test_check_features_orders_and_refuses():
    assert check_features(None) == () and check_features("hand_class") == ("hand_class",)
    assert check_features(list(reversed(ALL))) == ALL
