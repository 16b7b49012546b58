// Barriers and reads: the point where pending IR becomes device data.
//
// SyncTensors cuts the graph of the given tensors, looks its hash up in the compile cache
// (compiling on a miss), executes it, and hands each tensor its result. MarkStep does that for
// every live tensor with pending IR on the given devices (one graph each): the `xm.mark_step()`
// barrier. Reading one tensor
// (ToHost) executes only the part of the graph that tensor needs.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "graph/post_order.h"
#include "tensor/lazy_tensor.h"

namespace txla::graph {

// `for_read`: the sync serves a host read (GET_TENSORS_OPBYOP applies) rather than a barrier
// (SYNC_TENSORS_OPBYOP applies).
// `ends_step`: a barrier's graph, which waits while XLA_MAX_INFLIGHT_STEPS steps are queued.
// `donate_updated_inputs`: the run may write its outputs over the old values of tensors it
// updates in place (PyTorch/XLA's sync_xla_data; see buffer_donation.h).
void SyncTensors(const std::vector<LazyTensorPtr>& tensors, bool for_read, bool ends_step = false,
                 bool donate_updated_inputs = true);
// Whether graphs may run now: torch_xla.compile(full_graph=True) forbids it while its function
// traces, so a value read inside (a graph break) raises instead of running part of it.
void SetExecutionAllowed(bool allowed);
bool ExecutionAllowed();
// Submits the step's graphs; returns without waiting for them unless `wait` (or XLA_SYNC_WAIT=1).
void MarkStep(const std::vector<int>& devices, bool wait = false);
// Blocks until every graph submitted to the device has executed.
void WaitDeviceOps(int device);
// The key the compile cache holds the cut's executable under: the graph, whether it runs on the
// interpreter, the switches that change generated code, and under SPMD its inputs' layouts
// (PyTorch/XLA's _get_graph_hash reads it).
ir::hash_t CompileCacheKey(const GraphCut& cut, bool op_by_op);
// The tensor's value as a new host tensor (executing its pending graph if it has one).
// `reader`: how the user reads it, for the debugging tool when the Python frames cannot tell.
at::Tensor ToHost(const LazyTensorPtr& tensor, const char* reader = nullptr);
// Advances whenever a graph runs (or is queued) or a value is read to the host. A trace during
// which it stood still built its graph from its inputs and constants alone.
uint64_t ExecutionEpoch();
// Advances at every barrier (MarkStep): which step the host is tracing.
uint64_t StepEpoch();
// Executed graphs: how many programs the in-memory cache holds.
size_t CompileCacheSize();

}  // namespace txla::graph
