// Equity: a port of envs/engine/equity.win_probability (and of equity.equity, which the equity
// agent reads) with its counter-based sampler (equity.sample_deals) and its whole-number
// shares (equity.SHARE_UNITS), so the values are the reference's bit for bit
// (tests/test_core_features.py, tests/test_batched_equity.py).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "constants.h"
#include "engine/game.h"
#include "engine/hands.h"
#include "engine/rules.h"

namespace stud {

// splitmix64's output function (equity._mix64).
static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// What win_probability needs of one seat's view: its own face-down cards, every seat's face-up
// cards, face-down card counts and folds, the button, the street and the wild rank in force.
struct SeatView {
  const CoreRules* r = nullptr;
  int n = 0, button = 0, street = 0, seat = 0, wild = NO_WILD;
  int8_t hole[MAX_CARDS];
  int nhole_mine = 0;
  int nhole[MAX_PLAYERS];
  int8_t up[MAX_PLAYERS][MAX_CARDS];
  int nup[MAX_PLAYERS];
  bool folded[MAX_PLAYERS];
};

static SeatView seat_view(const Hand& h, int o) {
  SeatView v;
  v.r = h.r;
  v.n = h.n;
  v.button = h.button;
  v.street = h.street;
  v.seat = o;
  v.wild = h.wild;
  v.nhole_mine = h.nhole[o];
  std::copy(h.hole[o], h.hole[o] + h.nhole[o], v.hole);
  for (int q = 0; q < h.n; ++q) {
    v.nhole[q] = h.nhole[q];
    v.nup[q] = h.nup[q];
    v.folded[q] = h.folded[q];
    std::copy(h.up[q], h.up[q] + h.nup[q], v.up[q]);
  }
  return v;
}

// equity.sample_deals' key: the seed words folded into 64 bits.
static uint64_t fold_seed(const uint64_t* words, int count) {
  uint64_t key = 0;
  for (int i = 0; i < count; ++i) key = mix64(key + GOLDEN + words[i]);
  return key;
}

// f(drawn) for every ordered deal of `need` cards of pool[0..size) (size <= 52), in
// itertools.permutations' order; drawn[0..need) holds the deal.
template <class T, class F>
static void for_each_ordered_deal(const T* pool, int size, int need, T* drawn, F&& f) {
  bool used[52] = {false};
  auto deal = [&](auto&& self, int j) -> void {
    if (j == need) {
      f(static_cast<const T*>(drawn));
      return;
    }
    for (int k = 0; k < size; ++k)
      if (!used[k]) {
        used[k] = true;
        drawn[j] = pool[k];
        self(self, j + 1);
        used[k] = false;
      }
  };
  deal(deal, 0);
}

// The seat's expected share of the pot at showdown against uniformly random unseen cards,
// nobody folding (equity.share_units, then their mean): every deal when there are at most
// max_exact, else `samples` deals of equity.sample_deals from the folded seed `key`. The seat
// has not folded. -1: more unseen cards are needed than are left (no real hand).
static double mean_share(const SeatView& v, int samples, int max_exact, uint64_t key) {
  const CoreRules& r = *v.r;
  int order[MAX_PLAYERS] = {0}, na = 0;  // active seats in deal order (equity._deal_layout)
  for (int i = 0; i < v.n; ++i) {
    int p = (v.button + 1 + i) % v.n;
    if (!v.folded[p]) order[na++] = p;
  }
  if (na == 1) return 1.0;
  int me = 0;
  while (order[me] != v.seat) ++me;

  // Each active seat's known cards (face-down first: Low Chicago reads them), then where each
  // drawn card goes: the cards to come in deal order (rules.deal_sequence), then the
  // opponents' face-down cards, opponent by opponent in deal order (equity._Deal).
  int8_t base[MAX_PLAYERS][MAX_CARDS];
  int nbase[MAX_PLAYERS], nbase_down[MAX_PLAYERS];
  for (int a = 0; a < na; ++a) {
    int p = order[a], m = 0;
    if (p == v.seat)
      for (int j = 0; j < v.nhole_mine; ++j) base[a][m++] = v.hole[j];
    nbase_down[a] = m;
    for (int j = 0; j < v.nup[p]; ++j) base[a][m++] = v.up[p][j];
    nbase[a] = m;
  }
  int to[MAX_PLAYERS * MAX_CARDS], street_of[MAX_PLAYERS * MAX_CARDS];
  bool face_up[MAX_PLAYERS * MAX_CARDS];
  int need = 0;
  for (int t = v.street + 1; t < r.num_streets(); ++t)
    for (bool up : r.streets[t])
      for (int a = 0; a < na; ++a) { to[need] = a; face_up[need] = up; street_of[need++] = t; }
  const int future = need;
  for (int a = 0; a < na; ++a)
    if (a != me)
      for (int j = 0; j < v.nhole[order[a]]; ++j) { to[need] = a; face_up[need] = false; street_of[need++] = -1; }

  // The pool: the deck less the seat's face-down cards and every face-up card (equity._spot).
  uint64_t seen = 0;
  if (!r.deck.empty()) {
    seen = ~0ull;
    for (int c : r.deck) seen &= ~(1ull << c);
  }
  for (int j = 0; j < v.nhole_mine; ++j) seen |= 1ull << v.hole[j];
  for (int q = 0; q < v.n; ++q)
    for (int j = 0; j < v.nup[q]; ++j) seen |= 1ull << v.up[q][j];
  int8_t pool[52];
  int size = 0;
  for (int c = 0; c < 52; ++c)
    if (!(seen >> c & 1)) pool[size++] = (int8_t)c;
  if (need > size) return -1.0;

  // A seat no drawn card goes to, with the wild rank settled (no face-up card to come that a
  // queen could change it with), has the same value in every deal: scored once (the last
  // street: the seat's own hand, against each card an opponent may hold face down).
  const EvalOptions opts = r.eval();
  ScoreMemo& memo = thread_memo();
  int fixed[MAX_PLAYERS];
  {
    bool settled = !r.follow_the_queen || future == 0;
    int wm = (v.wild != NO_WILD ? 1 << v.wild : 0) | (r.queens_wild ? 1 << QUEEN : 0);
    for (int a = 0; a < na; ++a) {
      bool drawn_to = false;
      for (int j = 0; j < need; ++j) drawn_to |= to[j] == a;
      fixed[a] = settled && !drawn_to ? evaluate(base[a], nbase[a], wm, opts) : -1;
    }
  }
  // Each seat's known cards tallied once for the wild ranks in force (again when a deal's
  // follow-the-queen replay changes them), and the lowest face-down spade among them.
  Tally known[MAX_PLAYERS];
  int known_mask = -1, known_chicago[MAX_PLAYERS];
  for (int a = 0; a < na; ++a) {
    known_chicago[a] = NO_LOW_CHICAGO;
    for (int j = 0; j < nbase_down[a]; ++j)
      if ((base[a][j] & 3) == 3) known_chicago[a] = std::min(known_chicago[a], ((base[a][j] >> 2) + 1) % 13);
  }

  static const auto share_of_winners = [] {  // SHARE_UNITS / w, w winners of the pot
    std::array<int64_t, MAX_PLAYERS + 1> units{};
    for (int w = 1; w <= MAX_PLAYERS; ++w) units[w] = SHARE_UNITS / w;
    return units;
  }();
  // One deal's share, in SHARE_UNITS (equity._share_units).
  auto share = [&](const int8_t* drawn) -> int64_t {
    int wild = v.wild;
    if (r.follow_the_queen) {  // replay follow-the-queen over the face-up cards to come
      bool pending = false;
      int street = -1;
      for (int j = 0; j < future; ++j) {
        if (street_of[j] != street) { street = street_of[j]; pending = false; }
        if (!face_up[j]) continue;
        int rank = drawn[j] >> 2;
        if (rank == QUEEN) { wild = NO_WILD; pending = true; }
        else { if (pending) wild = rank; pending = false; }
      }
    }
    int wm = (wild != NO_WILD ? 1 << wild : 0) | (r.queens_wild ? 1 << QUEEN : 0);
    if (wm != known_mask) {
      for (int a = 0; a < na; ++a) {
        known[a] = Tally{};
        for (int j = 0; j < nbase[a]; ++j) known[a].add(base[a][j], wm);
      }
      known_mask = wm;
    }
    Tally hands[MAX_PLAYERS];
    int chicago[MAX_PLAYERS];
    for (int a = 0; a < na; ++a) {
      if (fixed[a] < 0) hands[a] = known[a];
      chicago[a] = known_chicago[a];
    }
    for (int j = 0; j < need; ++j) {
      int a = to[j];
      hands[a].add(drawn[j], wm);
      if (!face_up[j] && (drawn[j] & 3) == 3) chicago[a] = std::min(chicago[a], ((drawn[j] >> 2) + 1) % 13);
    }
    int best = -1, winners = 0, mine = 0;
    for (int a = 0; a < na; ++a) {
      int value = fixed[a] >= 0 ? fixed[a] : score_tally(hands[a], opts, memo);
      if (a == me) mine = value;
      if (value > best) { best = value; winners = 1; }
      else if (value == best) ++winners;
    }
    int64_t high = mine == best ? share_of_winners[winners] : 0;
    if (!r.low_chicago) return high;
    int lowest = NO_LOW_CHICAGO;
    for (int a = 0; a < na; ++a) lowest = std::min(lowest, chicago[a]);
    if (lowest == NO_LOW_CHICAGO) return high;
    return high / 2 + (chicago[me] == lowest ? SHARE_UNITS / 2 : 0);
  };

  // Without wild cards or Low Chicago (Soko, plain stud) a deal's share is the same count of
  // whole units from each seat's rank counts and suit masks (PlainHand, PlainScorer): no tallies
  // to copy, each seat's table picked once a call (five cards: FiveCards) rather than once a hand.
  const bool plain = !r.follow_the_queen && !r.queens_wild && v.wild == NO_WILD && !r.low_chicago;
  PlainHand plain_base[MAX_PLAYERS];
  PlainScorer plain_score[MAX_PLAYERS];
  if (plain)
    for (int a = 0; a < na; ++a) {
      int cards = nbase[a];
      plain_base[a] = PlainHand{};
      for (int j = 0; j < nbase[a]; ++j) plain_base[a].add(base[a][j]);
      for (int j = 0; j < need; ++j) cards += to[j] == a;
      plain_score[a] = PlainScorer(cards, opts, memo);
    }
  auto share_plain = [&](const int8_t* drawn) -> int64_t {
    PlainHand hands[MAX_PLAYERS];
    std::copy(plain_base, plain_base + na, hands);
    for (int j = 0; j < need; ++j) hands[to[j]].add(drawn[j]);
    int values[MAX_PLAYERS], best = -1, mine = 0;  // every seat scored before any is compared
    for (int a = 0; a < na; ++a) {
      values[a] = fixed[a] >= 0 ? fixed[a] : plain_score[a](hands[a]);
      if (a == me) mine = values[a];
    }
    for (int a = 0; a < na; ++a) best = std::max(best, values[a]);
    if (mine != best) return 0;
    int winners = 0;
    for (int a = 0; a < na; ++a) winners += values[a] == best;
    return share_of_winners[winners];
  };

  // Every deal (math.perm(size, need) of them, in itertools.permutations order) when few.
  int64_t ways = 1;
  for (int j = 0; j < need && ways <= max_exact; ++j) ways *= size - j;
  auto sum_shares = [&](auto&& share_of) -> double {
    int64_t total = 0, deals = 0;
    int8_t drawn[52];
    if (ways <= max_exact) {
      for_each_ordered_deal(pool, size, need, drawn, [&](const int8_t* deal) {
        total += share_of(deal);
        ++deals;
      });
    } else {  // equity.sample_deals from the folded seed
      std::copy(pool, pool + size, drawn);
      int swapped[52];
      uint64_t counter = key;  // key + GOLDEN * (s * need + j + 1) for draw j of sample s
      for (int s = 0; s < samples; ++s) {
        for (int j = 0; j < need; ++j) {
          counter += GOLDEN;
          uint64_t u = mix64(counter) >> 32;
          int k = j + (int)((u * (uint64_t)(size - j)) >> 32);
          std::swap(drawn[j], drawn[k]);
          swapped[j] = k;
        }
        total += share_of(drawn);
        ++deals;
        for (int j = need - 1; j >= 0; --j) std::swap(drawn[j], drawn[swapped[j]]);  // the pool again
      }
    }
    return (double)total / ((double)SHARE_UNITS * (double)deals);
  };
  return plain ? sum_shares(share_plain) : sum_shares(share);
}

// equity.win_probability: mean_share with the deals keyed by equity.visible_seed (0 for a seat
// that has folded). Its value is a function of what the seat sees (those seed words, with the
// street and the wild rank), so a seat's last value is kept (WinMemo) and used again while
// nothing it sees has changed: the next decisions of a betting round cost no simulation.
struct WinMemo {
  std::vector<uint64_t> key;  // the seed words, then the street and the wild rank
  double value = 0.0;
};

static double win_probability(const SeatView& v, int samples, int max_exact, WinMemo* memo = nullptr) {
  if (v.folded[v.seat]) return 0.0;
  uint64_t words[3 + MAX_CARDS + MAX_PLAYERS * (MAX_CARDS + 1) + 2];
  int m = 0;
  words[m++] = (uint64_t)v.seat;
  words[m++] = (uint64_t)v.button;
  for (int j = 0; j < v.nhole_mine; ++j) words[m++] = (uint64_t)v.hole[j];
  words[m++] = 52;
  for (int q = 0; q < v.n; ++q) {
    for (int j = 0; j < v.nup[q]; ++j) words[m++] = (uint64_t)v.up[q][j];
    words[m++] = 53 + (v.folded[q] ? 1 : 0);
  }
  if (!memo) return mean_share(v, samples, max_exact, fold_seed(words, m));
  words[m] = (uint64_t)v.street;  // not seed words: the rest of the memo's key
  words[m + 1] = (uint64_t)(v.wild + 1);
  if (memo->key.size() == (size_t)m + 2 && std::equal(words, words + m + 2, memo->key.begin())) return memo->value;
  memo->value = mean_share(v, samples, max_exact, fold_seed(words, m));
  memo->key.assign(words, words + m + 2);
  return memo->value;
}

// win_probability for one seat holding each of several face-down card lists in turn (the
// cards local best response supposes the other player holds): one value each. The other
// arguments describe the table as envs.batched.win_probabilities passes it; bad ones are an
// invalid_argument that says what is wrong.
static std::vector<double> win_probabilities(const CoreRules& rules, int button, int street, int seat,
                                             int wild, const std::vector<std::vector<int>>& holes,
                                             const std::vector<int>& face_down_counts,
                                             const std::vector<std::vector<int>>& up_cards,
                                             const std::vector<bool>& folded, int samples, int max_exact) {
  const int n = (int)up_cards.size();
  if (n < 2 || n > MAX_PLAYERS || (int)face_down_counts.size() != n || (int)folded.size() != n)
    throw std::invalid_argument("win_probability: 2 to 16 seats, one face-down count, face-up list and fold each");
  if (seat < 0 || seat >= n || button < 0 || button >= n)
    throw std::invalid_argument("win_probability: seat and button must be seats at the table");
  if (street < 0 || street >= rules.num_streets()) throw std::invalid_argument("win_probability: no such street");
  if (wild < NO_WILD || wild > ACE) throw std::invalid_argument("win_probability: wild is a rank index or -1");
  if (samples < 1 || max_exact < 0) throw std::invalid_argument("win_probability: samples >= 1, max_exact >= 0");
  SeatView v;
  v.r = &rules;
  v.n = n;
  v.button = button;
  v.street = street;
  v.seat = seat;
  v.wild = wild;
  uint64_t up_seen = 0;
  auto card = [](int c, uint64_t& seen) {
    if (c < 0 || c > 51 || (seen >> c & 1)) throw std::invalid_argument("win_probability: distinct cards 0..51");
    seen |= 1ull << c;
    return (int8_t)c;
  };
  for (int q = 0; q < n; ++q) {
    if (up_cards[q].size() + (size_t)face_down_counts[q] > (size_t)MAX_CARDS || face_down_counts[q] < 0)
      throw std::invalid_argument("win_probability: at most 7 cards a seat");
    v.nhole[q] = face_down_counts[q];
    v.nup[q] = (int)up_cards[q].size();
    v.folded[q] = folded[q];
    for (int j = 0; j < v.nup[q]; ++j) v.up[q][j] = card(up_cards[q][j], up_seen);
  }
  // No seat may hold more cards than the rules have dealt by this street (the cards to come
  // would overflow a hand).
  int dealt = 0;
  for (int t = 0; t <= street; ++t) dealt += (int)rules.streets[t].size();
  for (int q = 0; q < n; ++q)
    if (q != seat && v.nup[q] + v.nhole[q] > dealt)
      throw std::invalid_argument("win_probability: a seat holds more cards than the rules deal by this street");
  std::vector<double> values;
  values.reserve(holes.size());
  for (const auto& hole : holes) {
    if (hole.size() > (size_t)MAX_CARDS) throw std::invalid_argument("win_probability: at most 7 cards a seat");
    uint64_t seen = up_seen;
    v.nhole_mine = (int)hole.size();
    for (size_t j = 0; j < hole.size(); ++j) v.hole[j] = card(hole[j], seen);
    if (v.nup[seat] + v.nhole_mine > dealt)
      throw std::invalid_argument("win_probability: a seat holds more cards than the rules deal by this street");
    double value = win_probability(v, samples, max_exact);
    if (value < 0) throw std::invalid_argument("win_probability: more unseen cards to deal than are left");
    values.push_back(value);
  }
  return values;
}

}  // namespace stud
