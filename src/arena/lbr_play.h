// Local best response playing many hand slots of one Batch at once: arena/lbr.py's BatchedLBR,
// its bookkeeping and decisions here rather than in Python (a training run's local best response
// decides for a hundred slots a step). The same floats as the Python reference LBRAgent: the
// range updates are the same products, every sum is added first to last as arena/lbr.py's
// _total adds, the target's policies and the roll-outs' shares are the core's (arena/lbr.h),
// and the roll-outs' random draws are each hand's own NumPy generator's (drawn here, by
// util/numpy_rng.h, for a hand seeded with an integer below 2**64; by Python otherwise), so the
// decisions are LBRAgent's for the same hand and seed (tests/test_lbr_core.py).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "arena/lbr.h"
#include "batched.h"
#include "constants.h"
#include "util/numpy_rng.h"

namespace stud {

// t.policies for q spots (hand slots[i] of b after actions[i] when >= 0, the target at
// seats[i], counts[i] candidate cards from cards[starts[i]]), rows into out + starts[i] *
// num_actions, whether the target is to act into to_act[i]; spread over b's threads. The spots
// of one slot share its win cache, so they stay together on one thread, in order; each slot's
// group is taken by the next free thread (a cached street costs a hundredth of a simulation for
// every card, and a fixed split left one thread waiting for the other). The values do not
// depend on the split (win_probability is seeded by the spot).
static void policies_many(LbrTarget& t, const Batch& b, const int64_t* slots, const int64_t* seats,
                          const int64_t* actions, const int64_t* cards, const int64_t* starts,
                          const int64_t* counts, std::ptrdiff_t q, double* out, bool* to_act) {
  b.workers->settle();  // a launched job (LbrPlayer::ahead) may be using t
  if (q <= 0) return;
  int64_t most = 0;
  for (std::ptrdiff_t i = 0; i < q; ++i) most = std::max(most, slots[i] + 1);
  if ((int64_t)t.cache.size() < most) t.cache.resize(most);  // before any thread touches it
  if (t.win_at >= 0) t.set_context(*b.hands[slots[0]].r);
  std::vector<std::vector<std::ptrdiff_t>> groups;
  std::vector<int> group_of(most, -1);  // by slot
  for (std::ptrdiff_t i = 0; i < q; ++i) {
    int& g = group_of[slots[i]];
    if (g < 0) {
      g = (int)groups.size();
      groups.emplace_back();
    }
    groups[g].push_back(i);
  }
  const int parts = (int)std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(b.threads, q));
  b.workers->run_chunks(parts, (std::ptrdiff_t)groups.size(), 1, [&](std::ptrdiff_t g, std::ptrdiff_t) {
    for (std::ptrdiff_t i : groups[g])
      to_act[i] = t.policies(b.hands[slots[i]], (int)slots[i], (int)seats[i], (int)actions[i], cards + starts[i],
                             (int)counts[i], out + starts[i] * t.num_actions);
  });
}

// x[0] + x[1] + ... added in that order (arena/lbr.py's _total).
static double sum_in_order(const std::vector<double>& x) {
  double s = 0.0;
  for (double v : x) s += v;
  return s;
}

// observe()'s rows computed ahead (LbrPlayer::ahead): the spots of one env step's end, each
// hand copied, their rows filled by whichever of the launched job's two threads takes them.
static_assert(std::is_trivially_copyable_v<Hand>, "AheadJob compares hands byte for byte");

struct AheadJob {
  pid_t owner = 0;                     // the process that launched it (a forked child's copy is not run)
  std::vector<int> slots;              // a spot per slot: the target, its hand's player to act, in slots[i]
  std::vector<Hand> hands;             // each slot's hand then, byte for byte
  std::vector<int64_t> cards, starts, counts;  // the cards the local best response cannot see there
  std::vector<double> rows;            // (cards, num_actions)
  std::vector<char> done;              // rows filled (read once the job is settled)
  std::unique_ptr<std::atomic<char>[]> wanted;  // cleared by observe() for the spots it will not read
  std::atomic<std::ptrdiff_t> next{0};
  std::vector<int> spot_of;            // by slot: its spot, or -1
};

// The launched job of an LbrPlayer and the Workers running it: settled (finished) before the
// player reads the rows or goes away. The Workers is shared with its Batch and held weakly: a
// Workers that went first settled the job itself.
struct Ahead {
  std::shared_ptr<AheadJob> job;
  std::weak_ptr<Workers> workers;

  Ahead() = default;
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;
  Ahead(Ahead&& o) noexcept : job(std::move(o.job)), workers(std::move(o.workers)) {}  // (pybind's factory)
  Ahead& operator=(Ahead&&) = delete;
  ~Ahead() {
    try { settle(); } catch (...) {}
  }

  // The job done, its rows kept for settle() to hand over.
  void finish() {
    if (!job) return;
    if (auto w = workers.lock()) w->settle();  // (it settles a later job too: no matter)
    workers.reset();
  }

  // The job done and handed over (nullptr: there was none, or it is a forked child's copy of
  // the parent's).
  std::shared_ptr<AheadJob> settle() {
    finish();
    std::shared_ptr<AheadJob> j = std::move(job);
    job = nullptr;
    return j && j->owner == getpid() ? j : nullptr;
  }
};

struct LbrPlayer {
  LbrTarget* target;           // the target's policy over the range (owned by the Python side)
  int samples;                 // roll-outs a decision before the last street
  int cards_per_player;
  EvalOptions opts;
  bool in_deck[52] = {};

  struct Pending {             // one target action's likelihood for each card unseen then
    std::vector<int> cards;    // ascending
    std::vector<double> likelihood;
  };
  struct State {               // one hand's (a slot's): LBRAgent's per-hand state
    bool active = false;
    int seat = 0;              // the local best response's seat
    bool has_range = false;
    double range[52] = {};
    std::vector<Pending> pending;  // kept until its next decision
    bool has_eq = false;
    std::vector<int> eq_key;   // the cards seen when eq was computed
    double eq[52] = {};        // its showdown share against each unseen card
    // (candidates, policy rows) of the spot after the bet or raise it just made: the spot the
    // target acts in next, whose likelihood observe() reads from these
    bool has_after = false;
    std::vector<int> after_cards;
    std::vector<double> after_rows;
    // The roll-outs' generator: NumPy's default_rng(seed), made at the first draw as BatchedLBR
    // makes it (a seed given after that changes nothing); a hand whose draws the caller made
    // once (no seed here then) keeps taking them from the caller.
    bool has_seed = false;
    uint64_t seed = 0;
    bool drawing = false;      // rng made
    bool caller_draws = false;
    NumpyRandom rng;
  };
  std::vector<State> states;   // by slot
  int64_t asked = 0;           // spots observe() asked the target's policy for (the tests read it)
  int64_t asked_ahead = 0;     // those of them whose rows ahead() had computed

  // Between prepare() and decide(): each slot deciding, and the actions so far.
  struct Decision {
    std::ptrdiff_t row;
    int slot, seat;
    std::vector<int> legal;    // its legal action ids, ascending
    int pot, to_call, committed;
    std::vector<int> sizes;    // the raise-to totals of ids FIRST_BET, ...
    std::vector<int> candidates;
    std::vector<double> w;     // their normalised weights
    bool stale = false;        // its equities are computed again (the cards seen changed)
    std::vector<int> mine, their_up, unseen;
    int k = 0, mine_n = 0;
    bool draws = false;        // its deals come from uniform draws (else every ordered deal)
    bool own_draws = false;    // drawn here from the hand's generator (else given to decide())
  };
  std::vector<Decision> deciding;
  std::vector<int64_t> out;
  Ahead ahead_;                // observe()'s rows being computed ahead (ahead())

  LbrPlayer(LbrTarget* t, const std::vector<int>& deck, int samples_, int cards_per_player_, EvalOptions o)
      : target(t), samples(samples_), cards_per_player(cards_per_player_), opts(o) {
    if (samples < 1) throw std::invalid_argument("LbrPlayer: samples >= 1");
    for (int c : deck) {
      if (c < 0 || c > 51) throw std::invalid_argument("LbrPlayer: card ids are 0..51");
      in_deck[c] = true;
    }
  }

  State& state(int slot) {
    if (slot < 0) throw std::out_of_range("LbrPlayer: no such slot");
    if ((size_t)slot >= states.size()) states.resize((size_t)slot + 1);
    return states[slot];
  }

  void start(int slot, int seat) {
    State& s = state(slot);
    s = State();
    s.active = true;
    s.seat = seat;
  }

  void forget(int slot) {
    if (slot >= 0 && (size_t)slot < states.size()) states[slot] = State();
  }

  // The seed of the hand in `slot`'s generator (BatchedLBR.seed; none: the caller draws).
  void seed(int slot, bool has_seed, uint64_t value) {
    State& s = state(slot);
    if (s.drawing) return;
    s.has_seed = has_seed;
    s.seed = value;
  }

  // The cards `seat` sees in h (its face-down cards, then every seat's face-up cards, as
  // LBRAgent lists them) and the deck's cards it does not, ascending.
  void cards_of(const Hand& h, int seat, std::vector<int>& seen, std::vector<int>& unseen) const {
    seen.assign(h.hole[seat], h.hole[seat] + h.nhole[seat]);
    for (int q = 0; q < h.n; ++q) seen.insert(seen.end(), h.up[q], h.up[q] + h.nup[q]);
    bool is_seen[52] = {};
    for (int c : seen) is_seen[c] = true;
    unseen.clear();
    for (int c = 0; c < 52; ++c)
      if (in_deck[c] && !is_seen[c]) unseen.push_back(c);
  }

  // Start computing, on b's second thread, the rows observe() will want next: the target's
  // policy at every spot of b where the target is to act in a hand of this player's (the
  // training env calls it at the end of each step, when the learner, the target, is to act in
  // every slot). The caller goes on (Python picks the learner's actions meanwhile) and the next
  // observe() reads the rows of each hand still in that spot, byte for byte: the same rows, as
  // each row is computed on its own, so the same floats. Spots the bet or raise just made
  // already answered (has_after) are left out. Nothing without a second thread (b.threads 1).
  // Until settled, the job reads its copies of the hands, this player's target (its weights and
  // each of these slots' win cache, which nothing else touches meanwhile: every call that uses
  // the target or b's threads settles it first) and nothing of b.
  void ahead(const Batch& b) {
    ahead_.settle();
    if (b.threads < 2) return;
    auto j = std::make_shared<AheadJob>();
    std::vector<int> seen, unseen;
    const int stop = (int)std::min<size_t>(states.size(), (size_t)b.size);
    j->hands.reserve(stop);  // (never moved: each is its hand's bytes, padding too)
    for (int slot = 0; slot < stop; ++slot) {
      const State& s = states[slot];
      if (!s.active) continue;
      const Hand& h = b.hand(slot);
      if (h.over || h.n != 2 || h.current != 1 - s.seat || h.nhole[h.current] != 1) continue;
      cards_of(h, s.seat, seen, unseen);
      if (s.has_after && s.after_cards == unseen) continue;
      j->slots.push_back(slot);
      std::memcpy(&j->hands.emplace_back(), &h, sizeof(Hand));
      j->starts.push_back((int64_t)j->cards.size());
      j->counts.push_back((int64_t)unseen.size());
      j->cards.insert(j->cards.end(), unseen.begin(), unseen.end());
    }
    const std::ptrdiff_t q = (std::ptrdiff_t)j->slots.size();
    if (!q) return;
    j->owner = getpid();
    j->rows.resize(j->cards.size() * target->num_actions);
    j->done.assign(q, 0);
    j->wanted.reset(new std::atomic<char>[q]);
    for (std::ptrdiff_t i = 0; i < q; ++i) j->wanted[i].store(1, std::memory_order_relaxed);
    j->spot_of.assign(stop, -1);
    for (std::ptrdiff_t i = 0; i < q; ++i) j->spot_of[j->slots[i]] = (int)i;
    LbrTarget& t = *target;
    b.workers->settle();  // another job on these threads (the target below is this player's alone)
    if ((int)t.cache.size() < stop) t.cache.resize(stop);  // before either thread touches it
    if (t.win_at >= 0) t.set_context(*j->hands[0].r);
    b.workers->launch([j, &t](int) {
      AheadJob& a = *j;
      const std::ptrdiff_t count = (std::ptrdiff_t)a.slots.size();
      for (std::ptrdiff_t i; (i = a.next.fetch_add(1, std::memory_order_relaxed)) < count;) {
        if (!a.wanted[i].load(std::memory_order_relaxed)) continue;
        a.done[i] = t.policies(a.hands[i], a.slots[i], a.hands[i].current, -1, a.cards.data() + a.starts[i],
                               (int)a.counts[i], a.rows.data() + a.starts[i] * t.num_actions);
      }
    });
    ahead_.job = std::move(j);
    ahead_.workers = b.workers;
  }

  // The rows being computed ahead, finished here (kept for observe()): before the caller gives
  // the second core to other work (the training's gradient updates).
  void finish_ahead() { ahead_.finish(); }

  // The targets at seats[i] are about to play actions[i] in slots[i]: keep each action's
  // likelihood for every card the local best response cannot see (BatchedLBR.observe). Spots
  // whose rows ahead() computed (the hand unchanged since, byte for byte) are read from there.
  void observe(const Batch& b, const int64_t* slots, const int64_t* seats, const int64_t* actions,
               std::ptrdiff_t n) {
    struct Ask {               // a spot whose rows are wanted: the target at seat, action its action
      int slot, seat, action;
      std::vector<int> cards;  // what the local best response cannot see there
    };
    std::vector<Ask> asks;
    std::vector<int> seen, unseen;
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const int slot = (int)slots[i], seat = (int)seats[i], action = (int)actions[i];
      State& s = state(slot);
      if (!s.active) throw std::invalid_argument("LbrPlayer.observe: no hand of this agent in slot " +
                                                 std::to_string(slot));
      const bool kept = s.has_after;
      s.has_after = false;
      if (action == FOLD) continue;
      const Hand& h = b.hand(slot);
      cards_of(h, 1 - seat, seen, unseen);
      if (kept && s.after_cards == unseen) {
        Pending p{unseen, std::vector<double>(unseen.size())};
        for (size_t j = 0; j < unseen.size(); ++j) p.likelihood[j] = s.after_rows[j * target->num_actions + action];
        s.pending.push_back(std::move(p));
        continue;
      }
      Hand after = h;  // an action that ends the hand: its likelihood would never be read
      if (!after.apply(action)) throw std::invalid_argument("LbrPlayer.observe: the action is not legal there");
      if (after.over) continue;
      asks.push_back({slot, seat, action, unseen});
    }
    const int A = target->num_actions;
    auto keep = [&](Ask& a, const double* rows) {  // rows: a's (cards, A)
      Pending p{std::move(a.cards), {}};
      p.likelihood.resize(p.cards.size());
      for (size_t c = 0; c < p.cards.size(); ++c) p.likelihood[c] = rows[c * A + a.action];
      states[a.slot].pending.push_back(std::move(p));
    };
    if (ahead_.job) {  // the job skips the spots not asked for from here on; the rest is taken here
      AheadJob& job = *ahead_.job;
      std::vector<char> want(job.hands.size(), 0);
      for (const Ask& a : asks)
        if ((size_t)a.slot < job.spot_of.size() && job.spot_of[a.slot] >= 0) want[job.spot_of[a.slot]] = 1;
      for (size_t k = 0; k < want.size(); ++k)
        if (!want[k]) job.wanted[k].store(0, std::memory_order_relaxed);
      if (const std::shared_ptr<AheadJob> j = ahead_.settle()) {
        std::vector<Ask> rest;
        for (Ask& a : asks) {
          const int k = (size_t)a.slot < j->spot_of.size() ? j->spot_of[a.slot] : -1;
          if (k >= 0 && j->done[k] && j->hands[k].current == a.seat &&
              std::memcmp(&j->hands[k], &b.hand(a.slot), sizeof(Hand)) == 0) {
            ++asked;
            ++asked_ahead;
            keep(a, j->rows.data() + j->starts[k] * A);  // (its cards are the ones listed there)
          } else {
            rest.push_back(std::move(a));
          }
        }
        asks = std::move(rest);
      }
    }
    const std::ptrdiff_t q = (std::ptrdiff_t)asks.size();
    if (!q) return;
    asked += q;
    std::vector<int64_t> ask_slots, ask_seats, ask_cards, ask_starts, ask_counts, none(q, -1);
    for (const Ask& a : asks) {
      ask_slots.push_back(a.slot);
      ask_seats.push_back(a.seat);
      ask_starts.push_back((int64_t)ask_cards.size());
      ask_counts.push_back((int64_t)a.cards.size());
      ask_cards.insert(ask_cards.end(), a.cards.begin(), a.cards.end());
    }
    std::vector<double> rows(ask_cards.size() * A);
    std::vector<char> to_act(q);
    policies_many(*target, b, ask_slots.data(), ask_seats.data(), none.data(), ask_cards.data(), ask_starts.data(),
                  ask_counts.data(), q, rows.data(), (bool*)to_act.data());
    for (std::ptrdiff_t i = 0; i < q; ++i) {
      if (!to_act[i]) throw std::logic_error("LbrPlayer.observe: the target is not to act there");
      keep(asks[i], rows.data() + ask_starts[i] * A);
    }
  }

  // The first half of a decision for every slot (the local best response at seats[i] of
  // slots[i], masks[i] its legal ids): the actions of slots with one legal id, and for the
  // others the range brought up to date, the candidates and their weights. The slots whose
  // equities need uniform draws from a generator that is not here (no seed given) are listed in
  // `draw_rows` (their pool sizes in `draw_sizes`): the caller draws them from each hand's
  // generator for decide(); the others are drawn in decide(). `restarted`: the rows whose
  // hand began under another seat (a new state, as BatchedLBR makes a new _Hand).
  void prepare(const Batch& b, const int64_t* slots, const int64_t* seats, const uint8_t* masks, int width,
               std::ptrdiff_t n, std::vector<int64_t>& draw_rows, std::vector<int64_t>& draw_sizes,
               std::vector<int64_t>& restarted) {
    deciding.clear();
    out.assign(n, -1);
    {  // one decision a hand: decide() works on each slot's state from one thread
      std::vector<int64_t> sorted(slots, slots + n);
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw std::invalid_argument("LbrPlayer.act: a slot listed twice");
    }
    std::vector<int> seen;
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const uint8_t* m = masks + i * width;
      Decision d;
      for (int a = 0; a < width; ++a)
        if (m[a]) d.legal.push_back(a);
      if (d.legal.empty()) throw std::invalid_argument("LbrPlayer.act: a slot with no legal action");
      if (d.legal.size() == 1) {
        out[i] = d.legal[0];  // the range catches up at the next decision
        continue;
      }
      d.row = i;
      d.slot = (int)slots[i];
      d.seat = (int)seats[i];
      const Hand& h = b.hand(d.slot);
      if (d.seat < 0 || d.seat >= h.n) throw std::out_of_range("LbrPlayer.act: no such seat");
      State& s = state(d.slot);
      if (!s.active || s.seat != d.seat) {  // a hand begun under another pool: its range from here on
        start(d.slot, d.seat);
        restarted.push_back(i);
      }
      cards_of(h, d.seat, seen, d.unseen);
      if (!s.has_range) {
        for (int c = 0; c < 52; ++c) s.range[c] = in_deck[c] ? 1.0 : 0.0;
        for (int j = 0; j < h.nhole[d.seat]; ++j) s.range[h.hole[d.seat][j]] = 0.0;
        s.has_range = true;
      }
      for (int c : seen) s.range[c] = 0.0;
      for (const Pending& p : s.pending) {  // Bayes, in order (arena/lbr.py's _bayes)
        double posterior[52];
        std::copy(s.range, s.range + 52, posterior);
        bool any = false, candidates = false;
        size_t at = 0;
        for (int c = 0; c < 52; ++c) {
          if (!(s.range[c] > 0)) continue;
          candidates = true;
          while (at < p.cards.size() && p.cards[at] < c) ++at;  // the candidates are among its cards
          if (at == p.cards.size() || p.cards[at] != c)
            throw std::logic_error("LbrPlayer: a candidate card missing from a kept likelihood");
          posterior[c] *= p.likelihood[at];
          any = any || posterior[c] > 0;
        }
        if (candidates && any) std::copy(posterior, posterior + 52, s.range);
      }
      s.pending.clear();
      double weights[52];  // arena/lbr.py's _weights
      std::copy(s.range, s.range + 52, weights);
      for (int c : seen) weights[c] = 0.0;
      if (std::none_of(weights, weights + 52, [](double x) { return x > 0; })) {  // nothing explains its play
        for (int c = 0; c < 52; ++c) weights[c] = in_deck[c] ? 1.0 : 0.0;
        for (int c : seen) weights[c] = 0.0;
      }
      std::vector<double> picked;
      for (int c = 0; c < 52; ++c)
        if (weights[c] > 0) {
          d.candidates.push_back(c);
          picked.push_back(weights[c]);
        }
      const double total = sum_in_order(picked);
      d.w.resize(picked.size());
      for (size_t j = 0; j < picked.size(); ++j) d.w[j] = picked[j] / total;
      if (!s.has_eq || s.eq_key != seen) {
        s.has_eq = true;
        s.eq_key = seen;
        d.stale = true;
        d.mine.assign(h.hole[d.seat], h.hole[d.seat] + h.nhole[d.seat]);
        d.mine.insert(d.mine.end(), h.up[d.seat], h.up[d.seat] + h.nup[d.seat]);
        d.their_up.assign(h.up[1 - d.seat], h.up[1 - d.seat] + h.nup[1 - d.seat]);
        d.mine_n = cards_per_player - (int)d.mine.size();
        d.k = 2 * cards_per_player - 1 - (int)d.mine.size() - (int)d.their_up.size();
        if (d.k < 0 || d.k > (int)d.unseen.size()) throw std::logic_error("LbrPlayer: more cards to come than unseen");
        int64_t perm = 1;  // math.perm(len(unseen), k) <= samples: every ordered deal
        for (int j = 0; j < d.k && perm <= samples; ++j) perm *= (int64_t)d.unseen.size() - j;
        d.draws = perm > samples;
        if (d.draws && !s.caller_draws && (s.drawing || s.has_seed)) {
          d.own_draws = true;
        } else if (d.draws) {
          s.caller_draws = true;
          draw_rows.push_back(i);
          draw_sizes.push_back((int64_t)d.unseen.size());
        }
      }
      d.pot = h.pot();
      d.to_call = h.current == d.seat ? h.to_call() : 0;
      d.committed = h.committed[d.seat];
      d.sizes.assign(h.sizes, h.sizes + h.nsizes);
      deciding.push_back(std::move(d));
    }
  }

  // Every ordered deal of k cards of pool (itertools.permutations' order), rows x k.
  static std::vector<int64_t> every_deal(const std::vector<int>& pool, int k) {
    std::vector<int64_t> rows;
    std::vector<int> row(std::max(k, 1));
    for_each_ordered_deal(pool.data(), (int)pool.size(), k, row.data(),
                          [&](const int* deal) { rows.insert(rows.end(), deal, deal + k); });
    return rows;
  }

  // The second half: the equities of the stale slots (draws[j], samples x pool size, for the
  // j-th of prepare's draw_rows; the other draws from each hand's generator), the target's
  // policy after every bet or raise of every deciding slot, each action's value and the best;
  // the action of every slot.
  const std::vector<int64_t>& decide(const Batch& b, const std::vector<const double*>& draws) {
    std::vector<Decision*> stale;
    size_t drawn = 0;
    std::vector<const double*> u;
    for (Decision& d : deciding)
      if (d.stale) {
        stale.push_back(&d);
        u.push_back(d.draws && !d.own_draws ? draws.at(drawn++) : nullptr);
      }
    if (drawn != draws.size()) throw std::invalid_argument("LbrPlayer.decide: one draw array per listed slot");
    // The roll-outs (arena/lbr.py's _equities), each hand taken by the next free thread.
    const int parts = (int)std::max<size_t>(1, std::min<size_t>((size_t)b.threads, stale.size()));
    b.workers->run_chunks(parts, (std::ptrdiff_t)stale.size(), 1, [&](std::ptrdiff_t j, std::ptrdiff_t) {
      Decision& d = *stale[j];
      std::vector<int64_t> future;
      std::ptrdiff_t rows;
      if (d.draws) {
        const double* uniform = u[j];
        std::vector<double> own;
        if (d.own_draws) {  // Generator.random((samples, pool size)), row by row
          State& s = states[d.slot];
          if (!s.drawing) {
            s.rng = NumpyRandom(s.seed);
            s.drawing = true;
          }
          own.resize((size_t)samples * d.unseen.size());
          for (double& x : own) x = s.rng.next_double();
          uniform = own.data();
        }
        std::vector<int64_t> picked((size_t)samples * d.k);
        smallest_k(uniform, samples, (std::ptrdiff_t)d.unseen.size(), d.k, picked.data());
        future.resize(picked.size());
        for (size_t x = 0; x < picked.size(); ++x) future[x] = d.unseen[picked[x]];
        rows = samples;
      } else {
        future = every_deal(d.unseen, d.k);
        rows = d.k ? (std::ptrdiff_t)(future.size() / d.k) : 1;
      }
      const std::vector<double> shares = showdown_shares(d.mine, d.their_up, d.unseen, future.data(), rows, d.k,
                                                         d.mine_n, 0, opts);  // no wild cards (check_rules)
      State& s = states[d.slot];
      std::fill(s.eq, s.eq + 52, 0.0);
      for (size_t x = 0; x < d.unseen.size(); ++x) s.eq[d.unseen[x]] = shares[x];
    });
    // The spots after every bet or raise of every deciding slot, in one call.
    std::vector<int64_t> q_slots, q_seats, q_actions, q_cards, q_starts, q_counts;
    for (const Decision& d : deciding)
      for (int a : d.legal) {
        if (a < FIRST_BET) continue;
        q_slots.push_back(d.slot);
        q_seats.push_back(1 - d.seat);
        q_actions.push_back(a);
        q_starts.push_back((int64_t)q_cards.size());
        q_counts.push_back((int64_t)d.candidates.size());
        q_cards.insert(q_cards.end(), d.candidates.begin(), d.candidates.end());
      }
    const int A = target->num_actions;
    const std::ptrdiff_t q = (std::ptrdiff_t)q_slots.size();
    std::vector<double> rows(q_cards.size() * A);
    std::vector<char> to_act(q);
    policies_many(*target, b, q_slots.data(), q_seats.data(), q_actions.data(), q_cards.data(), q_starts.data(),
                  q_counts.data(), q, rows.data(), (bool*)to_act.data());
    size_t at = 0;  // the next query
    for (const Decision& d : deciding) {
      State& s = states[d.slot];
      const size_t nc = d.candidates.size();
      std::vector<double> eq(nc), prod(nc), fold(nc), stay(nc);
      for (size_t j = 0; j < nc; ++j) eq[j] = s.eq[d.candidates[j]];
      for (size_t j = 0; j < nc; ++j) prod[j] = d.w[j] * eq[j];
      const double wp = sum_in_order(prod);
      int best = -1;
      double best_value = 0.0;
      int64_t best_query = -1;
      for (int a : d.legal) {
        double value;
        int64_t query = -1;
        if (a == FOLD) value = 0.0;
        else if (a == CHECK_CALL) value = wp * d.pot - (1 - wp) * d.to_call;
        else {
          query = (int64_t)at++;
          const int put = d.sizes.at(a - FIRST_BET) - d.committed;
          const int extra = put - d.to_call;
          for (size_t j = 0; j < nc; ++j) fold[j] = to_act[query] ? rows[(q_starts[query] + j) * A + FOLD] : 0.0;
          for (size_t j = 0; j < nc; ++j) prod[j] = d.w[j] * fold[j];
          const double fp = sum_in_order(prod);
          for (size_t j = 0; j < nc; ++j) stay[j] = d.w[j] * (1 - fold[j]);
          const double kept = sum_in_order(stay);
          for (size_t j = 0; j < nc; ++j) prod[j] = stay[j] * eq[j];
          const double wp_called = kept > 0 ? sum_in_order(prod) / kept : wp;
          value = fp * d.pot + (1 - fp) * (wp_called * (d.pot + extra) - (1 - wp_called) * put);
        }
        if (best < 0 || value > best_value) {  // ties: the lowest id
          best = a;
          best_value = value;
          best_query = query;
        }
      }
      out[d.row] = best;
      s.has_after = best_query >= 0 && to_act[best_query];
      if (s.has_after) {
        s.after_cards = d.candidates;
        s.after_rows.assign(rows.begin() + q_starts[best_query] * A, rows.begin() + (q_starts[best_query] + nc) * A);
      } else {
        s.after_cards.clear();
        s.after_rows.clear();
      }
    }
    deciding.clear();
    return out;
  }
};

}  // namespace stud
