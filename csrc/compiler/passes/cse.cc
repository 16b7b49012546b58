#include "compiler/passes/cse.h"

#include <unordered_map>

namespace txla::compiler {
namespace {

size_t Key(const hlo::Instruction& i) {
  size_t h = static_cast<size_t>(i.opcode()) * 1000003u;
  for (const hlo::Instruction* op : i.operands()) h = h * 31 + reinterpret_cast<uintptr_t>(op);
  for (int64_t d : i.shape().dims) h = h * 131 + static_cast<size_t>(d);
  return h;
}

}  // namespace

bool CommonSubexpressionElimination::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    std::unordered_multimap<size_t, hlo::Instruction*> seen;
    for (hlo::Instruction* i : c->instructions()) {
      // Parameters are distinct inputs however alike; a random op draws anew each time.
      if (i->opcode() == hlo::Opcode::kParameter || i->opcode() == hlo::Opcode::kRngUniform) continue;
      size_t key = Key(*i);
      hlo::Instruction* same = nullptr;
      auto range = seen.equal_range(key);
      for (auto it = range.first; it != range.second && !same; ++it)
        if (it->second->IdenticalTo(*i)) same = it->second;
      if (same) {
        i->ReplaceAllUsesWith(same);
        c->Remove(i);
        changed = true;
      } else {
        seen.emplace(key, i);
      }
    }
  }
  return changed;
}

}  // namespace txla::compiler
