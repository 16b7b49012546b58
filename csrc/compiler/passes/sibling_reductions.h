// Sibling-reduction scheduling: places each pair of reductions that can share a kernel
// (kernel_merging.h, AreSiblingReductions) next to each other in the instruction order, so the
// later one's kernel computes both. The earlier one moves down to its sibling when nothing
// between them reads it; otherwise the later one moves up when everything it reads is computed
// before its sibling. Runs after fusion; changes no values, only the order kernels run in.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class SiblingReductions final : public Pass {
 public:
  std::string name() const override { return "sibling-reductions"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
