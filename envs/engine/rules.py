"""The rules of each game as data: one frozen :class:`Rules` value per preset.

Every option in ``docs/rules.md`` is a field here, so a variant is
``dataclasses.replace(RULES["soko"], bring_in="highest")``; nothing is a subclass.

>>> RULES["soko"].bet_size(0), RULES["soko"].bet_size(2)
(4, 8)
>>> RULES["follow_the_bitch"].replace(bring_in="lowest")
Traceback (most recent call last):
...
ValueError: follow_the_bitch: bring_in_amount must be between 1 and small_bet - 1 (3), not 0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

BETTING_STRUCTURES = ("fixed_limit", "spread_limit", "pot_limit", "no_limit")
UP = True
DOWN = False


@dataclass(frozen=True)
class Street:
    """One dealing round and the betting round after it.

    ``cards`` lists the passes in deal order, ``True`` for a face-up card (one card to every
    active player per pass); ``bet`` is ``"small"`` or ``"big"``: the bet size of the betting
    round that follows.
    """

    cards: tuple[bool, ...]
    bet: str = "small"

    def __post_init__(self) -> None:
        if not self.cards:
            raise ValueError("a street deals at least one card")
        if self.bet not in ("small", "big"):
            raise ValueError(f"a street's bet is 'small' or 'big', not {self.bet!r}")


@dataclass(frozen=True)
class Rules:
    """Everything that makes one stud game: deal schedule, ranking, stakes and options.

    Chip amounts are whole chips. Field names match ``docs/rules.md``.
    """

    name: str
    streets: tuple[Street, ...]
    min_players: int = 2
    max_players: int = 8
    # Hand ranking: Soko's four-flush and four-straight between one pair and two pair.
    canadian_hands: bool = False
    ace_low_four_straight: bool = True
    # Wild cards: the face-up card dealt after a face-up queen makes its rank wild.
    follow_the_queen: bool = False
    queens_wild: bool = False
    double_ace_flush: bool = False
    low_chicago: bool = False
    # Betting.
    betting: str = "fixed_limit"
    max_raises: int = 3
    ante: int = 1
    bring_in: str | None = None
    bring_in_amount: int = 0
    small_bet: int = 4
    big_bet: int = 8
    first_to_act: str = "highest"
    open_pair_doubles: bool = False
    spread_sizes: tuple[float, ...] = (1.0, 1.5, 2.0)
    pot_fractions: tuple[float, ...] = (0.5, 1.0)
    starting_stack: int = 0  # 0 means 100 big bets (see ``stack``)

    def __post_init__(self) -> None:
        def bad(sentence: str) -> ValueError:
            return ValueError(f"{self.name}: {sentence}")

        if not isinstance(self.streets, tuple) or not all(isinstance(s, Street) for s in self.streets):
            raise bad("streets must be a tuple of Street")
        if not self.streets:
            raise bad("a game needs at least one street")
        if self.betting not in BETTING_STRUCTURES:
            raise bad(f"betting must be one of {', '.join(BETTING_STRUCTURES)}, not {self.betting!r}")
        if self.bring_in not in (None, "lowest", "highest"):
            raise bad(f"bring_in must be 'lowest', 'highest' or None, not {self.bring_in!r}")
        if self.first_to_act not in ("lowest", "highest"):
            raise bad(f"first_to_act must be 'lowest' or 'highest', not {self.first_to_act!r}")
        for name in ("ante", "bring_in_amount", "small_bet", "big_bet", "max_raises", "starting_stack"):
            value = getattr(self, name)
            if type(value) is not int:
                raise bad(f"{name} must be a whole number of chips, not {value!r}")
            if value < 0:
                raise bad(f"{name} must not be negative, not {value}")
        if self.small_bet < 1 or self.big_bet < 1:
            raise bad("small_bet and big_bet must be at least 1 chip")
        if self.big_bet < self.small_bet:
            raise bad(f"big_bet ({self.big_bet}) must not be below small_bet ({self.small_bet})")
        if self.bring_in is None and self.bring_in_amount:
            raise bad(f"bring_in_amount is {self.bring_in_amount} but the game has no bring-in "
                      "(set bring_in='lowest' or 'highest', or bring_in_amount=0)")
        if self.bring_in is not None:
            if not self.streets[0].cards.count(UP):
                raise bad("a bring-in needs a face-up card on the first street")
            if not 0 < self.bring_in_amount < self.small_bet:
                raise bad(f"bring_in_amount must be between 1 and small_bet - 1 "
                          f"({self.small_bet - 1}), not {self.bring_in_amount}")
        if not 2 <= self.min_players <= self.max_players:
            raise bad(f"min_players ({self.min_players}) must be at least 2 and at most "
                      f"max_players ({self.max_players})")
        if self.max_players * self.cards_per_player > 52:
            raise bad(f"{self.max_players} players x {self.cards_per_player} cards needs more than "
                      "one 52-card deck; lower max_players")
        if not self.spread_sizes or any(not 1.0 <= s <= 2.0 for s in self.spread_sizes):
            raise bad(f"spread_sizes are multiples of the round's bet from 1.0 to 2.0, not {self.spread_sizes}")
        if not self.pot_fractions or any(not 0 < f <= 1.0 for f in self.pot_fractions):
            raise bad(f"pot_fractions must lie in (0, 1], not {self.pot_fractions}")
        if self.open_pair_doubles and len(self.streets) < 2:
            raise bad("open_pair_doubles needs a second betting round")
        if self.queens_wild and not self.follow_the_queen:
            raise bad("queens_wild is part of the follow-the-queen wild cards (follow_the_queen=True)")
        if self.double_ace_flush and not (self.follow_the_queen or self.queens_wild):
            raise bad("double_ace_flush only matters with wild cards (follow_the_queen=True)")
        if self.low_chicago and not any(DOWN in s.cards for s in self.streets):
            raise bad("low_chicago needs face-down cards")

    @property
    def cards_per_player(self) -> int:
        return sum(len(s.cards) for s in self.streets)

    @property
    def stack(self) -> int:
        """Each seat's stack when a game is not given stacks: ``starting_stack``, or 100 big bets."""
        return self.starting_stack or 100 * self.big_bet

    @property
    def max_bet_sizes(self) -> int:
        """How many different bet/raise sizes can be offered at once (the env's size actions)."""
        if self.betting == "fixed_limit":
            return 1
        if self.betting == "spread_limit":
            return len(set(self.spread_sizes) | {1.0, 2.0})
        return len(set(self.pot_fractions)) + 2

    @property
    def num_rounds(self) -> int:
        return len(self.streets)

    def bet_size(self, street: int, *, doubled: bool = False) -> int:
        """The fixed-limit bet of betting round ``street`` (0-based); ``doubled`` after an open pair."""
        if doubled or self.streets[street].bet == "big":
            return self.big_bet
        return self.small_bet

    def replace(self, **changes) -> Rules:
        """A variant: ``rules.replace(betting="no_limit")``; unknown fields are a clear error."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"unknown rules field(s) {', '.join(unknown)}; fields are "
                             f"{', '.join(f.name for f in dataclasses.fields(self))}")
        return dataclasses.replace(self, **changes)


_SOKO = Rules(
    name="soko",
    streets=(
        Street((DOWN, UP), "small"),
        Street((UP,), "small"),
        Street((UP,), "big"),
        Street((UP,), "big"),
    ),
    min_players=2,
    max_players=8,
    canadian_hands=True,
    bring_in="lowest",
    bring_in_amount=2,
    first_to_act="lowest",
    open_pair_doubles=True,
)

_FOLLOW_THE_BITCH = Rules(
    name="follow_the_bitch",
    streets=(
        Street((DOWN, DOWN, UP), "small"),
        Street((DOWN, UP), "big"),
        Street((DOWN, UP), "big"),
    ),
    min_players=2,
    max_players=7,
    follow_the_queen=True,
    first_to_act="highest",
)

RULES: dict[str, Rules] = {
    "soko": _SOKO,
    "soko_nordic": dataclasses.replace(_SOKO, name="soko_nordic", bring_in="highest",
                                       bring_in_amount=2 * _SOKO.ante, first_to_act="highest"),
    "follow_the_bitch": _FOLLOW_THE_BITCH,
    "follow_the_bitch_low_chicago": dataclasses.replace(
        _FOLLOW_THE_BITCH, name="follow_the_bitch_low_chicago", low_chicago=True),
}
"""The presets, keyed by name."""


def get_rules(rules: Rules | str, **overrides) -> Rules:
    """A preset by name (or a Rules value) with field overrides; clear errors for unknown names."""
    if isinstance(rules, str):
        try:
            rules = RULES[rules]
        except KeyError:
            raise ValueError(f"unknown game {rules!r}; presets are {', '.join(RULES)}") from None
    elif not isinstance(rules, Rules):
        raise ValueError(f"rules must be a Rules value or a preset name, not {rules!r}")
    return rules.replace(**overrides) if overrides else rules
