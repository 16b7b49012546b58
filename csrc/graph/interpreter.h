// The reference executor: runs a cut graph node by node with ATen's CPU kernels on the device
// buffers. Each op node replays the boxed call it was recorded from, so the interpreter agrees
// with eager PyTorch by construction; it is what other executors are checked against.
#pragma once

#include <memory>

#include "graph/post_order.h"
#include "runtime/executable.h"

namespace txla::graph {

std::shared_ptr<runtime::Executable> BuildInterpreterProgram(const GraphCut& cut);

}  // namespace txla::graph
