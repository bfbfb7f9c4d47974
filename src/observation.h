// Observations: a port of envs/observation.py (ObservationEncoder), held equal to it by
// tests/test_core_differential.py, tests/test_core_features.py and
// tests/test_core_observation_pin.py. The layout comes from build_layout() (the
// names, starts and sizes of its pieces); each piece the core knows is written at its start,
// with the values, scales and float32 rounding of the reference encoder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "constants.h"
#include "engine/equity.h"
#include "engine/game.h"
#include "engine/hands.h"
#include "engine/rules.h"

namespace stud {

enum PieceId {
  HOLE_CARDS, UP_CARDS, WILD_RANK, QUEENS_WILD_PIECE, WILD_CARDS, CHICAGO_HOLE, CHICAGO_UP, POT,
  TO_CALL, POT_ODDS, RAISE_TO_AMOUNTS, BET_SIZE, RAISES, STREET, SEATED, TO_ACT, BUTTON, STACK,
  COMMITTED, TOTAL_COMMITTED, FOLDED, ALL_IN, HISTORY,
  HAND_CLASS, SHOWING_CLASS, WIN_PROBABILITY,  // the optional features (encode_features)
  NUM_PIECES
};
static const char* PIECE_NAMES[NUM_PIECES] = {
  "hole_cards", "up_cards", "wild_rank", "queens_wild", "wild_cards", "chicago_hole", "chicago_up",
  "pot", "to_call", "pot_odds", "raise_to_amounts", "bet_size", "raises", "street", "seated",
  "to_act", "button", "stack", "committed", "total_committed", "folded", "all_in", "history",
  "hand_class", "showing_class", "win_probability"};

struct ObsLayout {
  int size = 0, max_players = 0, rounds = 0;
  int start[NUM_PIECES];
  int win_samples = WIN_SAMPLES, win_exact = WIN_EXACT;  // win_probability's samples and max_exact
  ObsLayout() { std::fill(start, start + NUM_PIECES, -1); }
};

// The layout from its pieces as (name, start, size), as envs.observation.build_layout gives them.
static ObsLayout make_obs_layout(const std::vector<std::tuple<std::string, int, int>>& pieces, int size,
                                 int max_players, int rounds) {
  ObsLayout L;
  L.size = size;
  L.max_players = max_players;
  L.rounds = rounds;
  for (const auto& [name, start, psize] : pieces) {
    int id = -1;
    for (int k = 0; k < NUM_PIECES; ++k)
      if (name == PIECE_NAMES[k]) id = k;
    if (id < 0)
      throw std::invalid_argument("the core does not know observation piece '" + name +
                                  "': add it to encode() in src/observation.h");
    if (start < 0 || start + psize > size) throw std::invalid_argument("piece out of the layout");
    L.start[id] = start;
  }
  return L;
}

// observation.chip_scales, as float32 factors.
struct Scales { float pot, seat, table, big_bet, count; };

static Scales chip_scales(const CoreRules& r, const int* stacks, int n) {
  long most = 0, sum = 0;
  for (int i = 0; i < n; ++i) { most = std::max<long>(most, stacks[i]); sum += stacks[i]; }
  if (r.is_limit()) {
    long per_round = (long)(1 + r.max_raises) * r.big_bet * (r.betting == SPREAD_LIMIT ? 2 : 1);
    most = std::min(most, (long)r.ante + r.num_streets() * per_round);
  }
  long seat = std::max(most, 1L);
  return {(float)(1.0 / (double)std::min((long)n * seat, sum)), (float)(1.0 / (double)seat),
          (float)(1.0 / (double)sum), (float)(1.0 / (double)r.big_bet), (float)(1.0 / (double)(1 + r.max_raises))};
}

static inline float scaled(long value, float scale) { return std::min((float)value * scale, 1.0f); }

// The optional pieces of envs/observation.py (FEATURES): hand_class, showing_class and
// win_probability (engine/equity.h).
// observation._write_hand_class, _showing_classes and _write_win_probability.
static void encode_features(const Hand& h, int o, const ObsLayout& L, float* out, WinMemo* memo) {
  const int* at = L.start;
  const EvalOptions opts = h.r->eval();
  const int wm = h.wild_mask();
  if (at[HAND_CLASS] >= 0 && h.nhole[o] + h.nup[o] > 0) {
    int8_t cards[MAX_CARDS * 2];
    std::copy(h.hole[o], h.hole[o] + h.nhole[o], cards);
    std::copy(h.up[o], h.up[o] + h.nup[o], cards + h.nhole[o]);
    out[at[HAND_CLASS] + (evaluate(cards, h.nhole[o] + h.nup[o], wm, opts) >> CATEGORY_SHIFT)] = 1.0f;
  }
  if (at[SHOWING_CLASS] >= 0)
    for (int rel = 0; rel < h.n; ++rel) {
      int q = (o + rel) % h.n;
      if (h.nup[q]) {
        int category = evaluate(h.up[q], h.nup[q], wm, opts) >> CATEGORY_SHIFT;
        out[at[SHOWING_CLASS] + rel * CATEGORIES + category] = 1.0f;
      }
    }
  if (at[WIN_PROBABILITY] >= 0) {
    double value;
    if (h.over) {  // the share of the pot the seat won
      int pot = h.pot();
      value = pot ? (double)(h.payoffs[o] + h.total[o]) / (double)pot : 0.0;
    } else {
      value = win_probability(seat_view(h, o), L.win_samples, L.win_exact, memo);
    }
    out[at[WIN_PROBABILITY]] = (float)value;
  }
}

// ObservationEncoder.encode(game, seat) into out[0:layout.size]; ``memo`` (optional) keeps the
// seat's last win_probability (see WinMemo).
static void encode(const Hand& h, int o, const ObsLayout& L, float* out, WinMemo* memo = nullptr) {
  const CoreRules& r = *h.r;
  std::fill(out, out + L.size, 0.0f);
  const int n = h.n;
  const Scales sc = chip_scales(r, h.start, n);
  const int* at = L.start;
  const bool me = h.current == o;
  auto seat_of = [&](int rel) { return (o + rel) % n; };
  if (at[HOLE_CARDS] >= 0)
    for (int j = 0; j < h.nhole[o]; ++j) out[at[HOLE_CARDS] + h.hole[o][j]] = 1.0f;
  if (at[UP_CARDS] >= 0)
    for (int rel = 0; rel < n; ++rel) {
      int q = seat_of(rel);
      for (int j = 0; j < h.nup[q]; ++j) out[at[UP_CARDS] + rel * 52 + h.up[q][j]] = 1.0f;
    }
  if (at[WILD_RANK] >= 0) out[at[WILD_RANK] + (h.wild != NO_WILD ? h.wild : 13)] = 1.0f;
  if (at[QUEENS_WILD_PIECE] >= 0) out[at[QUEENS_WILD_PIECE]] = r.queens_wild ? 1.0f : 0.0f;
  if (at[WILD_CARDS] >= 0) {
    int ranks[2], nr = 0;
    if (h.wild != NO_WILD) ranks[nr++] = h.wild;
    if (r.queens_wild) ranks[nr++] = QUEEN;
    for (int i = 0; i < nr; ++i) {
      for (int q = 0; q < n; ++q)
        for (int j = 0; j < h.nup[q]; ++j)
          if (h.up[q][j] >> 2 == ranks[i]) out[at[WILD_CARDS] + h.up[q][j]] = 1.0f;
      for (int j = 0; j < h.nhole[o]; ++j)
        if (h.hole[o][j] >> 2 == ranks[i]) out[at[WILD_CARDS] + h.hole[o][j]] = 1.0f;
    }
  }
  if (at[CHICAGO_HOLE] >= 0) {
    int key = NO_LOW_CHICAGO;
    for (int j = 0; j < h.nhole[o]; ++j)
      if ((h.hole[o][j] & 3) == 3) key = std::min(key, ((h.hole[o][j] >> 2) + 1) % 13);
    out[at[CHICAGO_HOLE] + key] = 1.0f;
  }
  if (at[CHICAGO_UP] >= 0)
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < h.nup[q]; ++j)
        if ((h.up[q][j] & 3) == 3) out[at[CHICAGO_UP] + ((h.up[q][j] >> 2) + 1) % 13] = 1.0f;
  const int pot = h.pot();
  if (at[POT] >= 0) out[at[POT]] = scaled(pot, sc.pot);
  if (me) {
    int owed = h.to_call();
    if (at[TO_CALL] >= 0) out[at[TO_CALL]] = scaled(owed, sc.seat);
    if (at[POT_ODDS] >= 0) out[at[POT_ODDS]] = owed ? std::min((float)((double)owed / (double)(pot + owed)), 1.0f) : 0.0f;
    if (at[RAISE_TO_AMOUNTS] >= 0)
      for (int j = 0; j < h.nsizes && j < r.num_actions - FIRST_BET; ++j)
        out[at[RAISE_TO_AMOUNTS] + j] = scaled(h.sizes[j], sc.seat);
  }
  if (at[BET_SIZE] >= 0) out[at[BET_SIZE]] = scaled(h.bet, sc.big_bet);
  if (at[RAISES] >= 0) out[at[RAISES]] = scaled(h.raises, sc.count);
  if (at[STREET] >= 0 && h.street < L.rounds) out[at[STREET] + h.street] = 1.0f;
  for (int rel = 0; rel < n; ++rel) {
    int q = seat_of(rel);
    if (at[SEATED] >= 0) out[at[SEATED] + rel] = 1.0f;
    if (at[TO_ACT] >= 0 && h.current == q) out[at[TO_ACT] + rel] = 1.0f;
    if (at[BUTTON] >= 0 && h.button == q) out[at[BUTTON] + rel] = 1.0f;
    if (at[STACK] >= 0) out[at[STACK] + rel] = scaled(h.stacks[q], sc.table);
    if (at[COMMITTED] >= 0) out[at[COMMITTED] + rel] = scaled(h.committed[q], sc.seat);
    if (at[TOTAL_COMMITTED] >= 0) out[at[TOTAL_COMMITTED] + rel] = scaled(h.total[q], sc.seat);
    if (at[FOLDED] >= 0) out[at[FOLDED] + rel] = h.folded[q] ? 1.0f : 0.0f;
    if (at[ALL_IN] >= 0) out[at[ALL_IN] + rel] = (!h.folded[q] && h.stacks[q] == 0) ? 1.0f : 0.0f;
    if (at[HISTORY] >= 0)
      for (int s = 0; s < L.rounds; ++s)
        for (int k = 0; k < 2; ++k) out[at[HISTORY] + (rel * L.rounds + s) * 2 + k] = h.history[q][s][k];
  }
  encode_features(h, o, L, out, memo);
}

}  // namespace stud
