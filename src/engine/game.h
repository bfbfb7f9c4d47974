// One hand: a port of envs/engine/game.Game (same names, without the log). Held equal to it
// step by step by tests/test_core_differential.py (and bench/core_differential.py).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "constants.h"
#include "engine/hands.h"
#include "engine/rules.h"

namespace stud {

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

}  // namespace stud
