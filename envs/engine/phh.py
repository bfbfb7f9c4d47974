"""Hands in the Poker Hand History format (PHH, the ``phh-std`` specification).

:func:`to_phh` writes one hand of a :class:`~envs.engine.game.Game` as a ``.phh`` file (TOML),
from the referee's view (every card) or from one seat's view (other seats' face-down cards as
``??`` until they are shown at showdown); :func:`read_phh` reads such a file back into a
``Game`` replayed action by action (the same log and payoffs). :func:`dumps_many` and
:func:`loads_many` do the same for PHH's multi-hand form (``.phhs``: one ``[n]`` table a hand).

>>> from envs.engine.game import Game
>>> g = Game("soko", 2, deck="Ah 2c Kd 3c", seed=0)
>>> g.check_or_call(); g.fold()
>>> text = to_phh(g, hand_id="demo")
>>> print(text.split("actions = ")[1].split("]")[0])
[
  # Street 1 (bet 4)
  "d dh p1 AhKd",
  "d dh p2 2c3c",
  "p2 pb",
  "p1 f",
  # p2 wins 4 from the main pot (everyone else folded)
<BLANKLINE>
>>> print(to_phh(g, seat=0).split("actions = ")[1].split("]")[0].splitlines()[2:4])
['  "d dh p1 ??Kd",', '  "d dh p2 2c3c",']
>>> read_phh(text).payoffs == g.payoffs
True

**Players and seats.** PHH names players ``p1..pN`` in dealing order, so ``p1`` is the seat
left of the button; the standard ``seats`` field gives each player's seat number, one-based
(engine seat ``k`` is seat ``k + 1``), and ``seat_count`` the table size.

**Variant codes.** A game that is genuine seven-card stud (:data:`SEVEN_CARD_STUD`, fixed
limit) is written as PHH's ``F7S`` and replays in pokerkit. Every other game gets a code of our
own: a betting letter (``F`` fixed, ``S`` spread, ``P`` pot, ``N`` no limit) and the family
(``SOKO``, ``FTB``, ``7S`` or ``STUD``), with ``/LC`` for Low Chicago, e.g. ``FSOKO`` or
``NFTB/LC``. Whatever PHH lacks is in ``_``-prefixed user fields that PHH parsers ignore: every
field of :class:`~envs.engine.rules.Rules` (``_game``, ``_streets``, ``_canadian_hands``, ...),
the wild ranks in order (``_wild_ranks``) and the view (``_view``). The reader rebuilds the
rules from those fields, so any variant (``rules.replace(...)``) round-trips.

**Actions.** ``d dh pN cards`` deals one street's cards to a player in the order dealt (face
up or down as the street says), ``pN pb`` posts the bring-in, ``pN cbr X`` completes, bets or
raises to ``X`` chips this round, ``pN cc`` checks or calls, ``pN f`` folds, ``pN sm cards``
shows every card of the player (down and up, as dealt) at showdown. A wild rank set or ended
by a face-up card is a commentary (``# 7c: sevens are wild``) on that deal; TOML comments name the
streets and who won what.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import tomllib
from collections.abc import Iterable

from envs.engine.cards import RANK_PLURALS, Card
from envs.engine.events import EventKind, WinReason
from envs.engine.game import Game
from envs.engine.rules import (
    DOWN,
    UP,
    BetSize,
    Betting,
    Order,
    Rules,
    Street,
    deal_order,
)

__all__ = ["SEVEN_CARD_STUD", "dumps_many", "loads_many", "read_phh", "to_phh", "variant_code"]

SEVEN_CARD_STUD = Rules(
    name="seven_card_stud",
    streets=(
        Street((DOWN, DOWN, UP), BetSize.SMALL),
        Street((UP,), BetSize.SMALL),
        Street((UP,), BetSize.BIG),
        Street((UP,), BetSize.BIG),
        Street((DOWN,), BetSize.BIG),
    ),
    min_players=2,
    max_players=7,
    bring_in=Order.LOWEST,
    bring_in_amount=2,
    first_to_act=Order.HIGHEST,
)
"""Plain seven-card stud as a :class:`Rules` value (no wild cards, no Canadian hands, no
open-pair doubling; lowest up card brings in, highest showing hand acts first): PHH's ``F7S``.
Not one of the presets of ``RULES`` (the environments and the compiled core do not offer it);
``Game(SEVEN_CARD_STUD, n)`` plays it."""

_BETTING_LETTERS = {Betting.FIXED_LIMIT: "F", Betting.SPREAD_LIMIT: "S", Betting.POT_LIMIT: "P",
                    Betting.NO_LIMIT: "N"}
# Standard PHH fields a caller may set through to_phh's keyword arguments.
_OPTIONAL_FIELDS = ("author", "event", "url", "venue", "address", "city", "region", "postal_code",
                    "country", "time_zone", "day", "month", "year",
                    "level", "table", "players", "currency", "currency_symbol", "time_limit")
_OWN_FIELDS = ("variant", "antes", "bring_in", "small_bet", "big_bet", "starting_stacks", "actions",
               "hand", "seats", "seat_count", "finishing_stacks")
# Rules fields carried by standard PHH fields (ante, bring_in_amount, small_bet, big_bet) or by
# their own spelling below (streets, bring_in); every other field is written as "_" + its name.
_RULES_AS_IS = ("min_players", "max_players", "canadian_hands", "ace_low_four_straight",
                "follow_the_queen", "queens_wild", "double_ace_flush", "low_chicago", "betting",
                "max_raises", "first_to_act", "open_pair_doubles", "spread_sizes", "pot_fractions",
                "starting_stack", "deck_ranks")
_ACTION = re.compile(r"^(?:d dh p(?P<dealt>\d+) (?P<cards>\S+)|p(?P<player>\d+) "
                     r"(?P<verb>pb|f|cc|cbr|sm)(?: (?P<arg>\S+))?)$")


def _plain_stud(rules: Rules) -> bool:
    """Whether ``rules`` play seven-card stud as PHH (and pokerkit) define it, any betting."""
    base = SEVEN_CARD_STUD
    return (rules.streets == base.streets and not rules.canadian_hands and not rules.follow_the_queen
            and not rules.low_chicago and rules.bring_in == Order.LOWEST
            and rules.first_to_act == Order.HIGHEST and not rules.open_pair_doubles
            and rules.deck_ranks == base.deck_ranks)


def variant_code(rules: Rules) -> str:
    """The PHH variant code written for ``rules``: ``F7S`` for genuine fixed-limit seven-card
    stud (a bet and three raises a round), else a code of our own (module docstring).

    >>> from envs.engine.rules import RULES
    >>> [variant_code(RULES[n]) for n in ("soko", "follow_the_bitch_low_chicago")]
    ['FSOKO', 'FFTB/LC']
    >>> variant_code(SEVEN_CARD_STUD), variant_code(SEVEN_CARD_STUD.replace(betting="no_limit"))
    ('F7S', 'N7S')
    """
    letter = _BETTING_LETTERS[rules.betting]
    if _plain_stud(rules):
        if rules.betting == Betting.FIXED_LIMIT and rules.max_raises == 3:
            return "F7S"
        return letter + "7S"
    family = "FTB" if rules.follow_the_queen else "SOKO" if rules.canadian_hands else "STUD"
    return letter + family + ("/LC" if rules.low_chicago else "")


# ---------------------------------------------------------------------------------------------
# Writing


def _toml(value) -> str:
    """``value`` as a TOML value (str, bool, int, finite float, or a list of them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a PHH field cannot hold {value!r}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise ValueError(f"a PHH field holds text, numbers, true/false or lists of them, not {value!r}")


def _cards(cards) -> str:
    return "".join("??" if c is None else str(c) for c in cards)


def _rules_fields(rules: Rules) -> list[tuple[str, object]]:
    fields: list[tuple[str, object]] = [("_game", rules.name)]
    fields.append(("_streets", [" ".join("up" if up else "down" for up in s.cards) for s in rules.streets]))
    fields.append(("_street_bets", [s.bet.value for s in rules.streets]))
    fields.append(("_bring_in_card", rules.bring_in.value if rules.bring_in is not None else "none"))
    for name in _RULES_AS_IS:
        value = getattr(rules, name)
        fields.append((f"_{name}", value.value if hasattr(value, "value") else value))
    return fields


def to_phh(game: Game, *, seat: int | None = None, hand_id: str | int | None = None,
           **user_fields) -> str:
    """One hand (finished or not) as PHH text: the referee's view (``seat=None``: every card) or
    what ``seat`` may see (others' face-down cards ``??`` unless shown at showdown).

    ``hand_id`` is PHH's ``hand`` field. Keyword arguments add fields: PHH's optional ones by
    their names (``event``, ``table``, ``players`` given per engine seat ...), anything else as
    a user field (a ``_`` is put in front of names that lack one). Values are text, numbers,
    true/false, or lists of them.
    """
    n = game.num_players
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):
        raise ValueError(f"seat must be a seat from 0 to {n - 1} or None, not {seat!r}")
    rules = game.rules
    order = deal_order(game.button, n)           # order[i] is player p(i+1)
    label = {s: f"p{i + 1}" for i, s in enumerate(order)}

    def visible(s: int, up: bool) -> bool:  # at the time of the deal; showdown shows the rest
        return seat is None or up or s == seat

    actions: list[str] = []                       # action strings and "# ..." comment lines
    dealt: dict[int, list] = {}                   # the street being dealt: cards per seat
    notes: dict[int, list[str]] = {}              # commentaries (wild ranks) per seat
    all_cards: dict[int, list] = {s: [] for s in range(n)}
    last_dealt = None
    wild_ranks: list[str] = []

    def flush() -> None:
        for s in order:
            if s in dealt:
                line = f'd dh {label[s]} {_cards(dealt[s])}'
                if notes.get(s):
                    line += " # " + "; ".join(notes[s])
                actions.append(line)
        dealt.clear()
        notes.clear()

    for e in game.log:
        kind = e.kind
        if kind == EventKind.DEAL:
            card = e.card if visible(e.seat, e.up) else None
            dealt.setdefault(e.seat, []).append(card)
            all_cards[e.seat].append(e.card)
            last_dealt = e
            continue
        if kind == EventKind.WILD:
            wild_ranks.append(e.rank or "")
            what = (f"{RANK_PLURALS[e.rank]} are wild" if e.rank else
                    f"the queen ends {RANK_PLURALS[e.ended]} wild, nothing is wild")
            notes.setdefault(last_dealt.seat, []).append(f"{last_dealt.card}: {what}")
            continue
        if kind == EventKind.STREET:  # logged after its cards: the comment goes first
            actions.append(f"# Street {e.street + 1} (bet {e.bet_size})")
        flush()
        if kind == EventKind.FOLD:
            actions.append(f"{label[e.seat]} f")
        elif kind in (EventKind.CHECK, EventKind.CALL):
            actions.append(f"{label[e.seat]} cc")
        elif kind == EventKind.BRING_IN:
            actions.append(f"{label[e.seat]} pb")
        elif kind in (EventKind.COMPLETE, EventKind.BET, EventKind.RAISE):
            actions.append(f"{label[e.seat]} cbr {e.round_total}")
        elif kind == EventKind.SHOW:
            actions.append(f"{label[e.seat]} sm {_cards(all_cards[e.seat])}")
        elif kind == EventKind.WIN:
            where = "the main pot" if e.pot == 0 else f"side pot {e.pot}"
            why = e.value if e.reason == WinReason.BEST_HAND else e.reason.value
            actions.append(f"# {label[e.seat]} wins {e.amount} from {where} ({why})")
    flush()

    fields: list[tuple[str, object]] = [
        ("variant", variant_code(rules)),
        ("antes", [rules.ante] * n),
    ]
    if rules.bring_in is not None:
        fields.append(("bring_in", rules.bring_in_amount))
    fields += [("small_bet", rules.small_bet), ("big_bet", rules.big_bet),
               ("starting_stacks", [game.starting_stacks[s] for s in order])]
    tail: list[tuple[str, object]] = []
    if hand_id is not None:
        tail.append(("hand", hand_id if isinstance(hand_id, int) else str(hand_id)))
    tail += [("seats", [s + 1 for s in order]), ("seat_count", n)]
    if game.is_over:
        tail.append(("finishing_stacks", [game.stacks[s] for s in order]))
    extra: list[tuple[str, object]] = []
    for key, value in user_fields.items():
        if key in _OWN_FIELDS:
            raise ValueError(f"to_phh writes the {key!r} field itself")
        if key == "players":
            value = list(value)
            if len(value) != n:
                raise ValueError(f"players names {len(value)} players for {n} seats")
            tail.append(("players", [str(value[s]) for s in order]))
        elif key in _OPTIONAL_FIELDS:
            tail.append((key, value))
        else:
            extra.append((key if key.startswith("_") else "_" + key, value))
    own = _rules_fields(rules) + [("_view", "referee" if seat is None else label[seat])]
    if rules.follow_the_queen:
        own.append(("_wild_ranks", wild_ranks))
    lines = [f"{k} = {_toml(v)}" for k, v in fields]
    lines.append("actions = [")
    for a in actions:
        lines.append(f"  {a}" if a.startswith("#") else f"  {_toml(a)},")
    lines.append("]")
    lines += [f"{k} = {_toml(v)}" for k, v in tail + own + extra]
    return "\n".join(lines) + "\n"


def dumps_many(hands: Iterable[str]) -> str:
    """PHH's multi-hand form (``.phhs``): the ``to_phh`` texts as tables ``[1]``, ``[2]``..."""
    return "\n".join(f"[{i}]\n{text.rstrip()}\n" for i, text in enumerate(hands, 1))


# ---------------------------------------------------------------------------------------------
# Reading


def _field(data: dict, key: str, kind, what: str, default=...):
    if key not in data:
        if default is not ...:
            return default
        raise ValueError(f"the PHH file has no {key!r} field ({what})")
    value = data[key]
    ok = (isinstance(value, kind) and not isinstance(value, bool)) if kind is int else isinstance(value, kind)
    if not ok:
        raise ValueError(f"the PHH field {key!r} must be {what}, not {value!r}")
    return value


def _int_list(data: dict, key: str, n: int | None, what: str) -> list[int]:
    value = _field(data, key, list, what)
    if not all(type(v) is int for v in value) or (n is not None and len(value) != n):
        raise ValueError(f"the PHH field {key!r} must be {what}, not {value!r}")
    return value


def _rules_from(data: dict) -> Rules:
    variant = _field(data, "variant", str, "a variant code")
    amounts = {"small_bet": _field(data, "small_bet", int, "a whole number of chips"),
               "big_bet": _field(data, "big_bet", int, "a whole number of chips")}
    antes = _int_list(data, "antes", None, "a list of whole numbers of chips")
    if len(set(antes)) > 1:
        raise ValueError(f"antes {antes} differ between players; our games have one ante")
    amounts["ante"] = antes[0] if antes else 0
    amounts["bring_in_amount"] = _field(data, "bring_in", int, "a whole number of chips", 0)
    if "_streets" not in data:
        if variant != "F7S":
            raise ValueError(f"variant {variant!r} without the _streets field: not a hand written by "
                             "this project (only plain F7S files are read without our fields)")
        return SEVEN_CARD_STUD.replace(**amounts)
    streets_text = _field(data, "_streets", list, "a list like ['down up', 'up']")
    bets = _field(data, "_street_bets", list, "a list of 'small' or 'big'")
    if len(bets) != len(streets_text):
        raise ValueError(f"_streets has {len(streets_text)} streets but _street_bets {len(bets)}")
    streets = []
    for text, bet in zip(streets_text, bets):
        words = str(text).split()
        if not words or any(w not in ("up", "down") for w in words):
            raise ValueError(f"a street of _streets is 'up'/'down' words, not {text!r}")
        streets.append(Street(tuple(w == "up" for w in words), bet))
    kwargs = dict(name=_field(data, "_game", str, "the game's name"), streets=tuple(streets), **amounts)
    bring_in = _field(data, "_bring_in_card", str, "'lowest', 'highest' or 'none'", "none")
    kwargs["bring_in"] = None if bring_in == "none" else bring_in
    for name in _RULES_AS_IS:
        key = "_" + name
        if key in data:
            value = data[key]
            kwargs[name] = tuple(value) if isinstance(value, list) else value
    try:
        rules = Rules(**kwargs)
    except (TypeError, ValueError) as e:
        raise ValueError(f"the PHH file's rules are not valid: {e}") from None
    if variant_code(rules) != variant:
        raise ValueError(f"variant {variant!r} does not match the rules in the file's _ fields "
                         f"(they make {variant_code(rules)!r})")
    return rules


def _parse_cards(text: str, where: str) -> list[Card | None]:
    if len(text) % 2:
        raise ValueError(f"{where}: cards are two characters each, not {text!r}")
    out: list[Card | None] = []
    for i in range(0, len(text), 2):
        pair = text[i:i + 2]
        try:
            out.append(None if pair == "??" else Card.from_str(pair))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    return out


def _game_from(data: dict) -> Game:
    rules = _rules_from(data)
    stacks = _int_list(data, "starting_stacks", None, "a list of whole numbers of chips")
    n = len(stacks)
    seats = _int_list(data, "seats", n, f"a list of {n} seat numbers", ) if "seats" in data else None
    if seats is None:
        order = tuple(range(n))
        button = n - 1
    else:
        button = (seats[0] - 2) % n
        order = deal_order(button, n)
        if [s + 1 for s in order] != seats:
            raise ValueError(f"seats {seats} are not seats 1..{n} clockwise from the button's left")
    raw = _field(data, "actions", list, "a list of action strings")
    actions = []
    for i, text in enumerate(raw):
        if not isinstance(text, str):
            raise ValueError(f"action {i + 1} must be text, not {text!r}")
        text = " ".join(text.split("#", 1)[0].split())
        if not text:
            continue
        m = _ACTION.match(text)
        if m is None:
            raise ValueError(f"action {i + 1} {text!r} is not one this reader knows "
                             "(d dh pN cards, pN pb/f/cc, pN cbr X, pN sm cards)")
        who = int(m["dealt"] or m["player"])
        if not 1 <= who <= n:
            raise ValueError(f"action {i + 1} {text!r}: no player p{who} among {n}")
        actions.append((i + 1, text, order[who - 1], m))
    # Each seat's cards as dealt; shown cards at showdown fill in what the view hid.
    cards: dict[int, list] = {s: [] for s in range(n)}
    shown: dict[int, list] = {}
    for number, text, s, m in actions:
        where = f"action {number} {text!r}"
        if m["dealt"]:
            cards[s] += _parse_cards(m["cards"], where)
        elif m["verb"] == "sm" and m["arg"] not in (None, "-"):  # "-" and a muck add nothing
            shown[s] = _parse_cards(m["arg"], where)
    for s, show in shown.items():
        if len(show) != len(cards[s]) or any(a is not None and b is not None and a != b
                                             for a, b in zip(show, cards[s])):
            raise ValueError(f"{_label(order, s)} shows {_cards(show)} but was dealt {_cards(cards[s])}")
        cards[s] = [b if b is not None else a for a, b in zip(cards[s], show)]
    known = [c for s in cards for c in cards[s] if c is not None]
    if len(set(known)) != len(known):
        twice = sorted({c for c in known if known.count(c) > 1})
        raise ValueError(f"card(s) {' '.join(map(str, twice))} dealt twice")
    spare = iter([c for c in rules.deck if c not in set(known)])
    for s, held in cards.items():  # cards this view never saw: any card nobody holds will do
        cards[s] = [c if c is not None else next(spare) for c in held]
    # The deck order the engine deals from: street by street, pass by pass, seat by seat.
    deck = []
    index = 0
    for street in rules.streets:
        for q in range(len(street.cards)):
            deck += [cards[s][index + q] for s in order if len(cards[s]) > index + q]
        index += len(street.cards)
    try:
        game = Game(rules, n, stacks=[stacks[order.index(s)] for s in range(n)], button=button,
                    deck=deck, seed=0)
    except ValueError as e:
        raise ValueError(f"the PHH file's table is not valid: {e}") from None
    for number, text, s, m in actions:
        verb = m["verb"]
        if verb is None or verb == "sm":
            continue
        if game.current_player != s:
            who = "nobody (the hand is over)" if game.current_player is None else \
                f"{_label(order, game.current_player)}"
            raise ValueError(f"action {number} {text!r}: it is {who}'s turn")
        before = len(game.log)
        try:
            if verb == "f":
                game.fold()
            elif verb == "cbr":
                if m["arg"] is None or not m["arg"].isdigit():
                    raise ValueError(f"cbr takes a whole number of chips, not {m['arg']!r}")
                game.bet_or_raise(int(m["arg"]))
            else:
                game.check_or_call()
        except ValueError as e:
            raise ValueError(f"action {number} {text!r}: {e}") from None
        posted = game.log[before].kind
        if (verb == "pb") != (posted == EventKind.BRING_IN):
            raise ValueError(f"action {number} {text!r}: the game recorded a {posted.value} there")
    for s in range(n):
        dealt = [e.card for e in game.log if e.kind == EventKind.DEAL and e.seat == s]
        if dealt != cards[s]:
            raise ValueError(f"{_label(order, s)} was dealt {_cards(cards[s])} in the file but "
                             f"{_cards(dealt)} when replayed")
    showing = {s for _, _, s, m in actions if m["verb"] == "sm"}
    if game.is_over and showing != {e.seat for e in game.log if e.kind == EventKind.SHOW}:
        shows = sorted(_label(order, e.seat) for e in game.log if e.kind == EventKind.SHOW)
        raise ValueError(f"the file shows the cards of {sorted(_label(order, s) for s in showing)} but "
                         f"the replay's showdown is {shows}")
    final = data.get("finishing_stacks")
    if final is not None and game.is_over and final != [game.stacks[s] for s in order]:
        raise ValueError(f"finishing_stacks {final} differ from the replay's "
                         f"{[game.stacks[s] for s in order]}")
    return game


def _label(order, seat: int) -> str:
    return f"p{order.index(seat) + 1}"


def read_phh(text: str) -> Game:
    """The hand of a ``.phh`` text (written by :func:`to_phh`, or a plain ``F7S`` file with known
    cards) as a :class:`Game` replayed action by action; a ValueError names what is wrong.
    Cards a seat's view hid (``??``) are dealt as cards nobody holds: the actions, the shown
    cards and the payoffs are the same."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not a PHH file (TOML): {e}") from None
    return _game_from(data)


def loads_many(text: str) -> list[Game]:
    """Every hand of a multi-hand ``.phhs`` text (tables ``[1]``, ``[2]``...) as a Game."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not a PHH file (TOML): {e}") from None
    games = []
    for key, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"a .phhs file holds one table a hand; {key!r} is not a table")
        try:
            games.append(_game_from(table))
        except ValueError as e:
            raise ValueError(f"hand [{key}]: {e}") from None
    return games
