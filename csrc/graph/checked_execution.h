// Checked execution (TXLA_CHECK_GRAPHS=1): every compiled graph also runs on the interpreter and
// the two results are compared. On a difference the graph is bisected to the first node that
// computes a different value from the same inputs: the graph is compiled again with every node's
// value as an output, and each op node is replayed on CPU from the compiled values of its
// operands. A miscompile (a lowering rule, a pass, the emitter, buffer reuse) then names the op
// and the user's Python frame instead of showing up as drifting training.
#pragma once

#include <string>
#include <vector>

#include "graph/post_order.h"
#include "runtime/executable.h"

namespace txla::graph {

bool CheckedExecutionEnabled();

// Compares `compiled` (the outputs `executable` produced for `cut`) with the interpreter's. Returns
// "" when they agree, else a report of the difference; counts CheckedGraphs and
// CheckedGraphMismatch. `*reference` receives the interpreter's outputs (the ones to keep).
std::string CheckCompiledGraph(const GraphCut& cut, const runtime::Executable& executable,
                               const std::vector<runtime::BufferPtr>& compiled,
                               std::vector<runtime::BufferPtr>* reference, int device);

// The first node of `cut` whose compiled value differs from its CPU replay on the same operand
// values, as a report; "" when every node agrees. Exposed for tests.
std::string LocalizeMismatch(const GraphCut& cut, int device);

}  // namespace txla::graph
