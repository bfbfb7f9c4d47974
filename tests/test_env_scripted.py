"""Scripted deals through the AEC envs: masks, rewards, observation pieces, seeding, render.

Decks are built with ``tests.helpers.deal`` like the engine tests: each seat's cards in the
order that seat receives them; passes start left of the button. Soko: one down, one up, then
three up. Follow the Bitch: ``D D U | D U | D U``. Default stakes: ante 1, bring-in 2 (Soko),
small bet 4, big bet 8.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import follow_the_bitch_v0, soko_v0
from envs.actions import action_mask
from envs.engine.cards import Card, parse_cards
from envs.engine.game import Game
from envs.engine.rules import RULES
from envs.observation import ObservationEncoder, build_layout, seat_chip_bound
from tests.helpers import deal

RANKS = "23456789TJQKA"


def card_ids(text: str) -> list[int]:
    return sorted(int(c) for c in parse_cards(text))


def onehots(vector) -> list[int]:
    return [int(i) for i in np.flatnonzero(vector)]


def pieces(env, agent: str) -> dict[str, np.ndarray]:
    obs = env.observe(agent)["observation"]
    return env.unwrapped.layout.unpack(obs)


def act(env, agent: str, action: int, mask: list[int] | None = None) -> None:
    """``agent`` is to act (its mask is ``mask`` when given); play ``action``."""
    assert env.agent_selection == agent, f"{env.agent_selection} is to act, not {agent}"
    obs, reward, terminated, truncated, info = env.last()
    assert not terminated and not truncated
    if mask is not None:
        assert obs["action_mask"].tolist() == mask
    env.step(action)


def finish(env) -> dict[str, float]:
    """Run the dead steps at the end of the hand; returns each agent's final reward."""
    rewards = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert terminated
        assert obs["action_mask"].tolist() == [0] * len(obs["action_mask"])
        rewards[agent] = reward
        env.step(None)
    return rewards


# ---------------------------------------------------------------- masks and rewards

def test_bring_in_masks_and_rewards_heads_up(engine):
    # Contract example: seat 1 gets Ah down, Kd up; seat 0 gets 2c down, 3c up and brings in.
    env = soko_v0.env(engine=engine, num_players=2)
    env.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    game = env.unwrapped.game
    assert game.bring_in_seat == 0
    act(env, "player_0", 1, mask=[0, 1, 1])  # the bring-in is forced: no fold; 1 posts it
    act(env, "player_1", 0, mask=[1, 1, 1])  # fold, call the bring-in, or complete
    assert game.is_over and game.payoffs == (1, -1)
    assert finish(env) == {"player_0": 1 / 8, "player_1": -1 / 8}


def test_raise_cap_closes_the_bet_ids_and_chips_reward(engine):
    hands = {1: "Ah Kd | 9c | 9d | 2s", 0: "2c 3c | 4h | 8h | Jd"}
    env = soko_v0.env(engine=engine, num_players=2, reward="chips")
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    act(env, "player_0", 2, mask=[0, 1, 1])  # completes to 4 (a bet)
    act(env, "player_1", 2, mask=[1, 1, 1])  # raises to 8
    act(env, "player_0", 2, mask=[1, 1, 1])  # 12
    act(env, "player_1", 2, mask=[1, 1, 1])  # 16: a bet and three raises
    act(env, "player_0", 1, mask=[1, 1, 0])  # capped: fold or call only
    game = env.unwrapped.game
    assert game.street == 1 and game.pot == 34
    while not game.is_over:  # check it down
        env.step(1)
    assert game.payoffs == (-17, 17)  # pair of nines beats jack high
    assert finish(env) == {"player_0": -17.0, "player_1": 17.0}
    assert env.infos == {}  # every agent has left after its dead step


def test_mask_is_the_engines_legal_actions_in_every_structure(engine):
    for module, extra in ((soko_v0, {}), (follow_the_bitch_v0, {"low_chicago": True})):
        for betting in ("fixed_limit", "spread_limit", "pot_limit", "no_limit"):
            env = module.raw_env(engine=engine, num_players=3, betting=betting, stacks=[40, 90, 160], **extra)
            rng = np.random.default_rng(5)
            for hand in range(15):
                env.reset(seed=hand)
                game = env.game
                box = env.observation_space("player_0")["observation"]
                while not game.is_over:
                    agent = env.agent_selection
                    obs = env.observe(agent)
                    mask = obs["action_mask"]
                    assert box.contains(obs["observation"])
                    sizes = game.raise_to_amounts()
                    expected = [int(game.can_fold()), int(game.can_check_or_call())]
                    expected += [int(game.can_bet_or_raise(s)) for s in sizes]
                    expected += [0] * (len(mask) - len(expected))
                    assert mask.tolist() == expected == action_mask(game).tolist()
                    for other in env.agents:
                        if other != agent:
                            assert not env.observe(other)["action_mask"].any()
                    env.step(int(rng.choice(np.flatnonzero(mask))))
                assert sum(env.rewards.values()) == pytest.approx(0.0)
                assert [env.rewards[a] for a in env.possible_agents] == [
                    p / env.rules.big_bet for p in game.payoffs]


def test_illegal_actions(engine):
    raw = soko_v0.raw_env(engine=engine, num_players=2)
    raw.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    with pytest.raises(ValueError, match="bring-in"):
        raw.step(0)  # folding instead of the forced bring-in: the engine's reason
    with pytest.raises(ValueError, match="not legal"):
        raw.step(2 + 1)  # past the sizes offered
    wrapped = soko_v0.env(engine=engine, num_players=2)
    wrapped.reset(options={"deck": "Ah 2c Kd 3c", "button": 0})
    wrapped.step(0)  # PettingZoo logs "Illegal move made"
    # PettingZoo's TerminateIllegalWrapper: the hand ends, the offender gets -1.
    assert wrapped.rewards == {"player_0": -1.0, "player_1": 0.0}
    assert all(wrapped.terminations.values())


# ---------------------------------------------------------------- observation pieces

def test_soko_pieces_after_a_bring_in_and_a_completion(engine):
    # Three players, button 2: passes go seat 0, 1, 2. Seat 1 shows the 2c and brings in.
    hands = {0: "Ah 9d", 1: "Kc 2c", 2: "7s Js"}
    env = soko_v0.env(engine=engine, num_players=3)
    env.reset(options={"deck": deal(3, 2, hands), "button": 2})
    act(env, "player_1", 1)  # brings in for 2
    act(env, "player_2", 2)  # completes to 4
    assert env.agent_selection == "player_0"
    p = pieces(env, "player_0")
    assert onehots(p["hole_cards"]) == card_ids("Ah")
    up = p["up_cards"].reshape(8, 52)
    assert onehots(up[0]) == card_ids("9d")  # relative seat 0: the observer
    assert onehots(up[1]) == card_ids("2c")  # next seat clockwise: seat 1
    assert onehots(up[2]) == card_ids("Js")  # seat 2
    assert not up[3:].any()  # padding up to 8 seats
    layout = env.unwrapped.layout
    # The scales envs/observation.py documents: one seat's most chips in a hand, the pot's most.
    stacks = env.unwrapped.game.starting_stacks
    inv_seat = 1.0 / seat_chip_bound(RULES["soko"], stacks)
    inv_pot = 1.0 / min(3 / inv_seat, sum(stacks))
    assert p["pot"][0] == pytest.approx(9 * inv_pot)  # 3 antes + 2 + 4
    assert p["to_call"][0] == pytest.approx(4 * inv_seat)
    assert p["pot_odds"][0] == pytest.approx(4 / 13)
    assert p["raise_to_amounts"][0] == pytest.approx(8 * inv_seat)  # raise to 8
    assert p["bet_size"][0] == pytest.approx(0.5)  # small bet 4 / big bet 8
    assert p["raises"][0] == pytest.approx(1 / 4)
    assert onehots(p["street"]) == [0]
    assert onehots(p["seated"]) == [0, 1, 2]
    assert onehots(p["to_act"]) == [0]
    assert onehots(p["button"]) == [2]  # seat 2 is two seats after the observer
    assert p["committed"][:3] == pytest.approx([0, 2 * inv_seat, 4 * inv_seat])
    assert p["total_committed"][:3] == pytest.approx([1 * inv_seat, 3 * inv_seat, 5 * inv_seat])
    assert p["stack"][:3] == pytest.approx([799 / 2400, 797 / 2400, 795 / 2400])
    history = p["history"].reshape(8, 4, 2)
    assert history[1, 0].tolist() == [0, 0.25]  # seat 1: the bring-in counts as a call
    assert history[2, 0].tolist() == [0.25, 0]  # seat 2: one bet (the completion)
    assert not history[0].any()
    # Seat 2 sees the same table from its own seat: seat 0 is its next seat.
    p2 = pieces(env, "player_2")
    assert onehots(p2["hole_cards"]) == card_ids("7s")
    assert onehots(p2["up_cards"].reshape(8, 52)[1]) == card_ids("9d")
    assert onehots(p2["to_act"]) == [1] and onehots(p2["button"]) == [0]
    assert p2["to_call"][0] == 0 and not p2["raise_to_amounts"].any()  # not its turn
    assert layout.size == 606


def test_folded_and_all_in_seats(engine):
    hands = {1: "Ah Kd", 0: "2c 3c"}
    env = soko_v0.env(engine=engine, num_players=2, stacks=[3, 50])
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    # Seat 0 has 2 chips after the ante: posting the 2-chip bring-in puts it all-in.
    act(env, "player_0", 1)
    game = env.unwrapped.game
    assert game.all_in == (True, False)
    p = pieces(env, "player_1")
    assert onehots(p["all_in"]) == [1]  # relative seat 1 is seat 0
    env.step(0)  # seat 1 folds to an all-in bring-in
    assert game.is_over
    p = pieces(env, "player_0")
    assert onehots(p["folded"]) == [1]
    assert not p["to_act"].any()


def test_wild_rank_changes_exactly_when_a_queen_is_followed(engine):
    # Button 0, two players: each pass goes seat 1, then seat 0.
    hands = {
        1: "As 2d 5h | 4c Qc | 6h Qh",
        0: "8c 9c Qd | Jh Jd | Td 4s",
    }
    env = follow_the_bitch_v0.env(engine=engine, num_players=2, low_chicago=True)
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    game = env.unwrapped.game
    layout = env.unwrapped.layout
    none = 13

    def wild(agent):
        p = pieces(env, agent)
        return onehots(p["wild_rank"]), onehots(p["wild_cards"])

    # Round 1: 5h, then Qd: the queen is the round's last up card, so nothing is wild.
    assert game.street == 0 and game.wild_rank is None
    assert wild("player_0") == ([none], []) and wild("player_1") == ([none], [])
    env.step(1)
    env.step(1)
    # Round 2: Qc, then Jd follows it: jacks are wild. Seat 0 also holds the Jh face down,
    # which only seat 0 may see as a wild card.
    assert game.street == 1 and game.wild_rank == "J"
    jack = RANKS.index("J")
    assert wild("player_0") == ([jack], card_ids("Jh Jd"))
    assert wild("player_1") == ([jack], card_ids("Jd"))
    env.step(1)
    env.step(1)
    # Round 3: Qh ends the jacks, the 4s follows it: fours are wild; seat 1 holds the 4c.
    assert game.street == 2 and game.wild_rank == "4"
    four = RANKS.index("4")
    assert wild("player_0") == ([four], card_ids("4s"))
    assert wild("player_1") == ([four], card_ids("4c 4s"))
    assert not pieces(env, "player_0")["queens_wild"].any()
    # Low Chicago: seat 1 holds the A of spades face down, the lowest spade there is.
    p1 = pieces(env, "player_1")
    assert onehots(p1["chicago_hole"]) == [0]
    assert onehots(pieces(env, "player_0")["chicago_hole"]) == [13]  # no face-down spade
    chicago_order = [int(c) for c in parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks")]
    spades_up = [chicago_order[i] for i in onehots(p1["chicago_up"])]
    assert spades_up == card_ids("4s")
    assert layout["wild_rank"].size == 14


def test_queens_wild_marks_visible_queens(engine):
    hands = {1: "Qs 2d 5h", 0: "8c 9c Qd"}
    env = follow_the_bitch_v0.env(engine=engine, num_players=2, queens_wild=True)
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    p1, p0 = pieces(env, "player_1"), pieces(env, "player_0")
    assert p1["queens_wild"][0] == 1
    assert onehots(p1["wild_cards"]) == card_ids("Qs Qd")  # its own Qs and the Qd showing
    assert onehots(p0["wild_cards"]) == card_ids("Qd")
    assert "chicago_hole" not in env.unwrapped.layout


def test_no_observation_depends_on_another_seats_face_down_cards(engine):
    # Two deals that differ only in seat 1's face-down cards; with the same actions, every
    # observation of seats 0 and 2 is identical until the hand is decided.
    base = {0: "2c 3d 4h | 5s 6c | 7d 8h", 1: "9s Tc Jd | Qh Kc | As 2d", 2: "3c 4d 5h | 6s 7c | 8d 9h"}
    swapped = {**base, 1: "Ad Kd Jd | Qh Kc | Ks 2d"}
    traces = []
    for hands in (base, swapped):
        env = follow_the_bitch_v0.env(engine=engine, num_players=3, low_chicago=True)
        env.reset(options={"deck": deal(3, 0, hands), "button": 0})
        trace = []
        script = iter([2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if not terminated:  # at the end the stacks tell who won: public news by then
                trace.append([env.observe(a)["observation"].tolist() for a in ("player_0", "player_2")])
            env.step(None if terminated else next(script))
        traces.append(trace)
    assert len(traces[0]) == 10  # every decision of the three rounds
    assert traces[0] == traces[1]


def test_encoder_follows_a_new_game_and_replays(engine):
    enc = ObservationEncoder("soko")
    env = soko_v0.raw_env(engine=engine, num_players=4)
    env.reset(seed=3)
    first = env.observe(env.agent_selection)["observation"]
    again = ObservationEncoder("soko").encode(env.game, env.game.current_player)
    assert np.array_equal(first, again)
    with pytest.raises(ValueError, match="encoder is for soko"):
        enc.encode(Game("follow_the_bitch", 2, seed=0), 0)


def test_values_stay_in_the_box_with_deep_no_limit_all_ins(engine):
    env = soko_v0.raw_env(engine=engine, num_players=3, betting="no_limit", stacks=[5, 400, 3000])
    box = env.observation_space("player_0")["observation"]
    for hand in range(30):
        env.reset(seed=hand)
        while not env.game.is_over:
            obs = env.observe(env.agent_selection)
            assert box.contains(obs["observation"])
            env.step(int(np.flatnonzero(obs["action_mask"])[-1]))  # always the largest size
        for agent in env.possible_agents:
            assert box.contains(env.observe(agent)["observation"])


# ---------------------------------------------------------------- seeding and replay

def test_seed_replays_deck_and_button_and_options_override_them(engine):
    env = soko_v0.raw_env(engine=engine, num_players=5)
    env.reset(seed=11)
    deck, button = env.game.deck, env.game.button
    env.reset()
    assert env.game.deck != deck  # the generator moves on
    env.reset(seed=11)
    assert (env.game.deck, env.game.button) == (deck, button)
    env.reset(options={"deck": deck, "button": (button + 1) % 5})
    assert env.game.deck == deck and env.game.button == (button + 1) % 5
    env.reset(options={"deck": "As Ks", "button": 0, "stacks": [50] * 5})
    assert env.game.hole_cards(1) == parse_cards("As") and env.game.hole_cards(2) == parse_cards("Ks")
    assert env.game.starting_stacks == (50,) * 5
    env.reset(seed=0, options={"options": 1})  # unknown keys are ignored (as api_test requires)


def test_the_env_is_the_engines_game(engine):
    env = follow_the_bitch_v0.env(engine=engine, num_players=4, rules="follow_the_bitch_low_chicago",
                                  bring_in=None)
    env.reset(seed=2)
    game = env.unwrapped.game
    assert game.rules == RULES["follow_the_bitch_low_chicago"]
    assert game.num_players == 4 and game.current_player == int(env.agent_selection[-1])


def test_keyword_errors_are_clear(engine):
    with pytest.raises(ValueError, match="soko takes 2 to 8 players"):
        soko_v0.env(engine=engine, num_players=9)
    with pytest.raises(ValueError, match="belongs to another env"):
        soko_v0.env(engine=engine, rules="follow_the_bitch")
    with pytest.raises(ValueError, match="unknown rules field"):
        follow_the_bitch_v0.env(engine=engine, wild_card="Q")
    with pytest.raises(ValueError,
                       match="betting must be .fixed_limit., .spread_limit., .pot_limit. or .no_limit."):
        soko_v0.env(engine=engine, betting="table_stakes")
    with pytest.raises(ValueError, match="render_mode"):
        soko_v0.env(engine=engine, render_mode="rgb_array")
    with pytest.raises(ValueError, match="reward must be"):
        soko_v0.env(engine=engine, reward="dollars")
    env = soko_v0.env(engine=engine, num_players=2, bring_in="highest", stacks=100)
    env.reset(seed=0)
    assert env.unwrapped.game.rules.bring_in == "highest"
    assert env.unwrapped.game.starting_stacks == (100, 100)


# ---------------------------------------------------------------- render

def test_ansi_render_hides_face_down_cards_until_showdown(engine):
    hands = {1: "Ah Kd | 9c | 9d | 2s", 0: "2c 3c | 4h | 5h | 7d"}
    env = soko_v0.env(engine=engine, num_players=2, render_mode="ansi")
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    text = env.render()
    for piece in ("player_0", "player_1", "799", "Kd", "3c", "Pot: 2", "to act: seat 0", "button",
                  "Seat 0 is dealt 3c up"):
        assert piece in text, piece
    assert "Ah" not in text and "2c" not in text and "[??]" in text
    while not env.unwrapped.game.is_over:
        env.step(1)
    text = env.render()
    assert "Ah" in text and "2c" in text and "shows" in text and "hand over" in text


def test_ansi_render_shows_the_wild_rank(engine):
    hands = {1: "As 2d Qh", 0: "8c 9c 7d"}
    env = follow_the_bitch_v0.env(engine=engine, num_players=2, render_mode="ansi")
    env.reset(options={"deck": deal(2, 0, hands), "button": 0})
    text = env.render()
    assert "Wild: 7" in text and "7s are wild" in text
    assert "As" not in text


def test_human_render_prints(capsys, engine):
    env = soko_v0.env(engine=engine, num_players=2, render_mode="human")
    env.reset(seed=0)
    env.step(1)
    assert "soko, 2 players" in capsys.readouterr().out


def test_docstring_tables_match_the_layouts():
    import envs.stud_env as doc
    for preset in ("soko", "follow_the_bitch_low_chicago"):
        assert build_layout(preset).table() in doc.__doc__
    assert Card(50) == parse_cards("Ah")[0]
