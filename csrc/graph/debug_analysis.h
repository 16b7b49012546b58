// The debugging tool users know from PyTorch/XLA (PT_XLA_DEBUG=1, PT_XLA_DEBUG_LEVEL=1|2): every
// compilation is explained on standard error (or PT_XLA_DEBUG_FILE) with its cause (a barrier,
// .item(), print, ...), the user's Python frames that caused it, the graph's size, and, beyond
// the original, why it was not served from the cache: which inputs' shapes or dtypes, which
// baked-in constants and which ops differ from the nearest graph compiled before, with the user
// line that created each differing op. Value reads that run a graph in the middle of a step and
// ops that fell back to the CPU are reported once per source line at the step's end. Level 2 adds
// an analysis of every execution. Quiet when no graph compiles and nothing is read mid-step.
#pragma once

#include <cstddef>

#include <vector>

#include "runtime/executable.h"

#include "debug/frames.h"
#include "graph/post_order.h"

namespace txla::graph::analysis {

// What the current thread's sync serves, set by the entry points for the analysis to read.
enum class SyncKind { kBarrier, kRead };
class ScopedSyncKind {
 public:
  // `reader`: how a read happens when the frames cannot tell (".item()").
  ScopedSyncKind(SyncKind kind, const char* reader = nullptr);
  ~ScopedSyncKind();

 private:
  SyncKind previous_kind_;
  const char* previous_reader_;
};

// 0: off; 1: compilations and mid-step reads; 2 and above: also every execution
// (PT_XLA_DEBUG=1 alone is every analysis, as in PyTorch/XLA).
int Level();
// The name torch_xla.compile(name=...) gives the graphs its function makes (shown as Graph
// Name; "<name>_clear_pending" for the sync before the function runs); empty when none.
void SetCurrentGraphName(const std::string& name);
std::string CurrentGraphName();
// A graph about to run on `device`; `compiled` when it was compiled for this run; `frames`: the
// sync's Python frames, innermost first (taken before the sync's locks); `footprint`: the
// compiled program's (runtime::Executable::footprint).
void OnGraph(const GraphCut& cut, size_t outputs, int device, bool compiled, const std::vector<debug::Frame>& frames,
             const runtime::Executable::Footprint& footprint);
// torch.compile's captured graphs (graph/captured_graph.h), compiled and run outside a sync:
// reported as PyTorch/XLA's bridge words them. They read the Python frames (taking the GIL):
// call them holding no device lock.
void OnDynamoCompile(const GraphCut& cut, int device, const runtime::Executable::Footprint& footprint);
void OnDynamoExecute(ir::hash_t hash, size_t inputs, size_t outputs, int device);
// A barrier ended a step: the step's mid-step reads and CPU fallbacks not yet reported.
void OnStepEnd();

}  // namespace txla::graph::analysis
