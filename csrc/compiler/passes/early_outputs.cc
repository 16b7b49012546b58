#include "compiler/passes/early_outputs.h"

#include <algorithm>
#include <unordered_set>

namespace txla::compiler {

std::vector<const hlo::Instruction*> EarlyResults(const hlo::Module& module) {
  std::vector<const hlo::Instruction*> results;
  const hlo::Instruction* root = module.entry()->root();
  if (root == nullptr || root->opcode() != hlo::Opcode::kTuple || !PassEnabled(EarlyOutputs::kName))
    return results;
  std::unordered_set<const hlo::Instruction*> seen;
  for (const hlo::Instruction* out : root->operands()) {
    if (!out->shape().IsScalar() || out->opcode() == hlo::Opcode::kParameter ||
        out->opcode() == hlo::Opcode::kConstant || !seen.insert(out).second)
      continue;
    results.push_back(out);
  }
  return results;
}

bool EarlyOutputs::Run(hlo::Module& module) {
  std::vector<const hlo::Instruction*> results = EarlyResults(module);
  if (results.empty()) return false;
  std::unordered_set<const hlo::Instruction*> needed;
  std::vector<const hlo::Instruction*> stack(results.begin(), results.end());
  while (!stack.empty()) {
    const hlo::Instruction* i = stack.back();
    stack.pop_back();
    if (!needed.insert(i).second) continue;
    for (const hlo::Instruction* op : i->operands()) stack.push_back(op);
  }
  // Already first: say so, so the pipeline's dump shows only orders that changed.
  std::vector<hlo::Instruction*> order = module.entry()->instructions();
  if (std::is_partitioned(order.begin(), order.end(), [&](const hlo::Instruction* i) { return needed.count(i) > 0; }))
    return false;
  module.entry()->MoveToFront(needed);
  return true;
}

}  // namespace txla::compiler
