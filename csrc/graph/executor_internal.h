// What the barrier path shares with other ways of running a graph (graph/captured_graph.cc):
// the compile cache with its single-flight compiles, and the per-device submission lock.
#pragma once

#include <memory>
#include <mutex>

#include "graph/post_order.h"
#include "runtime/executable.h"

namespace txla::graph {

// The cut's executable from the in-memory cache, the persistent cache, or a compile (counted as
// CachedCompile / UncachedCompile, timed as CompileTime).
// `compiled` (if given) says whether this call compiled the graph (a cache miss).
std::shared_ptr<runtime::Executable> GetOrCompile(const GraphCut& cut, bool op_by_op, bool* compiled = nullptr);
// Held while a device's graphs are submitted, so that they queue in the order they were cut.
std::mutex& DeviceSyncMutex(int device);
// Graph walks (cutting, dumping, retiring: they use the nodes' scratch fields): one at a time.
std::mutex& GraphWalkMutex();
// Called wherever a graph runs or a value is read to the host (see ExecutionEpoch).
void AdvanceExecutionEpoch();

}  // namespace txla::graph
