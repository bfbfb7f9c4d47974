// Rules: the fields of envs.engine.rules.Rules, converted once by envs.batched.core_rules
// (which names every Rules field the core does not read; tests/test_core_contract.py).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "constants.h"
#include "engine/hands.h"

namespace stud {

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

}  // namespace stud
