"""Many hands at once on the compiled stud core (``envs._stud_core``, built from
``src/`` by ``pip install -e .``; docs/architecture.md "Port map" pairs each of its files
with the Python it ports).

The pure-Python engine (:mod:`envs.engine.game`) stays the reference: the core plays the same
rules, action ids and masks (:mod:`envs.actions`), and ``tests/test_core_differential.py``
checks it against ``Game`` step by step. Here a hand has no log and no Python objects; one
call steps every hand, and the results land in NumPy arrays allocated once:

============================  ========================================================
array                         meaning
============================  ========================================================
``current_player`` (N,) i32   the seat to act in each hand (-1: none)
``action_mask`` (N, A) i8     the legal action ids of that seat (as ``actions.action_mask``)
``pot`` (N,) i32              chips put in this hand, antes included
``payoffs`` (N, P) i32        net chips of the hand that ended at this step (else 0)
``dones`` (N,) bool           whether a hand ended at this step
``observations`` (N, O) f32   with ``observations=True``: the player to act's observation,
                              the layout and values of ``envs.observation`` (zeros: nobody),
                              with the optional pieces of ``observation_features``
``observed_seats`` (N, P) b   with ``observations=True``: whose observations are written;
                              a player to act not listed gets zeros, as nobody (default:
                              every seat; :meth:`BatchedGame.set_observed_seats`)
============================  ========================================================

With ``auto_reset`` (the default) a finished hand is replaced at once by a new one dealt from
its slot's own random stream, the button one seat on, so after :meth:`BatchedGame.step` every
slot has a player to act. A slot's stream is seeded by ``reset(seeds=...)``: the same seeds
give the same hands. (The core's shuffle is its own, not NumPy's: to replay a reference
``Game`` exactly, give both the deck with ``reset(decks=...)``.)

>>> g = BatchedGame("soko", 2, 3)
>>> g.reset(seeds=[1, 2, 3])
>>> g.current_player.shape, g.action_mask.shape
((3,), (3, 3))
>>> g.step(np.where(g.action_mask[:, 1] == 1, 1, -1))   # everyone checks/calls (or posts)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

from envs import _stud_core
from envs.actions import CHECK_CALL, FIRST_BET, FOLD, num_actions
from envs.engine.cards import RANKS
from envs.engine.equity import GOLDEN, SHARE_UNITS
from envs.engine.events import ACTION_KINDS
from envs.engine.hands import Category, HandValue
from envs.engine.rules import (
    NO_LOW_CHICAGO,
    NO_WILD,
    QUEEN,
    BetSize,
    Betting,
    Order,
    Rules,
    check_players,
    get_rules,
)
from envs.observation import WIN_EXACT, WIN_SAMPLES, HandStrength, build_layout, check_features

# ---------------------------------------------------------------------------------------------
# The contract with the core: its constants checked against the Python names they copy, and
# every Rules field either passed to it (CORE_FIELDS) or named as not affecting play
# (NOT_PASSED). tests/test_core_contract.py holds both.


def core_constants_mismatch(core=_stud_core) -> list[str]:
    """What differs between the constants ``core`` exports (``src/constants.h``, through
    ``src/bindings.cpp``) and the Python definitions they copy: one line each, empty when none."""
    expected = {
        "ACE": RANKS.index("A"), "QUEEN": QUEEN, "NO_WILD": NO_WILD, "NO_LOW_CHICAGO": NO_LOW_CHICAGO,
        "FOLD": FOLD, "CHECK_CALL": CHECK_CALL, "FIRST_BET": FIRST_BET,
        "CATEGORIES": len(Category), "SHARE_UNITS": SHARE_UNITS, "GOLDEN": GOLDEN,
        "WIN_SAMPLES": WIN_SAMPLES, "WIN_EXACT": WIN_EXACT,
        "ACTION_KINDS": tuple(kind.value for kind in ACTION_KINDS),
        "BETTING": {b.value for b in Betting}, "BRING_IN": {None} | {o.value for o in Order},
    }
    missing = object()
    out = []
    for name, want in expected.items():
        got = getattr(core, name, missing)
        if isinstance(want, set) and isinstance(got, dict):
            got = set(got)
        if got is missing:
            out.append(f"{name} is missing")
        elif got != want:
            out.append(f"{name} is {got!r}, the Python side has {want!r}")
    shift = getattr(core, "CATEGORY_SHIFT", missing)
    if shift is missing:
        out.append("CATEGORY_SHIFT is missing")
    elif not (HandValue(1 << shift).category == 1 and HandValue((1 << shift) - 1).category == 0):
        out.append(f"CATEGORY_SHIFT is {shift!r}, not the bit where a HandValue's category starts")
    return out


def _check_core() -> None:
    mismatch = core_constants_mismatch()
    if mismatch:
        raise ImportError(f"envs._stud_core does not match the Python side ({'; '.join(mismatch)}): "
                          "rebuild it with `pip install -e .` (or `python setup.py build_ext --inplace`)")


_check_core()

_SAME = None
"""In CORE_FIELDS: the field is copied to the core as it is, under its own name."""

CORE_FIELDS: dict[str, Callable[[Rules], dict] | None] = {
    # Rules field: the CoreRules attributes it sets, as a function of the rules (or _SAME).
    "streets": lambda r: {"streets": [list(s.cards) for s in r.streets],
                          "street_big": [s.bet == BetSize.BIG for s in r.streets]},
    "canadian_hands": _SAME,
    "ace_low_four_straight": _SAME,
    "follow_the_queen": _SAME,
    "queens_wild": _SAME,
    "double_ace_flush": _SAME,
    "low_chicago": _SAME,
    "betting": lambda r: {"betting": _stud_core.BETTING[r.betting]},
    "max_raises": _SAME,
    "ante": _SAME,
    "bring_in": lambda r: {"bring_in": _stud_core.BRING_IN[r.bring_in]},
    "bring_in_amount": _SAME,
    "small_bet": _SAME,
    "big_bet": _SAME,
    "first_to_act": lambda r: {"first_to_act_lowest": r.first_to_act == Order.LOWEST},
    "open_pair_doubles": _SAME,
    "spread_sizes": lambda r: {"spread_sizes": [float(x) for x in r.spread_sizes]},
    "pot_fractions": lambda r: {"pot_fractions": [float(x) for x in r.pot_fractions]},
    "starting_stack": lambda r: {"stack": r.stack},
    "deck_ranks": lambda r: {"deck": [] if len(r.deck_ranks) == 13 else [int(card) for card in r.deck]},
}
"""How each Rules field that changes play reaches the core (``core_rules``)."""

DERIVED_CORE_FIELDS: dict[str, Callable[[Rules], object]] = {
    "num_actions": num_actions,  # from betting, spread_sizes and pot_fractions (envs.actions)
}
"""CoreRules attributes computed from several Rules fields (each already in CORE_FIELDS)."""

NOT_PASSED: dict[str, str] = {
    "name": "a label: no rule reads it",
    "min_players": "a table-size bound, checked by BatchedGame against num_players before the core is made",
    "max_players": "a table-size bound, checked by BatchedGame; the observation layout's seat count, "
                   "which the core gets from build_layout (bind_observations), comes from it",
}
"""The Rules fields the core is not given, each with why play does not depend on it there."""


def core_supports(features=()) -> bool:
    """Whether the core writes observations with these optional pieces
    (``envs.observation.FEATURES``): all of them (an unknown name is a ValueError). The envs
    ask this before they play on the core (the one switch point, should a new piece come to
    the reference first)."""
    check_features(features)
    return True


def core_rules(rules: Rules | str) -> _stud_core.CoreRules:
    """The core's copy of ``rules``: every field of :class:`Rules` through :data:`CORE_FIELDS`;
    a field in neither that nor :data:`NOT_PASSED` is a ValueError, so none is left out unseen.

    Adding a rule option means adding it to ``CORE_FIELDS`` here, to ``CoreRules``
    (``src/engine/rules.h``) and the hand (``src/engine/game.h``), and to the differential
    test's variants.
    """
    rules = get_rules(rules)
    c = _stud_core.CoreRules()
    for field in dataclasses.fields(rules):
        if field.name in NOT_PASSED:
            continue
        if field.name not in CORE_FIELDS:
            raise ValueError(f"Rules field {field.name!r} is neither passed to the core "
                             "(envs.batched.CORE_FIELDS) nor listed as not affecting play "
                             "(envs.batched.NOT_PASSED)")
        convert = CORE_FIELDS[field.name]
        values = {field.name: getattr(rules, field.name)} if convert is _SAME else convert(rules)
        for attribute, value in values.items():
            setattr(c, attribute, value)
    for attribute, derive in DERIVED_CORE_FIELDS.items():
        setattr(c, attribute, derive(rules))
    return c


class BatchedGame:
    """``n`` independent hands of ``rules`` at ``num_players`` seats, stepped together.

    ``observations``: also write the player to act's observation (``self.observations``), with
    the optional pieces ``observation_features`` (names of ``envs.observation.FEATURES``);
    ``threads``: split each step's hands (and the core agents' decisions, ``TagPolicy`` and
    ``BatchedEquity``) over this many threads, started once and kept, asleep between calls (the
    GIL is released during a step either way, so other Python threads run meanwhile)."""

    def __init__(self, rules: Rules | str, num_players: int, n: int, *, auto_reset: bool = True,
                 observations: bool = False, observation_features=(), threads: int = 1,
                 keep_betting: bool = False) -> None:
        self.rules = rules = get_rules(rules)
        check_players(rules, num_players)
        self.num_players = num_players
        self.n = n
        self.num_actions = num_actions(rules)
        self._core = _stud_core.Batch(core_rules(rules), num_players, n)
        self._core.auto_reset = auto_reset
        if type(threads) is not int or threads < 1:
            raise ValueError(f"threads must be a whole number of at least 1, not {threads!r}")
        self.threads = self._core.threads = threads
        self.current_player = np.full(n, -1, dtype=np.int32)
        self.action_mask = np.zeros((n, self.num_actions), dtype=np.int8)
        self.pot = np.zeros(n, dtype=np.int32)
        self.payoffs = np.zeros((n, num_players), dtype=np.int32)
        self.dones = np.zeros(n, dtype=np.bool_)
        self._core.bind(self.current_player, self.action_mask, self.pot, self.payoffs, self.dones)
        # With keep_betting, the action ids played in each slot's hand so far (betting()): a hand
        # has at most (max_raises + 3) actions per seat and street in fixed limit; more marks it
        # unknown. Off by default: the bookkeeping costs about as much as the core's step itself.
        self.keep_betting = keep_betting
        self._betting = np.zeros((n, rules.num_streets * num_players * (rules.max_raises + 3)), dtype=np.int8)
        self._betting_count = np.zeros(n, dtype=np.int64)
        self.layout = None
        self.observations = None
        if observation_features and not observations:
            raise ValueError("observation_features need observations=True")
        if observations:
            self.layout = build_layout(rules, observation_features)
            self._core.win_samples, self._core.win_exact = WIN_SAMPLES, WIN_EXACT
            self.observations = np.zeros((n, self.layout.size), dtype=np.float32)
            self._core.bind_observations(self.observations, [(p.name, p.start, p.size) for p in self.layout],
                                         self.layout.size, rules.max_players, rules.num_streets)
            self.observed_seats = np.ones((n, num_players), dtype=np.bool_)
            self._all_slots = np.arange(n)
            self._core.bind_observed_seats(self.observed_seats)

    def set_observed_seats(self, seats, slots=None) -> None:
        """Write observations only for the listed seats (bool, (N, P), or (len(slots), P) for
        the hand slots ``slots``): when the player to act is not listed, its slot's row of
        ``observations`` is zeros, as when nobody is to act, and the core skips encoding it
        (the features' Monte-Carlo included). The rows of the slots given are brought up to
        date at once (encoded or zeroed where their player to act's listing changed); from
        then on every step reads the new seats.

        Writing into ``observed_seats`` directly also works, from each slot's next step on."""
        if self.observations is None:
            raise ValueError("observed seats need observations=True")
        # The core checks the shape and the slots (a ValueError that says which).
        self._core.set_observed_seats(self._all_slots if slots is None else slots, seats)

    def reset(self, *, seeds=None, decks=None, buttons=None, stacks=None) -> None:
        """Deal a new hand in every slot. ``seeds`` (N ints) seed each slot's stream (used for
        this deal unless ``decks`` is given, and for every automatic reset after it);
        ``decks`` (N, deck size) gives each deck's order (a permutation of ``rules.deck``), top
        card first; ``buttons`` (N) the dealer
        seats (default 0); ``stacks`` (N, P) each seat's chips (default ``rules.stack``), kept
        for later hands too."""
        self._core.reset(seeds=None if seeds is None else np.asarray(seeds, dtype=np.uint64),
                         decks=decks, buttons=buttons, stacks=stacks)
        self._betting_count[:] = 0

    def step(self, actions) -> None:
        """Play one action id per hand (a negative id: leave that hand alone; a finished hand,
        without auto reset, ignores its id). An illegal id is a ValueError naming the hand; the
        other hands have moved on."""
        a = np.asarray(actions, dtype=np.int64)
        if not self.keep_betting or a.shape != (self.n,):
            self._core.step(a)   # (a wrong shape: the core's error, one id per hand)
            return
        # The hands that will take their id (legal ones; the core leaves an illegal one as it was).
        rows = np.flatnonzero((a >= 0) & (a < self.num_actions) & (self.current_player >= 0))
        rows = rows[self.action_mask[rows, a[rows]] == 1]
        try:
            self._core.step(a)
        finally:
            at = self._betting_count[rows]
            fits = at < self._betting.shape[1]
            self._betting[rows[fits], at[fits]] = a[rows[fits]]
            self._betting_count[rows] += 1
            if self._core.auto_reset:
                self._betting_count[rows[self.dones[rows]]] = 0   # dealt again

    def betting(self, i: int) -> tuple[int, ...]:
        """The action ids played in hand ``i`` so far, in order (as ``Game.log``'s actions:
        the bring-in is a check/call id). A ValueError for a hand with more actions than fixed
        limit allows (no-limit raising on and on), whose betting is not kept, or for a game made
        without ``keep_betting=True``."""
        if not self.keep_betting:
            raise ValueError("this BatchedGame does not keep the betting: make it with keep_betting=True")
        count = int(self._betting_count[i])
        if count > self._betting.shape[1]:
            raise ValueError(f"hand {i} has {count} actions, more than the {self._betting.shape[1]} kept")
        return tuple(self._betting[i, :count].tolist())

    def raise_to_amounts(self, i: int) -> tuple[int, ...]:
        """The raise-to totals behind ids 2, 3, ... in hand ``i`` (as ``Game.raise_to_amounts``)."""
        return tuple(self._core.raise_to_amounts(i))

    def observe(self, i: int, seat: int) -> np.ndarray:
        """The observation of ``seat`` in hand ``i`` (needs ``observations=True``): the values
        ``envs.observation.ObservationEncoder.encode`` gives for the same hand and seat."""
        return self._core.observe(i, seat)

    def action_kinds(self, actions) -> tuple[np.ndarray, np.ndarray]:
        """What each action id would be for the player to act, before it is played: an index
        into ``envs.engine.events.ACTION_KINDS`` (fold, check, call, bring_in, complete, bet,
        raise; -1 for a negative id or a hand with nobody to act), int8 (N,), and the street
        it is played on, int8 (N,). The core keeps no log; this stands in for one in the
        training VecEnv's statistics (VPIP, aggression)."""
        return _stud_core.action_kinds(self._core, np.asarray(actions, dtype=np.int64))

    def state(self, i: int) -> dict:
        """Hand ``i`` as a dict of plain values (cards, stacks, chips in, ...), for tests and logs."""
        return self._core.state(i)

    def cards(self, slots) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cards of hands ``slots`` in one call, as :meth:`state` has them: ``(buttons,
        hole, up)``, ``buttons`` (M,) each hand's button seat, ``hole`` and ``up`` (M, players,
        7) each seat's face-down and face-up card ids in deal order, -1 past its last (int64).
        An agent deciding in many slots reads them here, not a dict a slot."""
        return self._core.cards(np.asarray(slots, dtype=np.int64))

    def checkdown_payoffs(self, slots=None) -> np.ndarray:
        """Each seat's payoff in chips if every player still in checked or called from here to
        the end of the hand, the deck's real cards dealt: (M, players) int64 for hands ``slots``
        (default: all), zeros for a hand that is over. It reads the cards still to come, so no
        player may see it: training's check-down baseline (``train/batched_vec.py``)."""
        slots = np.arange(self.n) if slots is None else np.asarray(slots, dtype=np.int64)
        return self._core.checkdown_payoffs(slots)

    def betting_ids(self, slots) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`betting` of hands ``slots`` at once: ``(counts, ids)``, ``counts`` (M,) the
        number of actions played and ``ids`` (M, kept) int8 the action ids, valid below each
        count (a count above ``kept`` marks a hand whose betting is not kept)."""
        if not self.keep_betting:
            raise ValueError("this BatchedGame does not keep the betting: make it with keep_betting=True")
        slots = np.asarray(slots, dtype=np.int64)
        return self._betting_count[slots].copy(), self._betting[slots].copy()


@functools.lru_cache(maxsize=64)
def _cached_core_rules(rules: Rules) -> _stud_core.CoreRules:
    return core_rules(rules)


def win_probability(game, seat: int, *, hole=None, samples: int = WIN_SAMPLES,
                    max_exact: int = WIN_EXACT) -> float:
    """``envs.engine.equity.win_probability(game.view(seat), ...)`` computed by the core: the same
    float64 (``tests/test_core_features.py`` holds the two equal), a few hundred times faster.

    ``game``: an ``envs.engine.game.Game`` (the hand is not over); ``hole``: the seat's face-down
    cards (default its real ones), e.g. each card local best response supposes it holds."""
    hole = game.hole_cards(seat) if hole is None else hole
    return win_probabilities(game, seat, [hole], samples=samples, max_exact=max_exact)[0]


def win_probabilities(game, seat: int, holes, *, samples: int = WIN_SAMPLES,
                      max_exact: int = WIN_EXACT) -> list[float]:
    """:func:`win_probability` of ``seat`` holding each face-down card list of ``holes`` in turn,
    in one call (local best response asks it for every card the other player may hold)."""
    n = game.num_players
    wild = game.wild_rank
    return _stud_core.win_probabilities(
        _cached_core_rules(game.rules), game.button, game.street, seat,
        -1 if wild is None else RANKS.index(wild), [[int(c) for c in hole] for hole in holes],
        [len(game.hole_cards(s)) for s in range(n)], [[int(c) for c in game.up_cards(s)] for s in range(n)],
        list(game.folded), samples, max_exact)


def _wild_mask(wild_ranks) -> int:
    """The core's bit set of wild ranks (bit i: ``RANKS[i]``)."""
    return sum(1 << RANKS.index(r) for r in set(wild_ranks))


def showdown_shares(mine, their_up, candidates, future, mine_to_come: int, *, canadian: bool = False,
                    wild_ranks=(), double_ace_flush: bool = False,
                    ace_low_four_straight: bool = True) -> np.ndarray:
    """Local best response's roll-outs scored in one call (``arena.lbr.equity_by_hole``): for
    each of ``candidates`` (the other player's face-down card), my mean showdown share (1 win,
    1/2 tie, 0 loss) over the rows of ``future`` that do not deal it, float64 (len(candidates),)
    (0 where every row deals it). ``future`` (rows, k): the cards to come, my ``mine_to_come``
    first, then the other's; my hand is ``mine`` plus mine, the other's the candidate, its
    ``their_up`` and the rest. The same floats as scoring every hand with :func:`evaluate_rows`."""
    future = np.asarray(future)
    if future.ndim != 2 or not np.issubdtype(future.dtype, np.integer):
        raise ValueError(f"showdown_shares takes an (rows, k) integer array of cards to come, not "
                         f"{future.dtype} of shape {future.shape}")
    wild_mask = _wild_mask(wild_ranks)
    return _stud_core.showdown_shares([int(c) for c in mine], [int(c) for c in their_up],
                                      [int(c) for c in candidates], future.astype(np.int64, copy=False),
                                      int(mine_to_come), wild_mask, canadian, double_ace_flush,
                                      ace_low_four_straight)


def luck_node_shares(known, seat_at: int, cands, sel, owners, perm, *, canadian: bool = False,
                     wild_ranks=(), double_ace_flush: bool = False,
                     ace_low_four_straight: bool = True) -> np.ndarray:
    """The luck correction's shares of one chance node (``arena.luck.LuckCorrector``), rules
    without a followed wild rank or Low Chicago: float64 (len(sel), len(known)), each active
    seat's mean share of the high hand (1/w to each of w tied winners) when candidate
    ``cands[sel[i]]`` goes to active seat ``seat_at``, over the completions of the deal.
    ``known``: the active seats' cards so far; ``cands``: the cards not dealt, ascending;
    ``owners``: the active seat of each card still to come. Completions: none for no card to
    come, every other candidate for one, else the rows of ``perm`` ((rows, len(owners) + 1)
    indices into ``cands``: the first columns, a drawn candidate replaced by the last)."""
    f = len(owners)
    perm = np.zeros((0, f + 1), dtype=np.int64) if perm is None else np.asarray(perm, dtype=np.int64)
    return _stud_core.luck_node_shares([[int(c) for c in k] for k in known], int(seat_at),
                                       np.asarray(cands, dtype=np.int64).tolist(),
                                       np.asarray(sel, dtype=np.int64).tolist(), [int(a) for a in owners],
                                       perm, _wild_mask(wild_ranks), canadian, double_ace_flush,
                                       ace_low_four_straight)


def evaluate(cards, *, canadian: bool = False, wild_ranks=(), double_ace_flush: bool = False,
             ace_low_four_straight: bool = True) -> int:
    """The core's hand value of 1 to 7 cards (ints 0..51): the same int as
    ``envs.engine.hands.evaluate`` with the same options."""
    wild_mask = _wild_mask(wild_ranks)
    return _stud_core.evaluate([int(c) for c in cards], wild_mask, canadian, double_ace_flush,
                               ace_low_four_straight)


def evaluate_rows(cards, *, canadian: bool = False, wild_ranks=(), double_ace_flush: bool = False,
                  ace_low_four_straight: bool = True) -> np.ndarray:
    """:func:`evaluate` of every row of an (N, n) integer array of card ids, 1 <= n <= 7, in one
    call: int64 (N,). Unlike ``envs.engine.hands.evaluate_batch`` (five to seven cards) it also
    scores short showing hands; duplicate cards in a row are not checked."""
    cards = np.asarray(cards)
    if cards.ndim != 2 or not 1 <= cards.shape[1] <= 7 or not np.issubdtype(cards.dtype, np.integer):
        raise ValueError(f"evaluate_rows takes an (N, 1..7) integer array of card ids, not {cards.dtype} "
                         f"of shape {cards.shape}")
    wild_mask = _wild_mask(wild_ranks)
    return _stud_core.evaluate_rows(cards.astype(np.int64, copy=False), wild_mask, canadian,
                                    double_ace_flush, ace_low_four_straight)


CORE_STRENGTH = HandStrength(win_probabilities, evaluate_rows)
"""The core's hand strength for ``envs.observation.ObservationEncoder(strength=...)``: the
reference's values (``envs.observation.REFERENCE_STRENGTH``), a few hundred times faster."""
