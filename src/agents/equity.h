// The equity agent: agents/equity.EquityAgent.decide for the player to act in listed hands of a
// Batch, one key per hand (the training VecEnv's batched equity opponents, train/batched_vec.py;
// agents.equity.BatchedEquity): the equity is mean_share over `samples` deals of
// equity.sample_deals seeded with [key] (the float the reference gets, as win_probability's),
// then EquityAgent._bars and heuristic.pick_bet. tests/test_batched_equity.py holds this equal
// to the reference on random states of every preset.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "batched.h"
#include "constants.h"
#include "engine/equity.h"
#include "engine/game.h"

namespace stud {

struct EquityPolicy {
  int samples = 300;
  double raise_edge = 0.3, call_margin = 0.0;

  static EquityPolicy make(int samples, double raise_edge, double call_margin) {
    if (samples < 1) throw std::invalid_argument("equity: samples must be at least 1");
    if (!(raise_edge >= 0.0 && raise_edge <= 1.0)) throw std::invalid_argument("equity: raise_edge must lie in [0, 1]");
    EquityPolicy e;
    e.samples = samples;
    e.raise_edge = raise_edge;
    e.call_margin = call_margin;
    return e;
  }

  // equity.equity(view, samples, key=key) for the player to act.
  double estimate(const Hand& h, uint64_t key) const {
    return mean_share(seat_view(h, h.current), samples, 0, fold_seed(&key, 1));
  }

  int decide(const Hand& h, uint64_t key) const {
    const int offered = std::min(h.nsizes, h.r->num_actions - FIRST_BET);  // bet ids 2, 3, ...
    if (!h.fold_ok && offered == 0) return CHECK_CALL;  // a forced choice: no simulation
    double e = estimate(h, key);
    // EquityAgent._bars, operation for operation (x86-64 without FMA contraction).
    int n = h.active_count();
    double fair = 1.0 / n;
    double raise_at = fair + raise_edge * (1.0 - fair);
    double large_at = raise_at + (1.0 - raise_at) / 2;
    int to_call = h.to_call(), pot = h.pot();
    double price = to_call ? (double)to_call / (double)(pot + to_call) : 0.0;
    double call_at = price + call_margin;
    if (e >= raise_at && offered > 0) return FIRST_BET + (e >= large_at ? offered / 2 : 0);
    if (to_call == 0 || !h.fold_ok) return CHECK_CALL;
    return e >= call_at ? CHECK_CALL : FOLD;
  }

  // The listed slots and keys (slots[i] with keys[i]) checked: each a hand of b with a player
  // to act, each key in [0, 2**63).
  void check(const Batch& b, const int64_t* s, const int64_t* k, std::ptrdiff_t count) const {
    for (std::ptrdiff_t i = 0; i < count; ++i) {
      if (s[i] < 0 || s[i] >= b.size)
        throw std::invalid_argument("EquityPolicy.act: no hand " + std::to_string(s[i]) + " in a batch of " +
                                    std::to_string(b.size));
      if (b.hands[s[i]].current < 0) throw std::invalid_argument("hand " + std::to_string(s[i]) + " has nobody to act");
      if (k[i] < 0) throw std::invalid_argument("EquityPolicy.act: keys are ints in [0, 2**63)");
    }
  }

  // o[i] = f(hand slots[i], keys[i]) for checked slots and keys, split over b's threads.
  template <typename T, typename F>
  void for_each(const Batch& b, const int64_t* s, const int64_t* k, std::ptrdiff_t count, T* o, F f) const {
    auto run = [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      for (std::ptrdiff_t i = begin; i < end; ++i) o[i] = f(b.hands[s[i]], (uint64_t)k[i]);
    };
    // From 4 decisions a part (each simulates `samples` deals, microseconds; the kept threads
    // are still spinning in a training step: Workers), in pieces of 2 taken by the next free
    // thread (a forced choice costs nothing, a decision hundreds of deals).
    int parts = (int)std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(b.threads, count / 4));
    b.workers->run_chunks(parts, count, 2, run);
  }

  // The action id in each listed hand (each must have a player to act), keys[i] for slots[i].
  void act_many(const Batch& b, const int64_t* s, const int64_t* k, std::ptrdiff_t count, int64_t* o) const {
    for_each(b, s, k, count, o, [this](const Hand& h, uint64_t key) { return (int64_t)decide(h, key); });
  }

  // The equity estimate in each listed hand (what decide compares with its bars; for tests).
  void estimates(const Batch& b, const int64_t* s, const int64_t* k, std::ptrdiff_t count, double* o) const {
    for_each(b, s, k, count, o, [this](const Hand& h, uint64_t key) { return estimate(h, key); });
  }
};

}  // namespace stud
