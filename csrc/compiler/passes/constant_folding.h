// Constant folding: an elementwise instruction whose operands are all constants becomes a
// constant, as do reshapes and transposes of small constants (broadcasts stay: fused, they are
// free). Values are computed in the operands' own type with the scalar functions the generated
// kernels use (runtime/scalar_ops.h), so folding never changes a value by an ulp; what the
// machine decides (integer division by zero, a float that does not fit an integer) is left to run.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "constant-folding"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
