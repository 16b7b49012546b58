// Lowers a cut lazy-IR graph to an HLO module whose entry takes the graph's parameters (in the
// cut's order) and returns a tuple of its roots (in the cut's order).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/post_order.h"
#include "hlo/instruction.h"

namespace txla::lower {

// A form of an op its rule does not lower (an integer dtype, a transposed convolution): the graph
// runs on the interpreter, counted as NoLowering. Any other exception from a rule is a bug.
struct NotLowered : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Names of the ops that have a lowering rule.
std::vector<std::string> LoweredOps();
// The first op of the graph that has no lowering rule, or "" when every op has one.
std::string FirstUnloweredOp(const graph::GraphCut& cut);
// Throws std::invalid_argument naming the op when one has no rule (check FirstUnloweredOp).
std::unique_ptr<hlo::Module> LowerGraph(const graph::GraphCut& cut);

}  // namespace txla::lower
