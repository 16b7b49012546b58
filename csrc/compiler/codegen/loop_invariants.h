// Loop-invariant statements of a loop kernel's body. The emitter writes every value an element
// needs inside the innermost loop; a value read once per row (a softmax row's sum, an index
// clamped into a padded row) then sits inside the loop the vectorizer wants. GCC at -O1 does not
// hoist a clamp's select or a libm call out of it, and the clamped offset leaves it unable to
// tell the row's reads apart ("evolution of base is not affine"): log_softmax's backward over a
// padded [8, 63, 512] row block ran scalar, 2 ms a step in the GPT decoder's bf16 graph.
#pragma once

#include <string>

namespace txla::compiler::emitter {

struct SplitLoopBody {
  std::string invariant;  // statements to run once, before the innermost loop
  std::string varying;    // the rest, in their order
};

// Splits `statements` (one "const T vN = expr;" per line, as the emitter writes them) into those
// that read neither `inner_var` nor a varying statement's value, and the rest. A line of any
// other form (a reduction's accumulator, a window's loop) and everything after it stay varying.
SplitLoopBody HoistLoopInvariants(const std::string& statements, const std::string& inner_var);

}  // namespace txla::compiler::emitter
