// XLA_SAVE_TENSORS_FILE: every graph a sync executes is appended to that file, in the format
// XLA_SAVE_TENSORS_FMT names: `text` (the lazy IR, the default), `dot` (Graphviz: `dot -Tpng`)
// or `hlo` (the HLO module it lowers to, before the compiler's passes). Each entry says what
// caused it (the Python frames of the sync) and which tensors it computes:
//
//   [ScheduleSyncTensorsGraph]
//   TensorsGraphInfo:
//     mark_step (.../torch_xla/core/xla_model.py:120)
//     <module> (train.py:12)
//
//   Root Hashes: (1f0c..., 9ab2...)
//   Tensors: f32[16,10], f32[]
//   Graph Hash: 3e8d...
//
//   ## BEGIN_GRAPH
//   IR { ... }
//
//   ## END_GRAPH
#pragma once

#include <vector>

#include "debug/frames.h"
#include "graph/post_order.h"

namespace txla::graph {

// `frames`: the sync's Python frames, innermost first.
void DumpGraphIfRequested(const GraphCut& cut, const std::vector<debug::Frame>& frames);

}  // namespace txla::graph
