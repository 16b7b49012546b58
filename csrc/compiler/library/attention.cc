#include "compiler/library/attention.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "compiler/library/parallel.h"
#include "compiler/library/vector_clones.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::library {
namespace {

// A block's queries: every loop below runs along them, so each vectorizes whatever the head size
// (a UNet's heads of 4 as well as a decoder's of 64). A block's keys: the scores and
// probabilities of one block of queries against them stay in L1.
constexpr int64_t kQueries = 32;
constexpr int64_t kKeys = 64;

// Vectors of 32 bytes (AVX2's; the AVX-512 clone runs them as they are, the baseline one in
// halves), named in the source so that the products below keep their accumulators in registers:
// left as arrays indexed by query, the scores and outputs went to the stack and back at every
// step, and the call ran slower than the math path's GEMMs for heads of 32.
template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(32)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int64_t kLanes = 32 / sizeof(T);

template <typename T>
__attribute__((always_inline)) inline Vec<T> Load(const T* p) {
  Vec<T> x;
  __builtin_memcpy(&x, p, sizeof(x));
  return x;
}
template <typename T>
__attribute__((always_inline)) inline void Store(T* p, Vec<T> x) {
  __builtin_memcpy(p, &x, sizeof(x));
}

// One block of keys for one block of queries: the block's scores (st, [keys][kQueries]), the
// running maximum m and sum l of each query's row, and its output accumulated in acc
// ([Ev][kQueries]), rescaled by exp(old max - new max) as the maximum grows. A row whose scores
// so far are all -inf keeps m = -inf, l = 0 and acc = 0. Scores are taken two keys at a time and
// outputs two columns at a time, so each vector of q or of probabilities loaded feeds two
// products.
#define TXLA_ATTENTION_KEY_BLOCK(T)                                                                            \
  TXLA_VECTOR_CLONES void KeyBlock(int64_t e_size, int64_t ev_size, int64_t keys, const T* __restrict__ k,      \
                                   const T* __restrict__ v, const T* __restrict__ qt, T* __restrict__ st,       \
                                   T* __restrict__ acc, T* __restrict__ m, T* __restrict__ l, int64_t first_key, \
                                   int64_t first_query, bool causal) {                                          \
    constexpr int64_t Q = kQueries, W = kLanes<T>, N = Q / W;                                                  \
    const T neg_inf = -std::numeric_limits<T>::infinity();                                                     \
    for (int64_t j = 0; j < keys; j += 2) {                                                                    \
      const bool pair = j + 1 < keys;                                                                          \
      const T* k0 = k + j * e_size;                                                                            \
      const T* k1 = pair ? k0 + e_size : k0;                                                                   \
      Vec<T> s0[N] = {}, s1[N] = {};                                                                           \
      for (int64_t e = 0; e < e_size; ++e) {                                                                   \
        const T a = k0[e], b = k1[e];                                                                          \
        for (int64_t w = 0; w < N; ++w) {                                                                      \
          const Vec<T> q = Load(qt + e * Q + w * W);                                                           \
          s0[w] += a * q;                                                                                      \
          s1[w] += b * q;                                                                                      \
        }                                                                                                      \
      }                                                                                                        \
      for (int64_t w = 0; w < N; ++w) {                                                                        \
        Store(st + j * Q + w * W, s0[w]);                                                                      \
        if (pair) Store(st + (j + 1) * Q + w * W, s1[w]);                                                      \
      }                                                                                                        \
    }                                                                                                          \
    if (causal)                                                                                                \
      for (int64_t j = 0; j < keys; ++j)                                                                       \
        for (int64_t i = 0; i < Q; ++i)                                                                        \
          st[j * Q + i] = first_key + j > first_query + i ? neg_inf : st[j * Q + i];                          \
    T top[Q], alpha[Q], sum[Q];                                                                                \
    for (int64_t i = 0; i < Q; ++i) top[i] = m[i];                                                             \
    for (int64_t j = 0; j < keys; ++j)                                                                         \
      for (int64_t i = 0; i < Q; ++i) top[i] = txla_max(top[i], st[j * Q + i]);                                \
    for (int64_t i = 0; i < Q; ++i) {                                                                          \
      alpha[i] = top[i] == neg_inf ? T(1) : txla_exp(m[i] - top[i]);                                           \
      sum[i] = 0;                                                                                              \
    }                                                                                                          \
    for (int64_t j = 0; j < keys; ++j)                                                                         \
      for (int64_t i = 0; i < Q; ++i) {                                                                        \
        const T p = top[i] == neg_inf ? T(0) : txla_exp(st[j * Q + i] - top[i]);                               \
        st[j * Q + i] = p;                                                                                     \
        sum[i] += p;                                                                                           \
      }                                                                                                        \
    for (int64_t i = 0; i < Q; ++i) {                                                                          \
      l[i] = l[i] * alpha[i] + sum[i];                                                                         \
      m[i] = top[i];                                                                                           \
    }                                                                                                          \
    for (int64_t e = 0; e < ev_size; e += 2) {                                                                 \
      const bool pair = e + 1 < ev_size;                                                                       \
      T* a0 = acc + e * Q;                                                                                     \
      T* a1 = pair ? a0 + Q : a0;                                                                              \
      Vec<T> o0[N], o1[N];                                                                                     \
      for (int64_t w = 0; w < N; ++w) {                                                                        \
        const Vec<T> scale = Load(alpha + w * W);                                                              \
        o0[w] = Load(a0 + w * W) * scale;                                                                      \
        o1[w] = Load(a1 + w * W) * scale;                                                                      \
      }                                                                                                        \
      for (int64_t j = 0; j < keys; ++j) {                                                                     \
        const T x = v[j * ev_size + e], y = pair ? v[j * ev_size + e + 1] : T(0);                              \
        for (int64_t w = 0; w < N; ++w) {                                                                      \
          const Vec<T> p = Load(st + j * Q + w * W);                                                           \
          o0[w] += x * p;                                                                                      \
          o1[w] += y * p;                                                                                      \
        }                                                                                                      \
      }                                                                                                        \
      for (int64_t w = 0; w < N; ++w) {                                                                        \
        Store(a0 + w * W, o0[w]);                                                                              \
        if (pair) Store(a1 + w * W, o1[w]);                                                                    \
      }                                                                                                        \
    }                                                                                                          \
  }

TXLA_ATTENTION_KEY_BLOCK(float)
TXLA_ATTENTION_KEY_BLOCK(double)
#undef TXLA_ATTENTION_KEY_BLOCK

}  // namespace

template <typename T>
void AttentionForward(const T* q, const T* k, const T* v, T* out, const int64_t* geometry) {
  const int64_t n = geometry[0], queries = geometry[1], keys = geometry[2], e_size = geometry[3],
                ev_size = geometry[4];
  const bool causal = geometry[5] != 0;
  constexpr int64_t Q = kQueries;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const int64_t blocks = (queries + Q - 1) / Q;
  ParallelChunks(n * blocks, NumThreads(), [&](int, int64_t begin, int64_t end) {
    std::vector<T> qt(static_cast<size_t>(e_size * Q)), st(static_cast<size_t>(kKeys * Q)),
        acc(static_cast<size_t>(ev_size * Q));
    T m[Q], l[Q];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, first = (task % blocks) * Q, rows = std::min(Q, queries - first);
      const T* qb = q + (b * queries + first) * e_size;
      for (int64_t e = 0; e < e_size; ++e)
        for (int64_t i = 0; i < Q; ++i) qt[e * Q + i] = i < rows ? qb[i * e_size + e] : T(0);
      std::fill(m, m + Q, neg_inf);
      std::fill(l, l + Q, T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      // Under the causal mask the keys after the block's last query are masked for all its rows.
      const int64_t key_end = causal ? std::min(keys, first + rows) : keys;
      for (int64_t j0 = 0; j0 < key_end; j0 += kKeys)
        KeyBlock(e_size, ev_size, std::min(kKeys, key_end - j0), k + (b * keys + j0) * e_size,
                 v + (b * keys + j0) * ev_size, qt.data(), st.data(), acc.data(), m, l, j0, first, causal);
      for (int64_t i = 0; i < rows; ++i) {
        T* o = out + (b * queries + first + i) * (ev_size + 1);
        const bool none = m[i] == neg_inf;
        for (int64_t e = 0; e < ev_size; ++e) o[e] = none ? T(0) : acc[e * Q + i] / l[i];
        o[ev_size] = none ? T(0) : m[i] + txla_log(l[i]);
      }
    }
  });
}

template void AttentionForward<float>(const float*, const float*, const float*, float*, const int64_t*);
template void AttentionForward<double>(const double*, const double*, const double*, double*, const int64_t*);

}  // namespace txla::compiler::library
