// Dead-code elimination: removes instructions whose values nothing uses (never parameters or
// the root), and computations nothing calls.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class DeadCodeElimination final : public Pass {
 public:
  std::string name() const override { return "dce"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
