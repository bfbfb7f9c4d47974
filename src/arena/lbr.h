// Local best response's showdown shares: the roll-outs of arena/lbr.equity_by_hole scored in
// one call. Scored by the evaluator (engine/hands.h), so the values are the NumPy form's
// exactly (tests/test_lbr.py holds the two equal).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "constants.h"
#include "engine/equity.h"
#include "engine/game.h"
#include "engine/hands.h"
#include "observation.h"
#include "util/clones.h"



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
  uint64_t known = 0;  // my cards and their face-up ones: distinct, and none of them dealt again
  for (int c : mine) known |= 1ull << c;
  for (int c : their_up) known |= 1ull << c;
  if ((size_t)__builtin_popcountll(known) != mine.size() + their_up.size())
    throw std::invalid_argument("showdown_shares: a card is repeated");
  for (int c : candidates)
    if (known >> c & 1) throw std::invalid_argument("showdown_shares: a candidate card is already seen");
  for (std::ptrdiff_t i = 0; i < rows; ++i) {
    uint64_t row = 0;
    for (std::ptrdiff_t j = 0; j < k; ++j) {
      if (!card_ok(f(i, j))) throw std::invalid_argument("showdown_shares: card ids are 0..51");
      if ((known | row) >> f(i, j) & 1) throw std::invalid_argument("showdown_shares: a card is repeated");
      row |= 1ull << f(i, j);
    }
  }
  const size_t nc = candidates.size();
  std::vector<int64_t> halves(nc, 0), counts(nc, 0);  // twice the summed shares: whole numbers
  // Each row's hands, with cards added by add(hand, card) and valued by score_me / score_them.
  auto score_rows = [&](auto me_known, auto them_known, auto&& add, auto&& score_me, auto&& score_them) {
    for (int c : mine) add(me_known, c);
    for (int c : their_up) add(them_known, c);
    for (std::ptrdiff_t i = 0; i < rows; ++i) {
      auto me = me_known, them_base = them_known;
      uint64_t drawn = 0;
      for (std::ptrdiff_t j = 0; j < k; ++j) {
        drawn |= 1ull << f(i, j);
        if (j < mine_to_come) add(me, (int)f(i, j));
        else add(them_base, (int)f(i, j));
      }
      const int mine_value = score_me(me);
      for (size_t c = 0; c < nc; ++c) {
        if (drawn >> candidates[c] & 1) continue;  // a row that deals this card cannot follow it
        auto them = them_base;
        add(them, candidates[c]);
        const int theirs = score_them(them);
        halves[c] += mine_value > theirs ? 2 : mine_value == theirs ? 1 : 0;
        ++counts[c];
      }
    }
  };
  ScoreMemo& memo = thread_memo();
  if (wild_mask) {
    score_rows(Tally{}, Tally{}, [&](Tally& t, int c) { t.add(c, wild_mask); },
               [&](const Tally& t) { return score_tally(t, opts, memo); },
               [&](const Tally& t) { return score_tally(t, opts, memo); });
  } else {  // no wild card: the same values from rank counts and suit masks
    const PlainScorer score_me((int)mine.size() + mine_to_come, opts, memo);
    const PlainScorer score_them(1 + (int)their_up.size() + theirs_to_come, opts, memo);
    score_rows(PlainHand{}, PlainHand{}, [](PlainHand& h, int c) { h.add(c); }, score_me, score_them);
  }
  std::vector<double> out(nc);
  for (size_t c = 0; c < nc; ++c)
    out[c] = ((double)halves[c] / 2.0) / (double)std::max<int64_t>(counts[c], 1);
  return out;
}

}  // namespace stud

// The column indices of the k smallest values of each row of `u` (rows x p, row-major), in
// increasing order of value, into out (rows x k): numpy's argsort(u, axis=1)[:, :k] when a row's
// values are distinct (random doubles are), by k passes of selection instead of a sort. Local
// best response's random deals: the cards of `unseen` at these places (arena/lbr.equity_by_hole).
// One pass a row, keeping the k smallest so far in order (insertion; equal values keep the
// earlier column first, as selection by strict comparison did).
static void smallest_k(const double* u, std::ptrdiff_t rows, std::ptrdiff_t p, int k, int64_t* out) {
  if (k <= 0) return;
  std::vector<double> value(k);
  std::vector<int64_t> index(k);
  for (std::ptrdiff_t i = 0; i < rows; ++i) {
    const double* row = u + i * p;
    int kept = 0;
    for (std::ptrdiff_t c = 0; c < p; ++c) {
      const double v = row[c];
      if (kept == k && !(v < value[k - 1])) continue;
      int j = kept < k ? kept++ : k - 1;
      for (; j > 0 && value[j - 1] > v; --j) {
        value[j] = value[j - 1];
        index[j] = index[j - 1];
      }
      value[j] = v;
      index[j] = c;
    }
    std::copy(index.begin(), index.end(), out + i * k);
  }
}

// ---------------------------------------------------------------------------------------------
// The target's policy over its range: arena/lbr.py's _TargetPolicy for a ppo model with a plain
// MLP actor (agents/trained.py NumpyActor), in one call for many spots. A spot is a hand (a
// slot of a Batch) with, optionally, one action of local best response applied to a copy of it;
// the target is the player to act there. For each candidate card of its range the target's
// observation is encoded with that card as its face-down card (encode(), the same values as
// envs.observation with the card swapped in) and run through the network; the rows are the
// masked softmax of the logits (a one-hot on the most likely legal id when deterministic), as
// PPOAgent.probabilities_with_values gives them. Each row is computed on its own, in one fixed
// order, so its floats do not depend on which other rows are asked with it (the batched training
// env and the arena's agent get the same ones).

namespace stud {

enum Activation { ACT_NONE = 0, ACT_TANH = 1, ACT_RELU = 2 };

// The hot loops below: STUD_CLONES (util/clones.h).

// tanh of float32 values in place, through double precision: e = expm1(-2|x|) as 2^k (expm1(r)
// + 1) - 1, with k the integer nearest -2|x| / ln 2 and r what is left (|r| <= ln 2 / 2; k ln 2
// taken off in two parts, the first exact), expm1(r) its Taylor series to r^12 / 12! (Estrin's
// scheme: the products in pairs, a short chain), then tanh|x| = -e / (2 + e) and the sign put
// back (NaN stays NaN). Every float below 20 (tanh rounds to 1 above 9.1) gives libm's tanh
// correctly rounded; the series of exp squared six times that this replaces missed it for about
// one float in two million, one float apart, and took 1.6 times as long (docs/results.md, "The
// default config"). Written without branches so that it vectorizes (the select as arithmetic;
// no-trapping-math lets the compiler evaluate both of its sides); the scale 2^k is built from
// k's bits, which the rounding constant leaves in the low bits of t.
STUD_NO_TRAPS STUD_CLONES
static void tanh_in_place(float* __restrict x, int n) {
  constexpr double LOG2E = 1.4426950408889634;
  constexpr double LN2_HI = 0.693147180369123816490;   // ln 2 to 32 bits: k LN2_HI is exact
  constexpr double LN2_LO = 1.90821492927058770002e-10;
  constexpr double ROUND = 6755399441055744.0;         // 1.5 * 2^52: y + ROUND - ROUND rounds y
  for (int j = 0; j < n; ++j) {
    const double m = __builtin_fabs((double)x[j]);  // (builtins: a library call here would not be
    const double a = m > 20.0 ? 20.0 : m;            // inlined under the optimize attribute; NaN stays)
    const double y = -2.0 * a;
    const double t = y * LOG2E + ROUND;
    const double k = t - ROUND;
    const double r = (y - k * LN2_HI) - k * LN2_LO;
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double e0 = 1.0 + r * 0.5;
    const double e1 = 1.0 / 6.0 + r * (1.0 / 24.0);
    const double e2 = 1.0 / 120.0 + r * (1.0 / 720.0);
    const double e3 = 1.0 / 5040.0 + r * (1.0 / 40320.0);
    const double e4 = 1.0 / 362880.0 + r * (1.0 / 3628800.0);
    const double e5 = 1.0 / 39916800.0 + r * (1.0 / 479001600.0);
    const double f0 = e0 + r2 * e1, f1 = e2 + r2 * e3, f2 = e4 + r2 * e5;
    const double p = r * ((f0 + r4 * f1) + r8 * f2);  // expm1(r)
    uint64_t bits;
    __builtin_memcpy(&bits, &t, sizeof bits);
    bits = (bits + 1023) << 52;                       // 2^k (k from -58 to 0)
    double s;
    __builtin_memcpy(&s, &bits, sizeof s);
    const double e = s * p + (s - 1.0);               // expm1(y)
    x[j] = (float)__builtin_copysign(-e / (2.0 + e), (double)x[j]);
  }
}

// out (rows, m) = bias + in (rows, k) x wt (k rows of ldw, the first m of each used; ldw a
// multiple of 8), each output summed over k in order (so a row's floats do not depend on the
// other rows or on how many outputs are computed together). Six rows and sixteen outputs (eight
// where fewer are left) at a time: their sums stay in twelve registers over the whole k loop,
// and each weight load serves six rows. An output layer of a few actions computes eight, its
// weights' padding zeros, and keeps its own.
STUD_CLONES
static void dense_rows(const float* __restrict in, int rows, int k, const float* __restrict wt, int ldw,
                       const float* __restrict bias, int m, float* __restrict out) {
  constexpr int R = 6;
  for (int r = 0; r < rows; r += R) {
    const int nr = std::min(R, rows - r);
    const float* at[R];
    for (int q = 0; q < R; ++q) at[q] = in + (size_t)(r + (q < nr ? q : 0)) * k;  // (past the rows: row r again)
    for (int j0 = 0; j0 < m; j0 += 16) {
      const int n = std::min(16, m - j0);
      float first[16] = {};
      for (int j = 0; j < n; ++j) first[j] = bias[j0 + j];
      Float8 acc[R][2];
      for (int q = 0; q < R; ++q) {
        STUD_LOAD8(acc[q][0], first);
        STUD_LOAD8(acc[q][1], first + 8);
      }
      const float* w = wt + j0;
      if (n > 8) {
        for (int c = 0; c < k; ++c, w += ldw) {
          Float8 w0, w1;
          STUD_LOAD8(w0, w);
          STUD_LOAD8(w1, w + 8);
          for (int q = 0; q < R; ++q) {
            const float v = at[q][c];
            acc[q][0] += v * w0;
            acc[q][1] += v * w1;
          }
        }
      } else {
        for (int c = 0; c < k; ++c, w += ldw) {
          Float8 w0;
          STUD_LOAD8(w0, w);
          for (int q = 0; q < R; ++q) acc[q][0] += at[q][c] * w0;
        }
      }
      for (int q = 0; q < nr; ++q) {
        float sums[16];
        std::memcpy(sums, &acc[q][0], sizeof(Float8));
        std::memcpy(sums + 8, &acc[q][1], sizeof(Float8));
        std::copy(sums, sums + n, out + (size_t)(r + q) * m + j0);
      }
    }
  }
}

// acc[0:m] += x * row c of wt (rows of ldw): one input's column of the first layer.
STUD_CLONES
static void add_column(float* __restrict acc, const float* __restrict wt, int ldw, int m, int c, float x) {
  const float* w = wt + (size_t)c * ldw;
  for (int j = 0; j < m; ++j) acc[j] += x * w[j];
}

struct MlpLayer {
  int in = 0, out = 0;
  std::vector<float> wt;  // (in, stride()): the weight transposed (a row of inputs adds columns), 0 past out
  std::vector<float> b;
  int act = ACT_NONE;
  int stride() const { return (out + 7) / 8 * 8; }  // wt's row: dense_rows reads eight at a time
};

struct LbrTarget {
  std::vector<MlpLayer> layers;
  bool deterministic = true;
  int num_actions = 0;
  ObsLayout layout;              // the target's layout, win_probability left out (written from the cache)
  int win_at = -1;               // where win_probability goes (-1: not in the layout)
  ObsLayout win_layout;          // the win_probability settings (samples, exact)
  // The columns that change with the candidate card: hole_cards, hand_class, win_probability
  // (and wild_cards, chicago_hole, which read the face-down cards too, where the layout has them).
  std::vector<std::pair<int, int>> varying;  // [start, stop)
  // win_probability of the target holding each card, by the public state it depends on: the
  // spots of one street share it (LBR asks every bet size's spot), so each card costs one
  // simulation a street. Kept for the last public state seen per slot.
  struct WinCache {
    std::vector<int> key;
    double value[52];
    bool have[52];
  };
  std::vector<WinCache> cache;
  // win_probability on the first street by the whole seat view, kept across hands and across
  // targets (a training run builds one for each snapshot of the learner, and every one meets the
  // same first streets: heads-up Soko has 2 x 2 x 52 x 51 x 50 seat views), later streets seldom
  // repeat. One table a thread and a game's rules with these settings (first_street_table), for
  // the life of the process. The value depends on nothing but the view (win_probability is
  // seeded by it), so a kept one is the one computed again. A table is cleared when it reaches
  // FIRST_STREET_MAX. `context` names the rules and settings (set_context, before the threads).
  static constexpr size_t FIRST_STREET_MAX = 1u << 20;
  std::string context;

  // The context of hands played under `r`: what win_probability reads of the rules, and the
  // settings (samples, max_exact). Not thread-safe: called before a call spreads over threads.
  void set_context(const CoreRules& r) {
    std::string c;
    for (const auto& street : r.streets) {
      c.push_back('|');
      for (bool up : street) c.push_back(up ? 'u' : 'd');
    }
    for (bool b : {r.canadian_hands, r.ace_low_four_straight, r.follow_the_queen, r.queens_wild,
                   r.double_ace_flush, r.low_chicago})
      c.push_back(b ? '1' : '0');
    c += "|" + std::to_string(win_layout.win_samples) + "|" + std::to_string(win_layout.win_exact) + "|";
    for (int card : r.deck) c.push_back((char)card);
    context = std::move(c);
  }

  static std::unordered_map<std::string, double>& first_street_table(const std::string& context) {
    thread_local std::unordered_map<std::string, std::unordered_map<std::string, double>> tables;
    return tables[context];
  }

  void check() const {
    if (layers.empty()) throw std::invalid_argument("LbrTarget: a network of at least one layer");
    if (layers[0].in != layout.size)
      throw std::invalid_argument("LbrTarget: the network's input is " + std::to_string(layers[0].in) +
                                  " values, the layout's " + std::to_string(layout.size));
    for (size_t l = 1; l < layers.size(); ++l)
      if (layers[l].in != layers[l - 1].out) throw std::invalid_argument("LbrTarget: layer sizes do not chain");
    if (layers.back().out != num_actions)
      throw std::invalid_argument("LbrTarget: the network gives " + std::to_string(layers.back().out) +
                                  " logits, the rules have " + std::to_string(num_actions) + " actions");
  }

  bool is_varying(int k) const {
    for (const auto& [a, z] : varying)
      if (k >= a && k < z) return true;
    return false;
  }

  static void activate(float* x, int n, int act) {
    if (act == ACT_TANH) tanh_in_place(x, n);
    else if (act == ACT_RELU)
      for (int j = 0; j < n; ++j) x[j] = std::max(x[j], 0.0f);
  }

  // The layers after the first for `rows` rows of its pre-activations (a, rows x its width);
  // the logits end in the returned buffer (a or b), rows x num_actions.
  float* finish(std::vector<float>& a, std::vector<float>& b, int rows) const {
    activate(a.data(), rows * layers[0].out, layers[0].act);
    for (size_t l = 1; l < layers.size(); ++l) {
      const MlpLayer& L = layers[l];
      dense_rows(a.data(), rows, L.in, L.wt.data(), L.stride(), L.b.data(), L.out, b.data());
      activate(b.data(), rows * L.out, L.act);
      std::swap(a, b);
    }
    return a.data();
  }

  std::vector<int> public_key(const Hand& h, int seat) const {
    std::vector<int> k{seat, h.button, h.street, h.wild};
    for (int q = 0; q < h.n; ++q) {
      k.push_back(h.folded[q]);
      k.push_back(h.nhole[q]);
      k.push_back(100 + h.nup[q]);
      k.insert(k.end(), h.up[q], h.up[q] + h.nup[q]);
    }
    return k;
  }

  // win_probability of the view, through `memo` (this thread's first-street table for the
  // context; null on later streets) on the first street.
  double win(const SeatView& v, std::unordered_map<std::string, double>* memo) {
    if (v.street != 0 || !memo) return win_probability(v, win_layout.win_samples, win_layout.win_exact);
    std::string key;
    key.reserve(8 + MAX_CARDS + MAX_PLAYERS * (MAX_CARDS + 3));
    for (int x : {v.n, v.button, v.seat, v.wild + 1, v.nhole_mine}) key.push_back((char)x);
    key.append((const char*)v.hole, v.nhole_mine);
    for (int q = 0; q < v.n; ++q) {
      key.push_back((char)v.nhole[q]);
      key.push_back((char)(v.folded[q] ? 1 : 0));
      key.push_back((char)v.nup[q]);
      key.append((const char*)v.up[q], v.nup[q]);
    }
    auto it = memo->find(key);
    if (it != memo->end()) return it->second;
    if (memo->size() >= FIRST_STREET_MAX) memo->clear();
    const double value = win_probability(v, win_layout.win_samples, win_layout.win_exact);
    memo->emplace(std::move(key), value);
    return value;
  }

  // The target's action probabilities in the spot of hand `h` (after `action` by its player to
  // act, when action >= 0) for each of the candidate cards, rows of num_actions into out. False
  // (rows untouched) when `seat` is not to act in that spot. `slot` picks the win cache.
  bool policies(const Hand& base, int slot, int seat, int action, const int64_t* cards, int count,
                double* out) {
    Hand h = base;
    if (action >= 0 && !h.apply(action)) throw std::invalid_argument("LbrTarget: the action is not legal there");
    if (h.over || h.current != seat) return false;
    if (h.nhole[seat] != 1) throw std::invalid_argument("LbrTarget: the target must hold one face-down card");
    if ((int)cache.size() <= slot) cache.resize(slot + 1);
    WinCache& wc = cache[slot];
    std::unordered_map<std::string, double>* memo = nullptr;   // looked up once, not per card
    if (win_at >= 0) {
      if (context.empty()) throw std::logic_error("LbrTarget: set_context before policies");
      if (h.street == 0) memo = &first_street_table(context);
      std::vector<int> key = public_key(h, seat);
      if (key != wc.key) {
        wc.key = std::move(key);
        std::fill(wc.have, wc.have + 52, false);
      }
    }
    std::vector<char> legal(num_actions, 0);
    legal[FOLD] = h.fold_ok;
    legal[CHECK_CALL] = true;
    for (int j = 0; j < h.nsizes && FIRST_BET + j < num_actions; ++j) legal[FIRST_BET + j] = true;
    const MlpLayer& L0 = layers[0];
    size_t widest = 0;
    for (const auto& L : layers) widest = std::max(widest, (size_t)L.out);
    std::vector<float> x(layout.size), base_acc(L0.out), a((size_t)count * widest), b((size_t)count * widest);
    for (int i = 0; i < count; ++i) {
      const int c = (int)cards[i];
      if (c < 0 || c > 51) throw std::invalid_argument("LbrTarget: card ids are 0..51");
      h.hole[seat][0] = (int8_t)c;
      encode(h, seat, layout, x.data());
      if (win_at >= 0) {
        if (!wc.have[c]) {
          wc.value[c] = win(seat_view(h, seat), memo);
          wc.have[c] = true;
        }
        x[win_at] = (float)wc.value[c];
      }
      if (i == 0) {  // what every candidate shares: the bias and the columns no card changes
        std::copy(L0.b.begin(), L0.b.end(), base_acc.begin());
        for (int k = 0; k < layout.size; ++k)
          if (x[k] != 0.0f && !is_varying(k)) add_column(base_acc.data(), L0.wt.data(), L0.stride(), L0.out, k, x[k]);
      }
      float* row = a.data() + (size_t)i * L0.out;
      std::copy(base_acc.begin(), base_acc.end(), row);
      for (const auto& [start, stop] : varying)
        for (int k = start; k < stop; ++k)
          if (x[k] != 0.0f) add_column(row, L0.wt.data(), L0.stride(), L0.out, k, x[k]);
    }
    const float* logits_all = finish(a, b, count);
    for (int i = 0; i < count; ++i) {
      const float* logits = logits_all + (size_t)i * num_actions;
      double* row = out + (size_t)i * num_actions;
      int best = -1;
      for (int j = 0; j < num_actions; ++j)
        if (legal[j] && (best < 0 || logits[j] > logits[best])) best = j;
      if (deterministic) {
        for (int j = 0; j < num_actions; ++j) row[j] = j == best ? 1.0 : 0.0;
        continue;
      }
      double top = (double)logits[best], total = 0.0;
      for (int j = 0; j < num_actions; ++j) {
        row[j] = legal[j] ? std::exp((double)logits[j] - top) : 0.0;
        total += row[j];
      }
      for (int j = 0; j < num_actions; ++j) row[j] /= total;
    }
    return true;
  }
};

}  // namespace stud
