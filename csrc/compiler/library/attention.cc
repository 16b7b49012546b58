#include "compiler/library/attention.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "compiler/library/parallel.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::library {
namespace {

// A block's queries: every loop below runs along them, so each vectorizes whatever the head size
// (a UNet's heads of 4 as well as a decoder's of 64). A block's keys: the scores and
// probabilities of one block of queries against them stay in L1.
constexpr int64_t kQueries = 32;
constexpr int64_t kKeys = 64;

// One copy a vector width: the library is built for any x86-64 (recurrent.cc does the same).
#define TXLA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// One block of keys for one block of queries: the block's scores (st, [keys][kQueries]), the
// running maximum m and sum l of each query's row, and its output accumulated in acc
// ([Ev][kQueries]), rescaled by exp(old max - new max) as the maximum grows. A row whose scores
// so far are all -inf keeps m = -inf, l = 0 and acc = 0.
#define TXLA_ATTENTION_KEY_BLOCK(T)                                                                            \
  TXLA_VECTOR_CLONES void KeyBlock(int64_t e_size, int64_t ev_size, int64_t keys, const T* __restrict__ k,      \
                                   const T* __restrict__ v, const T* __restrict__ qt, T* __restrict__ st,       \
                                   T* __restrict__ acc, T* __restrict__ m, T* __restrict__ l, int64_t first_key, \
                                   int64_t first_query, bool causal) {                                          \
    constexpr int64_t Q = kQueries;                                                                            \
    const T neg_inf = -std::numeric_limits<T>::infinity();                                                     \
    for (int64_t j = 0; j < keys; ++j) {                                                                       \
      T* __restrict__ s = st + j * Q;                                                                          \
      for (int64_t i = 0; i < Q; ++i) s[i] = 0;                                                                \
      for (int64_t e = 0; e < e_size; ++e) {                                                                   \
        const T kj = k[j * e_size + e];                                                                        \
        const T* __restrict__ qe = qt + e * Q;                                                                 \
        for (int64_t i = 0; i < Q; ++i) s[i] += kj * qe[i];                                                    \
      }                                                                                                        \
      if (causal)                                                                                              \
        for (int64_t i = 0; i < Q; ++i) s[i] = first_key + j > first_query + i ? neg_inf : s[i];              \
    }                                                                                                          \
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
    for (int64_t e = 0; e < ev_size; ++e)                                                                      \
      for (int64_t i = 0; i < Q; ++i) acc[e * Q + i] *= alpha[i];                                              \
    for (int64_t j = 0; j < keys; ++j)                                                                         \
      for (int64_t e = 0; e < ev_size; ++e) {                                                                  \
        const T ve = v[j * ev_size + e];                                                                       \
        const T* __restrict__ p = st + j * Q;                                                                  \
        T* __restrict__ a = acc + e * Q;                                                                       \
        for (int64_t i = 0; i < Q; ++i) a[i] += ve * p[i];                                                     \
      }                                                                                                        \
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
