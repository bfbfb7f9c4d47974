// N hands stepped together: the core of envs/batched.py's BatchedGame. Outputs go straight into
// arrays the owner gave (bindings.cpp binds NumPy arrays and keeps them alive); nothing here
// knows Python. Held equal to envs/engine/game.Game by tests/test_core_differential.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "constants.h"
#include "engine/equity.h"
#include "engine/game.h"
#include "engine/rules.h"
#include "observation.h"
#include "util/rng.h"
#include "util/workers.h"

namespace stud {

// An optional input array: data is nullptr when the caller gave none (Python's None).
template <typename T>
struct Input {
  const T* data = nullptr;
  std::ptrdiff_t size = 0;
};

struct Batch {
  CoreRules rules;
  int num_players, size;
  bool auto_reset = true;
  int threads = 1;
  std::shared_ptr<Workers> workers = std::make_shared<Workers>();  // the threads beyond the caller's
  std::vector<Hand> hands;
  std::vector<Rng> rngs;
  std::vector<int> stacks;  // (size, num_players): each hand's starting stacks
  // Outputs, bound once.
  int32_t* current_p = nullptr;
  int8_t* mask_p = nullptr;
  int32_t* pot_p = nullptr;
  int32_t* payoffs_p = nullptr;
  uint8_t* dones_p = nullptr;
  ObsLayout layout;
  float* obs_p = nullptr;
  // ---- observed seats ----
  // (size, num_players) bool, bound by bind_observed_seats(): a hand's observation row is
  // written only when its player to act is a listed seat of that hand (the others read no
  // observation: the training VecEnv's scripted and core opponents), else it is zeroed as
  // when nobody is to act. Unbound (nullptr): every seat, as before.
  uint8_t* observed_p = nullptr;
  std::vector<uint8_t> encoded;  // per hand: its row holds an observation (not zeros)
  // ---- end of observed seats ----
  std::vector<WinMemo> win_memo;  // (size, num_players): each seat's last win_probability
  int win_samples = WIN_SAMPLES, win_exact = WIN_EXACT;  // the win_probability feature's

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

  // The output arrays: current (N), mask (N, actions), pot (N), payoffs (N, players), dones (N).
  void bind(int32_t* current, int8_t* mask, int32_t* pot, int32_t* payoffs, uint8_t* dones) {
    current_p = current; mask_p = mask; pot_p = pot; payoffs_p = payoffs; dones_p = dones;
  }

  // The layout of the observations from its pieces as (name, start, size).
  ObsLayout make_layout(const std::vector<std::tuple<std::string, int, int>>& pieces, int size_,
                        int max_players, int rounds) const {
    if (max_players < num_players || rounds != rules.num_streets())
      throw std::invalid_argument("the layout is not for these rules");
    ObsLayout L = make_obs_layout(pieces, size_, max_players, rounds);
    L.win_samples = win_samples;
    L.win_exact = win_exact;
    return L;
  }

  // obs (N, L.size) float32 receives the observation of each hand's player to act (zeros when
  // nobody is).
  void bind_observations(float* obs, const ObsLayout& L) {
    obs_p = obs;
    layout = L;
    encoded.assign(size, 0);
    win_memo.assign((size_t)size * num_players, WinMemo());
    for (int i = 0; i < size; ++i) write(i);
  }

  // ---- observed seats ----
  // seats (N, players) bool/uint8: which seats' observations write() encodes (see observed_p).
  // Read in place at every write, so the owner may change it between steps;
  // set_observed_seats() changes it and brings the rows of the slots it changed up to date.
  void check_observations_bound() const {
    if (!layout.size) throw std::logic_error("bind_observations() first");
  }
  void bind_observed_seats(uint8_t* seats) {
    check_observations_bound();
    observed_p = seats;
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
  void refresh_observations(const int64_t* slots, std::ptrdiff_t count) {
    std::vector<int> stale;
    std::vector<char> listed(size, 0);
    for (std::ptrdiff_t j = 0; j < count; ++j) {
      int i = (int)slots[j];
      if (!listed[i] && wanted(i) != (bool)encoded[i]) stale.push_back(i);
      listed[i] = 1;
    }
    const int n = (int)stale.size();
    // From 4 hands a part (each encodes a first street's win_probability, microseconds; the
    // kept threads are still spinning in a training step: Workers), taken two at a time by the
    // next free thread (a later street's simulation costs far more).
    int parts = std::max(1, std::min(threads, n / 4));
    workers->run_chunks(parts, n, 2, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      for (std::ptrdiff_t j = begin; j < end; ++j) write(stale[j]);
    });
  }

  void check_observed_seats_bound() const {
    if (!observed_p) throw std::logic_error("bind_observed_seats() first");
  }

  // seats (count, players) bools become the observed seats of those slots, then their rows are
  // refreshed (one call: the training VecEnv sets them for every new hand).
  void set_observed_seats(const int64_t* s, std::ptrdiff_t count, const uint8_t* in) {
    check_observed_seats_bound();
    for (std::ptrdiff_t j = 0; j < count; ++j)
      if (s[j] < 0 || s[j] >= size)
        throw std::invalid_argument("observed seats: hand slots are 0 to " + std::to_string(size - 1) +
                                    ", not " + std::to_string(s[j]));
    for (std::ptrdiff_t j = 0; j < count; ++j)
      for (int p = 0; p < num_players; ++p)
        observed_p[(size_t)s[j] * num_players + p] = in[j * num_players + p] != 0;
    refresh_observations(s, count);
  }
  // ---- end of observed seats ----

  // The observation of `seat` in hand i into out[0:layout.size].
  void observe(int i, int seat, float* out) const {
    const Hand& h = hand(i);
    check_observations_bound();
    if (seat < 0 || seat >= h.n) throw std::out_of_range("no such seat");
    encode(h, seat, layout, out);
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

  // A new hand in every slot: each input may be absent (its data nullptr).
  void reset(Input<uint64_t> seeds, Input<int64_t> decks, Input<int64_t> buttons, Input<int64_t> stack_in) {
    std::vector<int> btn(size, 0);
    if (buttons.data) {
      if (buttons.size != size) throw std::invalid_argument("buttons: one per hand");
      for (int i = 0; i < size; ++i) {
        btn[i] = (int)buttons.data[i];
        if (btn[i] < 0 || btn[i] >= num_players) throw std::invalid_argument("button out of range");
      }
    }
    if (stack_in.data) {
      if (stack_in.size != (std::ptrdiff_t)size * num_players)
        throw std::invalid_argument("stacks: (N, players)");
      for (std::ptrdiff_t j = 0; j < stack_in.size; ++j) {
        if (stack_in.data[j] < 1) throw std::invalid_argument("stacks must be at least 1 chip");
        stacks[j] = (int)stack_in.data[j];
      }
    }
    if (seeds.data) {
      if (seeds.size != size) throw std::invalid_argument("seeds: one per hand");
      for (int i = 0; i < size; ++i) rngs[i].seed(seeds.data[i]);
    }
    if (decks.data) {
      const int k = rules.deck_size();
      if (decks.size != (std::ptrdiff_t)size * k)
        throw std::invalid_argument("decks: (N, deck size) card indices, each deck a permutation of the deck");
      uint64_t in_deck = 0;
      for (int j = 0; j < 52; ++j)
        if (rules.deck.empty() || std::find(rules.deck.begin(), rules.deck.end(), j) != rules.deck.end())
          in_deck |= 1ull << j;
      for (int i = 0; i < size; ++i) {
        int8_t deck[52];
        uint64_t seen = 0;
        for (int j = 0; j < k; ++j) {
          int64_t c = decks.data[(size_t)i * k + j];
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

  void check_bound() const {
    if (!dones_p) throw std::logic_error("bind() the output arrays first");
  }

  // One action per hand (a negative id leaves that hand as it is). A finished hand writes its
  // payoffs and done, and with auto_reset a new hand is dealt into its slot at once. The first
  // hand given an illegal action, or -1 (that hand is left as it was; the others moved on).
  int step(const int64_t* a) {
    check_bound();
    // The hands are independent (each slot has its own generator): split them over the
    // threads, each writing its rows, in pieces of 16 taken by the next free thread (a hand
    // that ends deals and encodes a new one; a later street's observation simulates).
    int parts = std::max(1, std::min(threads, size / 64));
    constexpr int CHUNK = 16;
    std::vector<int> bads((size + CHUNK - 1) / CHUNK, -1);
    workers->run_chunks(parts, size, CHUNK, [&](std::ptrdiff_t begin, std::ptrdiff_t end) {
      bads[begin / CHUNK] = step_range(a, (int)begin, (int)end);
    });
    for (int b : bads)
      if (b >= 0) return b;
    return -1;
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
};

// ---- learner statistics ----
// What kind of action each id would be for the player to act, before it is played (the
// events of envs/engine/game.py, in the order of envs.engine.events.ACTION_KINDS: 0 fold,
// 1 check, 2 call, 3 bring_in, 4 complete, 5 bet, 6 raise; -1 for a negative id), and the
// street it is played on: for the training VecEnv's statistics (VPIP, aggression), which the
// core keeps no log for. One action per hand of b; kinds and streets hold b.size each.
static const char* const ACTION_KIND_NAMES[] = {"fold", "check", "call", "bring_in", "complete", "bet",
                                                "raise"};

static void action_kinds(const Batch& b, const int64_t* a, int8_t* k, int8_t* st) {
  for (int i = 0; i < b.size; ++i) {
    const Hand& h = b.hands[i];
    st[i] = (int8_t)h.street;
    if (a[i] < 0 || h.current < 0) { k[i] = -1; continue; }
    if (a[i] == FOLD) k[i] = 0;
    else if (a[i] == CHECK_CALL) k[i] = h.bring_in_due ? 3 : (h.level > h.committed[h.current] ? 2 : 1);
    else k[i] = (h.bring_in_due || (h.full_level == 0 && h.level > 0)) ? 4 : (h.level == 0 ? 5 : 6);
  }
}

}  // namespace stud
