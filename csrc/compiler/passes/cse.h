// Common-subexpression elimination: an instruction identical to an earlier one (same opcode,
// shape, attributes and operands) is replaced by it. Repeated to a fixed point by the pipeline,
// since merging operands makes their users identical in turn.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string name() const override { return "cse"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
