"""The observation encoder: one flat float32 vector laid out as named pieces.

The layout depends only on the rules (never on the table size: seats are padded to
``rules.max_players``), so one policy can sit at any table of a game. Pieces are listed by
:class:`Layout` as ``(name, start, size)`` entries, OpenSpiel-observer style, and
``Layout.table()`` prints the index table shown in :mod:`envs.stud_env`.

Conventions
-----------
- A card is one-hot at ``4 * rank + suit`` (ranks ``2..A`` = 0..12, suits ``c d h s`` = 0..3),
  the engine's card index.
- "Relative seat" ``r`` is seat ``(observer + r) % num_players``: slot 0 is the observer, slot 1
  the next seat clockwise, and so on; slots from ``num_players`` up are padding (all zero).
- Chip amounts are scaled to [0, 1] (clipped): stacks by the table's chips (the sum of the
  starting stacks); what one seat puts in (``to_call``, bet sizes, ``committed``,
  ``total_committed``) by the most one seat can put into a hand (its largest starting stack,
  or less under limit betting: ante + one bet and ``max_raises`` raises of the big bet in
  every round, twice that in spread limit); the pot by that times the number of players.
- Counts (raises this round, the betting history) are divided by ``1 + max_raises`` and
  clipped at 1.

Only the observer's own face-down cards are encoded: the encoder keeps the table in absolute
seat order and gathers each observation through a per-observer index array that reaches no
other seat's face-down cards, so nothing in it depends on them.

>>> from envs.engine.game import Game
>>> enc = ObservationEncoder("soko")
>>> enc.layout.size
606
>>> g = Game("soko", 2, deck="Ah 2c Kd 3c", button=0, seed=0)
>>> obs = enc.encode(g, 1)
>>> view = enc.layout.unpack(obs)
>>> [i for i in range(52) if view["hole_cards"][i]]   # Ah = 4 * 12 + 2
[50]
>>> [i for i in range(52) if view["up_cards"][i]], [i - 52 for i in range(52, 104) if view["up_cards"][i]]
([45], [4])
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from envs.actions import CHECK_CALL, FIRST_BET, FOLD, num_actions
from envs.engine.game import BET_KINDS, Game
from envs.engine.rules import Rules, get_rules

RANK_CHARS = "23456789TJQKA"
QUEEN = 10
SPADE = 3
# Low Chicago order: the ace is the lowest spade (docs/rules.md "Low Chicago"): A, 2, 3, ..., K.
CHICAGO_ORDER = tuple(((12 if i == 0 else i - 1) * 4 + SPADE) for i in range(13))
_CHICAGO_SLOT = {card: slot for slot, card in enumerate(CHICAGO_ORDER)}

CALL_KINDS = frozenset(("call", "bring_in"))  # what the history counts as calls


class Piece(NamedTuple):
    """One named piece of the flat observation: ``obs[start:start + size]``."""

    name: str
    start: int
    size: int
    doc: str

    @property
    def stop(self) -> int:
        return self.start + self.size


class Layout:
    """Named pieces over one flat vector, in order and without gaps."""

    def __init__(self, pieces: list[tuple[str, int, str]]) -> None:
        out: list[Piece] = []
        start = 0
        for name, size, doc in pieces:
            out.append(Piece(name, start, size, doc))
            start += size
        self.pieces: tuple[Piece, ...] = tuple(out)
        self.size = start
        self._by_name = {p.name: p for p in self.pieces}
        if len(self._by_name) != len(self.pieces):
            raise ValueError("observation piece names must be unique")

    def __getitem__(self, name: str) -> Piece:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no observation piece {name!r}; pieces are {', '.join(self._by_name)}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.pieces)

    def slice(self, name: str) -> slice:
        p = self[name]
        return slice(p.start, p.stop)

    def unpack(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Views of ``obs`` by piece name (for tests, debugging and hand-written agents)."""
        if obs.shape[-1] != self.size:
            raise ValueError(f"observation has {obs.shape[-1]} values, the layout {self.size}")
        return {p.name: obs[..., p.start:p.stop] for p in self.pieces}

    def table(self) -> str:
        """The index table as Markdown (the one the env docstring shows)."""
        lines = ["| Index | Piece | Size | Meaning |", "|---|---|---|---|"]
        for p in self.pieces:
            where = str(p.start) if p.size == 1 else f"{p.start}-{p.stop - 1}"
            lines.append(f"| {where} | `{p.name}` | {p.size} | {p.doc} |")
        return "\n".join(lines)


def build_layout(rules: Rules | str) -> Layout:
    """The observation layout of a game: pieces present only when the rules have them."""
    r = get_rules(rules)
    n, rounds, sizes = r.max_players, r.num_rounds, num_actions(r) - FIRST_BET
    pieces: list[tuple[str, int, str]] = [
        ("hole_cards", 52, "own face-down cards (one-hot by card)"),
        ("up_cards", n * 52, f"face-up cards of each relative seat ({n} x 52, seat-major)"),
    ]
    if r.follow_the_queen:
        pieces += [
            ("wild_rank", 14, "wild rank in force (2..A), last slot: nothing is wild"),
            ("queens_wild", 1, "1 when queens are wild (option queens_wild)"),
            ("wild_cards", 52, "visible cards (own face-down and all face-up) that are wild now"),
        ]
    if r.low_chicago:
        pieces += [
            ("chicago_hole", 14, "lowest face-down spade held (A, 2, ..., K), last slot: none"),
            ("chicago_up", 13, "spades seen face up (A, 2, ..., K): none of them can win Low Chicago"),
        ]
    pieces += [
        ("pot", 1, "chips in the pot (antes included)"),
        ("to_call", 1, "chips the observer must add to call (0 when not its turn)"),
        ("pot_odds", 1, "to_call / (pot + to_call)"),
        ("bet_sizes", sizes, f"raise-to total of action id {FIRST_BET}+i when offered, else 0"),
        ("bet_size", 1, "this round's bet size / big bet"),
        ("raises", 1, "bets and raises made this round / (1 + max_raises)"),
        ("street", rounds, "betting round, one-hot"),
        ("seated", n, "relative seat is at the table (0: padding)"),
        ("to_act", n, "relative seat is to act"),
        ("button", n, "relative seat has the button"),
        ("stack", n, "chips behind, per relative seat"),
        ("committed", n, "chips put in this betting round, per relative seat"),
        ("total_committed", n, "chips put in this hand (antes included), per relative seat"),
        ("folded", n, "relative seat has folded"),
        ("all_in", n, "relative seat is all-in"),
        ("history", n * rounds * 2, f"per relative seat and street ({n} x {rounds} x 2, seat-major): "
                                    "bets/completions/raises, calls (bring-in included)"),
    ]
    return Layout(pieces)


def seat_chip_bound(rules: Rules, stacks) -> int:
    """The most chips one seat can put into a hand: its stack, or less under limit betting."""
    most = max(stacks)
    if rules.betting in ("fixed_limit", "spread_limit"):
        per_round = (1 + rules.max_raises) * rules.big_bet * (2 if rules.betting == "spread_limit" else 1)
        most = min(most, rules.ante + rules.num_rounds * per_round)
    return max(most, 1)


class ObservationEncoder:
    """Encodes a :class:`Game` for one seat into the flat layout of its rules.

    The encoder follows one game at a time. It keeps a *source* vector of the table in
    absolute seat order (cards, betting history, the betting state) and, per observer, a
    precomputed index array that gathers the observation from it in one step (rotating the
    seats to the observer and padding). Cards and the history are folded into the source
    incrementally from new log events, so encoding costs the same however long the hand has
    run. A new :class:`Game` object (or a shorter log) starts over.
    """

    def __init__(self, rules: Rules | str) -> None:
        self.rules = r = get_rules(rules)
        self.layout = lay = build_layout(r)
        self.size = lay.size
        self.max_players = r.max_players
        self.rounds = r.num_rounds
        self.num_actions = num_actions(r)
        self.num_sizes = self.num_actions - FIRST_BET
        self._wild = r.follow_the_queen
        self._chicago = r.low_chicago
        self._queens_wild = r.queens_wild
        self._inv_raises = 1.0 / (1 + r.max_raises)
        self._inv_big = 1.0 / r.big_bet
        # The observer-only betting values (to_call, pot_odds, bet_sizes) are contiguous.
        self._o_mine = lay["to_call"].start
        self._n_mine = 2 + self.num_sizes
        assert lay["bet_sizes"].start == self._o_mine + 2
        if self._wild:
            self._o_wild_cards = lay["wild_cards"].start
        if self._chicago:
            self._o_chicago_hole = lay["chicago_hole"].start
        self._street_onehot = [[float(i == k) for i in range(r.num_rounds)] for k in range(r.num_rounds)]
        self._zeros = [0.0] * self.num_sizes
        self._tables: dict[int, tuple] = {}
        self._scales: dict[tuple[int, ...], np.ndarray] = {}  # dynamic-block scales per starting stacks
        self._game: Game | None = None
        # _masks[can_fold][number of sizes offered]: the mask of envs.actions.action_mask.
        self._masks = [[self._mask(fold, k) for k in range(self.num_sizes + 1)] for fold in (False, True)]

    def __getstate__(self) -> dict:
        # Pickle and deepcopy: keep the configuration, drop the per-game buffers (struct and
        # memoryview objects do not pickle); the next encode() starts over from the log.
        keep = ("rules", "layout", "size", "max_players", "rounds", "num_actions", "num_sizes",
                "_wild", "_chicago", "_queens_wild", "_inv_raises", "_inv_big", "_o_mine",
                "_n_mine", "_o_wild_cards", "_o_chicago_hole", "_street_onehot", "_zeros", "_masks")
        return {k: v for k, v in self.__dict__.items() if k in keep}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._tables = {}
        self._scales = {}
        self._game = None

    def _mask(self, fold: bool, sizes: int) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        mask[FOLD] = fold
        mask[CHECK_CALL] = 1
        mask[FIRST_BET:FIRST_BET + sizes] = 1
        return mask

    # ------------------------------------------------------------------------------------
    # The source vector and the gather indices, per table size

    def _table(self, n: int) -> tuple:
        """(source offsets, per-observer index arrays) for ``n`` players (cached)."""
        if n in self._tables:
            return self._tables[n]
        lay, R, K = self.layout, self.rounds, self.num_sizes
        off = {}
        size = 2  # 0: a constant 0.0, 1: a constant 1.0

        def take(name: str, length: int) -> None:
            nonlocal size
            off[name] = size
            size += length

        take("hole", n * 52)
        take("up", n * 52)
        take("hist", n * R * 2)
        take("button", n)
        if self._chicago:
            take("chicago_up", 13)
        if self._wild:
            take("wild_rank", 14)
        take("dyn", 5 + K + R + 6 * n)  # rewritten when the state moves on, see _write_dynamic()
        off["size"] = size
        off["dyn_struct"] = struct.Struct(f"={5 + K + R + 6 * n}f")  # float32, no padding
        # The to_act one-hot per current player, and all zeros (index n) once the hand is over.
        off["to_act"] = [[float(i == s) for i in range(n)] for s in range(n)] + [[0.0] * n]
        d = off["dyn"]
        # Offsets of the dynamic block: pot, to_call, pot_odds, sizes (K), bet_size, raises,
        # street (R), then per absolute seat: to_act, stack, committed, total, folded, all_in.
        betting = list(range(d, d + 5 + K + R))
        seat_block = d + 5 + K + R
        indices = []
        for o in range(n):
            idx = np.zeros(lay.size, dtype=np.intp)  # default: the constant 0.0
            seats = [(o + r) % n for r in range(n)]

            def put(name: str, values) -> None:
                p = lay[name]
                idx[p.start:p.start + len(values)] = values

            put("hole_cards", [off["hole"] + o * 52 + i for i in range(52)])
            put("up_cards", [off["up"] + s * 52 + i for s in seats for i in range(52)])
            put("history", [off["hist"] + s * R * 2 + j for s in seats for j in range(R * 2)])
            if self._wild:
                put("wild_rank", [off["wild_rank"] + j for j in range(14)])
                put("queens_wild", [1 if self._queens_wild else 0])
            if self._chicago:
                put("chicago_up", [off["chicago_up"] + j for j in range(13)])
            p = lay["pot"]
            idx[p.start:p.start + len(betting)] = betting
            put("seated", [1] * n)
            put("button", [off["button"] + s for s in seats])
            for k, name in enumerate(("to_act", "stack", "committed", "total_committed", "folded", "all_in")):
                put(name, [seat_block + k * n + s for s in seats])
            indices.append(idx)
        self._tables[n] = (off, indices)
        return self._tables[n]

    def start(self, game: Game) -> None:
        """Follow ``game`` from its first event (called automatically for a new game)."""
        if game.rules is not self.rules and game.rules != self.rules:
            raise ValueError(f"this encoder is for {self.rules.name} rules; the game plays {game.rules.name}")
        n = game.num_players
        off, self._index = self._table(n)
        self._game = game
        self._n = n
        self._pos = 0
        self._dyn_pos = -1  # log length when the dynamic block was last written
        self._street = 0
        stacks = game.starting_stacks
        dyn_scale = self._scales.get(stacks)
        if dyn_scale is None:
            seat_bound = seat_chip_bound(self.rules, stacks)
            pot_bound = min(n * seat_bound, sum(stacks))
            inv_seat, K, R = 1.0 / seat_bound, self.num_sizes, self.rounds
            # The dynamic block is packed in chips and counts, then scaled by this and clipped at 1.
            dyn_scale = self._scales[stacks] = np.array(
                [1.0 / pot_bound, inv_seat, 1.0] + [inv_seat] * K + [self._inv_big, self._inv_raises]
                + [1.0] * R + [1.0] * n + [1.0 / sum(stacks)] * n + [inv_seat] * (2 * n) + [1.0] * (2 * n),
                dtype=np.float32)
        self._dyn_scale = dyn_scale
        self._src = src = np.zeros(off["size"], dtype=np.float32)
        self._src_bytes = memoryview(src).cast("B")
        self._dyn_struct = off["dyn_struct"]
        src[1] = 1.0
        src[off["button"] + game.button] = 1.0
        self._o_hole, self._o_up, self._o_hist = off["hole"], off["up"], off["hist"]
        self._o_dyn = off["dyn"]
        self._dyn = src[self._o_dyn:self._o_dyn + len(self._dyn_scale)]
        self._o_src_chicago = off.get("chicago_up", 0)
        self._o_src_wild = off.get("wild_rank", 0)
        self._wild_slot = None
        self._up_any = np.zeros(52, dtype=np.float32)  # every face-up card
        self._to_act = off["to_act"]

    def _catch_up(self, game: Game) -> None:
        log = game.log
        if game is not self._game or len(log) < self._pos:
            self.start(game)
        pos = self._pos
        if pos == len(log):
            return
        src, up_any = self._src, self._up_any
        o_hole, o_up, o_hist = self._o_hole, self._o_up, self._o_hist
        o_chicago = self._o_src_chicago if self._chicago else -1
        street = self._street
        per = self.rounds * 2
        inc = self._inv_raises
        for e in log[pos:]:
            kind = e.kind
            if kind == "deal":
                card = e.cards[0]
                if e.up:
                    src[o_up + e.seat * 52 + card] = 1.0
                    up_any[card] = 1.0
                    if o_chicago >= 0 and card & 3 == SPADE:
                        src[o_chicago + _CHICAGO_SLOT[card]] = 1.0
                else:
                    src[o_hole + e.seat * 52 + card] = 1.0
            elif kind in BET_KINDS:
                i = o_hist + e.seat * per + street * 2
                src[i] = min(src[i] + inc, 1.0)
            elif kind in CALL_KINDS:
                i = o_hist + e.seat * per + street * 2 + 1
                src[i] = min(src[i] + inc, 1.0)
            elif kind == "street":
                street = e.to
        self._street = street
        self._pos = len(log)

    # ------------------------------------------------------------------------------------

    def encode(self, game: Game, seat: int, sizes: tuple[int, ...] | None = None) -> np.ndarray:
        """The observation of ``seat`` (a new float32 array of ``layout.size``).

        ``sizes``: ``game.bet_sizes()`` when ``seat`` is to act and the caller has it already.
        """
        self._catch_up(game)
        current = game.current_player
        if self._dyn_pos != self._pos:  # the state moved on (every action logs an event)
            if current is not None and sizes is None:
                sizes = game.bet_sizes()
            self._write_dynamic(game, current, sizes)
            self._dyn_pos = self._pos
        obs = self._src.take(self._index[seat])
        if current != seat:
            obs[self._o_mine:self._o_mine + self._n_mine] = 0.0  # only the player to act owes
        if self._wild or self._chicago:
            hole = game.hole_cards(seat)
            if self._wild:
                self._encode_wild_cards(game, obs, hole)
            if self._chicago:
                slots = [_CHICAGO_SLOT[c] for c in hole if c & 3 == SPADE]
                obs[self._o_chicago_hole + (min(slots) if slots else 13)] = 1.0
        return obs

    def observe(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """``(observation, action_mask)`` of ``seat``; the mask is :func:`envs.actions.action_mask`
        (fold, check/call, one id per offered size), built from one ``bet_sizes()`` call."""
        if game.current_player == seat:
            sizes = game.bet_sizes()
            mask = self._masks[game.can_fold()][len(sizes)].copy()
            return self.encode(game, seat, sizes), mask
        return self.encode(game, seat), np.zeros(self.num_actions, dtype=np.int8)

    def _write_dynamic(self, game: Game, current: int | None, sizes) -> None:
        # Chips and counts as they are, then one scaling and clipping pass (see start()).
        pot = game.pot
        if current is not None:
            owed = game.to_call
            values = [pot, owed, owed / (pot + owed) if owed else 0.0]
            values += sizes
            values += self._zeros[:self.num_sizes - len(sizes)]
        else:
            values = [pot, 0.0, 0.0]
            values += self._zeros
        values.append(game.bet_size)
        values.append(game.raises_this_round)
        values += self._street_onehot[game.street]
        values += self._to_act[self._n if current is None else current]
        values += game.stacks
        values += game.committed
        values += game.total_committed
        values += game.folded
        values += game.all_in
        self._dyn_struct.pack_into(self._src_bytes, 4 * self._o_dyn, *values)
        dyn = self._dyn
        np.multiply(dyn, self._dyn_scale, out=dyn)
        np.minimum(dyn, 1.0, out=dyn)
        if self._wild:
            wild = game.wild_rank
            slot = 13 if wild is None else RANK_CHARS.index(wild)
            if slot != self._wild_slot:
                if self._wild_slot is not None:
                    self._src[self._o_src_wild + self._wild_slot] = 0.0
                self._src[self._o_src_wild + slot] = 1.0
                self._wild_slot = slot

    def _encode_wild_cards(self, game: Game, obs: np.ndarray, hole) -> None:
        """The visible wild cards: every face-up card of a wild rank and the observer's own
        face-down ones."""
        wild = game.wild_rank
        ranks = [] if wild is None else [RANK_CHARS.index(wild)]
        if self._queens_wild:
            ranks.append(QUEEN)
        o = self._o_wild_cards
        up_any = self._up_any
        for k in ranks:
            obs[o + 4 * k:o + 4 * k + 4] = up_any[4 * k:4 * k + 4]
            for c in hole:
                if c >> 2 == k:
                    obs[o + c] = 1.0
