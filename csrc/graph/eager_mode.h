// Eager mode (PyTorch/XLA's torch_xla.experimental.eager_mode, XLA_USE_EAGER_DEBUG_MODE): every
// op recorded on the device is compiled and run at once, as its own graph (cached per op
// signature like any graph), instead of waiting for a barrier. Errors then surface at the op
// that caused them, and each op's time is its own (EagerOpCompileTime, EagerOpExecuteTime).
//
// Tracing that builds one graph from many ops (dynamo's, torch_xla.compile's) suspends it on its
// thread.
#pragma once

#include <vector>

#include "tensor/lazy_tensor.h"

namespace txla::graph {

void SetEagerMode(bool enabled);
bool EagerModeEnabled();
// Whether the op being recorded on this thread runs at once.
bool RunsEagerly();

// Keeps this thread's ops lazy while it lives (nests).
class SuspendEagerMode {
 public:
  SuspendEagerMode();
  ~SuspendEagerMode();
  SuspendEagerMode(const SuspendEagerMode&) = delete;
  SuspendEagerMode& operator=(const SuspendEagerMode&) = delete;
};

// Computes the values of an op's results now (eager mode).
void RunEagerly(const std::vector<LazyTensorPtr>& results);

}  // namespace txla::graph
