#include "compiler/spmd/sharding_propagation.h"

#include <algorithm>

#include "compiler/spmd/op_rules.h"

namespace txla::compiler::spmd {

bool ShardingPropagation::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Instruction* i : module.entry()->instructions()) {
    if (i->shape().is_tuple || i->attrs().sharding) continue;
    std::optional<hlo::Sharding> sharding = hlo::Sharding::Replicated();
    const bool in_manual_region = std::any_of(i->operands().begin(), i->operands().end(), [](const hlo::Instruction* op) {
      return op->attrs().sharding && op->attrs().sharding->kind == hlo::Sharding::Kind::kManual;
    });
    if (in_manual_region) {
      // What a manual value computes is manual too: each device works on its own piece.
      sharding = hlo::Sharding::Manual();
    } else if (i->opcode() != hlo::Opcode::kParameter) {
      std::vector<TileMap> operands;
      std::vector<hlo::Shape> shapes;
      for (const hlo::Instruction* op : i->operands()) shapes.push_back(op->shape());
      for (const hlo::Instruction* op : i->operands())
        operands.push_back(op->shape().is_tuple || !op->attrs().sharding
                               ? TileMap::Replicated(op->shape().is_tuple ? 0 : op->shape().rank(), devices_)
                               : TileMap::Of(*op->attrs().sharding, op->shape().rank(), devices_));
      const Plan plan = PlanInstruction(*i, operands, shapes, devices_);
      sharding = plan.result.ToSharding();
      if (!sharding) sharding = hlo::Sharding::Replicated();
      // Partial sums whose one user asks for a split layout take it: the partitioner then
      // reduce-scatters them, where summing them whole would be cut right after.
      if (!plan.partial_groups.empty() && i->users().size() == 1) {
        const hlo::Instruction* user = i->users()[0];
        if (user->opcode() == hlo::Opcode::kCustomCall &&
            user->attrs().custom_call_target == hlo::CustomCallTarget::kSharding && user->attrs().sharding &&
            user->attrs().sharding->kind == hlo::Sharding::Kind::kTiled)
          sharding = user->attrs().sharding;
      }
    }
    i->mutable_attrs().sharding = sharding;
    changed = true;
  }
  return changed;
}

}  // namespace txla::compiler::spmd
