// The facts the core shares with the Python side, each the value of the Python name beside it.
// bindings.cpp exports every one as an attribute of envs._stud_core, and envs/batched.py checks
// them against those names at import (tests/test_core_contract.py), so none is typed twice
// without a check.
#pragma once

#include <cstdint>

namespace stud {

// Limits of the core's fixed-size arrays (checked by CoreRules::check and Batch).
constexpr int MAX_PLAYERS = 16;  // SHARE_UNITS splits a pot between up to 16 tied winners
constexpr int MAX_CARDS = 7;     // per player: the evaluator ranks at most seven cards
constexpr int MAX_SIZES = 16;    // raise-to amounts offered at one decision
constexpr int MAX_STREETS = 7;

// Ranks and rule facts (envs/engine/cards.RANKS, envs/engine/rules.py).
constexpr int ACE = 12;             // RANKS.index("A")
constexpr int QUEEN = 10;           // rules.QUEEN
constexpr int NO_WILD = -1;         // rules.NO_WILD
constexpr int NO_LOW_CHICAGO = 13;  // rules.NO_LOW_CHICAGO

// Action ids (envs/actions.py).
constexpr int FOLD = 0, CHECK_CALL = 1, FIRST_BET = 2;

// Hand values (envs/engine/hands.py): category << CATEGORY_SHIFT plus the tie-break slots.
constexpr int CATEGORY_SHIFT = 20;

// Equity (envs/engine/equity.py).
constexpr int64_t SHARE_UNITS = 1441440;  // 2 * lcm(1..16): every tied or halved share is whole
constexpr uint64_t GOLDEN = 0x9E3779B97F4A7C15ull;  // splitmix64's increment

// The win_probability observation piece's deals (envs/observation.WIN_SAMPLES, WIN_EXACT).
constexpr int WIN_SAMPLES = 64;
constexpr int WIN_EXACT = 2000;

}  // namespace stud
