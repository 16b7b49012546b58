// How each instruction runs partitioned: given where its operands' tiles lie, which layout each
// operand must be brought to, which tiles the local instruction then computes, and whether those
// are partial results to combine across devices. Sharding propagation (the result it would
// compute) and the partitioner (what it emits) both read these rules, so they cannot disagree.
#pragma once

#include <vector>

#include "compiler/spmd/tile_map.h"
#include "hlo/instruction.h"

namespace txla::compiler::spmd {

struct Plan {
  // false: the instruction runs whole on every device (operands replicated, result replicated).
  bool local = false;
  std::vector<TileMap> operands;  // the layout each operand is brought to first
  TileMap result;                 // what the local instruction's output holds on each device
  // Non-empty: the local outputs are partial results, combined over each group by `combiner`
  // (an all-reduce), after which `result` holds.
  std::vector<std::vector<int64_t>> partial_groups;
  hlo::Opcode combiner = hlo::Opcode::kAdd;
};

// `operands`: the layouts the operands have (array-shaped operands only; a tuple-shaped operand
// makes the plan whole), `shapes` their whole (global) shapes, `i` with its whole shape.
// Instructions without a local rule get the whole plan.
Plan PlanInstruction(const hlo::Instruction& i, const std::vector<TileMap>& operands,
                     const std::vector<hlo::Shape>& shapes, int64_t devices);

// The plan of an instruction that runs whole.
Plan WholePlan(const hlo::Instruction& i, int64_t devices);

}  // namespace txla::compiler::spmd
