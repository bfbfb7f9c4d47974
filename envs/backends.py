"""What plays the hand of an AEC env: the reference engine's ``Game`` or one slot of the core.

:class:`envs.stud_env.StudEnv` holds one backend, made by :func:`make_backend` (the one place
the engine is chosen), and asks it the same few things whichever it is:

- ``name``: ``"reference"`` or ``"core"`` (the env's ``engine``);
- ``reset(rng, options)``: deal a hand (the button from ``rng``, then the deck, as
  :func:`new_game`); returns the seat to act, -1 when the antes ended the hand;
- ``step(action)``: play an int action id for the seat to act; returns the next seat to act, -1
  once the hand is over; an illegal id raises the reference engine's ``ValueError`` and changes
  nothing;
- ``observe(seat)``: ``(observation, action_mask)`` of ``seat`` (the mask is all zeros unless
  that seat is to act);
- ``payoffs``, ``showdown``: once the hand is over, the net chips per seat and whether cards
  were shown;
- ``game``: the hand as a ``Game`` (None before the first deal).

Both deal the same hand from the same generator and options, and give the same observations,
masks and payoffs (``tests/test_env_engines.py``).
"""

from __future__ import annotations

import numpy as np

from envs.actions import FOLD, apply_action
from envs.engine.game import Game, check_button, deck_order, starting_stacks
from envs.engine.rules import Rules
from envs.observation import ObservationEncoder

ENGINES = ("core", "reference")
"""What plays the hands: the compiled core (``envs.batched``) or the Python ``Game``."""


def new_game(rules: Rules, num_players: int, rng: np.random.Generator, *, stacks=None,
             options: dict | None = None) -> Game:
    """A hand dealt from ``options`` (``deck``, ``button``, ``stacks``) and ``rng`` for the rest.

    The button is drawn first, then the deck is shuffled, both from ``rng``.
    """
    options = options or {}
    button = options.get("button")
    if button is None:
        button = int(rng.integers(num_players))
    stacks = options.get("stacks", stacks)
    return Game(rules, num_players, stacks=stacks, button=button, deck=options.get("deck"), seed=rng)


def make_encoder(rules: Rules | str, *, features=()) -> ObservationEncoder:
    """The observation encoder the envs and agents play with: its hand-strength pieces
    (``features``) computed by the compiled core (``envs.batched.CORE_STRENGTH``, which loads
    only when a piece asks for it), the same values as the pure-Python reference's."""
    if not features:
        return ObservationEncoder(rules)
    from envs.batched import CORE_STRENGTH

    return ObservationEncoder(rules, features=features, strength=CORE_STRENGTH)


def make_backend(engine: str, rules: Rules, num_players: int, *, stacks,
                 encoder: ObservationEncoder) -> ReferenceBackend | CoreBackend:
    """The backend that plays ``engine`` (one of :data:`ENGINES`): the core unless asked
    otherwise or it lacks an observation piece of ``encoder`` (then the reference)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "core":
        from envs.batched import core_supports  # the compiled module loads only when asked for
        if core_supports(encoder.features):
            return CoreBackend(rules, num_players, stacks=stacks, encoder=encoder)
    return ReferenceBackend(rules, num_players, stacks=stacks, encoder=encoder)


class ReferenceBackend:
    """The hand on the reference engine: one :class:`Game` per hand, encoded by ``encoder``."""

    name = "reference"
    game: Game | None = None  # the hand being played

    def __init__(self, rules: Rules, num_players: int, *, stacks, encoder: ObservationEncoder) -> None:
        self.rules = rules
        self.num_players = num_players
        self.stacks = stacks
        self.encoder = encoder

    def reset(self, rng: np.random.Generator, options: dict | None) -> int:
        self.game = game = new_game(self.rules, self.num_players, rng, stacks=self.stacks, options=options)
        return -1 if game.is_over else game.current_player

    def step(self, action: int) -> int:
        game = self.game
        apply_action(game, action)  # an illegal id raises ValueError with the engine's reason
        return -1 if game.is_over else game.current_player

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        return self.encoder.observe(self.game, seat)

    @property
    def payoffs(self) -> tuple[int, ...]:
        return self.game.payoffs

    @property
    def showdown(self) -> bool:
        return bool(self.game.hand_values)


class CoreBackend:
    """The hand in one slot of :class:`envs.batched.BatchedGame` (no auto reset, observations
    written by the core). ``game`` replays the deal and the actions so far on a :class:`Game`
    on first access in a hand, then keeps it in step until the next ``reset()``; an illegal id
    is replayed on a ``Game`` too, for the reference engine's reason."""

    name = "core"

    def __init__(self, rules: Rules, num_players: int, *, stacks, encoder: ObservationEncoder) -> None:
        from envs.batched import BatchedGame  # the compiled module loads only when used

        self.rules = rules
        self.num_players = num_players
        self.stacks = stacks
        self._batch = batch = BatchedGame(rules, num_players, 1, auto_reset=False, observations=True,
                                          observation_features=encoder.features)
        self._obs_row = batch.observations[0]
        self._mask_row = batch.action_mask[0]
        self._no_mask = np.zeros(batch.num_actions, dtype=np.int8)
        self._num_actions = batch.num_actions
        self._current_row = memoryview(batch.current_player)  # [0]: a Python int, -1 once over
        self._action_in = np.full(1, -1, dtype=np.int64)
        self._button_in = np.zeros(1, dtype=np.int64)
        self._stacks_in = np.zeros((1, num_players), dtype=np.int64)
        self._current = -1
        self._stacks_checked: tuple[int, ...] | None = None  # self.stacks, checked at the first reset()
        self._deal = None  # (button, stacks, deck order) of the hand, for replays
        self._actions: list[int] = []
        self._folds = 0
        self._game: Game | None = None

    def reset(self, rng: np.random.Generator, options: dict | None) -> int:
        # The deal new_game() makes from the same generator: the button first, then the deck.
        options = options or {}
        button = options.get("button")
        if button is None:
            button = int(rng.integers(self.num_players))
        given = options.get("stacks", self.stacks)
        if given is self.stacks:  # (a tuple or None: checked once)
            if self._stacks_checked is None:
                self._stacks_checked = starting_stacks(self.rules, self.num_players, given)
            stacks = self._stacks_checked
        else:
            stacks = starting_stacks(self.rules, self.num_players, given)
        check_button(button, self.num_players)
        deck = deck_order(self.rules, options.get("deck"), rng)
        self._button_in[0] = button
        self._stacks_in[0] = stacks
        self._batch.reset(decks=deck.reshape(1, -1), buttons=self._button_in, stacks=self._stacks_in)
        self._deal = (button, stacks, deck)
        self._actions = []
        self._folds = 0
        self._game = None
        self._current = current = self._current_row[0]
        return current

    def step(self, action: int) -> int:
        if not 0 <= action < self._num_actions:
            self._refuse(action)
        self._action_in[0] = action
        try:
            self._batch.step(self._action_in)
        except ValueError:
            self._refuse(action)
        self._actions.append(action)
        if self._game is not None:
            apply_action(self._game, action)
        if action == FOLD:
            self._folds += 1
        self._current = current = self._current_row[0]
        return current

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        if seat == self._current:
            return self._obs_row.copy(), self._mask_row.copy()
        return self._batch.observe(0, seat), self._no_mask.copy()

    @property
    def payoffs(self) -> tuple[int, ...]:
        return tuple(self._batch.payoffs[0].tolist())

    @property
    def showdown(self) -> bool:
        # As Game: hand values are shown unless all but one seat folded (or at the deal, when
        # the antes put every seat all-in).
        return self.num_players - self._folds > 1

    @property
    def game(self) -> Game | None:
        if self._game is None and self._deal is not None:
            self._game = self._replay()
        return self._game

    def _replay(self) -> Game:
        """The core's hand as a :class:`Game`: the same deal, then the actions so far."""
        button, stacks, deck = self._deal
        game = Game(self.rules, self.num_players, stacks=stacks, button=button, deck=deck.tolist())
        for action in self._actions:
            apply_action(game, action)
        return game

    def _refuse(self, action: int) -> None:
        """An illegal id on the core: the reference's ValueError and reason for it."""
        apply_action(self._replay(), action)
        raise RuntimeError(f"the core refused action {action}, which the reference engine allows: "
                           f"please report this hand ({self._deal}, actions {self._actions})")
