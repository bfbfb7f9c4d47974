"""One person's table against agents: the hands, the seats, the running result, and the JSON
state the person's screen is drawn from.

:class:`Table` is the referee of the web table and the terminal table alike. It holds the
:class:`~envs.engine.game.Game`, lets the agents act through ``envs.actions.choose_action``,
and takes the person's action ids only after checking them against the action mask. What it
hands out for drawing, :func:`table_state`, is built from the person's
:class:`~envs.engine.game.PlayerView` alone, so another seat's face-down card cannot reach the
screen before that seat shows it.

Hand ``k`` of a table with seed ``s`` is dealt from ``SeedSequence(s, spawn_key=(k,))``: the
deck order and every agent's seed for that hand, so the same seed replays the same table for
the same actions. The button moves one seat each hand; every hand starts from full stacks.

A seed the person chose is shown on the table (:attr:`Table.public_seed`); a random one is
not, ever: with the seed and this code anyone could deal the hidden cards of every hand.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent
from agents.registry import AGENTS, bind_spec, check_spec, display_name, make_agent
from envs.actions import (
    CHECK_CALL,
    FIRST_BET,
    FOLD,
    action_mask,
    apply_action,
    choose_action,
)
from envs.engine.cards import Card
from envs.engine.events import ACTION_KINDS, BET_KINDS, EventKind, WinReason
from envs.engine.game import Game, PlayerView
from envs.engine.rules import (
    BETTING_STRUCTURES,
    RULES,
    Rules,
    get_rules,
    low_chicago_key,
    rules_evaluator,
)

__all__ = [
    "GAME_TITLES",
    "MAX_HISTORY",
    "Table",
    "TableConfig",
    "action_choices",
    "default_opponent",
    "replay_frames",
    "table_state",
]

MAX_HISTORY = 500
"""Finished hands a table keeps for replay and download (the oldest go first)."""

GAME_TITLES = {
    "soko": "Soko",
    "soko_nordic": "Soko (Nordic bring-in)",
    "follow_the_bitch": "Follow the Bitch",
    "follow_the_bitch_low_chicago": "Follow the Bitch, Low Chicago",
    "soko_mini": "Soko mini (12 cards)",
}


def default_opponent(preferred: str = "champion") -> str:
    """``preferred`` when the registry knows its agent name, else ``equity`` (the champion
    agents may not be installed). Its options are checked against the game when a table is
    made, where a bad one is a clear error."""
    name = preferred.partition(":")[0].strip() if isinstance(preferred, str) else ""
    return preferred.strip() if name in AGENTS else "equity"


@dataclass(frozen=True)
class TableConfig:
    """What a table plays: the preset, the seats, the opponents' agent specs (one for every
    opponent, or one per opponent seat), the seed (None: a random one, kept secret) and
    an optional coach spec (an agent whose action probabilities are shown for the person's
    decisions)."""

    game: str = "soko"
    players: int = 2
    opponents: tuple[str, ...] = ("equity",)
    seed: int | None = None
    coach: str | None = None
    human_seat: int = 0
    betting: str | None = None  # None: the preset's (fixed limit); or spread_limit, pot_limit, no_limit


def _check_config(cfg: TableConfig) -> tuple[Rules, tuple[str, ...], int]:
    """(rules, one spec per opponent seat, seed), or a one-line ValueError."""
    if not isinstance(cfg.game, str) or cfg.game not in RULES:
        raise ValueError(f"unknown game {cfg.game!r}; games are {', '.join(RULES)}")
    if cfg.betting is not None and cfg.betting not in BETTING_STRUCTURES:
        raise ValueError(f"betting must be one of {', '.join(BETTING_STRUCTURES)}, not {cfg.betting!r}")
    rules = get_rules(cfg.game, betting=cfg.betting) if cfg.betting else get_rules(cfg.game)
    n = cfg.players
    if type(n) is not int or not rules.min_players <= n <= rules.max_players:
        raise ValueError(f"{rules.name} takes {rules.min_players} to {rules.max_players} players, not {n!r}")
    if type(cfg.human_seat) is not int or not 0 <= cfg.human_seat < n:
        raise ValueError(f"the person's seat must be 0..{n - 1}, not {cfg.human_seat!r}")
    specs = tuple(cfg.opponents)
    if not specs or not all(isinstance(s, str) for s in specs):
        raise ValueError("opponents must be one or more agent specs such as 'equity' or 'tag'")
    if len(specs) == 1:
        specs = specs * (n - 1)
    if len(specs) != n - 1:
        raise ValueError(f"{n} players need {n - 1} opponent specs (or one for all), not {len(specs)}")
    specs = tuple(bind_spec(s, rules, n) for s in specs)   # champion: this game's
    for spec in specs + ((cfg.coach,) if cfg.coach else ()):
        check_spec(spec, rules)
    seed = cfg.seed
    if seed is None:
        seed = secrets.randbits(48)
    if type(seed) is not int or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, not {seed!r}")
    return rules, specs, seed


@dataclass
class _Seat:
    name: str
    agent: Agent | None  # None: the person


@dataclass
class HandRecord:
    """A finished hand: its number and the game (its deck, stacks, button and log)."""

    number: int
    game: Game
    payoff: int


@dataclass
class Table:
    """A table for one person against agents. ``deck_for_hand(k)`` (tests) gives hand ``k``'s
    top cards (a string such as ``"Ah Kd ..."``), dealt before the seeded rest of the deck."""

    config: TableConfig = field(default_factory=TableConfig)
    deck_for_hand: Callable[[int], str | None] | None = None

    def __post_init__(self) -> None:
        self.rules, specs, self.seed = _check_config(self.config)
        self.public_seed = self.seed if self.config.seed is not None else None
        n = self.num_players = self.config.players
        self.human = self.config.human_seat
        agents = iter(specs)
        self.seats: list[_Seat] = []
        for p in range(n):
            if p == self.human:
                self.seats.append(_Seat("You", None))
            else:
                spec = next(agents)
                self.seats.append(_Seat(display_name(spec), make_agent(spec)))
        self.coach: Agent | None = make_agent(self.config.coach) if self.config.coach else None
        self.coach_name = display_name(self.config.coach) if self.config.coach else None
        self._coach_lock = threading.Lock()  # one question at a time for the coach agent
        self.hand_number = -1
        self.game: Game | None = None
        self.history: list[HandRecord] = []
        self.total = 0          # the person's chips won over the finished hands
        self.hands_played = 0
        self.start_hand()

    # ----------------------------------------------------------------------------------------
    # Flow

    def start_hand(self) -> None:
        """Deal the next hand (the agents do not act yet: see :meth:`play_agents`)."""
        if self.game is not None and not self.game.is_over:
            raise ValueError("the hand is not over yet")
        self.hand_number += 1
        k = self.hand_number
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(k,)))
        agent_seeds = rng.integers(2**63, size=self.num_players)
        for p, seat in enumerate(self.seats):
            if seat.agent is not None:
                seat.agent.reset(int(agent_seeds[p]))
        deck = self.deck_for_hand(k) if self.deck_for_hand else None
        self.game = Game(self.rules, self.num_players, button=k % self.num_players, deck=deck, seed=rng)

    @property
    def human_to_act(self) -> bool:
        return self.game.current_player == self.human

    def play_agents(self, *, on_action: Callable[[], None] | None = None) -> list[dict]:
        """Let the agents act until the person is to act or the hand is over; the state after
        each agent action, in order (what the screen shows one by one)."""
        frames = []
        g = self.game
        while g.current_player is not None and g.current_player != self.human:
            agent = self.seats[g.current_player].agent
            apply_action(g, choose_action(agent, g))
            if g.is_over:
                self._finish_hand()
            frames.append(self.state())
            if on_action:
                on_action()
        return frames

    def act(self, action: object) -> list[dict]:
        """The person plays action id ``action``: a ValueError saying why when it is not legal
        now (nothing changes); else the state after it and after each agent action that follows."""
        g = self.game
        if g.is_over:
            raise ValueError("the hand is over: start the next hand")
        if g.current_player != self.human:
            raise ValueError(f"it is seat {g.current_player}'s turn, not yours")
        if type(action) is not int:
            raise ValueError(f"an action is an action id (a whole number), not {action!r}")
        mask = action_mask(g)
        if not 0 <= action < len(mask) or not mask[action]:
            legal = [c["id"] for c in action_choices(g.view(self.human), mask)]
            raise ValueError(f"action {action} is not legal now; legal ids: {legal}")
        apply_action(g, action)
        if g.is_over:
            self._finish_hand()
        return [self.state()] + self.play_agents()

    def next_hand(self) -> list[dict]:
        """Start the next hand and let the agents act up to the person's first decision."""
        self.start_hand()
        return [self.state()] + self.play_agents()

    def _finish_hand(self) -> None:
        g = self.game
        payoff = g.payoffs[self.human]
        self.total += payoff
        self.hands_played += 1
        self.history.append(HandRecord(self.hand_number, g, payoff))
        del self.history[:-MAX_HISTORY]

    def find_hand(self, number: int) -> HandRecord:
        for record in self.history:
            if record.number == number:
                return record
        raise ValueError(f"no finished hand {number!r} at this table")

    # ----------------------------------------------------------------------------------------
    # What the person sees

    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    def session(self) -> dict:
        bb = self.rules.big_bet
        return {"hands": self.hands_played, "chips": self.total, "big_bets": round(self.total / bb, 3)}

    def state(self) -> dict:
        """The person's screen now (:func:`table_state` of the person's view)."""
        state = table_state(self.game.view(self.human), names=self.names(), hand=self.hand_number,
                            session=self.session(), seed=self.public_seed)
        state["coach"] = self.coach_name
        return state

    def coach_question(self) -> tuple | None:
        """What the coach is asked about the person's decision now (the person's view, the
        mask, the hand number), or None (no coach, or the person is not to act). Cheap: the
        server takes it under the table's lock and leaves the thinking to :meth:`coach_answer`."""
        if self.coach is None or not self.human_to_act:
            return None
        return self.game.view(self.human), action_mask(self.game), self.hand_number

    def coach_answer(self, view: PlayerView, mask: np.ndarray, hand: int) -> dict:
        """The coach's action probabilities at ``view`` (its :meth:`Agent.policy`; where that is
        unknown, its choice with probability 1). The coach sees only the person's view; it is
        re-seeded per decision, so asking twice gives the same answer."""
        with self._coach_lock:
            self.coach.reset(int(np.random.SeedSequence(self.seed, spawn_key=(hand, len(view.log), 1))
                                 .generate_state(1)[0]))
            probs = self.coach.policy(view, mask)
            known = probs is not None
            if not known:
                probs = np.zeros(len(mask))
                probs[int(self.coach.act(view, mask))] = 1.0
        return {"type": "coach", "agent": self.coach_name, "hand": hand, "turn": len(view.log),
                "known": known,
                "choices": [dict(c, p=round(float(probs[c["id"]]), 4)) for c in action_choices(view, mask)]}

    def coach_advice(self) -> dict | None:
        """:meth:`coach_answer` for the decision now, or None (the terminal table's coach)."""
        question = self.coach_question()
        return None if question is None else self.coach_answer(*question)


# --------------------------------------------------------------------------------------------
# The state as JSON-ready data

def _card(c: Card | None) -> str | None:
    return None if c is None else str(c)


def _bring_in_due(view: PlayerView) -> bool:
    """Whether the first action of the hand, the forced bring-in, is still to come."""
    if view.rules.bring_in is None or view.street != 0:
        return False
    return not any(e.kind in ACTION_KINDS for e in view.log)


def action_choices(view: PlayerView, mask: np.ndarray) -> list[dict]:
    """The legal actions of the seat to act as ``{"id", "label", "kind", "amount"}``, in id
    order: what the buttons say (``"Call 4"``, ``"Complete to 4"``, ``"Raise to 16"``...)."""
    if view.current_player != view.seat:
        return []
    out = []
    level = max(view.committed)
    bring_in = _bring_in_due(view)
    stack = view.stacks[view.seat]
    if mask[FOLD]:
        out.append({"id": FOLD, "label": "Fold", "kind": "fold", "amount": 0})
    if mask[CHECK_CALL]:
        owed = view.to_call
        if bring_in:
            label, kind = f"Bring in {owed}", "bring_in"
        elif owed == 0:
            label, kind = "Check", "check"
        else:
            label, kind = f"Call {owed}", "call"
        if owed and owed >= stack:
            label += " (all-in)"
        out.append({"id": CHECK_CALL, "label": label, "kind": kind, "amount": owed})
    bet_in_round = any(e.kind in BET_KINDS for e in _this_round(view.log))
    for i, amount in enumerate(view.raise_to_amounts):
        if bring_in or (view.rules.bring_in is not None and view.street == 0 and not bet_in_round):
            word, kind = "Complete to", "complete"
        elif level == 0:
            word, kind = "Bet", "bet"
        else:
            word, kind = "Raise to", "raise"
        label = f"{word} {amount}"
        if amount - view.committed[view.seat] >= stack:
            label += " (all-in)"
        if mask[FIRST_BET + i]:
            out.append({"id": FIRST_BET + i, "label": label, "kind": kind, "amount": amount})
    return out


def _this_round(log) -> list:
    for i in range(len(log) - 1, -1, -1):
        if log[i].kind == EventKind.STREET:
            return list(log[i + 1:])
    return list(log)


def _wild_state(view: PlayerView) -> dict | None:
    """Follow the queen as it went: the wild rank now, the queen and the card that made it,
    and the queen that ended the last wild rank (None for games without it)."""
    if not view.rules.follow_the_queen:
        return None
    queen = made_by = follower = ended = ended_by = None
    last_up = None
    for e in view.log:
        if e.kind == EventKind.DEAL and e.up:
            last_up = e.card
            if e.card.rank == "Q":
                queen = e.card
        elif e.kind == EventKind.WILD:
            if e.rank is None:
                ended, ended_by = e.ended, _card(queen)
            else:
                made_by, follower = _card(queen), _card(last_up)
    return {"rank": view.wild_rank, "ranks": list(view.wild_ranks),
            "queen": made_by if view.wild_rank else None,
            "card": follower if view.wild_rank else None, "ended": ended, "ended_by": ended_by}


def _chicago_state(view: PlayerView) -> dict | None:
    """Low Chicago: the person's candidate card (lowest face-down spade, ace lowest) and, after
    the showdown, the seat that took the Chicago half."""
    if not view.rules.low_chicago:
        return None
    spades = [c for c in view.hole_cards if low_chicago_key(c) != 13]
    mine = min(spades, key=low_chicago_key) if spades else None
    winner = next((e.seat for e in view.log if e.kind == EventKind.WIN and e.reason == WinReason.LOW_CHICAGO),
                  None)
    return {"card": _card(mine), "winner": winner}


def _result(view: PlayerView, names: Sequence[str]) -> dict | None:
    ends = [e for e in view.log if e.kind == EventKind.END]
    if not ends:
        return None
    won = [0] * view.num_players
    pots: dict[int, dict] = {}
    for e in view.log:
        if e.kind == EventKind.WIN:
            won[e.seat] += e.amount
            why = str(e.value) if e.reason == WinReason.BEST_HAND else e.reason.value
            name = "Main pot" if e.pot == 0 else f"Side pot {e.pot}"
            pot = pots.setdefault(e.pot, {"pot": e.pot, "name": name, "amount": 0, "winners": []})
            pot["amount"] += e.amount
            pot["winners"].append({"seat": e.seat, "name": names[e.seat], "amount": e.amount,
                                   "reason": e.reason.value, "why": why})
    payoffs = [won[p] - view.total_committed[p] for p in range(view.num_players)]
    shows = [{"seat": e.seat, "name": names[e.seat], "cards": [str(c) for c in e.cards],
              "value": str(e.value)} for e in view.log if e.kind == EventKind.SHOW]
    return {"how": ends[-1].how, "payoffs": payoffs, "pots": [pots[k] for k in sorted(pots)], "shows": shows,
            "you": payoffs[view.seat], "you_big_bets": round(payoffs[view.seat] / view.rules.big_bet, 3)}


def _last_actions(view: PlayerView) -> list[str | None]:
    """Each seat's last action this betting round, in words (``"raises to 8"``), else None."""
    last: list[str | None] = [None] * view.num_players
    for e in _this_round(view.log):
        if e.kind in ACTION_KINDS:
            last[e.seat] = e.describe().split(" ", 2)[2]
    return last


def table_state(view: PlayerView, *, names: Sequence[str], hand: int, session: dict | None = None,
                seed: int | None = None, reveal: Sequence[Sequence[Card]] | None = None) -> dict:
    """The screen of ``view.seat`` as JSON-ready data, from the view alone.

    Other seats' face-down cards are ``None`` (drawn as backs) until a ``show`` event in the
    view's log shows them. ``reveal`` (replays of a whole hand history only) gives every seat's
    face-down cards to draw face up.
    """
    n = view.num_players
    rules = view.rules
    down: list[list[str | None]] = [[] for _ in range(n)]
    for e in view.log:
        if e.kind == EventKind.DEAL and not e.up:
            down[e.seat].append(_card(e.card))
    for e in view.log:
        if e.kind == EventKind.SHOW:
            down[e.seat] = [str(c) for c in e.cards]
    if reveal is not None:
        down = [[str(c) for c in cards] for cards in reveal]
    evaluate = rules_evaluator(rules, view.wild_ranks)
    bet_size = next((e.bet_size for e in reversed(view.log) if e.kind == EventKind.STREET), rules.small_bet)
    last = _last_actions(view)
    shown = {e.seat: str(e.value) for e in view.log if e.kind == EventKind.SHOW}
    seats = []
    for p in range(n):
        up = view.up_cards[p]
        seats.append({
            "seat": p, "name": names[p], "you": p == view.seat, "stack": view.stacks[p],
            "committed": view.committed[p], "total": view.total_committed[p], "folded": view.folded[p],
            "all_in": view.all_in[p], "up": [str(c) for c in up], "hole": down[p],
            "showing": str(evaluate(up)) if up else None, "value": shown.get(p),
            "last_action": last[p], "button": p == view.button,
        })
    mask = np.zeros(FIRST_BET + rules.max_raise_to_amounts, dtype=np.int8)
    if view.current_player == view.seat:
        mask[FOLD] = view.to_call > 0 and not _bring_in_due(view)
        mask[CHECK_CALL] = 1
        mask[FIRST_BET:FIRST_BET + len(view.raise_to_amounts)] = 1
    result = _result(view, names)
    return {
        "type": "state",
        "game": rules.name, "title": GAME_TITLES.get(rules.name, rules.name), "betting": rules.betting.value,
        "hand": hand, "seed": seed,
        "turn": len(view.log), "players": n, "you": view.seat, "button": view.button,
        "street": view.street, "streets": rules.num_streets, "bet_size": bet_size,
        "small_bet": rules.small_bet, "big_bet": rules.big_bet, "ante": rules.ante,
        "pot": view.pot, "to_call": view.to_call, "current": view.current_player,
        "your_turn": view.current_player == view.seat,
        "seats": seats, "wild": _wild_state(view), "low_chicago": _chicago_state(view),
        "actions": action_choices(view, mask), "log": [e.describe() for e in view.log],
        "last": next((e.describe() for e in reversed(view.log)
                      if e.kind in ACTION_KINDS or e.kind == EventKind.END), None),
        "result": result, "session": session,
    }


def replay_frames(game: Game, *, seat: int | None, names: Sequence[str] | None = None,
                  hand: int = 0) -> list[dict]:
    """The screens of a finished (or running) hand, one before the first action and one after
    each action: what ``seat`` saw, or with ``seat=None`` every card the hand history holds
    (a whole-hand replay). The hand is dealt again from its deck and its actions replayed, so
    each frame is :func:`table_state` of a real position."""
    n = game.num_players
    names = list(names) if names is not None else [f"Seat {p}" for p in range(n)]
    g = Game(game.rules, n, stacks=game.starting_stacks, button=game.button, deck=game.deck, seed=0)
    viewer = 0 if seat is None else seat

    def frame() -> dict:
        reveal = [g.hole_cards(p) for p in range(n)] if seat is None else None
        return table_state(g.view(viewer), names=names, hand=hand, reveal=reveal)

    frames = [frame()]
    for e in game.log:
        if e.kind in ACTION_KINDS:
            g.play_logged(e)
            frames.append(frame())
    return frames
