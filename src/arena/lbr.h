// Local best response's showdown shares: the roll-outs of arena/lbr.equity_by_hole scored in
// one call. Scored by the evaluator (engine/hands.h), so the values are the NumPy form's
// exactly (tests/test_lbr.py holds the two equal).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "constants.h"
#include "engine/hands.h"

namespace stud {

// For each candidate face-down card of the other player, my mean share (1 win, 1/2 tie) over
// the rows of `future` (rows x k card ids, row-major) that do not hold it (0 where all do). A
// row: my cards to come (its first `mine_to_come`), then the other's.
static std::vector<double> showdown_shares(const std::vector<int>& mine, const std::vector<int>& their_up,
                                           const std::vector<int>& candidates, const int64_t* future,
                                           std::ptrdiff_t rows, std::ptrdiff_t k, int mine_to_come,
                                           int wild_mask, const EvalOptions& opts) {
  const int theirs_to_come = (int)k - mine_to_come;
  if (mine_to_come < 0 || theirs_to_come < 0 || mine.size() + mine_to_come > (size_t)MAX_CARDS ||
      1 + their_up.size() + theirs_to_come > (size_t)MAX_CARDS)
    throw std::invalid_argument("showdown_shares: at most 7 cards a hand");
  auto card_ok = [](int64_t c) { return c >= 0 && c <= 51; };
  for (int c : mine) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
  for (int c : their_up) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
  for (int c : candidates) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
  auto f = [&](std::ptrdiff_t i, std::ptrdiff_t j) { return future[i * k + j]; };
  for (std::ptrdiff_t i = 0; i < rows; ++i)
    for (std::ptrdiff_t j = 0; j < k; ++j)
      if (!card_ok(f(i, j))) throw std::invalid_argument("showdown_shares: card ids are 0..51");
  const size_t nc = candidates.size();
  std::vector<int64_t> halves(nc, 0), counts(nc, 0);  // twice the summed shares: whole numbers
  ScoreMemo& memo = thread_memo();
  Tally me_known{}, them_known{};
  for (int c : mine) me_known.add(c, wild_mask);
  for (int c : their_up) them_known.add(c, wild_mask);
  for (std::ptrdiff_t i = 0; i < rows; ++i) {
    Tally me = me_known, them_base = them_known;
    uint64_t drawn = 0;
    for (std::ptrdiff_t j = 0; j < k; ++j) {
      drawn |= 1ull << f(i, j);
      if (j < mine_to_come) me.add((int)f(i, j), wild_mask);
      else them_base.add((int)f(i, j), wild_mask);
    }
    const int mine_value = score_tally(me, opts, memo);
    for (size_t c = 0; c < nc; ++c) {
      if (drawn >> candidates[c] & 1) continue;  // a row that deals this card cannot follow it
      Tally them = them_base;
      them.add(candidates[c], wild_mask);
      const int theirs = score_tally(them, opts, memo);
      halves[c] += mine_value > theirs ? 2 : mine_value == theirs ? 1 : 0;
      ++counts[c];
    }
  }
  std::vector<double> out(nc);
  for (size_t c = 0; c < nc; ++c)
    out[c] = ((double)halves[c] / 2.0) / (double)std::max<int64_t>(counts[c], 1);
  return out;
}

}  // namespace stud
