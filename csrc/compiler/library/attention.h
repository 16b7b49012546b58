// Scaled dot-product attention's forward in one pass over the keys, as flash attention (and
// eager's CPU kernel, _scaled_dot_product_flash_attention_for_cpu) computes it: the scores of a
// block of queries against a block of keys, a running maximum and sum per query (the online
// softmax), and the output accumulated block by block. The [L, S] score and probability matrices
// of the math path are never stored, and exp runs once per score instead of twice.
//
// Layouts, row-major, N = batch * heads:
//   q    [N, L, E]       already scaled (the lowering multiplies q and k by sqrt(scale))
//   k    [N, S, E]       already scaled
//   v    [N, S, Ev]
//   out  [N, L, Ev + 1]  each query's output, then its logsumexp (0 for a row that attends to
//                        nothing, whose output is 0, as _safe_softmax has it)
// geometry: {N, L, S, E, Ev, causal (0 or 1)}. Causal masks key j for query i where j > i (the
// upper-left alignment); masked scores are -inf whatever q and k hold there, as in eager's kernel.
// A NaN score, or +inf, makes its row NaN, as on the math path.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

template <typename T>
void AttentionForward(const T* q, const T* k, const T* v, T* out, const int64_t* geometry);

}  // namespace txla::compiler::library
