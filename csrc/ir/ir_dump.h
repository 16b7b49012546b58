// Text and Graphviz dumps of lazy IR graphs, as PyTorch/XLA prints them:
//
//   IR {
//     %0 = f32[2,2] xla::device_data()
//     %1 = f32[2,2] aten::add.Tensor(%0, %0), alpha=1, ROOT=0
//   }
//
// graph/graph_dump.h appends them to XLA_SAVE_TENSORS_FILE.
#pragma once

#include <string>
#include <vector>

#include "graph/post_order.h"

namespace txla::ir {

std::string GraphToText(const graph::GraphCut& cut);
std::string GraphToDot(const graph::GraphCut& cut);

}  // namespace txla::ir
