// Lowers a cut lazy-IR graph to an HLO module whose entry takes the graph's parameters (in the
// cut's order) and returns a tuple of its roots (in the cut's order).
#pragma once

#include <memory>
#include <string>

#include "graph/post_order.h"
#include "hlo/instruction.h"

namespace txla::lower {

// The first op of the graph that has no lowering rule, or "" when every op has one.
std::string FirstUnloweredOp(const graph::GraphCut& cut);
// Throws std::invalid_argument naming the op when one has no rule (check FirstUnloweredOp).
std::unique_ptr<hlo::Module> LowerGraph(const graph::GraphCut& cut);

}  // namespace txla::lower
