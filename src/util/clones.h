// Function attributes for the hot loops of the core's networks (arena/lbr.h) and of the
// training's sparse first layer (util/sparse_rows.h): an AVX-512 and an AVX2 copy next to the
// plain one, picked at load time where GCC on x86-64 Linux can (all three compute the same floats:
// no fused multiply-add, since -ffp-contract is off, and the avx2 target has no FMA).
#pragma once

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define STUD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define STUD_NO_TRAPS __attribute__((optimize("O3", "no-trapping-math")))
#else
#define STUD_CLONES
#define STUD_NO_TRAPS
#endif
