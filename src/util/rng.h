// Per-slot random decks: splitmix64 seeding a xoshiro256** stream, Fisher-Yates shuffle. The
// core's own stream, not NumPy's (envs/batched.py: replay a reference Game with reset(decks=)).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace stud {

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

}  // namespace stud
