// Update order: a kernel that updates a parameter in place (a graph output computed from one
// parameter of its shape, which nothing else in the graph reads) runs after the parameter's other
// readers, so that it is the parameter's last reader and may take over its buffer (buffer
// assignment's donations). `s = a + b; a *= 2` lowers with the update first; run as written,
// the update would need memory of its own while `a`'s old buffer waited for the sum.
//
// Only kernels with one such parameter move: a kernel reading two (the sum) can take over one
// of them at most and keeps its place. Scalars keep theirs (early outputs hand them out first).
// Runs after fusion and early outputs; changes no values.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class UpdateOrder final : public Pass {
 public:
  static constexpr const char* kName = "update-order";
  std::string name() const override { return kName; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
