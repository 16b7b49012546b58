// Cutting a graph: from the values to compute, the nodes they need in post-order, their
// parameters (one per device-data node, in post-order), and the graph hash.
#pragma once

#include <vector>

#include "graph/numerics.h"
#include "hlo/instruction.h"
#include "ir/node.h"

namespace txla::graph {

struct GraphCut {
  std::vector<const ir::Node*> nodes;          // post-order
  std::vector<ir::Value> roots;                // unique values to compute
  // The device-data nodes' buffers in post-order; a buffer two nodes hold appears twice.
  std::vector<runtime::BufferPtr> parameters;
  ir::hash_t hash = 0;
  // What the graph's convolutions are lowered with (graph/numerics.h); part of the hash.
  hlo::Precision convolution_precision = hlo::Precision::kHighest;
};

// `values` may repeat; `root_index` (if given) receives, for each value, its index in roots.
// `precision`: the user's setting now, or the one a captured graph was traced under.
GraphCut CutGraph(const std::vector<ir::Value>& values, std::vector<size_t>* root_index,
                  hlo::Precision precision = UserConvolutionPrecision());

}  // namespace txla::graph
