"""Shared helpers for the game-engine tests: deck building, a tiny action script, snapshots.

``deal`` turns each seat's cards (in the order that seat receives them) into the deck order
the engine deals from (docs/rules.md "Seats and dealing": passes of one card per active seat,
starting at the first seat left of the button and going clockwise). A seat that folds simply
lists fewer cards: later passes skip it, as they skip a folded player.

``play`` runs an action script, one token per action:

    f          fold
    c          check or call (posts the bring-in when that is the choice)
    k          check: asserts nothing is owed, then checks
    b / r      bet or raise the smallest legal size (bet_or_raise())
    b8 / r8    bet or raise to 8 chips this round (raise-to total, as in the contract)
    a          all-in: the largest size offered (max(raise_to_amounts()))
    2:c        a seat prefix asserts who is to act before acting
    /          asserts the betting round just closed (the street moved on or the hand ended)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import pytest

from envs.engine.cards import Card, parse_cards
from envs.engine.events import WinReason
from envs.engine.game import Game


def deal(num_players: int, button: int, hands: Mapping[int, str]) -> str:
    """The deck string (top card first) that deals ``hands[seat]`` to each seat.

    ``hands[seat]`` lists that seat's cards in the order it receives them; ``|`` may separate
    the streets for readability. Pass k gives a card to every seat with more than k cards, in
    clockwise order from seat (button + 1) % n.
    """
    per_seat = {seat: [c for c in text.replace("|", " ").split()] for seat, text in hands.items()}
    for cards in per_seat.values():
        parse_cards(cards)  # malformed names fail here, not inside the engine
    order = [(button + 1 + i) % num_players for i in range(num_players)]
    passes = max(len(c) for c in per_seat.values())
    out: list[str] = []
    for k in range(passes):
        for seat in order:
            cards = per_seat.get(seat, [])
            if len(cards) > k:
                out.append(cards[k])
    parse_cards(out)  # duplicates across seats fail here
    return " ".join(out)


def play(game, script: str) -> None:
    """Run an action script (see the module docstring) on ``game``."""
    street = game.street
    for i, token in enumerate(script.split()):
        where = f"token {i} {token!r} of {script!r}"
        if token == "/":
            assert game.is_over or game.street == street + 1, (
                f"{where}: the betting round did not close (street {game.street}, "
                f"player {game.current_player} to act)")
            street = game.street
            continue
        assert not game.is_over, f"{where}: the hand is already over"
        seat, _, action = token.rpartition(":")
        if seat:
            assert game.current_player == int(seat), (
                f"{where}: seat {game.current_player} is to act, not seat {seat}")
        kind, amount = action[0], action[1:]
        if kind == "f":
            game.fold()
        elif kind == "c":
            game.check_or_call()
        elif kind == "k":
            assert game.to_call == 0, f"{where}: {game.to_call} chips to call, not a free check"
            game.check_or_call()
        elif kind in "br":
            game.bet_or_raise(int(amount) if amount else None)
        elif kind == "a":
            game.bet_or_raise(max(game.raise_to_amounts()))
        else:
            raise ValueError(f"{where}: unknown action")


def call_down(game) -> None:
    """Check or call until the hand ends (everyone still in reaches showdown)."""
    for _ in range(500):
        if game.is_over:
            return
        game.check_or_call()
    raise AssertionError("the hand did not end after 500 calls")


def snapshot(game) -> tuple:
    """Everything public about the state, to show a refused action changed nothing."""
    n = game.num_players
    return (
        game.current_player, game.is_over, game.payoffs, game.pot, game.street,
        tuple(game.stacks), tuple(game.committed), tuple(game.total_committed),
        tuple(game.folded), tuple(game.all_in), game.to_call, tuple(game.raise_to_amounts()),
        game.raises_this_round, game.bring_in_seat, game.wild_rank, tuple(game.wild_ranks),
        tuple(tuple(game.up_cards(s)) for s in range(n)),
        tuple(tuple(game.hole_cards(s)) for s in range(n)),
        len(game.log), game.history(),
        game.can_fold(), game.can_check_or_call(), game.can_bet_or_raise(),
    )


def refused(game, action, *args) -> None:
    """``action(*args)`` raises ValueError and leaves every public piece of state as it was
    (contract: refused actions raise ValueError with a sentence and change nothing)."""
    before = snapshot(game)
    with pytest.raises(ValueError):
        action(*args)
    assert snapshot(game) == before


def cards_in(obj) -> set[Card]:
    """Every Card value anywhere inside ``obj`` (a view: dataclasses, tuples, dicts, events).

    Free text is not searched: the engine's sentences use rank plurals such as "2s are wild"
    or "ends Ks wild", which read like card names.
    """
    found: set[Card] = set()
    todo = [obj]
    seen: set[int] = set()
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is Card:
            found.add(item)
        elif kind in _SCALARS or item is None or isinstance(item, (str, bytes, int, float)):
            continue
        elif id(item) in seen:
            continue
        else:
            seen.add(id(item))
            if isinstance(item, Mapping):
                todo.extend(item.keys())
                todo.extend(item.values())
            elif isinstance(item, (list, tuple, set, frozenset)):
                todo.extend(item)
            elif hasattr(item, "__dataclass_fields__"):
                todo.extend(getattr(item, name) for name in item.__dataclass_fields__)
            elif hasattr(item, "__dict__") and not isinstance(item, type):
                todo.extend(vars(item).values())
    return found


_SCALARS = frozenset({int, bool, float, str, bytes})


def hidden_from(game, viewer: int) -> set[Card]:
    """Face-down cards of every other seat: what ``viewer`` must not see before showdown."""
    return {c for s in range(game.num_players) if s != viewer for c in game.hole_cards(s)}


def wins_by_pot(g: Game) -> dict[int, list]:
    """The ``win`` events of the hand's log, grouped by pot index."""
    out = defaultdict(list)
    for e in g.log:
        if e.kind == "win":
            out[e.pot].append(e)
    return out


def check_pots(g: Game) -> None:
    """Every property of the pots of a finished hand that went to showdown."""
    n = g.num_players
    in_hand = [s for s in range(n) if not g.folded[s]]
    totals = g.total_committed
    # One pot per distinct contribution of the seats still in: a new pot starts only where a
    # contender's chips end, so adjacent pots never have the same contenders.
    assert len(g.pots) == len({totals[s] for s in in_hand if totals[s] > 0})
    # (After the payout ``all_in`` no longer tells: a seat was all-in if it put in its stack.)
    if not any(totals[s] == g.starting_stacks[s] for s in in_hand):
        assert len(g.pots) == 1 and g.pots[0][0] == g.pot
    assert sum(amount for amount, _ in g.pots) == g.pot
    wins = wins_by_pot(g)
    assert sorted(wins) == list(range(len(g.pots)))
    for index, (amount, _) in enumerate(g.pots):
        events = wins[index]
        assert sum(e.amount for e in events) == amount  # each pot is paid out exactly
        chicago = [e for e in events if e.reason == WinReason.LOW_CHICAGO]
        high = [e for e in events if e.reason != WinReason.LOW_CHICAGO]
        assert len(chicago) <= 1  # the Chicago half is taken once per pot...
        if chicago:
            assert g.rules.low_chicago
            assert chicago[0].amount == amount // 2  # ...from the whole pot, odd chip to high
        shares = [e.amount for e in high]
        assert len(set(e.seat for e in high)) == len(high)
        assert max(shares) - min(shares) <= 1  # tied winners split evenly
        # The odd chips go to the first tied winners from the dealer's left.
        order = [(g.button + 1 + i) % n for i in range(n)]
        ranked = sorted(high, key=lambda e: order.index(e.seat))
        assert [e.amount for e in ranked] == sorted(shares, reverse=True)


def random_ppo_agent(env, activation: str = "tanh", *, features=(), scale: float = 0.5, name: str = "m"):
    """A ``PPOAgent`` of a fresh ``[16]`` MaskablePPO policy on ``env`` whose weights are seeded
    normal draws times ``scale`` (a policy far from uniform, the same in every run); ``elu`` is
    a network the NumPy forward pass does not know (torch runs it)."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from agents.trained import PPOAgent

    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[16], activation_fn={"tanh": torch.nn.Tanh,
                                                                         "elu": torch.nn.ELU}[activation]))
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * scale)
    model.observation_features = list(features)
    return PPOAgent.from_model(model, name=name, deterministic=False)


def smoke_trained(prepare, rollouts: int = 2):
    """The smoke config's model (as ``train.ppo`` builds it) after ``rollouts`` rollouts and their
    updates with torch on one thread, ``prepare(model)`` having changed it first: two calls that
    make different changes train to the same weights when the changes keep the arithmetic."""
    import torch

    from train.config import load_config
    from train.ppo import _new_model, training_env

    cfg = load_config("configs/smoke.yaml")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        venv = training_env(cfg)
        try:
            model = _new_model(cfg, venv, 0)
            prepare(model)
            model.learn(total_timesteps=rollouts * cfg.ppo.n_steps * cfg.ppo.n_envs)
            assert model._n_updates == rollouts * cfg.ppo.n_epochs
        finally:
            venv.close()
    finally:
        torch.set_num_threads(threads)
    return model
