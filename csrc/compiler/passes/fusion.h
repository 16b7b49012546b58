// Fusion: groups elementwise, broadcast, reshape, transpose, slice, convert, iota and constant
// chains, and the reductions they feed, into `fusion` instructions. A fusion becomes one loop
// kernel, so the values inside it never reach memory.
//
// A producer joins its consumer's fusion when it is fusible and every one of its users is in that
// fusion (its value is then needed nowhere else). Scalar constants and broadcasts of them are
// cheap enough to be copied into every fusion that uses them. A reduce may end a fusion (its
// producers are computed inside the reduction loop) but never feeds one: its result is
// materialized. Dots and convolutions are library calls and stay outside fusions.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class Fusion final : public Pass {
 public:
  std::string name() const override { return "fusion"; }
  bool Run(hlo::Module& module) override;
};

// Fusible as a producer inside a loop kernel.
bool IsLoopFusible(const hlo::Instruction& i);

}  // namespace txla::compiler
