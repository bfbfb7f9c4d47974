// NumPy's np.random.default_rng(seed) for a seed below 2**64, to the bit: SeedSequence(seed)'s
// entropy pool (four 32-bit words, O'Neill's seed_seq hashing, as numpy/random/bit_generator.pyx
// mixes and generates it), its first four 64-bit words seeding PCG64 (XSL-RR 128/64, the
// default multiplier), and Generator.random()'s doubles (the top 53 bits of each output). The
// local best response's roll-out draws come from each hand's generator seeded this way
// (arena/lbr.py's BatchedLBR): drawn here, in the core's threads, they are the numbers
// Python's generator would give (tests/test_numpy_rng.py compares them with NumPy's).
#pragma once

#include <cstdint>

namespace stud {

struct NumpyRandom {
  unsigned __int128 state = 0, inc = 0;

  NumpyRandom() = default;
  explicit NumpyRandom(uint64_t seed) {
    // SeedSequence(seed): the seed's 32-bit words, lowest first (one word for a seed below 2**32).
    uint32_t entropy[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const int words = seed >> 32 ? 2 : 1;
    uint32_t hash_a = 0x43b0d7e5u;
    auto hashmix = [&hash_a](uint32_t value) {
      value ^= hash_a;
      hash_a *= 0x931e8875u;
      value *= hash_a;
      value ^= value >> 16;
      return value;
    };
    auto mix = [](uint32_t x, uint32_t y) {
      uint32_t result = 0xca01f9ddu * x - 0x4973f715u * y;
      result ^= result >> 16;
      return result;
    };
    uint32_t pool[4];
    for (int i = 0; i < 4; ++i) pool[i] = hashmix(i < words ? entropy[i] : 0u);
    for (int src = 0; src < 4; ++src)
      for (int dst = 0; dst < 4; ++dst)
        if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    // generate_state(4, uint64): eight 32-bit words, paired low word first.
    uint32_t hash_b = 0x8b51f9ddu;
    uint64_t seeds[4];
    for (int i = 0; i < 4; ++i) {
      uint64_t pair = 0;
      for (int half = 0; half < 2; ++half) {
        uint32_t value = pool[(2 * i + half) % 4];
        value ^= hash_b;
        hash_b *= 0x58f38dedu;
        value *= hash_b;
        value ^= value >> 16;
        pair |= (uint64_t)value << (32 * half);
      }
      seeds[i] = pair;
    }
    // PCG64's seeding (pcg_setseq_128_srandom_r): state from words 0-1, stream from words 2-3.
    const unsigned __int128 initstate = ((unsigned __int128)seeds[0] << 64) | seeds[1];
    const unsigned __int128 initseq = ((unsigned __int128)seeds[2] << 64) | seeds[3];
    state = 0;
    inc = (initseq << 1) | 1u;
    step();
    state += initstate;
    step();
  }

  void step() {
    const unsigned __int128 mult = ((unsigned __int128)2549297995355413924ull << 64) | 4865540595714422341ull;
    state = state * mult + inc;
  }

  uint64_t next64() {
    step();
    const uint64_t x = (uint64_t)(state >> 64) ^ (uint64_t)state;
    const unsigned r = (unsigned)(state >> 122);
    return (x >> r) | (x << ((64 - r) & 63));
  }

  double next_double() { return (double)(next64() >> 11) * (1.0 / 9007199254740992.0); }
};

}  // namespace stud
