// The luck correction's equity shares of one chance node (arena/luck.py LuckCorrector._node_rows
// and the scoring after it), for rules without a followed wild rank or Low Chicago: for each
// asked candidate card, every active seat's mean share of the high hand (1/w to each of w tied
// winners) over the completions of the deal. The completions and the sums are arena/luck.py's,
// row for row, so the floats are its (tests/test_luck.py holds the two equal).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "constants.h"
#include "engine/hands.h"

namespace stud {

// known: the active seats' cards so far (in deal order); seat_at: the active position that
// gets the candidate; cands (k): the cards not dealt, ascending; sel: the candidates asked (their
// indices in cands); owners (f): the active position of each card still to come after the
// node's. The completions, per arena/luck.py: none when f is 0; for f == 1 every other
// candidate, in order; for f >= 2 the rows of perm (s x (f + 1) indices into cands), its first
// f columns with the candidate, when drawn, replaced by the last. Out: (sel x active) shares.
static std::vector<double> luck_node_shares(const std::vector<std::vector<int>>& known, int seat_at,
                                            const std::vector<int64_t>& cands, const std::vector<int64_t>& sel,
                                            const std::vector<int>& owners, const int64_t* perm,
                                            std::ptrdiff_t perm_rows, int wild_mask, const EvalOptions& opts) {
  const int active = (int)known.size();
  const int f = (int)owners.size();
  const std::ptrdiff_t k = (std::ptrdiff_t)cands.size();
  if (active < 1 || active > MAX_PLAYERS || seat_at < 0 || seat_at >= active)
    throw std::invalid_argument("luck_node_shares: 1 to MAX_PLAYERS active seats, the node's among them");
  std::vector<int> count(active, 0);
  count[seat_at] = 1;
  for (int a : owners) {
    if (a < 0 || a >= active) throw std::invalid_argument("luck_node_shares: a card to come to no active seat");
    ++count[a];
  }
  for (int a = 0; a < active; ++a)
    if (known[a].size() + count[a] > (size_t)MAX_CARDS) throw std::invalid_argument("luck_node_shares: at most 7 cards a hand");
  for (int64_t c : cands)
    if (c < 0 || c > 51) throw std::invalid_argument("luck_node_shares: card ids are 0..51");
  for (int64_t i : sel)
    if (i < 0 || i >= k) throw std::invalid_argument("luck_node_shares: a candidate index out of range");
  if (f >= 2) {
    for (std::ptrdiff_t r = 0; r < perm_rows * (f + 1); ++r)
      if (perm[r] < 0 || perm[r] >= k) throw std::invalid_argument("luck_node_shares: a draw index out of range");
  } else if (f == 1 && k < 2) {
    throw std::invalid_argument("luck_node_shares: one card to come needs two candidates");
  }
  ScoreMemo& memo = thread_memo();
  std::vector<Tally> base(active);
  for (int a = 0; a < active; ++a) {
    base[a] = Tally{};
    for (int c : known[a]) {
      if (c < 0 || c > 51) throw std::invalid_argument("luck_node_shares: card ids are 0..51");
      base[a].add(c, wild_mask);
    }
  }
  const std::ptrdiff_t per = f == 0 ? 1 : f == 1 ? k - 1 : perm_rows;
  std::vector<double> out(sel.size() * active, 0.0);
  std::vector<int> value(active);
  std::vector<double> sum(active);
  for (size_t i = 0; i < sel.size(); ++i) {
    const int64_t me = sel[i];
    std::fill(sum.begin(), sum.end(), 0.0);
    for (std::ptrdiff_t m = 0; m < per; ++m) {
      Tally hand[MAX_PLAYERS];
      std::copy(base.begin(), base.end(), hand);
      hand[seat_at].add((int)cands[me], wild_mask);
      if (f == 1) {
        hand[owners[0]].add((int)cands[m + (m >= me)], wild_mask);
      } else if (f >= 2) {
        const int64_t* row = perm + m * (f + 1);
        for (int j = 0; j < f; ++j) hand[owners[j]].add((int)cands[row[j] == me ? row[f] : row[j]], wild_mask);
      }
      int best = -1, winners = 0;
      for (int a = 0; a < active; ++a) {
        value[a] = score_tally(hand[a], opts, memo);
        if (value[a] > best) { best = value[a]; winners = 1; } else if (value[a] == best) { ++winners; }
      }
      const double share = 1.0 / (double)winners;
      for (int a = 0; a < active; ++a) sum[a] += value[a] == best ? share : 0.0;
    }
    for (int a = 0; a < active; ++a) out[i * active + a] = sum[a] / (double)per;
  }
  return out;
}

}  // namespace stud
