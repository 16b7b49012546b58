// Early outputs: a graph's scalar results (the loss a training loop reads every step, a count of
// correct predictions) are computed before anything they do not need, and each is handed out as
// soon as the kernel that writes it has run (the emitter's support->output_ready), while the rest
// of the graph (the backward pass, the optimizer's update) still runs. A loop that reads its loss
// every step then traces the next step while this one finishes, as a pipelined loop does.
//
// The pass moves the producers of those results (their operands, transitively) ahead of every
// other instruction, each side keeping its order. Runs after fusion; changes no values.
#pragma once

#include <vector>

#include "compiler/passes/pass.h"

namespace txla::compiler {

class EarlyOutputs final : public Pass {
 public:
  static constexpr const char* kName = "early-outputs";
  std::string name() const override { return kName; }
  bool Run(hlo::Module& module) override;
};

// The entry's results released early: the root tuple's scalar operands that a kernel computes
// (not parameters or constants); none while TXLA_DISABLE_PASSES names the pass.
std::vector<const hlo::Instruction*> EarlyResults(const hlo::Module& module);

}  // namespace txla::compiler
