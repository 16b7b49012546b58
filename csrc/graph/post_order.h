// Cutting a graph: from the values to compute, the nodes they need in post-order, the unique
// parameters, and the graph hash (root hashes plus the pattern in which device-data nodes share
// parameters, so that x + x and x + y are different graphs).
#pragma once

#include <vector>

#include "ir/node.h"

namespace txla::graph {

struct GraphCut {
  std::vector<const ir::Node*> nodes;          // post-order
  std::vector<ir::Value> roots;                // unique values to compute
  std::vector<runtime::BufferPtr> parameters;  // unique buffers, in first-use order
  // For each device-data node in post-order, its parameter index.
  std::vector<size_t> parameter_sequence;
  ir::hash_t hash = 0;
};

// `values` may repeat; `root_index` (if given) receives, for each value, its index in roots.
GraphCut CutGraph(const std::vector<ir::Value>& values, std::vector<size_t>* root_index);

}  // namespace txla::graph
