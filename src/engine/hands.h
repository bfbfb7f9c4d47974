// Hand values: a port of envs/engine/hands.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "constants.h"

namespace stud {

// A value is category << CATEGORY_SHIFT plus up to five tie-break slots of 4 bits (rank index
// + 1), so the ints equal the reference's HandValues
// (tests/test_core_differential.py::test_the_core_evaluator_gives_the_reference_values).

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
  int value = category << CATEGORY_SHIFT;
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

// nonflush_score through `table` (ScoreMemo::pick's for these wilds, k and options).
static inline int nonflush_score_in(ScoreMemo::Table& table, uint64_t rank_key, int wilds, int k, bool canadian,
                                    bool ace_low) {
  if (const uint64_t* s = ScoreMemo::find(table, rank_key)) return (int)(*s & ScoreMemo::VALUE_MASK);
  int counts[13];
  for (int r = 0; r < 13; ++r) counts[r] = (int)(rank_key >> (3 * r) & 7);
  int value = nonflush_score(counts, wilds, k, canadian, ace_low);
  ScoreMemo::insert(table, rank_key, value);
  return value;
}

static int nonflush_score_memo(ScoreMemo& memo, uint64_t rank_key, int wilds, int k, bool canadian, bool ace_low) {
  return nonflush_score_in(ScoreMemo::pick(memo, wilds, k, canadian, ace_low), rank_key, wilds, k, canadian, ace_low);
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
  if (wilds > 0) std::sort(all, all + m, [](int a, int b) { return a > b; });  // else in order already
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

// The value of suit s's flush or four-flush (score_tally's, for a suit that reaches the
// threshold): `suited` the natural ranks held of each suit, `natural` suit s's count of them.
// A Canadian four-flush of five or more cards adds the best natural card of the other suits.
static int suit_value(const int* suited, int s, int natural, int threshold, int wilds, int k, const EvalOptions& o) {
  int value = flush_score(suited[s], wilds, k, o.canadian, o.double_ace_flush);
  if (natural == threshold && o.canadian && k >= 5) {
    int fifth = 0;  // the best natural card of the other suits (rank index + 1), or none
    for (int u = 0; u < 4; ++u)
      if (u != s && suited[u]) fifth = std::max(fifth, 32 - __builtin_clz(suited[u]));
    value |= fifth;
  }
  return value;
}

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
      best = std::max(best, suit_value(t.suited, s, t.suit_natural[s], threshold, t.wilds, k, o));
    }
  }
  return best;
}

// A hand of natural cards only (no rank wild) as two words: `rank_key` as Tally's, and `suits`,
// the ranks held of suit s at bits 16 s .. 16 s + 12. Adding a card is two instructions, which is
// what the showdown simulations of games without wild cards do most (mean_share). An aggregate
// as Tally: `PlainHand h{}` is an empty hand, `PlainHand h;` unset.
struct PlainHand {
  uint64_t rank_key, suits;
  void add(int card) {
    rank_key += 1ull << (3 * (card >> 2));
    suits |= 1ull << (16 * (card & 3) + (card >> 2));
  }
};

// nonflush_score of exactly five natural cards (wilds 0, k 5) for one pair of options, by a
// table with no probing: the 6,175 rank multisets of five cards placed by hash and displacement
// (a bucket of the hash's top bits picks the displacement that sends its keys to free places),
// a value per place. 4 KB of displacements and 32 KB of values where ScoreMemo's table for the
// same keys is 128 KB: a heads-up Soko simulation scores two five-card hands a deal, and the
// probe that missed the cache was the largest part of scoring one. Built once, checked against
// nonflush_score key by key as it is built.
struct FiveCards {
  static constexpr int BUCKET_BITS = 11, PLACE_BITS = 13;
  uint64_t mul = 0;
  uint16_t shift[1 << BUCKET_BITS] = {};
  int32_t value[1 << PLACE_BITS] = {};

  int place(uint64_t rank_key) const {
    const uint64_t x = rank_key * mul;
    return (int)(((x >> 20) ^ shift[x >> (64 - BUCKET_BITS)]) & ((1u << PLACE_BITS) - 1));
  }
  int operator()(uint64_t rank_key) const { return value[place(rank_key)]; }

  FiveCards(bool canadian, bool ace_low) {
    std::vector<uint64_t> keys;
    std::vector<int> values;
    int counts[13] = {0};
    auto each = [&](auto&& self, int r, int left) -> void {  // every count vector summing to 5
      if (r == 13) {
        if (left) return;
        uint64_t key = 0;
        for (int q = 0; q < 13; ++q) key += (uint64_t)counts[q] << (3 * q);
        keys.push_back(key);
        values.push_back(nonflush_score(counts, 0, 5, canadian, ace_low));
        return;
      }
      for (int c = 0; c <= std::min(left, 4); ++c) {
        counts[r] = c;
        self(self, r + 1, left - c);
      }
      counts[r] = 0;
    };
    each(each, 0, 5);
    for (uint64_t m = 0x9E3779B97F4A7C15ull;; m += 2 * 0x632BE59BD9B4E019ull) {  // odd multipliers
      mul = m;
      if (build(keys, values)) return;
    }
  }

 private:
  bool build(const std::vector<uint64_t>& keys, const std::vector<int>& values) {
    const int buckets = 1 << BUCKET_BITS, places = 1 << PLACE_BITS;
    std::vector<std::vector<int>> in(buckets);
    for (size_t i = 0; i < keys.size(); ++i) in[(keys[i] * mul) >> (64 - BUCKET_BITS)].push_back((int)i);
    std::vector<int> order(buckets);
    for (int b = 0; b < buckets; ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return in[a].size() > in[b].size(); });
    std::vector<char> taken(places, 0);
    std::fill(shift, shift + buckets, 0);
    for (int b : order) {
      if (in[b].empty()) break;
      int d = 0;
      for (; d < places; ++d) {  // the first displacement that sends the bucket's keys to free places
        shift[b] = (uint16_t)d;
        bool fits = true;
        for (size_t i = 0; i < in[b].size() && fits; ++i) {
          const int at = place(keys[in[b][i]]);
          fits = !taken[at];
          for (size_t j = 0; j < i && fits; ++j) fits = at != place(keys[in[b][j]]);
        }
        if (fits) break;
      }
      if (d == places) return false;
      for (int i : in[b]) {
        const int at = place(keys[i]);
        taken[at] = 1;
        value[at] = values[i];
      }
    }
    for (size_t i = 0; i < keys.size(); ++i)
      if (value[place(keys[i])] != values[i]) return false;
    return true;
  }

 public:
  static const FiveCards& of(bool canadian, bool ace_low) {  // built on first use, then shared
    static const FiveCards tables[4] = {{false, false}, {false, true}, {true, false}, {true, true}};
    return tables[(canadian ? 2 : 0) + (ace_low ? 1 : 0)];
  }
};

// score_tally for hands of `cards` natural cards (no rank wild) under options o: the same
// values, from a PlainHand. The table for its rank counts picked once (the five-card one for
// five cards, else ScoreMemo's for k = min(cards, 5)), the flush test on the four suits' counts
// at once.
struct PlainScorer {
  int k;
  const FiveCards* five;       // cards == 5
  ScoreMemo::Table* memo;      // otherwise
  EvalOptions o;

  PlainScorer() = default;     // unset (arrays filled later)
  PlainScorer(int cards, const EvalOptions& opts, ScoreMemo& m)
      : k(std::min(cards, 5)),
        five(cards == 5 ? &FiveCards::of(opts.canadian, opts.ace_low_four_straight) : nullptr),
        memo(cards == 5 ? nullptr : &ScoreMemo::pick(m, 0, k, opts.canadian, opts.ace_low_four_straight)),
        o(opts) {}

  int operator()(const PlainHand& h) const {
    int best = five ? (*five)(h.rank_key) : nonflush_score_in(*memo, h.rank_key, 0, k, o.canadian, o.ace_low_four_straight);
    if (o.canadian ? k < 4 : k < 5) return best;
    const int threshold = o.canadian ? 4 : 5;
    uint64_t x = h.suits - ((h.suits >> 1) & 0x5555555555555555ull);  // each suit's count, in its 16 bits
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    x = (x + (x >> 8)) & 0x00FF00FF00FF00FFull;
    // bit 4 of a suit's 16 is set where its count (at most 13) is at least the threshold
    if (!((x + (uint64_t)(16 - threshold) * 0x0001000100010001ull) & 0x0010001000100010ull)) return best;
    int suited[4];
    for (int s = 0; s < 4; ++s) suited[s] = (int)(h.suits >> (16 * s) & 0x1FFF);
    for (int s = 0; s < 4; ++s) {
      const int count = (int)(x >> (16 * s) & 0xFF);
      if (count >= threshold) best = std::max(best, suit_value(suited, s, count, threshold, 0, k, o));
    }
    return best;
  }
};

static int evaluate(const int8_t* cards, int n, int wild_mask, const EvalOptions& o) {
  if (!wild_mask) {
    PlainHand h{};
    for (int i = 0; i < n; ++i) h.add(cards[i]);
    return PlainScorer(n, o, thread_memo())(h);
  }
  Tally t{};
  for (int i = 0; i < n; ++i) t.add(cards[i], wild_mask);
  return score_tally(t, o, thread_memo());
}

// The number of hand categories (the hand_class piece's size).
constexpr int CATEGORIES = FIVE_OF_A_KIND + 1;

}  // namespace stud
