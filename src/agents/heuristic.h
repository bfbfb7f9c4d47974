// The tag agent: agents/heuristic.TagAgent.act for the player to act in listed hands of a Batch
// (the training VecEnv's batched opponents, train/batched_vec.py; agents.heuristic.BatchedTag).
// The per-street bars come from Python (agents.heuristic.TAG_THRESHOLDS through _thresholds),
// one row per number of own cards; tests/test_batched_vec.py holds this equal to the reference
// on random states of every preset.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "batched.h"
#include "constants.h"
#include "engine/game.h"
#include "engine/hands.h"

namespace stud {

struct TagPolicy {
  // Per number of own cards 0..MAX_CARDS: raise bar (category, top rank), call bar (category, top rank).
  int bars[MAX_CARDS + 1][4];
  int draw_length = 5;     // 4 with Canadian hands (the four-flush and four-straight)
  bool ace_low = true;     // the ace plays low in straight draws
  bool large = false;      // tier 3 bets the middle size on offer (outside fixed limit)

  // bars: one row (raise category, rank, call category, rank) per 0..7 own cards.
  static TagPolicy make(const std::vector<std::vector<int>>& bars, int draw_length, bool ace_low,
                        bool large) {
    if (bars.size() != (size_t)MAX_CARDS + 1) throw std::invalid_argument("one bar row per 0..7 own cards");
    if (draw_length < 2 || draw_length > 5) throw std::invalid_argument("draw_length 2..5");
    TagPolicy t;
    for (int i = 0; i <= MAX_CARDS; ++i) {
      if (bars[i].size() != 4) throw std::invalid_argument("a bar row is (raise category, rank, call category, rank)");
      for (int j = 0; j < 4; ++j) t.bars[i][j] = bars[i][j];
    }
    t.draw_length = draw_length;
    t.ace_low = ace_low;
    t.large = large;
    return t;
  }

  static bool met_by(int value, int category, int top_rank) {
    int cat = value >> 20;
    if (cat != category) return cat > category;
    return ((value >> 16) & 15) - 1 >= top_rank;
  }

  // heuristic.draw_gap: min(flush gap, straight gap), wild cards filling gaps.
  int draw_gap(const int8_t* cards, int n, int wild_mask) const {
    int suits[4] = {0, 0, 0, 0}, wilds = 0, ranks = 0;  // ranks: bit r+1 for rank r (bit 0: low ace)
    for (int i = 0; i < n; ++i) {
      int r = cards[i] >> 2;
      if (wild_mask >> r & 1) { ++wilds; continue; }
      ++suits[cards[i] & 3];
      ranks |= 1 << (r + 1);
    }
    if ((ranks >> (ACE + 1) & 1) && ace_low) ranks |= 1;
    int most = *std::max_element(suits, suits + 4);
    int flush_gap = std::max(0, draw_length - most - wilds);
    int best = 0;
    for (int low = -1; low < 14 - draw_length; ++low)
      best = std::max(best, __builtin_popcount(ranks & (((1 << draw_length) - 1) << (low + 1))));
    int straight_gap = std::max(0, draw_length - best - wilds);
    return std::min(flush_gap, straight_gap);
  }

  int tier(const Hand& h, int p) const {
    const CoreRules& r = *h.r;
    int wm = h.wild_mask();
    int8_t mine[MAX_CARDS * 2];
    int n = 0;
    for (int j = 0; j < h.nhole[p]; ++j) mine[n++] = h.hole[p][j];
    for (int j = 0; j < h.nup[p]; ++j) mine[n++] = h.up[p][j];
    int value = evaluate(mine, n, wm, h.opts);
    const int* bar = bars[std::min(n, MAX_CARDS)];
    int t = met_by(value, bar[0], bar[1]) ? 3 : met_by(value, bar[2], bar[3]) ? 2 : 1;
    int cards_per_player = 0;
    for (const auto& s : r.streets) cards_per_player += (int)s.size();
    if (cards_per_player - n > 0 && t < 2 && draw_gap(mine, n, wm) <= 1) t = 2;
    for (int q = 0; q < h.n; ++q)
      if (q != p && !h.folded[q] && h.nup[q] && evaluate(h.up[q], h.nup[q], wm, h.opts) >= value) {
        --t;
        break;
      }
    if (r.low_chicago)
      for (int j = 0; j < h.nhole[p]; ++j)
        if (h.hole[p][j] == 4 * ACE + 3) { t = std::max(2, t + 1); break; }  // the ace of spades
    return std::max(1, std::min(3, t));
  }

  int act(const Hand& h) const {
    int t = tier(h, h.current);
    if (t >= 3) {
      int offered = std::min(h.nsizes, h.r->num_actions - FIRST_BET);
      if (offered > 0) return FIRST_BET + (large ? offered / 2 : 0);
      return CHECK_CALL;
    }
    if (t == 2 || !h.fold_ok) return CHECK_CALL;
    return FOLD;
  }

  // Tag's action id in each listed hand (each must have a player to act): out[k] for slots[k].
  void act_many(const Batch& b, const int64_t* s, std::ptrdiff_t count, int64_t* o) const {
    for (std::ptrdiff_t k = 0; k < count; ++k) {
      const Hand& h = b.hand((int)s[k]);
      if (h.current < 0) throw std::invalid_argument("hand " + std::to_string(s[k]) + " has nobody to act");
      o[k] = act(h);
    }
  }
};

}  // namespace stud
