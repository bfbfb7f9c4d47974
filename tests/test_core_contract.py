"""The contract between the Python side and the compiled core, held mechanically.

- Every field of ``Rules`` is either passed to the core (``envs.batched.CORE_FIELDS``) or named
  as not affecting play with a reason (``envs.batched.NOT_PASSED``), and a field in neither
  makes ``core_rules`` refuse; each passed field changes what the core is given, each field not
  passed changes nothing; every ``CoreRules`` attribute is written.
- The constants the core exports equal the Python definitions (checked at import of
  ``envs.batched``; here it is shown that a difference is caught and named).
"""

import dataclasses
import types

import pytest

from envs import _stud_core
from envs.actions import FIRST_BET, num_actions
from envs.batched import CORE_FIELDS, DERIVED_CORE_FIELDS, NOT_PASSED, core_constants_mismatch, core_rules
from envs.engine.rules import RULES, Rules
from envs.observation import FEATURES, build_layout

FIELDS = [f.name for f in dataclasses.fields(Rules)]

# For each Rules field: two sets of overrides of follow_the_bitch that differ in that field only
# (both valid rules), so the field's effect on the core's copy can be seen on its own.
PAIRS = {
    "name": ({}, {"name": "another_name"}),
    "streets": ({}, {"streets": RULES["soko"].streets}),
    "min_players": ({}, {"min_players": 3}),
    "max_players": ({}, {"max_players": 5}),
    "canadian_hands": ({}, {"canadian_hands": True}),
    "ace_low_four_straight": ({"canadian_hands": True},
                              {"canadian_hands": True, "ace_low_four_straight": False}),
    "follow_the_queen": ({}, {"follow_the_queen": False}),
    "queens_wild": ({}, {"queens_wild": True}),
    "double_ace_flush": ({}, {"double_ace_flush": True}),
    "low_chicago": ({}, {"low_chicago": True}),
    "betting": ({}, {"betting": "no_limit"}),
    "max_raises": ({}, {"max_raises": 4}),
    "ante": ({}, {"ante": 2}),
    "bring_in": ({"bring_in": "lowest", "bring_in_amount": 1},
                 {"bring_in": "highest", "bring_in_amount": 1}),
    "bring_in_amount": ({"bring_in": "lowest", "bring_in_amount": 1},
                        {"bring_in": "lowest", "bring_in_amount": 2}),
    "small_bet": ({}, {"small_bet": 2}),
    "big_bet": ({"starting_stack": 800}, {"starting_stack": 800, "big_bet": 16}),
    "first_to_act": ({}, {"first_to_act": "lowest"}),
    "open_pair_doubles": ({}, {"open_pair_doubles": True}),
    "spread_sizes": ({"betting": "spread_limit"},
                     {"betting": "spread_limit", "spread_sizes": (1.0, 2.0)}),
    "pot_fractions": ({"betting": "pot_limit"}, {"betting": "pot_limit", "pot_fractions": (0.5,)}),
    "starting_stack": ({}, {"starting_stack": 123}),
    "deck_ranks": ({"max_players": 5}, {"max_players": 5, "deck_ranks": "6789TJQKA"}),
}


def _core_attributes() -> list[str]:
    cls = _stud_core.CoreRules
    return sorted(a for a in dir(cls) if not a.startswith("_") and isinstance(getattr(cls, a), property))


def _as_dict(c) -> dict:
    return {a: getattr(c, a) for a in _core_attributes()}


def test_every_rules_field_is_passed_to_the_core_or_listed_as_not_affecting_play():
    passed, not_passed = set(CORE_FIELDS), set(NOT_PASSED)
    assert not passed & not_passed, f"both passed and not passed: {sorted(passed & not_passed)}"
    unlisted = set(FIELDS) - passed - not_passed
    assert not unlisted, (f"Rules fields neither passed to the core (envs.batched.CORE_FIELDS) nor listed "
                          f"as not affecting play (envs.batched.NOT_PASSED): {sorted(unlisted)}")
    stale = (passed | not_passed) - set(FIELDS)
    assert not stale, f"not Rules fields: {sorted(stale)}"
    for name, reason in NOT_PASSED.items():
        assert isinstance(reason, str) and len(reason.split()) >= 3, f"{name}: say why play ignores it"


def test_each_field_pair_differs_in_that_field_only():
    assert set(PAIRS) == set(FIELDS), "give every Rules field a pair of variants here"
    base = RULES["follow_the_bitch"]
    for name, (before, after) in PAIRS.items():
        a, b = dataclasses.asdict(base.replace(**before)), dataclasses.asdict(base.replace(**after))
        assert {k for k in a if a[k] != b[k]} == {name}, name


@pytest.mark.parametrize("name", FIELDS)
def test_a_passed_field_changes_the_cores_copy_and_one_not_passed_does_not(name):
    base = RULES["follow_the_bitch"]
    before, after = PAIRS[name]
    a, b = _as_dict(core_rules(base.replace(**before))), _as_dict(core_rules(base.replace(**after)))
    if name in NOT_PASSED:
        assert a == b, f"{name} is listed as not affecting play, but the core's copy changed"
    else:
        assert a != b, f"{name} is passed to the core, but changing it changed nothing there"


def test_core_rules_writes_every_core_attribute():
    written = set(DERIVED_CORE_FIELDS)
    rules = RULES["follow_the_bitch"]
    for name, convert in CORE_FIELDS.items():
        written |= {name} if convert is None else set(convert(rules))
    assert written == set(_core_attributes())
    c = core_rules(rules)
    assert c.num_actions == num_actions(rules) and c.stack == rules.stack
    assert c.first_to_act_lowest is False and c.streets == [list(s.cards) for s in rules.streets]


def test_a_new_rules_field_is_refused_until_it_is_listed():
    extended = dataclasses.make_dataclass("ExtendedRules", [("wild_deuces", bool, False)], bases=(Rules,),
                                          frozen=True)
    rules = extended(**{f: getattr(RULES["soko"], f) for f in FIELDS})
    with pytest.raises(ValueError, match="'wild_deuces' is neither passed to the core"):
        core_rules(rules)


def test_the_core_exports_the_python_constants():
    assert core_constants_mismatch() == []
    assert _stud_core.QUEEN == 10 and _stud_core.FIRST_BET == FIRST_BET and _stud_core.WIN_SAMPLES > 0


@pytest.mark.parametrize("change, named", [
    ({"QUEEN": 11}, "QUEEN is 11"), ({"WIN_EXACT": 1}, "WIN_EXACT is 1"),
    ({"CATEGORY_SHIFT": 16}, "CATEGORY_SHIFT is 16"), ({"ACTION_KINDS": ("fold",)}, "ACTION_KINDS"),
    ({"BETTING": {"fixed_limit": 0}}, "BETTING")])
def test_a_core_with_other_constants_is_caught_and_named(change, named):
    exported = {name: getattr(_stud_core, name) for name in dir(_stud_core) if name.isupper()}
    core = types.SimpleNamespace(**{**exported, **change})
    mismatch = core_constants_mismatch(core)
    assert len(mismatch) == 1 and named in mismatch[0]
    del exported["SHARE_UNITS"]
    assert "SHARE_UNITS is missing" in core_constants_mismatch(types.SimpleNamespace(**exported))


@pytest.mark.parametrize("name", list(RULES))
def test_every_preset_fits_the_cores_limits_and_pieces(name):
    rules = RULES[name]
    assert rules.max_players <= _stud_core.MAX_PLAYERS
    assert rules.cards_per_player <= _stud_core.MAX_CARDS and rules.num_streets <= _stud_core.MAX_STREETS
    assert num_actions(rules) - FIRST_BET <= _stud_core.MAX_SIZES
    layout = build_layout(rules, tuple(FEATURES))
    assert {piece.name for piece in layout} <= set(_stud_core.OBSERVATION_PIECES)
