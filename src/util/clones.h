// Function attributes for the hot loops of the core's networks (arena/lbr.h) and of the
// training's sparse first layer (util/sparse_rows.h): an AVX-512 and an AVX2 copy next to the
// plain one, picked at load time where GCC on x86-64 Linux can (all three compute the same floats:
// no fused multiply-add, since -ffp-contract is off, and the avx2 target has no FMA).
#pragma once

#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define STUD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define STUD_NO_TRAPS __attribute__((optimize("O3", "no-trapping-math")))
#else
#define STUD_CLONES
#define STUD_NO_TRAPS
#endif

// Eight floats as one value (GCC's vector extension: one AVX register in the avx2 and avx512f
// clones, two SSE ones in the plain copy; each lane's operations are the scalar ones, so the
// floats are the same in every copy), loaded and stored with memcpy: no alignment is assumed.
typedef float Float8 __attribute__((vector_size(32)));
#define STUD_LOAD8(v, p) std::memcpy(&(v), (p), sizeof(Float8))
