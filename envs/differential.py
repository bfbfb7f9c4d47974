"""The compiled core against the reference engine, hand by hand (used by
``tests/test_core_differential.py`` and ``bench/core_differential.py``).

For seeded decks, buttons and stacks, the same hands are dealt to ``envs.engine.game.Game`` and
to ``envs.batched.BatchedGame``; at every step a random legal action (``envs.actions.
random_action`` on the reference's mask) is played on both, and before it the two must agree on
the player to act, the action mask (``envs.actions.action_mask``), the raise-to amounts and the
pot; at the end on every seat's payoff. The reference is right unless shown otherwise.
With ``observations`` the observations are compared too, bit for bit, and with ``features``
their optional pieces (``envs.observation.FEATURES``), the reference's ``win_probability``
being the pure-Python one (``ObservationEncoder``'s default hand strength).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from envs.actions import action_mask, apply_action, random_action
from envs.batched import BatchedGame
from envs.engine.game import Game
from envs.engine.rules import RULES, Rules, get_rules
from envs.observation import ObservationEncoder


@dataclass
class Report:
    hands: int = 0
    steps: int = 0
    mismatches: list[str] = field(default_factory=list)

    def add(self, other: Report) -> None:
        self.hands += other.hands
        self.steps += other.steps
        self.mismatches.extend(other.mismatches)


def variants() -> list[Rules]:
    """Every preset under every betting structure, plus each option off its preset value."""
    out = []
    for preset in RULES.values():
        for betting in ("fixed_limit", "spread_limit", "pot_limit", "no_limit"):
            out.append(preset.replace(betting=betting))
    soko, ftb = RULES["soko"], RULES["follow_the_bitch"]
    out += [
        soko.replace(name="soko_highest_bring_in", bring_in="highest"),
        soko.replace(name="soko_first_highest", first_to_act="highest", bring_in_amount=1),
        soko.replace(name="soko_no_open_pair", open_pair_doubles=False, ace_low_four_straight=False),
        soko.replace(name="soko_spread", betting="spread_limit", spread_sizes=(1.0, 1.25, 1.5, 2.0),
                     max_raises=1, ante=2, bring_in_amount=3, small_bet=5, big_bet=10),
        soko.replace(name="soko_pot_fractions", betting="pot_limit", pot_fractions=(0.33, 0.5, 0.75, 1.0),
                     ante=0),
        ftb.replace(name="ftb_queens_wild", queens_wild=True),
        ftb.replace(name="ftb_double_ace_flush", double_ace_flush=True, queens_wild=True),
        ftb.replace(name="ftb_chicago_nl", low_chicago=True, double_ace_flush=True, betting="no_limit",
                    pot_fractions=(0.25, 1.0)),
        ftb.replace(name="ftb_bring_in", bring_in="lowest", bring_in_amount=1, max_raises=5),
        ftb.replace(name="ftb_canadian", canadian_hands=True, first_to_act="lowest"),
    ]
    return out


def compare(rules: Rules | str, num_players: int, num_hands: int, seed: int, *,
            short_stacks: bool = False, observations: bool = False, features=(),
            max_report: int = 5) -> Report:
    """Play ``num_hands`` seeded hands on both engines; the mismatches found, described.

    ``observations``: also compare the observation of the player to act at every step
    (``envs.observation.ObservationEncoder``) and every seat's at the end of the hand;
    ``features``: with these optional pieces (implies ``observations``)."""
    rules = get_rules(rules)
    rng = np.random.default_rng(seed)
    cards = np.array([int(c) for c in rules.deck])
    decks = np.stack([rng.permutation(cards) for _ in range(num_hands)])
    buttons = rng.integers(num_players, size=num_hands)
    if short_stacks:  # all-ins and side pots in every structure
        stacks = rng.integers(1, 12 * rules.big_bet, size=(num_hands, num_players))
    else:
        stacks = np.full((num_hands, num_players), rules.stack)
    report = Report(hands=num_hands)
    games = [Game(rules, num_players, stacks=stacks[i].tolist(), button=int(buttons[i]),
                  deck=decks[i].tolist()) for i in range(num_hands)]
    observations = observations or bool(features)
    core = BatchedGame(rules, num_players, num_hands, auto_reset=False, observations=observations,
                       observation_features=features)
    encoders = ([ObservationEncoder(rules, core.layout) for _ in range(num_hands)]
                if observations else None)
    core.reset(decks=decks, buttons=buttons, stacks=stacks)
    live = list(range(num_hands))
    actions = np.full(num_hands, -1, dtype=np.int64)

    def mismatch(i: int, what: str) -> None:
        if len(report.mismatches) < max_report:
            g = games[i]
            report.mismatches.append(
                f"{rules.name} {num_players}p hand {i} (seed {seed}): {what}\n{g.history()}\n"
                f"core: {core.state(i)}")
        else:
            report.mismatches.append(what)

    while live:
        still = []
        for i in live:
            g = games[i]
            if g.is_over:
                if not core.dones[i]:
                    mismatch(i, f"the reference hand is over (payoffs {g.payoffs}), the core's is not")
                elif tuple(core.payoffs[i].tolist()) != g.payoffs:
                    mismatch(i, f"payoffs {g.payoffs} != core {tuple(core.payoffs[i].tolist())}")
                elif encoders:
                    for seat in range(num_players):
                        _compare_observation(encoders[i].encode(g, seat), core.observe(i, seat), core.layout,
                                             lambda what: mismatch(i, f"seat {seat} at the end: {what}"))
                continue
            if core.dones[i]:
                mismatch(i, "the core's hand is over, the reference's is not")
                continue
            mask = action_mask(g)
            if g.current_player != core.current_player[i]:
                mismatch(i, f"current player {g.current_player} != core {core.current_player[i]}")
                continue
            if not np.array_equal(mask, core.action_mask[i]):
                mismatch(i, f"mask {mask.tolist()} != core {core.action_mask[i].tolist()}")
                continue
            sizes = g.raise_to_amounts()
            if sizes != core.raise_to_amounts(i):
                mismatch(i, f"raise-to amounts {sizes} != core {core.raise_to_amounts(i)}")
                continue
            if g.pot != core.pot[i]:
                mismatch(i, f"pot {g.pot} != core {core.pot[i]}")
                continue
            if encoders and not _compare_observation(encoders[i].encode(g, g.current_player),
                                                     core.observations[i], core.layout,
                                                     lambda what: mismatch(i, what)):
                continue
            action = random_action(mask, rng)
            apply_action(g, action)
            actions[i] = action
            report.steps += 1
            still.append(i)
        if not still:
            break
        core.step(actions)
        actions[:] = -1
        live = still
    return report


def _compare_observation(reference: np.ndarray, core: np.ndarray, layout, mismatch) -> bool:
    """Whether two observations are bit-identical; if not, report the pieces that differ."""
    if np.array_equal(reference, core):
        return True
    pieces = layout.unpack(reference), layout.unpack(core)
    differ = [f"{name}: {pieces[0][name].tolist()} != core {pieces[1][name].tolist()}"
              for name in pieces[0] if not np.array_equal(pieces[0][name], pieces[1][name])]
    mismatch("observation differs in " + "; ".join(differ))
    return False


def sweep(num_hands: int, seed: int, *, variants_list: list[Rules] | None = None,
          observations: bool = False, features=()) -> Report:
    """``compare`` over every variant and player count, with deep and short stacks."""
    total = Report()
    for k, rules in enumerate(variants_list or variants()):
        for players in range(rules.min_players, rules.max_players + 1):
            for short in (False, True):
                total.add(compare(rules, players, num_hands,
                                  seed=seed * 100_003 + k * 101 + players * 2 + short,
                                  short_stacks=short, observations=observations, features=features))
    return total


__all__ = ["Report", "compare", "sweep", "variants"]
