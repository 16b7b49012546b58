#include "compiler/passes/dce.h"

namespace txla::compiler {

bool DeadCodeElimination::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    auto instructions = c->instructions();
    // Reverse order: removing a user can make its operands dead in the same sweep.
    for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
      hlo::Instruction* i = *it;
      if (i->users().empty() && i != c->root() && i->opcode() != hlo::Opcode::kParameter) {
        c->Remove(i);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace txla::compiler
