// The reference executor: runs a cut graph node by node with ATen's CPU kernels on the device
// buffers. Each op node replays the boxed call it was recorded from, so the interpreter agrees
// with eager PyTorch by construction; it is what other executors are checked against.
#pragma once

#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "graph/post_order.h"
#include "runtime/executable.h"

namespace txla::graph {

std::shared_ptr<runtime::Executable> BuildInterpreterProgram(const GraphCut& cut);

// Runs one op (or constant) node on CPU tensors with ATen's kernels: its outputs, in order.
std::vector<at::Tensor> ReplayNode(const ir::Node& node, const std::vector<at::Tensor>& operands);

}  // namespace txla::graph
