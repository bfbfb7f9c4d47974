// Products of a matrix that is mostly zeros with a dense one, the zeros skipped: the first layer
// of the training's policy and value networks (agents/sparse_input.py), whose input rows are
// observations of one-hot cards and a few numbers (about 25 of Soko's 715 values are not zero),
// where a dense product does 30 times the work. Each output is summed in one fixed order (over a
// row's nonzero columns, or the batch's rows, in increasing order), so the floats do not depend
// on the batch's other rows or on the machine's vector width. Generic: knows nothing of poker.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "util/clones.h"

namespace stud {

typedef uint32_t Bits8 __attribute__((vector_size(32)));  // eight floats' bits (Float8: util/clones.h)

// The nonzero entries of x (rows, k), row by row, columns in increasing order: entries
// [start[i], start[i + 1]) are row i's. Returns the count. `col` and `value` hold rows * k.
// The scan reads eight values at a time and looks at them one by one only where one of them is
// not zero (with a few percent not zero, most groups are all zeros), with no branch per value
// (their places are random to a branch predictor).
STUD_CLONES
static std::ptrdiff_t sparse_rows(const float* x, std::ptrdiff_t rows, std::ptrdiff_t k, int64_t* start,
                                  int32_t* col, float* value) {
  std::ptrdiff_t n = 0;
  for (std::ptrdiff_t i = 0; i < rows; ++i) {
    start[i] = n;
    const float* xi = x + i * k;
    std::ptrdiff_t c = 0;
    for (; c + 8 <= k; c += 8) {
      Bits8 bits;  // the eight values' bits but the sign, ORed below: zero when all are zero
      std::memcpy(&bits, xi + c, sizeof bits);
      bits &= 0x7FFFFFFF;
      uint64_t words[4];
      std::memcpy(words, &bits, sizeof words);
      if (!(words[0] | words[1] | words[2] | words[3])) continue;
      for (int j = 0; j < 8; ++j) {
        col[n] = (int32_t)(c + j);
        value[n] = xi[c + j];
        n += xi[c + j] != 0.0f;
      }
    }
    for (; c < k; ++c) {
      col[n] = (int32_t)c;
      value[n] = xi[c];
      n += xi[c] != 0.0f;
    }
  }
  start[rows] = n;
  return n;
}

// out (cols, rows) = in (rows, cols) transposed, in tiles of 16 x 16.
static void transpose(const float* in, std::ptrdiff_t rows, std::ptrdiff_t cols, float* out) {
  constexpr std::ptrdiff_t T = 16;
  for (std::ptrdiff_t r0 = 0; r0 < rows; r0 += T)
    for (std::ptrdiff_t c0 = 0; c0 < cols; c0 += T) {
      const std::ptrdiff_t r1 = std::min(r0 + T, rows), c1 = std::min(c0 + T, cols);
      for (std::ptrdiff_t r = r0; r < r1; ++r)
        for (std::ptrdiff_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
    }
}

// out[0:m] = first[0:m] (zeros when null) plus v * row[0:m] for each of `count` (v, row) pairs, in
// order: 32 outputs at a time summed in four registers over all the pairs, the rest one by one.
STUD_CLONES
static void sum_rows(const float* first, const float* values, const float* const* rows_at, std::ptrdiff_t count,
                     std::ptrdiff_t m, float* out) {
  std::ptrdiff_t j0 = 0;
  for (; j0 + 32 <= m; j0 += 32) {
    Float8 a0{}, a1{}, a2{}, a3{};
    if (first) {
      STUD_LOAD8(a0, first + j0);
      STUD_LOAD8(a1, first + j0 + 8);
      STUD_LOAD8(a2, first + j0 + 16);
      STUD_LOAD8(a3, first + j0 + 24);
    }
    for (std::ptrdiff_t e = 0; e < count; ++e) {
      const float v = values[e];
      const float* w = rows_at[e] + j0;
      Float8 w0, w1, w2, w3;
      STUD_LOAD8(w0, w);
      STUD_LOAD8(w1, w + 8);
      STUD_LOAD8(w2, w + 16);
      STUD_LOAD8(w3, w + 24);
      a0 += v * w0;
      a1 += v * w1;
      a2 += v * w2;
      a3 += v * w3;
    }
    std::memcpy(out + j0, &a0, sizeof a0);
    std::memcpy(out + j0 + 8, &a1, sizeof a1);
    std::memcpy(out + j0 + 16, &a2, sizeof a2);
    std::memcpy(out + j0 + 24, &a3, sizeof a3);
  }
  for (; j0 < m; ++j0) {
    float acc = first ? first[j0] : 0.0f;
    for (std::ptrdiff_t e = 0; e < count; ++e) acc += values[e] * rows_at[e][j0];
    out[j0] = acc;
  }
}

#undef STUD_LOAD8

// The rows of sparse_rows: rows + 1 starts, then the n entries' columns (0..k) and values.
struct SparseView {
  const int64_t* start;
  const int32_t* col;
  const float* value;
  std::ptrdiff_t rows, k;

  void check() const {
    if (start[0] != 0) throw std::invalid_argument("sparse rows: the first row starts at 0");
    for (std::ptrdiff_t i = 0; i < rows; ++i)
      if (start[i + 1] < start[i]) throw std::invalid_argument("sparse rows: starts must not decrease");
    for (std::ptrdiff_t e = 0; e < start[rows]; ++e)
      if (col[e] < 0 || col[e] >= k) throw std::invalid_argument("sparse rows: a column outside 0..k");
  }
};

// out (rows, m) = bias + x . weight^T for x given by its sparse rows and weight (m, k), as
// nn.Linear holds it; each output summed over the row's entries in order.
static void sparse_rows_product(const SparseView& x, const float* weight, const float* bias, std::ptrdiff_t m,
                                float* out) {
  thread_local std::vector<float> wt;  // weight^T (k, m): an entry's m weights side by side
  thread_local std::vector<const float*> at;
  wt.resize((size_t)(x.k * m));
  transpose(weight, m, x.k, wt.data());
  for (std::ptrdiff_t i = 0; i < x.rows; ++i) {
    const int64_t a = x.start[i], count = x.start[i + 1] - a;
    at.resize((size_t)count);
    for (int64_t e = 0; e < count; ++e) at[e] = wt.data() + (std::ptrdiff_t)x.col[a + e] * m;
    sum_rows(bias, x.value + a, at.data(), count, m, out + i * m);
  }
}

// grad_weight (m, k) = g^T . x for g (rows, m): the weight's gradient of the product above,
// each entry summed over the rows in increasing order. (The buffers are the thread's, kept from
// call to call: a fresh one each time cost as much as the sums, its pages new to the process.)
static void sparse_rows_gradient(const SparseView& x, const float* g, std::ptrdiff_t m, float* grad_weight) {
  const std::ptrdiff_t n = x.start[x.rows], k = x.k;
  // The entries column by column, rows in increasing order within a column (a counting sort).
  thread_local std::vector<int64_t> first, next;
  thread_local std::vector<float> value, gt;
  thread_local std::vector<const float*> at;
  first.assign((size_t)k + 1, 0);
  for (std::ptrdiff_t e = 0; e < n; ++e) ++first[x.col[e] + 1];
  for (std::ptrdiff_t c = 0; c < k; ++c) first[c + 1] += first[c];
  next.assign(first.begin(), first.end() - 1);
  value.resize((size_t)n);
  at.resize((size_t)n);
  for (std::ptrdiff_t i = 0; i < x.rows; ++i)
    for (int64_t e = x.start[i]; e < x.start[i + 1]; ++e) {
      const int64_t to = next[x.col[e]]++;
      value[to] = x.value[e];
      at[to] = g + i * m;
    }
  gt.resize((size_t)(k * m));  // the gradient transposed (k, m)
  for (std::ptrdiff_t c = 0; c < k; ++c)
    sum_rows(nullptr, value.data() + first[c], at.data() + first[c], first[c + 1] - first[c], m, gt.data() + c * m);
  transpose(gt.data(), k, m, grad_weight);
}

}  // namespace stud
