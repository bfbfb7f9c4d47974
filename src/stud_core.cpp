// The compiled stud core: the rules of envs/engine (docs/rules.md), many hands at once.
//
// The pure-Python engine (envs/engine/game.py, hands.py) is the reference: every function here
// is a port of the one named in its comment, and tests/test_core_differential.py checks the two
// against each other at every step. One plain struct (Hand) per hand, no Python objects on the
// hot path; Batch steps N hands with one call and writes into NumPy arrays it was given.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <unistd.h>

namespace py = pybind11;

namespace stud {

constexpr int MAX_PLAYERS = 16;
constexpr int MAX_CARDS = 7;  // per player: the evaluator ranks at most seven cards
constexpr int MAX_SIZES = 16;
constexpr int MAX_STREETS = 7;
constexpr int ACE = 12;
constexpr int QUEEN = 10;
constexpr int NO_WILD = -1;
constexpr int NO_LOW_CHICAGO = 13;
constexpr int FOLD = 0, CHECK_CALL = 1, FIRST_BET = 2;

// ---------------------------------------------------------------------------------------------
// Hand values: a port of envs/engine/hands.py. A value is category << 20 plus up to five
// tie-break slots of 4 bits (rank index + 1), so the ints equal the reference's HandValues.

enum Category {
  HIGH_CARD = 0, ONE_PAIR, FOUR_STRAIGHT, FOUR_FLUSH, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT,
  FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH, FIVE_OF_A_KIND
};

struct EvalOptions {
  bool canadian = false;
  bool double_ace_flush = false;
  bool ace_low_four_straight = true;
};

static inline int score(int category, const int* ranks, int count) {
  int value = category << 20;
  int shift = 16;
  for (int i = 0; i < count && i < 5; ++i, shift -= 4) value |= (ranks[i] + 1) << shift;
  return value;
}

static inline int score1(int category, int rank) { return score(category, &rank, 1); }

// Straight windows best first, as rank bitmasks: (top, mask); A-2-3-4-5 last.
struct Window { int top; int mask; };
static const std::vector<Window>& straight_windows() {
  static const std::vector<Window> w = [] {
    std::vector<Window> out;
    for (int top = ACE; top >= 4; --top) out.push_back({top, 0x1F << (top - 4)});
    out.push_back({3, (1 << ACE) | 0xF});
    return out;
  }();
  return w;
}

// hands._nonflush_score: the best category that needs no suits, from natural rank counts.
static int nonflush_score(const int* counts, int wilds, int k, bool canadian, bool ace_low) {
  int present[MAX_CARDS * 2];
  int np = 0;
  int have = 0;
  for (int r = 12; r >= 0; --r) {
    for (int c = 0; c < counts[r]; ++c) present[np++] = r;
    if (counts[r]) have |= 1 << r;
  }
  int most = 0, second = 0;
  for (int r = 0; r < 13; ++r) {
    if (counts[r] > most) { second = most; most = counts[r]; }
    else if (counts[r] > second) second = counts[r];
  }
  int buf[8];
  // buf[start:] = present without ranks u1, u2, at most `limit` of them; returns the length.
  auto others = [&](int u1, int u2, int start, int limit) {
    int m = start;
    for (int i = 0; i < np && m - start < limit; ++i)
      if (present[i] != u1 && present[i] != u2) buf[m++] = present[i];
    return m;
  };
  if (k >= 5) {
    for (int r = 12; r >= 0; --r)
      if (counts[r] + wilds >= 5) return score1(FIVE_OF_A_KIND, r);
    if (wilds >= 5) return score1(FIVE_OF_A_KIND, ACE);
  }
  if (k >= 4) {
    for (int r = 12; r >= 0; --r)
      if (counts[r] + wilds >= 4) {
        buf[0] = r;
        return score(FOUR_OF_A_KIND, buf, others(r, -1, 1, k - 4));
      }
  }
  if (k >= 5 && std::max(0, 3 - most) + std::max(0, 2 - second) <= wilds) {
    for (int t = 12; t >= 0; --t) {
      int need_t = std::max(0, 3 - counts[t]);
      if (need_t > wilds) continue;
      for (int p = 12; p >= 0; --p)
        if (p != t && need_t + std::max(0, 2 - counts[p]) <= wilds) {
          int tp[2] = {t, p};
          return score(FULL_HOUSE, tp, 2);
        }
    }
  }
  if (k >= 5) {
    for (const Window& w : straight_windows())
      if (__builtin_popcount(w.mask & ~have) <= wilds) return score1(STRAIGHT, w.top);
  }
  if (k >= 3) {
    for (int r = 12; r >= 0; --r)
      if (counts[r] + wilds >= 3) {
        buf[0] = r;
        return score(THREE_OF_A_KIND, buf, others(r, -1, 1, k - 3));
      }
  }
  int best = -1;
  if (k >= 4) {
    int pairs[7], npairs = 0;
    for (int r = 12; r >= 0; --r)
      if (counts[r] >= 2) pairs[npairs++] = r;
    if (npairs >= 2 && wilds == 0) {
      buf[0] = pairs[0];
      buf[1] = pairs[1];
      return score(TWO_PAIR, buf, others(pairs[0], pairs[1], 2, k - 4));
    }
    if (canadian) {
      int tops = 0;
      int window_tops[11], window_first[11];
      for (int top = ACE; top >= 3; --top) { window_tops[tops] = top; window_first[tops++] = top - 3; }
      if (ace_low) { window_tops[tops] = 2; window_first[tops++] = -1; }  // A-2-3-4
      for (int w = 0; w < tops; ++w) {
        int window[4];
        if (window_first[w] < 0) { window[0] = ACE; window[1] = 0; window[2] = 1; window[3] = 2; }
        else for (int i = 0; i < 4; ++i) window[i] = window_first[w] + i;
        int missing = 0;
        for (int i = 0; i < 4; ++i) missing += counts[window[i]] == 0;
        if (missing > wilds) continue;
        int rest[MAX_CARDS * 2], nr = np;
        std::copy(present, present + np, rest);
        for (int i = 0; i < 4; ++i) {  // list.remove: the first card of that rank
          for (int j = 0; j < nr; ++j)
            if (rest[j] == window[i]) { std::copy(rest + j + 1, rest + nr, rest + j); --nr; break; }
        }
        int ranks[6], m = 0;
        ranks[m++] = window_tops[w];
        if (wilds > missing && m - 1 < k - 4) ranks[m++] = ACE;
        for (int j = 0; j < nr && m - 1 < k - 4; ++j) ranks[m++] = rest[j];
        best = std::max(best, score(FOUR_STRAIGHT, ranks, m));
      }
    }
  }
  if (best >= 0) return best;
  if (k >= 2) {
    for (int r = 12; r >= 0; --r)
      if (counts[r] + wilds >= 2) {
        buf[0] = r;
        return score(ONE_PAIR, buf, others(r, -1, 1, k - 2));
      }
  }
  if (wilds) return score1(HIGH_CARD, ACE);
  return score(HIGH_CARD, present, std::min(np, k));
}

// nonflush_score, remembered per thread: it depends only on the rank counts (at most 7 cards,
// so a few ten thousand keys), and win_probability scores thousands of hands a decision. One
// open-addressing table per (wilds, k, the two options), keyed by `rank_key` (the counts three
// bits a rank: the sum of 1 << 3r over the natural cards, as Tally builds it); a slot packs
// (rank_key + 1) << 24 with the value (below 1 << 24), 0 when empty. Eight bytes a slot and a
// table per kind of hand keep the tables a simulation reads small (Soko's five-card one: 128 KB),
// since a lookup that misses the cache was a quarter of scoring a hand.
struct ScoreMemo {
  static constexpr int VALUE_BITS = 24;
  static constexpr uint64_t VALUE_MASK = (1ull << VALUE_BITS) - 1;
  struct Table {
    std::vector<uint64_t> slots;
    size_t used = 0;
  };
  Table tables[(MAX_CARDS + 1) * 6 * 4];  // by wilds (0-7), k (0-5) and the two options

  static size_t slot(uint64_t rank_key, size_t mask) { return (size_t)((rank_key * 0x9E3779B97F4A7C15ull) >> 32) & mask; }
  static Table& pick(ScoreMemo& m, int wilds, int k, bool canadian, bool ace_low) {
    return m.tables[(wilds * 6 + k) * 4 + (canadian ? 2 : 0) + (ace_low ? 1 : 0)];
  }
  static const uint64_t* find(const Table& t, uint64_t rank_key) {
    if (t.slots.empty()) return nullptr;
    const uint64_t tag = (rank_key + 1) << VALUE_BITS;
    const size_t mask = t.slots.size() - 1;
    for (size_t i = slot(rank_key, mask);; i = (i + 1) & mask) {
      if ((t.slots[i] & ~VALUE_MASK) == tag) return &t.slots[i];
      if (t.slots[i] == 0) return nullptr;
    }
  }
  static void insert(Table& t, uint64_t rank_key, int value) {
    if (t.slots.empty()) t.slots.assign(1 << 10, 0);
    if (2 * (t.used + 1) > t.slots.size()) {  // keep it at most half full
      std::vector<uint64_t> old(t.slots.size() * 2, 0);
      old.swap(t.slots);
      t.used = 0;
      for (uint64_t s : old)
        if (s) insert(t, (s >> VALUE_BITS) - 1, (int)(s & VALUE_MASK));
    }
    const size_t mask = t.slots.size() - 1;
    size_t i = slot(rank_key, mask);
    while (t.slots[i] != 0) i = (i + 1) & mask;
    t.slots[i] = (rank_key + 1) << VALUE_BITS | (uint64_t)value;
    ++t.used;
  }
};

// The calling thread's memo (one lookup of the thread-local per caller that scores many hands).
static ScoreMemo& thread_memo() {
  thread_local ScoreMemo memo;
  return memo;
}

static int nonflush_score_memo(ScoreMemo& memo, uint64_t rank_key, int wilds, int k, bool canadian, bool ace_low) {
  ScoreMemo::Table& table = ScoreMemo::pick(memo, wilds, k, canadian, ace_low);
  if (const uint64_t* s = ScoreMemo::find(table, rank_key)) return (int)(*s & ScoreMemo::VALUE_MASK);
  int counts[13];
  for (int r = 0; r < 13; ++r) counts[r] = (int)(rank_key >> (3 * r) & 7);
  int value = nonflush_score(counts, wilds, k, canadian, ace_low);
  ScoreMemo::insert(table, rank_key, value);
  return value;
}

// hands._suited_ranks: the best `size` ranks of a flush, wilds standing in.
static int suited_ranks(int suited, int wilds, int size, bool double_ace_flush, int* out) {
  int all[20], m = 0;
  for (int r = 12; r >= 0; --r)
    if (suited >> r & 1) all[m++] = r;
  if (double_ace_flush) {
    for (int i = 0; i < wilds; ++i) all[m++] = ACE;
  } else {
    int added = 0;
    for (int r = 12; r >= 0 && added < wilds; --r)
      if (!(suited >> r & 1)) { all[m++] = r; ++added; }
  }
  std::sort(all, all + m, [](int a, int b) { return a > b; });
  int n = std::min(m, size);
  std::copy(all, all + n, out);
  return n;
}

// hands._flush_score with fifth = -1 (the caller adds a four-flush's fifth card).
static int flush_score(int suited, int wilds, int k, bool canadian, bool double_ace_flush) {
  int have = __builtin_popcount(suited);
  int ranks[5];
  if (k >= 5 && have + wilds >= 5) {
    for (const Window& w : straight_windows())
      if (__builtin_popcount(w.mask & ~suited) <= wilds) return score1(STRAIGHT_FLUSH, w.top);
    return score(FLUSH, ranks, suited_ranks(suited, wilds, 5, double_ace_flush, ranks));
  }
  if (canadian && k >= 4 && have + wilds == 4)
    return score(FOUR_FLUSH, ranks, suited_ranks(suited, wilds, 4, double_ace_flush, ranks));
  return -1;
}

// What evaluate reads of a hand's cards: counts that do not depend on the cards' order, so a
// hand's known cards are tallied once and each deal's cards added on top (mean_share).
// An aggregate: `Tally t{}` is an empty one (`Tally t;` leaves it unset, for arrays filled later).
struct Tally {
  uint64_t rank_key;  // the natural cards: 1 << 3r for each of rank index r
  int n, wilds;
  int suit_total[4], suit_natural[4], suited[4];
  // `wild_mask` has bit r set when rank index r is wild.
  void add(int card, int wild_mask) {
    int r = card >> 2, s = card & 3;
    ++n;
    ++suit_total[s];
    if (wild_mask >> r & 1) {
      ++wilds;
    } else {
      rank_key += 1ull << (3 * r);
      ++suit_natural[s];
      suited[s] |= 1 << r;
    }
  }
};

// hands.evaluate of the tallied cards: 5 to 7 cards as the best five, 1 to 4 up cards as a
// showing hand.
static int score_tally(const Tally& t, const EvalOptions& o, ScoreMemo& memo) {
  int k = std::min(t.n, 5);
  int best = nonflush_score_memo(memo, t.rank_key, t.wilds, k, o.canadian, o.ace_low_four_straight);
  if (o.canadian ? k >= 4 : k >= 5) {
    int threshold = (o.canadian ? 4 : 5) - t.wilds;
    int need = std::max(threshold, 1);
    for (int s = 0; s < 4; ++s) {
      if (t.suit_total[s] < need || t.suit_natural[s] < threshold) continue;
      int value = flush_score(t.suited[s], t.wilds, k, o.canadian, o.double_ace_flush);
      if (t.suit_natural[s] == threshold && o.canadian && k >= 5) {
        int fifth = 0;  // the best natural card of the other suits (rank index + 1), or none
        for (int u = 0; u < 4; ++u)
          if (u != s && t.suited[u]) fifth = std::max(fifth, 32 - __builtin_clz(t.suited[u]));
        value |= fifth;
      }
      best = std::max(best, value);
    }
  }
  return best;
}

static int evaluate(const int8_t* cards, int n, int wild_mask, const EvalOptions& o) {
  Tally t{};
  for (int i = 0; i < n; ++i) t.add(cards[i], wild_mask);
  return score_tally(t, o, thread_memo());
}

// ---------------------------------------------------------------------------------------------
// Rules: the fields of envs.engine.rules.Rules, converted once by envs/batched.py.

enum Betting { FIXED_LIMIT = 0, SPREAD_LIMIT = 1, POT_LIMIT = 2, NO_LIMIT = 3 };
enum BringIn { NO_BRING_IN = 0, LOWEST = 1, HIGHEST = 2 };

struct CoreRules {
  std::vector<std::vector<bool>> streets;  // passes per street, true = face up
  std::vector<bool> street_big;
  bool canadian_hands = false, ace_low_four_straight = true, follow_the_queen = false;
  bool queens_wild = false, double_ace_flush = false, low_chicago = false;
  int betting = FIXED_LIMIT, max_raises = 3, ante = 1;
  int bring_in = NO_BRING_IN, bring_in_amount = 0, small_bet = 4, big_bet = 8;
  bool first_to_act_lowest = false, open_pair_doubles = false;
  std::vector<double> spread_sizes, pot_fractions;
  int num_actions = 3;
  int stack = 800;
  std::vector<int> deck;  // the cards of the deck (option deck_ranks), ascending; empty: all 52

  int deck_size() const { return deck.empty() ? 52 : (int)deck.size(); }
  int num_streets() const { return (int)streets.size(); }
  bool is_limit() const { return betting == FIXED_LIMIT || betting == SPREAD_LIMIT; }
  EvalOptions eval() const { return {canadian_hands, double_ace_flush, ace_low_four_straight}; }
  void check() const {
    int cards = 0;
    for (const auto& s : streets) cards += (int)s.size();
    if (streets.empty() || (int)street_big.size() != num_streets())
      throw std::invalid_argument("the core needs one bet size per street");
    if (cards > MAX_CARDS || num_streets() > MAX_STREETS)
      throw std::invalid_argument("the core deals at most 7 cards per player");
    if (num_actions - FIRST_BET > MAX_SIZES)
      throw std::invalid_argument("too many bet sizes for the core");
    uint64_t seen = 0;
    for (int c : deck) {
      if (c < 0 || c > 51 || (seen >> c & 1)) throw std::invalid_argument("deck: distinct cards 0..51");
      seen |= 1ull << c;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// One hand: a port of envs/engine/game.Game (same names, without the log).

struct Hand {
  const CoreRules* r = nullptr;
  EvalOptions opts;
  int n = 0, button = 0;
  int order[MAX_PLAYERS];
  int stacks[MAX_PLAYERS], start[MAX_PLAYERS], total[MAX_PLAYERS], committed[MAX_PLAYERS];
  int8_t deck[52];
  int next_card = 0;
  int8_t hole[MAX_PLAYERS][MAX_CARDS], up[MAX_PLAYERS][MAX_CARDS];
  int nhole[MAX_PLAYERS], nup[MAX_PLAYERS];
  bool folded[MAX_PLAYERS];
  int wild = NO_WILD;
  bool queen_pending = false;
  int street = 0, current = -1, bring_in_seat = -1;
  bool over = false;
  int payoffs[MAX_PLAYERS];
  int bet = 0, level = 0, full_level = 0, last_increment = 0, raises = 0;
  int acted_level[MAX_PLAYERS];  // -1: has not acted this round
  uint32_t pending = 0;
  bool bring_in_due = false;
  // What the current player may do (filled by refresh()).
  int nsizes = 0;
  int sizes[MAX_SIZES];
  bool fold_ok = false;
  // The betting history of the observations: per seat and street, bets (completions,
  // raises) and calls (bring-ins), each counted as 1 / (1 + max_raises) up to 1, in float32
  // as the reference encoder adds them.
  float history[MAX_PLAYERS][MAX_STREETS][2];
  float history_step = 0.25f;

  void init(const CoreRules* rules, int num_players, int btn, const int* stack_in, const int8_t* cards) {
    r = rules;
    opts = rules->eval();
    n = num_players;
    button = btn;
    for (int i = 0; i < n; ++i) {
      order[i] = (button + 1 + i) % n;
      stacks[i] = start[i] = stack_in[i];
      total[i] = committed[i] = 0;
      nhole[i] = nup[i] = 0;
      folded[i] = false;
      payoffs[i] = 0;
      acted_level[i] = -1;
      for (int s = 0; s < MAX_STREETS; ++s) history[i][s][0] = history[i][s][1] = 0.0f;
    }
    history_step = (float)(1.0 / (1 + rules->max_raises));
    std::copy(cards, cards + rules->deck_size(), deck);
    next_card = 0;
    wild = NO_WILD;
    queen_pending = false;
    street = 0;
    current = bring_in_seat = -1;
    over = false;
    bet = level = full_level = last_increment = raises = 0;
    pending = 0;
    bring_in_due = false;
    post_antes();
    deal_street(0);
    start_round();
    refresh();
  }

  int wild_mask() const {
    return (wild != NO_WILD ? 1 << wild : 0) | (r->queens_wild ? 1 << QUEEN : 0);
  }
  int pot() const {
    int s = 0;
    for (int i = 0; i < n; ++i) s += total[i];
    return s;
  }
  bool can_act(int q) const { return !folded[q] && stacks[q] > 0; }
  int active_count() const {
    int c = 0;
    for (int i = 0; i < n; ++i) c += !folded[i];
    return c;
  }
  int to_call() const {
    if (current < 0) return 0;
    if (bring_in_due) return std::min(r->bring_in_amount, stacks[current]);
    return std::min(level - committed[current], stacks[current]);
  }
  uint32_t others_who_can_act(int p) const {
    uint32_t m = 0;
    for (int i = 0; i < n; ++i)
      if (i != p && can_act(i)) m |= 1u << i;
    return m;
  }

  int put_in(int p, int amount) {
    amount = std::min(amount, stacks[p]);
    stacks[p] -= amount;
    committed[p] += amount;
    total[p] += amount;
    return amount;
  }

  void post_antes() {
    if (!r->ante) return;
    for (int i = 0; i < n; ++i) {
      int p = order[i];
      int put = std::min(r->ante, stacks[p]);
      stacks[p] -= put;
      total[p] += put;
    }
  }

  // Game._deal_street: pass by pass, one card to each active seat from the dealer's left.
  void deal_street(int s) {
    for (bool face_up : r->streets[s]) {
      for (int i = 0; i < n; ++i) {
        int p = order[i];
        if (folded[p]) continue;
        int8_t card = deck[next_card++];
        if (face_up) {
          up[p][nup[p]++] = card;
          if (r->follow_the_queen) follow_the_queen(card);
        } else {
          hole[p][nhole[p]++] = card;
        }
      }
    }
    queen_pending = false;  // the card after a queen must come in the same dealing round
  }

  // rules.next_wild_rank
  void follow_the_queen(int8_t card) {
    int rank = card >> 2;
    if (rank == QUEEN) {
      wild = NO_WILD;
      queen_pending = true;
    } else {
      if (queen_pending) wild = rank;
      queen_pending = false;
    }
  }

  int next_who_can_act(int seat) const {
    for (int i = 0; i < n; ++i) {
      int q = (seat + i) % n;
      if (can_act(q)) return q;
    }
    throw std::logic_error("no seat can act");
  }

  int first_by_showing() const {
    int best_seat = -1, best = 0;
    int wm = wild_mask();
    for (int i = 0; i < n; ++i) {
      int p = order[i];
      if (folded[p]) continue;
      int value = evaluate(up[p], nup[p], wm, opts);
      if (best_seat < 0 || (r->first_to_act_lowest ? value < best : value > best)) {
        best_seat = p;
        best = value;
      }
    }
    return best_seat;
  }

  // Game._start_round
  void start_round() {
    while (true) {
      for (int i = 0; i < n; ++i) { committed[i] = 0; acted_level[i] = -1; }
      level = full_level = last_increment = raises = 0;
      bring_in_due = false;
      bool doubled = false;
      if (r->open_pair_doubles && street == 1)
        for (int p = 0; p < n; ++p)
          if (!folded[p] && nup[p] >= 2 && up[p][0] >> 2 == up[p][1] >> 2) doubled = true;
      bet = (doubled || r->street_big[street]) ? r->big_bet : r->small_bet;
      int can = 0;
      for (int p = 0; p < n; ++p) can += can_act(p);
      if (can >= 2) break;
      if (!next_street()) return;
    }
    int seat;
    if (street == 0 && r->bring_in != NO_BRING_IN) {
      seat = -1;
      int key = 0;
      for (int i = 0; i < n; ++i) {
        int p = order[i];
        if (folded[p]) continue;
        int card = up[p][0];
        for (int j = 1; j < nup[p]; ++j)
          card = r->bring_in == LOWEST ? std::min<int>(card, up[p][j]) : std::max<int>(card, up[p][j]);
        if (seat < 0 || (r->bring_in == LOWEST ? card < key : card > key)) { seat = p; key = card; }
      }
      seat = next_who_can_act(seat);
      bring_in_seat = seat;
      bring_in_due = true;
    } else {
      seat = next_who_can_act(first_by_showing());
    }
    pending = 0;
    for (int p = 0; p < n; ++p)
      if (can_act(p)) pending |= 1u << p;
    current = seat;
  }

  bool next_street() {
    if (street + 1 >= r->num_streets()) {
      showdown();
      return false;
    }
    ++street;
    deal_street(street);
    return true;
  }

  void after_action(int p) {
    if (active_count() == 1) {
      for (int q = 0; q < n; ++q)
        if (!folded[q]) award_uncontested(q);
      return;
    }
    if (!pending) {
      if (next_street()) start_round();
      return;
    }
    for (int i = 1; i <= n; ++i) {
      int q = (p + i) % n;
      if (pending >> q & 1) {
        current = q;
        return;
      }
    }
  }

  int min_raise_to() const {
    if (full_level == 0) return bet;
    if (r->betting == FIXED_LIMIT) return level + bet;
    return level + std::max(bet, last_increment);
  }

  // Game._raise_bounds_now
  bool raise_bounds(int p, int& low, int& high) const {
    int all_in = committed[p] + stacks[p];
    if (all_in <= level) return false;
    if (r->is_limit() && raises >= 1 + r->max_raises) return false;
    if (acted_level[p] >= 0 && acted_level[p] >= full_level) return false;
    if (!others_who_can_act(p)) return false;
    low = min_raise_to();
    switch (r->betting) {
      case FIXED_LIMIT: high = low; break;
      case SPREAD_LIMIT: high = std::max(low, (full_level ? level : 0) + 2 * bet); break;
      case POT_LIMIT: high = std::max(low, level + pot() + level - committed[p]); break;
      default: high = all_in;
    }
    if (all_in < low) {
      low = high = all_in;
    } else {
      high = std::min(high, all_in);
    }
    return true;
  }

  // Game.raise_to_amounts and can_fold, for the current player.
  void refresh() {
    nsizes = 0;
    fold_ok = false;
    if (current < 0) return;
    int p = current;
    fold_ok = !bring_in_due && level > committed[p];
    int low, high;
    if (!raise_bounds(p, low, high)) return;
    if (low == high) {
      sizes[nsizes++] = low;
      return;
    }
    int cand[MAX_SIZES + 2], m = 0;
    cand[m++] = low;
    cand[m++] = high;
    if (r->betting == SPREAD_LIMIT) {
      int base = full_level ? level : 0;
      for (double mult : r->spread_sizes)
        cand[m++] = std::min(std::max(base + (int)std::nearbyint(mult * bet), low), high);
    } else {
      int pot_after_call = pot() + level - committed[p];
      for (double f : r->pot_fractions)
        cand[m++] = std::min(std::max(level + (int)std::nearbyint(f * pot_after_call), low), high);
    }
    std::sort(cand, cand + m);
    for (int i = 0; i < m; ++i)
      if (i == 0 || cand[i] != cand[i - 1]) sizes[nsizes++] = cand[i];
  }

  void fold() {
    int p = current;
    folded[p] = true;
    pending &= ~(1u << p);
    after_action(p);
  }

  void add_history(int p, int kind) {
    float& h = history[p][street][kind];
    h = std::min(h + history_step, 1.0f);
  }

  void check_or_call() {
    int p = current;
    if (bring_in_due) {
      add_history(p, 1);
      put_in(p, r->bring_in_amount - committed[p]);
      bring_in_due = false;
      level = std::max(level, committed[p]);
      pending = others_who_can_act(p);
      acted_level[p] = full_level;
      after_action(p);
      return;
    }
    int owed = level - committed[p];
    if (owed > 0) {
      put_in(p, owed);
      add_history(p, 1);
    }
    pending &= ~(1u << p);
    acted_level[p] = full_level;
    after_action(p);
  }

  void bet_or_raise(int amount) {
    int p = current;
    int min_to = min_raise_to();
    add_history(p, 0);
    put_in(p, amount - committed[p]);
    if (amount >= min_to) {  // a full bet or raise: it counts for the cap and reopens betting
      ++raises;
      last_increment = amount - full_level;
      full_level = amount;
    }
    level = amount;
    bring_in_due = false;
    pending = others_who_can_act(p);
    acted_level[p] = full_level;
    after_action(p);
  }

  // envs.actions.apply_action; false if the id is not legal now.
  bool apply(int action) {
    if (current < 0) return false;
    if (action == FOLD) {
      if (!fold_ok) return false;
      fold();
    } else if (action == CHECK_CALL) {
      check_or_call();
    } else {
      int i = action - FIRST_BET;
      if (i < 0 || i >= nsizes) return false;
      bet_or_raise(sizes[i]);
    }
    refresh();
    return true;
  }

  void award_uncontested(int winner) {
    stacks[winner] += pot();
    finish();
  }

  // Game._showdown with Game._side_pots
  void showdown() {
    current = -1;
    int values[MAX_PLAYERS], chicago[MAX_PLAYERS];
    int wm = wild_mask();
    int in_hand[MAX_PLAYERS], nin = 0;
    for (int i = 0; i < n; ++i) {
      int p = order[i];
      if (folded[p]) continue;
      in_hand[nin++] = p;
      int8_t cards[MAX_CARDS * 2];
      std::copy(hole[p], hole[p] + nhole[p], cards);
      std::copy(up[p], up[p] + nup[p], cards + nhole[p]);
      values[p] = evaluate(cards, nhole[p] + nup[p], wm, opts);
      chicago[p] = NO_LOW_CHICAGO;
      if (r->low_chicago)
        for (int j = 0; j < nhole[p]; ++j)
          if ((hole[p][j] & 3) == 3) chicago[p] = std::min(chicago[p], ((hole[p][j] >> 2) + 1) % 13);
    }
    int levels[MAX_PLAYERS], nl = 0;
    for (int i = 0; i < nin; ++i)
      if (total[in_hand[i]] > 0) levels[nl++] = total[in_hand[i]];
    std::sort(levels, levels + nl);
    nl = (int)(std::unique(levels, levels + nl) - levels);
    int previous = 0;
    for (int l = 0; l < nl; ++l) {
      int lev = levels[l];
      int amount = 0;
      for (int q = 0; q < n; ++q) amount += std::min(total[q], lev) - std::min(total[q], previous);
      if (l == nl - 1)  // folded seats' chips above the last contender's level: the top pot
        for (int q = 0; q < n; ++q) amount += std::max(total[q] - lev, 0);
      int eligible[MAX_PLAYERS], ne = 0;
      for (int i = 0; i < nin; ++i)
        if (total[in_hand[i]] >= lev) eligible[ne++] = in_hand[i];
      previous = lev;
      if (ne == 1) {  // a bet nobody could match goes back to its owner
        stacks[eligible[0]] += amount;
        continue;
      }
      int best = -1;
      for (int i = 0; i < ne; ++i) best = std::max(best, values[eligible[i]]);
      int winners[MAX_PLAYERS], nw = 0;
      for (int i = 0; i < ne; ++i)
        if (values[eligible[i]] == best) winners[nw++] = eligible[i];
      int holder = -1;
      for (int i = 0; i < ne; ++i) {
        int q = eligible[i];
        if (chicago[q] != NO_LOW_CHICAGO && (holder < 0 || chicago[q] < chicago[holder])) holder = q;
      }
      int high_share = amount;
      if (holder >= 0 && !(nw == 1 && winners[0] == holder)) {
        int half = amount / 2;
        high_share = amount - half;  // the odd chip stays with the high half
        stacks[holder] += half;
      }
      int share = high_share / nw, odd = high_share % nw;
      for (int i = 0; i < nw; ++i) stacks[winners[i]] += share + (i < odd ? 1 : 0);
    }
    finish();
  }

  void finish() {
    current = -1;
    pending = 0;
    over = true;
    for (int i = 0; i < n; ++i) payoffs[i] = stacks[i] - start[i];
  }
};


// ---------------------------------------------------------------------------------------------
// Observations: a port of envs/observation.py. The layout comes from build_layout() (the
// names, starts and sizes of its pieces); each piece the core knows is written at its start,
// with the values, scales and float32 rounding of the reference encoder.

enum PieceId {
  HOLE_CARDS, UP_CARDS, WILD_RANK, QUEENS_WILD_PIECE, WILD_CARDS, CHICAGO_HOLE, CHICAGO_UP, POT,
  TO_CALL, POT_ODDS, RAISE_TO_AMOUNTS, BET_SIZE, RAISES, STREET, SEATED, TO_ACT, BUTTON, STACK,
  COMMITTED, TOTAL_COMMITTED, FOLDED, ALL_IN, HISTORY,
  HAND_CLASS, SHOWING_CLASS, WIN_PROBABILITY,  // the optional features (observation features block)
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
  int win_samples = 64, win_exact = 2000;  // win_probability's samples and max_exact
  ObsLayout() { std::fill(start, start + NUM_PIECES, -1); }
};

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

struct WinMemo;
static void encode_features(const Hand& h, int o, const ObsLayout& L, float* out, WinMemo* memo);

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

// ---- observation features ----
// The optional pieces of envs/observation.py (FEATURES): hand_class, showing_class and
// win_probability, a port of envs/engine/equity.win_probability with its counter-based sampler
// (equity.sample_deals) and its whole-number shares (equity.SHARE_UNITS), so the values are the
// reference's bit for bit.

constexpr int CATEGORIES = FIVE_OF_A_KIND + 1;
constexpr int64_t SHARE_UNITS = 1441440;  // 2 * lcm(1..16): every tied or halved share is whole
constexpr uint64_t GOLDEN = 0x9E3779B97F4A7C15ull;

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
    int64_t high = mine == best ? SHARE_UNITS / winners : 0;
    if (!r.low_chicago) return high;
    int lowest = NO_LOW_CHICAGO;
    for (int a = 0; a < na; ++a) lowest = std::min(lowest, chicago[a]);
    if (lowest == NO_LOW_CHICAGO) return high;
    return high / 2 + (chicago[me] == lowest ? SHARE_UNITS / 2 : 0);
  };

  // Every deal (math.perm(size, need) of them, in itertools.permutations order) when few.
  int64_t ways = 1;
  for (int j = 0; j < need && ways <= max_exact; ++j) ways *= size - j;
  int64_t total = 0, deals = 0;
  int8_t drawn[52];
  if (ways <= max_exact) {
    bool used[52] = {false};
    auto deal = [&](auto&& self, int j) -> void {
      if (j == need) { total += share(drawn); ++deals; return; }
      for (int k = 0; k < size; ++k)
        if (!used[k]) {
          used[k] = true;
          drawn[j] = pool[k];
          self(self, j + 1);
          used[k] = false;
        }
    };
    deal(deal, 0);
  } else {  // equity.sample_deals from the folded seed
    std::copy(pool, pool + size, drawn);
    int swapped[52];
    for (int s = 0; s < samples; ++s) {
      for (int j = 0; j < need; ++j) {
        uint64_t u = mix64(key + GOLDEN * (uint64_t)((int64_t)s * need + j + 1)) >> 32;
        int k = j + (int)((u * (uint64_t)(size - j)) >> 32);
        std::swap(drawn[j], drawn[k]);
        swapped[j] = k;
      }
      total += share(drawn);
      ++deals;
      for (int j = need - 1; j >= 0; --j) std::swap(drawn[j], drawn[swapped[j]]);  // the pool again
    }
  }
  return (double)total / ((double)SHARE_UNITS * (double)deals);
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

// observation._write_hand_class, _showing_classes and _write_win_probability.
static void encode_features(const Hand& h, int o, const ObsLayout& L, float* out, WinMemo* memo) {
  const int* at = L.start;
  const EvalOptions opts = h.r->eval();
  const int wm = h.wild_mask();
  if (at[HAND_CLASS] >= 0 && h.nhole[o] + h.nup[o] > 0) {
    int8_t cards[MAX_CARDS * 2];
    std::copy(h.hole[o], h.hole[o] + h.nhole[o], cards);
    std::copy(h.up[o], h.up[o] + h.nup[o], cards + h.nhole[o]);
    out[at[HAND_CLASS] + (evaluate(cards, h.nhole[o] + h.nup[o], wm, opts) >> 20)] = 1.0f;
  }
  if (at[SHOWING_CLASS] >= 0)
    for (int rel = 0; rel < h.n; ++rel) {
      int q = (o + rel) % h.n;
      if (h.nup[q]) out[at[SHOWING_CLASS] + rel * CATEGORIES + (evaluate(h.up[q], h.nup[q], wm, opts) >> 20)] = 1.0f;
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

// ---- end of observation features ----

// ---------------------------------------------------------------------------------------------
// Per-slot random decks: splitmix64 seeding a xoshiro256** stream, Fisher-Yates shuffle.

struct Rng {
  uint64_t s[4];
  void seed(uint64_t x) {
    for (int i = 0; i < 4; ++i) {
      x += 0x9E3779B97F4A7C15ull;
      uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s[i] = z ^ (z >> 31);
    }
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t next() {
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  uint32_t below(uint32_t bound) {  // Lemire's unbiased bounded integer
    uint64_t m = (uint64_t)(uint32_t)(next() >> 32) * bound;
    uint32_t l = (uint32_t)m;
    if (l < bound) {
      uint32_t t = (uint32_t)(-bound) % bound;
      while (l < t) { m = (uint64_t)(uint32_t)(next() >> 32) * bound; l = (uint32_t)m; }
    }
    return (uint32_t)(m >> 32);
  }
  // The deck's cards (all 52 when ``cards`` is empty) in a uniformly random order.
  void shuffle(int8_t* deck, const std::vector<int>& cards) {
    int size = cards.empty() ? 52 : (int)cards.size();
    for (int i = 0; i < size; ++i) deck[i] = (int8_t)(cards.empty() ? i : cards[i]);
    for (int i = size - 1; i > 0; --i) std::swap(deck[i], deck[below(i + 1)]);
  }
};

// ---------------------------------------------------------------------------------------------
// N hands stepped together; outputs go straight into the NumPy arrays given to bind().

template <typename T>
static T* data_of(py::array& a, py::ssize_t size, const char* what) {
  if (!a || a.size() != size || a.itemsize() != (py::ssize_t)sizeof(T) ||
      !(a.flags() & py::array::c_style) || !a.writeable())
    throw std::invalid_argument(std::string("bad output array: ") + what);
  return static_cast<T*>(a.mutable_data());
}

// Threads that stay: Workers::run(parts, fn) calls fn(0) on the caller and fn(1..parts-1) on
// threads started once and kept. The evaluator's rank-count memo is per thread
// (nonflush_score_memo), so a thread started for each call began with an empty memo every time
// and made two threads slower than one; these keep theirs. A kept thread waits for its next
// job spinning for SPIN_US, then asleep on a condition variable; the caller waits for the
// others the same way. A training step makes its calls (the learner's step, each opponent
// round, the equity agent's decisions, the new hands' observations) tens to a few hundred
// microseconds apart, and SB3's forward pass between steps takes about as long; waking a
// sleeping thread takes tens of microseconds a call. A millisecond's spin keeps the thread
// awake through a rollout's collection (on the core that the env's second thread was given)
// and lets it sleep through the gradient updates: 256 slots on two threads step 10-15%
// faster than with 50 us (docs/results.md, session 10). Threads are started on first use, and again in a forked
// child, which has none of its parent's threads: there the parent's threads, mutex and
// condition variables (which may count the parent's waiters) are left alone, never used or
// destroyed, and new ones are made.
class Workers {
 public:
  static constexpr int SPIN_US = 1000;

  Workers() = default;
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() {
    if (!s_ || owner_ != getpid()) return;  // a forked child's copy: the parent's to end
    {
      std::lock_guard<std::mutex> lock(s_->m);
      s_->quit.store(true);
    }
    s_->wake.notify_all();
    for (auto& t : s_->threads) t.join();
  }

  void run(int parts, const std::function<void(int)>& fn) {
    if (parts <= 1) { fn(0); return; }
    start(parts - 1);
    State& st = *s_;
    st.job = &fn;
    st.parts = parts;
    st.pending.store(parts - 1);
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.generation.fetch_add(1, std::memory_order_release);
    }
    st.wake.notify_all();
    std::exception_ptr mine;
    try { fn(0); } catch (...) { mine = std::current_exception(); }
    if (!spin_until([&] { return st.pending.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(st.m);
      st.done.wait(lock, [&] { return st.pending.load(std::memory_order_acquire) == 0; });
    }
    st.job = nullptr;
    if (mine) std::rethrow_exception(mine);
    std::lock_guard<std::mutex> lock(st.m);
    if (st.error) { auto e = st.error; st.error = nullptr; std::rethrow_exception(e); }
  }

 private:
  struct State {
    std::mutex m;
    std::condition_variable wake, done;
    std::atomic<uint64_t> generation{0};
    std::atomic<int> pending{0};
    std::atomic<bool> quit{false};
    // Set before generation moves on; atomic because a thread that sits out a call may read
    // them while the caller sets up the next.
    std::atomic<const std::function<void(int)>*> job{nullptr};
    std::atomic<int> parts{0};
    std::exception_ptr error;  // under m
    std::vector<std::thread> threads;
  };

  template <typename F>
  static bool spin_until(F ready) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(SPIN_US);
    for (int i = 1;; ++i) {
      if (ready()) return true;
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return ready();
    }
  }

  void start(int wanted) {
    if (s_ && owner_ != getpid()) s_.release();  // the parent's, after a fork: left as it is
    if (!s_) {
      s_ = std::make_unique<State>();
      owner_ = getpid();
    }
    while ((int)s_->threads.size() < wanted) {
      int index = (int)s_->threads.size() + 1;
      State* st = s_.get();
      s_->threads.emplace_back([st, index] { loop(*st, index); });
    }
  }

  static void loop(State& st, int index) {
    uint64_t seen = 0;
    while (true) {
      auto moved = [&] { return st.quit.load() || st.generation.load(std::memory_order_acquire) != seen; };
      if (!spin_until(moved)) {
        std::unique_lock<std::mutex> lock(st.m);
        st.wake.wait(lock, moved);
      }
      if (st.quit.load()) return;
      seen = st.generation.load(std::memory_order_acquire);
      if (index >= st.parts.load()) continue;  // this call needs fewer threads than there are
      try {
        (*st.job.load())(index);
      } catch (...) {
        std::lock_guard<std::mutex> lock(st.m);
        if (!st.error) st.error = std::current_exception();
      }
      if (st.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(st.m);
        st.done.notify_one();
      }
    }
  }

  std::unique_ptr<State> s_;
  pid_t owner_ = 0;
};

struct Batch {
  CoreRules rules;
  int num_players, size;
  bool auto_reset = true;
  int threads = 1;
  std::unique_ptr<Workers> workers = std::make_unique<Workers>();  // the threads beyond the caller's
  std::vector<Hand> hands;
  std::vector<Rng> rngs;
  std::vector<int> stacks;  // (size, num_players): each hand's starting stacks
  // Outputs, bound once.
  py::array current_a, mask_a, pot_a, payoffs_a, dones_a;
  int32_t* current_p = nullptr;
  int8_t* mask_p = nullptr;
  int32_t* pot_p = nullptr;
  int32_t* payoffs_p = nullptr;
  uint8_t* dones_p = nullptr;
  ObsLayout layout;
  py::array obs_a;
  float* obs_p = nullptr;
  // ---- observed seats ----
  // (size, num_players) bool, bound by bind_observed_seats(): a hand's observation row is
  // written only when its player to act is a listed seat of that hand (the others read no
  // observation: the training VecEnv's scripted and core opponents), else it is zeroed as
  // when nobody is to act. Unbound (nullptr): every seat, as before.
  py::array observed_a;
  const uint8_t* observed_p = nullptr;
  std::vector<uint8_t> encoded;  // per hand: its row holds an observation (not zeros)
  // ---- end of observed seats ----
  std::vector<WinMemo> win_memo;  // (size, num_players): each seat's last win_probability
  int win_samples = 64, win_exact = 2000;  // the win_probability feature's (observation features)

  Batch(CoreRules r, int players, int n) : rules(std::move(r)), num_players(players), size(n) {
    rules.check();
    if (players < 2 || players > MAX_PLAYERS) throw std::invalid_argument("2 to 16 players");
    if (n < 1) throw std::invalid_argument("a batch holds at least one hand");
    int cards = 0;
    for (const auto& s : rules.streets) cards += (int)s.size();
    if (cards * players > rules.deck_size()) throw std::invalid_argument("more cards than one deck holds");
    hands.resize(n);
    rngs.resize(n);
    stacks.assign((size_t)n * players, rules.stack);
    for (int i = 0; i < n; ++i) rngs[i].seed((uint64_t)i);
  }

  void bind(py::array current, py::array mask, py::array pot, py::array payoffs, py::array dones) {
    current_p = data_of<int32_t>(current, size, "current_player (int32, N)");
    mask_p = data_of<int8_t>(mask, (py::ssize_t)size * rules.num_actions, "mask (int8, N x actions)");
    pot_p = data_of<int32_t>(pot, size, "pot (int32, N)");
    payoffs_p = data_of<int32_t>(payoffs, (py::ssize_t)size * num_players, "payoffs (int32, N x players)");
    dones_p = data_of<uint8_t>(dones, size, "dones (uint8/bool, N)");
    current_a = current; mask_a = mask; pot_a = pot; payoffs_a = payoffs; dones_a = dones;
  }

  // The layout's pieces as (name, start, size); obs (N, size) float32 receives the observation
  // of each hand's player to act (zeros when nobody is).
  void bind_observations(py::array obs, std::vector<std::tuple<std::string, int, int>> pieces,
                         int size_, int max_players, int rounds) {
    ObsLayout L;
    L.size = size_;
    L.max_players = max_players;
    L.rounds = rounds;
    L.win_samples = win_samples;
    L.win_exact = win_exact;
    if (max_players < num_players || rounds != rules.num_streets())
      throw std::invalid_argument("the layout is not for these rules");
    for (const auto& [name, start, psize] : pieces) {
      int id = -1;
      for (int k = 0; k < NUM_PIECES; ++k)
        if (name == PIECE_NAMES[k]) id = k;
      if (id < 0)
        throw std::invalid_argument("the core does not know observation piece '" + name +
                                    "': add it to encode() in src/stud_core.cpp");
      if (start < 0 || start + psize > size_) throw std::invalid_argument("piece out of the layout");
      L.start[id] = start;
    }
    obs_p = data_of<float>(obs, (py::ssize_t)size * size_, "observations (float32, N x layout size)");
    obs_a = obs;
    layout = L;
    encoded.assign(size, 0);
    win_memo.assign((size_t)size * num_players, WinMemo());
    for (int i = 0; i < size; ++i) write(i);
  }

  // ---- observed seats ----
  // seats (N, players) bool/uint8: which seats' observations write() encodes (see observed_p).
  // Read in place at every write, so the owner may change it between steps;
  // set_observed_seats() changes it and brings the rows of the slots it changed up to date.
  void bind_observed_seats(py::array seats) {
    if (!layout.size) throw std::logic_error("bind_observations() first");
    observed_p = data_of<uint8_t>(seats, (py::ssize_t)size * num_players,
                                  "observed seats (bool, N x players)");
    observed_a = seats;
  }

  // Whether hand i's row should hold the observation of its player to act.
  bool wanted(int i) const {
    int seat = hands[i].current;
    return seat >= 0 && (!observed_p || observed_p[(size_t)i * num_players + seat]);
  }

  // After the observed seats of the listed slots changed: the rows whose player to act became
  // listed are encoded, those whose player is no longer listed zeroed; the others already hold
  // what write() would give (an observation depends on the hand and seat only). A hand just
  // re-dealt by auto_reset and given new seats thus costs one encode at most. (Slots checked.)
  // The slots to encode are split over the threads (each slot once: a slot listed twice is
  // written by one thread), as step() splits its hands.
  void refresh_observations(const int64_t* slots, py::ssize_t count) {
    std::vector<int> stale;
    std::vector<char> listed(size, 0);
    for (py::ssize_t j = 0; j < count; ++j) {
      int i = (int)slots[j];
      if (!listed[i] && wanted(i) != (bool)encoded[i]) stale.push_back(i);
      listed[i] = 1;
    }
    const int n = (int)stale.size();
    py::gil_scoped_release release;
    // From 4 hands a part (each encodes a first street's win_probability, microseconds; the
    // kept threads are still spinning in a training step: Workers).
    int parts = std::max(1, std::min(threads, n / 4));
    workers->run(parts, [&](int t) {
      for (int j = n * t / parts; j < n * (t + 1) / parts; ++j) write(stale[j]);
    });
  }

  // seats (len(slots), players) bools become the observed seats of those slots, then their
  // rows are refreshed (one call: the training VecEnv sets them for every new hand).
  void set_observed_seats(py::array_t<int64_t, py::array::c_style | py::array::forcecast> slots,
                          py::array_t<uint8_t, py::array::c_style | py::array::forcecast> seats) {
    if (!observed_p) throw std::logic_error("bind_observed_seats() first");
    if (seats.ndim() != 2 || seats.shape(0) != slots.size() || seats.shape(1) != num_players) {
      std::string got;
      for (py::ssize_t d = 0; d < seats.ndim(); ++d) got += (d ? ", " : "") + std::to_string(seats.shape(d));
      throw std::invalid_argument("observed seats: one row of " + std::to_string(num_players) +
                                  " bools per hand slot given, shape (" + std::to_string(slots.size()) +
                                  ", " + std::to_string(num_players) + "), not (" + got + ")");
    }
    const int64_t* s = slots.data();
    for (py::ssize_t j = 0; j < slots.size(); ++j)
      if (s[j] < 0 || s[j] >= size)
        throw std::invalid_argument("observed seats: hand slots are 0 to " + std::to_string(size - 1) +
                                    ", not " + std::to_string(s[j]));
    uint8_t* out = const_cast<uint8_t*>(observed_p);  // bound writeable (data_of)
    const uint8_t* in = seats.data();
    for (py::ssize_t j = 0; j < slots.size(); ++j)
      for (int p = 0; p < num_players; ++p) out[(size_t)s[j] * num_players + p] = in[j * num_players + p] != 0;
    refresh_observations(s, slots.size());
  }
  // ---- end of observed seats ----

  py::array_t<float> observe(int i, int seat) const {
    const Hand& h = hand(i);
    if (!layout.size) throw std::logic_error("bind_observations() first");
    if (seat < 0 || seat >= h.n) throw std::out_of_range("no such seat");
    py::array_t<float> out(layout.size);
    encode(h, seat, layout, out.mutable_data());
    return out;
  }

  void write(int i) {
    const Hand& h = hands[i];
    if (obs_p) {
      float* row = obs_p + (size_t)i * layout.size;
      encoded[i] = wanted(i);
      if (encoded[i]) encode(h, h.current, layout, row, &win_memo[(size_t)i * num_players + h.current]);
      else std::fill(row, row + layout.size, 0.0f);
    }
    if (current_p) current_p[i] = h.current;
    if (pot_p) pot_p[i] = h.pot();
    if (mask_p) {
      int8_t* m = mask_p + (size_t)i * rules.num_actions;
      std::fill(m, m + rules.num_actions, 0);
      if (h.current >= 0) {
        m[FOLD] = h.fold_ok;
        m[CHECK_CALL] = 1;
        for (int j = 0; j < h.nsizes && FIRST_BET + j < rules.num_actions; ++j) m[FIRST_BET + j] = 1;
      }
    }
  }

  // A new hand in slot i from its own random stream, the button moved one seat on.
  void deal_random(int i, int button) {
    int8_t deck[52];
    rngs[i].shuffle(deck, rules.deck);
    hands[i].init(&rules, num_players, button, &stacks[(size_t)i * num_players], deck);
  }

  void reset(py::object seeds, py::object decks, py::object buttons, py::object stack_in) {
    std::vector<int> btn(size, 0);
    if (!buttons.is_none()) {
      auto b = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(buttons);
      if (b.size() != size) throw std::invalid_argument("buttons: one per hand");
      for (int i = 0; i < size; ++i) {
        btn[i] = (int)b.data()[i];
        if (btn[i] < 0 || btn[i] >= num_players) throw std::invalid_argument("button out of range");
      }
    }
    if (!stack_in.is_none()) {
      auto s = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(stack_in);
      if (s.size() != (py::ssize_t)size * num_players) throw std::invalid_argument("stacks: (N, players)");
      for (py::ssize_t j = 0; j < s.size(); ++j) {
        if (s.data()[j] < 1) throw std::invalid_argument("stacks must be at least 1 chip");
        stacks[j] = (int)s.data()[j];
      }
    }
    if (!seeds.is_none()) {
      auto s = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>(seeds);
      if (s.size() != size) throw std::invalid_argument("seeds: one per hand");
      for (int i = 0; i < size; ++i) rngs[i].seed(s.data()[i]);
    }
    if (!decks.is_none()) {
      auto d = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(decks);
      const int k = rules.deck_size();
      if (d.size() != (py::ssize_t)size * k)
        throw std::invalid_argument("decks: (N, deck size) card indices, each deck a permutation of the deck");
      uint64_t in_deck = 0;
      for (int j = 0; j < 52; ++j)
        if (rules.deck.empty() || std::find(rules.deck.begin(), rules.deck.end(), j) != rules.deck.end())
          in_deck |= 1ull << j;
      for (int i = 0; i < size; ++i) {
        int8_t deck[52];
        uint64_t seen = 0;
        for (int j = 0; j < k; ++j) {
          int64_t c = d.data()[(size_t)i * k + j];
          if (c < 0 || c > 51 || !(in_deck >> c & 1) || (seen >> c & 1))
            throw std::invalid_argument("each deck is a permutation of the deck's cards");
          seen |= 1ull << c;
          deck[j] = (int8_t)c;
        }
        hands[i].init(&rules, num_players, btn[i], &stacks[(size_t)i * num_players], deck);
      }
    } else {
      for (int i = 0; i < size; ++i) deal_random(i, btn[i]);
    }
    for (int i = 0; i < size; ++i) {
      if (dones_p) dones_p[i] = hands[i].over;
      if (payoffs_p)
        for (int p = 0; p < num_players; ++p)
          payoffs_p[(size_t)i * num_players + p] = hands[i].over ? hands[i].payoffs[p] : 0;
      write(i);
    }
  }

  // One action per hand (a negative id leaves that hand as it is). A finished hand writes its
  // payoffs and done, and with auto_reset a new hand is dealt into its slot at once.
  void step(py::array_t<int64_t, py::array::c_style | py::array::forcecast> actions) {
    if (actions.size() != size) throw std::invalid_argument("actions: one per hand");
    if (!dones_p) throw std::logic_error("bind() the output arrays first");
    const int64_t* a = actions.data();
    int bad = -1;
    {
      py::gil_scoped_release release;  // other Python threads run while the hands are stepped
      // The hands are independent: split them over the threads, each writing its rows.
      int parts = std::max(1, std::min(threads, size / 64));
      std::vector<int> bads(parts, -1);
      workers->run(parts, [&](int t) {
        bads[t] = step_range(a, (int)((long)size * t / parts), (int)((long)size * (t + 1) / parts));
      });
      for (int b : bads)
        if (b >= 0) { bad = b; break; }
    }
    if (bad >= 0)
      throw std::invalid_argument("action " + std::to_string(a[bad]) + " is not legal in hand " +
                                  std::to_string(bad) + " (that hand was left as it was)");
  }

  // Steps hands [begin, end); the first hand given an illegal action, or -1.
  int step_range(const int64_t* a, int begin, int end) {
    int bad = -1;
    for (int i = begin; i < end; ++i) {
      Hand& h = hands[i];
      dones_p[i] = 0;
      int32_t* pay = payoffs_p + (size_t)i * num_players;
      std::fill(pay, pay + num_players, 0);
      if (a[i] < 0 || h.over) continue;
      if (!h.apply((int)a[i])) {
        if (bad < 0) bad = i;
        continue;
      }
      if (h.over) {
        dones_p[i] = 1;
        std::copy(h.payoffs, h.payoffs + num_players, pay);
        // A new hand at once. (If it ends at the deal, the stacks leave nobody able to act:
        // antes all-in. It would every time, so the slot stays finished, with no player.)
        if (auto_reset) deal_random(i, (h.button + 1) % num_players);
      }
      write(i);
    }
    return bad;
  }

  const Hand& hand(int i) const {
    if (i < 0 || i >= size) throw std::out_of_range("no such hand");
    return hands[i];
  }

  std::vector<int> raise_to_amounts(int i) const {
    const Hand& h = hand(i);
    return std::vector<int>(h.sizes, h.sizes + h.nsizes);
  }

  py::dict state(int i) const {
    const Hand& h = hand(i);
    py::dict d;
    std::vector<int> st(h.stacks, h.stacks + h.n), tot(h.total, h.total + h.n),
        com(h.committed, h.committed + h.n), pay(h.payoffs, h.payoffs + h.n);
    std::vector<bool> fo(h.folded, h.folded + h.n);
    std::vector<std::vector<int>> holes, ups;
    for (int p = 0; p < h.n; ++p) {
      holes.emplace_back(h.hole[p], h.hole[p] + h.nhole[p]);
      ups.emplace_back(h.up[p], h.up[p] + h.nup[p]);
    }
    d["current_player"] = h.current;
    d["street"] = h.street;
    d["button"] = h.button;
    d["stacks"] = st;
    d["total_committed"] = tot;
    d["committed"] = com;
    d["folded"] = fo;
    d["hole_cards"] = holes;
    d["up_cards"] = ups;
    d["wild"] = h.wild;
    d["bet_size"] = h.bet;
    d["raises_this_round"] = h.raises;
    d["to_call"] = h.to_call();
    d["bring_in_seat"] = h.bring_in_seat;
    d["is_over"] = h.over;
    d["payoffs"] = h.over ? py::object(py::cast(pay)) : py::object(py::none());
    d["deck"] = std::vector<int>(h.deck, h.deck + h.r->deck_size());  // the hand's whole deal order
    d["starting_stacks"] = std::vector<int>(h.start, h.start + h.n);
    return d;
  }
};


// ---- tag agent ----
// agents/heuristic.TagAgent.act for the player to act in listed hands of a Batch (the training
// VecEnv's batched opponents, train/batched_vec.py). The per-street bars come from Python
// (agents.heuristic.TAG_THRESHOLDS through _thresholds), one row per number of own cards;
// tests/test_batched_vec.py holds this equal to the reference on random states of every preset.

struct TagPolicy {
  // Per number of own cards 0..MAX_CARDS: raise bar (category, top rank), call bar (category, top rank).
  int bars[MAX_CARDS + 1][4];
  int draw_length = 5;     // 4 with Canadian hands (the four-flush and four-straight)
  bool ace_low = true;     // the ace plays low in straight draws
  bool large = false;      // tier 3 bets the middle size on offer (outside fixed limit)

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

  // Tag's action id in each listed hand (each must have a player to act).
  py::array_t<int64_t> act_many(const Batch& b, py::array_t<int64_t, py::array::c_style | py::array::forcecast> slots) const {
    py::array_t<int64_t> out(slots.size());
    const int64_t* s = slots.data();
    int64_t* o = out.mutable_data();
    for (py::ssize_t k = 0; k < slots.size(); ++k) {
      const Hand& h = b.hand((int)s[k]);
      if (h.current < 0) throw std::invalid_argument("hand " + std::to_string(s[k]) + " has nobody to act");
      o[k] = act(h);
    }
    return out;
  }
};

// ---- equity agent ----
// agents/equity.EquityAgent.decide for the player to act in listed hands of a Batch, one key per
// hand (the training VecEnv's batched equity opponents, train/batched_vec.py): the equity is
// mean_share over `samples` deals of equity.sample_deals seeded with [key] (the float the
// reference gets, as win_probability's), then EquityAgent._bars and heuristic.pick_bet.
// tests/test_batched_equity.py holds this equal to the reference on random states of every preset.

struct EquityPolicy {
  int samples = 300;
  double raise_edge = 0.3, call_margin = 0.0;

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

  using Ints = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

  // The action id in each listed hand (each must have a player to act), keys[k] for slots[k].
  py::array_t<int64_t> act_many(const Batch& b, Ints slots, Ints keys) const {
    return for_each<int64_t>(b, slots, keys, [this](const Hand& h, uint64_t key) { return (int64_t)decide(h, key); });
  }

  // The equity estimate in each listed hand (what decide compares with its bars; for tests).
  py::array_t<double> estimates(const Batch& b, Ints slots, Ints keys) const {
    return for_each<double>(b, slots, keys, [this](const Hand& h, uint64_t key) { return estimate(h, key); });
  }

  template <typename T, typename F>
  py::array_t<T> for_each(const Batch& b, Ints slots, Ints keys, F f) const {
    if (slots.ndim() != 1 || keys.ndim() != 1 || keys.size() != slots.size())
      throw std::invalid_argument("EquityPolicy.act: one key per slot (" + std::to_string(slots.size()) + " slots, " +
                                  std::to_string(keys.size()) + " keys)");
    const py::ssize_t count = slots.size();
    const int64_t* s = slots.data();
    const int64_t* k = keys.data();
    for (py::ssize_t i = 0; i < count; ++i) {
      if (s[i] < 0 || s[i] >= b.size)
        throw std::invalid_argument("EquityPolicy.act: no hand " + std::to_string(s[i]) + " in a batch of " +
                                    std::to_string(b.size));
      if (b.hands[s[i]].current < 0) throw std::invalid_argument("hand " + std::to_string(s[i]) + " has nobody to act");
      if (k[i] < 0) throw std::invalid_argument("EquityPolicy.act: keys are ints in [0, 2**63)");
    }
    py::array_t<T> out(count);
    T* o = out.mutable_data();
    {
      py::gil_scoped_release release;
      auto run = [&](py::ssize_t begin, py::ssize_t end) {
        for (py::ssize_t i = begin; i < end; ++i) o[i] = f(b.hands[s[i]], (uint64_t)k[i]);
      };
      // From 4 decisions a part (each simulates `samples` deals, microseconds; the kept threads
      // are still spinning in a training step: Workers).
      int parts = (int)std::max<py::ssize_t>(1, std::min<py::ssize_t>(b.threads, count / 4));
      b.workers->run(parts, [&](int t) { run(count * t / parts, count * (t + 1) / parts); });
    }
    return out;
  }
};

// ---- learner statistics ----
// What kind of action each id would be for the player to act, before it is played (the
// events of envs/engine/game.py: 0 fold, 1 check, 2 call, 3 bring_in, 4 complete, 5 bet,
// 6 raise; -1 for a negative id), and the street it is played on: for the training VecEnv's
// statistics (VPIP, aggression), which the core keeps no log for.

static py::tuple action_kinds(const Batch& b, py::array_t<int64_t, py::array::c_style | py::array::forcecast> actions) {
  if (actions.size() != b.size) throw std::invalid_argument("actions: one per hand");
  py::array_t<int8_t> kinds(b.size), streets(b.size);
  const int64_t* a = actions.data();
  int8_t* k = kinds.mutable_data();
  int8_t* st = streets.mutable_data();
  for (int i = 0; i < b.size; ++i) {
    const Hand& h = b.hands[i];
    st[i] = (int8_t)h.street;
    if (a[i] < 0 || h.current < 0) { k[i] = -1; continue; }
    if (a[i] == FOLD) k[i] = 0;
    else if (a[i] == CHECK_CALL) k[i] = h.bring_in_due ? 3 : (h.level > h.committed[h.current] ? 2 : 1);
    else k[i] = (h.bring_in_due || (h.full_level == 0 && h.level > 0)) ? 4 : (h.level == 0 ? 5 : 6);
  }
  return py::make_tuple(kinds, streets);
}

}  // namespace stud

PYBIND11_MODULE(_stud_core, m) {
  using namespace stud;
  m.doc() = "The compiled stud core (see envs/batched.py; the Python engine is the reference).";

  py::class_<CoreRules>(m, "CoreRules")
      .def(py::init<>())
      .def_readwrite("streets", &CoreRules::streets)
      .def_readwrite("street_big", &CoreRules::street_big)
      .def_readwrite("canadian_hands", &CoreRules::canadian_hands)
      .def_readwrite("ace_low_four_straight", &CoreRules::ace_low_four_straight)
      .def_readwrite("follow_the_queen", &CoreRules::follow_the_queen)
      .def_readwrite("queens_wild", &CoreRules::queens_wild)
      .def_readwrite("double_ace_flush", &CoreRules::double_ace_flush)
      .def_readwrite("low_chicago", &CoreRules::low_chicago)
      .def_readwrite("betting", &CoreRules::betting)
      .def_readwrite("max_raises", &CoreRules::max_raises)
      .def_readwrite("ante", &CoreRules::ante)
      .def_readwrite("bring_in", &CoreRules::bring_in)
      .def_readwrite("bring_in_amount", &CoreRules::bring_in_amount)
      .def_readwrite("small_bet", &CoreRules::small_bet)
      .def_readwrite("big_bet", &CoreRules::big_bet)
      .def_readwrite("first_to_act_lowest", &CoreRules::first_to_act_lowest)
      .def_readwrite("open_pair_doubles", &CoreRules::open_pair_doubles)
      .def_readwrite("spread_sizes", &CoreRules::spread_sizes)
      .def_readwrite("pot_fractions", &CoreRules::pot_fractions)
      .def_readwrite("num_actions", &CoreRules::num_actions)
      .def_readwrite("stack", &CoreRules::stack)
      .def_readwrite("deck", &CoreRules::deck);

  py::class_<Batch>(m, "Batch")
      .def(py::init<CoreRules, int, int>(), py::arg("rules"), py::arg("num_players"), py::arg("size"))
      .def_readwrite("auto_reset", &Batch::auto_reset)
      .def_readwrite("threads", &Batch::threads)
      .def_readonly("size", &Batch::size)
      .def_readonly("num_players", &Batch::num_players)
      .def_readwrite("win_samples", &Batch::win_samples)
      .def_readwrite("win_exact", &Batch::win_exact)
      .def("bind", &Batch::bind)
      .def("bind_observations", &Batch::bind_observations)
      .def("observe", &Batch::observe)
      .def("bind_observed_seats", &Batch::bind_observed_seats)
      .def("set_observed_seats", &Batch::set_observed_seats, py::arg("slots"), py::arg("seats"))
      .def("reset", &Batch::reset, py::arg("seeds") = py::none(), py::arg("decks") = py::none(),
           py::arg("buttons") = py::none(), py::arg("stacks") = py::none())
      .def("step", &Batch::step)
      .def("raise_to_amounts", &Batch::raise_to_amounts)
      .def("state", &Batch::state);

  // ---- tag agent ----
  py::class_<TagPolicy>(m, "TagPolicy")
      .def(py::init([](std::vector<std::vector<int>> bars, int draw_length, bool ace_low, bool large) {
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
           }), py::arg("bars"), py::arg("draw_length"), py::arg("ace_low"), py::arg("large"))
      .def("act", &TagPolicy::act_many, py::arg("batch"), py::arg("slots"));
  // ---- equity agent ----
  py::class_<EquityPolicy>(m, "EquityPolicy")
      .def(py::init([](int samples, double raise_edge, double call_margin) {
             if (samples < 1) throw std::invalid_argument("equity: samples must be at least 1");
             if (!(raise_edge >= 0.0 && raise_edge <= 1.0)) throw std::invalid_argument("equity: raise_edge must lie in [0, 1]");
             EquityPolicy e;
             e.samples = samples;
             e.raise_edge = raise_edge;
             e.call_margin = call_margin;
             return e;
           }), py::arg("samples"), py::arg("raise_edge"), py::arg("call_margin"))
      .def_readonly("samples", &EquityPolicy::samples)
      .def("act", &EquityPolicy::act_many, py::arg("batch"), py::arg("slots"), py::arg("keys"))
      .def("estimates", &EquityPolicy::estimates, py::arg("batch"), py::arg("slots"), py::arg("keys"));
  // ---- learner statistics ----
  m.def("action_kinds", &action_kinds, py::arg("batch"), py::arg("actions"));
  m.def("evaluate", [](std::vector<int> cards, int wild_mask, bool canadian, bool double_ace_flush,
                       bool ace_low_four_straight) {
    if (cards.empty() || cards.size() > (size_t)MAX_CARDS) throw std::invalid_argument("1 to 7 cards");
    int8_t c[MAX_CARDS];
    for (size_t i = 0; i < cards.size(); ++i) c[i] = (int8_t)cards[i];
    return evaluate(c, (int)cards.size(), wild_mask, {canadian, double_ace_flush, ace_low_four_straight});
  }, py::arg("cards"), py::arg("wild_mask") = 0, py::arg("canadian") = false,
     py::arg("double_ace_flush") = false, py::arg("ace_low_four_straight") = true);

  // evaluate for every row of an (N, n) array of card ids, 1 <= n <= 7 (local best response
  // scores its roll-outs and the other player's candidate cards with it).
  m.def("evaluate_rows", [](py::array_t<int64_t, py::array::c_style | py::array::forcecast> cards, int wild_mask,
                            bool canadian, bool double_ace_flush, bool ace_low_four_straight) {
    if (cards.ndim() != 2 || cards.shape(1) < 1 || cards.shape(1) > MAX_CARDS)
      throw std::invalid_argument("evaluate_rows: an (N, 1..7) array of card ids");
    const py::ssize_t rows = cards.shape(0), n = cards.shape(1);
    auto in = cards.unchecked<2>();
    for (py::ssize_t i = 0; i < rows; ++i)
      for (py::ssize_t j = 0; j < n; ++j)
        if (in(i, j) < 0 || in(i, j) > 51) throw std::invalid_argument("evaluate_rows: card ids are 0..51");
    py::array_t<int64_t> out(rows);
    auto o = out.mutable_unchecked<1>();
    const EvalOptions opts{canadian, double_ace_flush, ace_low_four_straight};
    {
      py::gil_scoped_release release;
      int8_t c[MAX_CARDS];
      for (py::ssize_t i = 0; i < rows; ++i) {
        for (py::ssize_t j = 0; j < n; ++j) c[j] = (int8_t)in(i, j);
        o(i) = evaluate(c, (int)n, wild_mask, opts);
      }
    }
    return out;
  }, py::arg("cards"), py::arg("wild_mask") = 0, py::arg("canadian") = false,
     py::arg("double_ace_flush") = false, py::arg("ace_low_four_straight") = true);

  // Local best response's showdown shares (arena.lbr.equity_by_hole with cards to come): for
  // each candidate face-down card of the other player, my mean share (1 win, 1/2 tie) over the
  // rows of `future` that do not hold it. A row: my cards to come (its first `mine_to_come`),
  // then the other's. Scored by the evaluator, so the values are the NumPy form's exactly.
  m.def("showdown_shares", [](std::vector<int> mine, std::vector<int> their_up, std::vector<int> candidates,
                              py::array_t<int64_t, py::array::c_style | py::array::forcecast> future,
                              int mine_to_come, int wild_mask, bool canadian, bool double_ace_flush,
                              bool ace_low_four_straight) {
    if (future.ndim() != 2) throw std::invalid_argument("showdown_shares: future is (rows, cards to come)");
    const py::ssize_t rows = future.shape(0), k = future.shape(1);
    const int theirs_to_come = (int)k - mine_to_come;
    if (mine_to_come < 0 || theirs_to_come < 0 || mine.size() + mine_to_come > (size_t)MAX_CARDS ||
        1 + their_up.size() + theirs_to_come > (size_t)MAX_CARDS)
      throw std::invalid_argument("showdown_shares: at most 7 cards a hand");
    auto card_ok = [](int64_t c) { return c >= 0 && c <= 51; };
    for (int c : mine) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
    for (int c : their_up) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
    for (int c : candidates) if (!card_ok(c)) throw std::invalid_argument("showdown_shares: card ids are 0..51");
    auto f = future.unchecked<2>();
    for (py::ssize_t i = 0; i < rows; ++i)
      for (py::ssize_t j = 0; j < k; ++j)
        if (!card_ok(f(i, j))) throw std::invalid_argument("showdown_shares: card ids are 0..51");
    const EvalOptions opts{canadian, double_ace_flush, ace_low_four_straight};
    const size_t nc = candidates.size();
    std::vector<int64_t> halves(nc, 0), counts(nc, 0);  // twice the summed shares: whole numbers
    {
      py::gil_scoped_release release;
      ScoreMemo& memo = thread_memo();
      Tally me_known{}, them_known{};
      for (int c : mine) me_known.add(c, wild_mask);
      for (int c : their_up) them_known.add(c, wild_mask);
      for (py::ssize_t i = 0; i < rows; ++i) {
        Tally me = me_known, them_base = them_known;
        uint64_t drawn = 0;
        for (py::ssize_t j = 0; j < k; ++j) {
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
    }
    py::array_t<double> out(nc);
    double* o = out.mutable_data();
    for (size_t c = 0; c < nc; ++c) o[c] = ((double)halves[c] / 2.0) / (double)std::max<int64_t>(counts[c], 1);
    return out;
  }, py::arg("mine"), py::arg("their_up"), py::arg("candidates"), py::arg("future"), py::arg("mine_to_come"),
     py::arg("wild_mask") = 0, py::arg("canadian") = false, py::arg("double_ace_flush") = false,
     py::arg("ace_low_four_straight") = true);

  // ---- observation features ----
  // win_probability for one seat holding each of several face-down card lists in turn (the
  // cards local best response supposes the other player holds): one call, one value each.
  m.def("win_probabilities", [](const CoreRules& rules, int button, int street, int seat, int wild,
                                std::vector<std::vector<int>> holes, std::vector<int> face_down_counts,
                                std::vector<std::vector<int>> up_cards, std::vector<bool> folded,
                                int samples, int max_exact) {
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
  }, py::arg("rules"), py::arg("button"), py::arg("street"), py::arg("seat"), py::arg("wild"),
     py::arg("holes"), py::arg("face_down_counts"), py::arg("up_cards"), py::arg("folded"),
     py::arg("samples"), py::arg("max_exact"));
  // ---- end of observation features ----
}
