// Constant folding: an elementwise instruction whose operands are all constants becomes a
// constant, as do reshapes and transposes of small constants (broadcasts stay: fused, they are
// free). Only operations whose result is exactly what the generated code would compute are
// folded (+ - * / sqrt, min/max, comparisons, selects, conversions, logic): transcendentals are
// left to run, so folding never changes a value by an ulp.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "constant-folding"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
