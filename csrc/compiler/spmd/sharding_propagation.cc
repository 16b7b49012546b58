#include "compiler/spmd/sharding_propagation.h"

#include "compiler/spmd/op_rules.h"

namespace txla::compiler::spmd {

bool ShardingPropagation::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Instruction* i : module.entry()->instructions()) {
    if (i->shape().is_tuple || i->attrs().sharding) continue;
    std::optional<hlo::Sharding> sharding = hlo::Sharding::Replicated();
    if (i->opcode() != hlo::Opcode::kParameter) {
      std::vector<TileMap> operands;
      std::vector<hlo::Shape> shapes;
      for (const hlo::Instruction* op : i->operands()) shapes.push_back(op->shape());
      for (const hlo::Instruction* op : i->operands())
        operands.push_back(op->shape().is_tuple || !op->attrs().sharding
                               ? TileMap::Replicated(op->shape().is_tuple ? 0 : op->shape().rank(), devices_)
                               : TileMap::Of(*op->attrs().sharding, op->shape().rank(), devices_));
      sharding = PlanInstruction(*i, operands, shapes, devices_).result.ToSharding();
      if (!sharding) sharding = hlo::Sharding::Replicated();
    }
    i->mutable_attrs().sharding = sharding;
    changed = true;
  }
  return changed;
}

}  // namespace txla::compiler::spmd
