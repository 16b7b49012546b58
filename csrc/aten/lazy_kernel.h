// The one kernel behind every op in the op table: it records the op as an IR node instead of
// running it. Arguments are read from the boxed stack; xla tensors become operands, CPU 0-dim
// tensors and Scalars become parameters (the scalars 0 and 1 are baked in as constants unless
// XLA_NO_SPECIAL_SCALARS=1), everything else becomes a constant attribute. Output shapes come from
// the op's shape rule or its Meta kernel, so shape errors surface at the op, as in eager mode.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "tensor/lazy_tensor.h"

namespace txla::aten {

// A new raw xla tensor with `tensor`'s value: its buffer when it has one (values are immutable,
// so nothing is copied and no graph is built), else its pending IR value.
at::Tensor ShareValue(const LazyTensorPtr& tensor);

// While one is alive on a thread, the seed parameters random ops create there are listed, in the
// order they were drawn (torch.compile's replays draw theirs in the same order).
class SeedRecording {
 public:
  SeedRecording();
  ~SeedRecording();
  SeedRecording(const SeedRecording&) = delete;
  SeedRecording& operator=(const SeedRecording&) = delete;
  const std::vector<runtime::BufferPtr>& seeds() const { return seeds_; }
  // Called where a seed parameter is made: lists it in the thread's innermost recording.
  static void Note(const runtime::BufferPtr& seed) {
    if (active) active->seeds_.push_back(seed);
  }

 private:
  static thread_local SeedRecording* active;
  SeedRecording* outer_;
  std::vector<runtime::BufferPtr> seeds_;
};

// While one lives on a thread, every op the thread records is listed, as PyTorch/XLA's dynamic
// shape detector describes it: "[] aten::add, xla_shape=f32[10]{0}, dynamic_dims: ()"
// (torch_xla.compile(max_different_graphs=N) compares a function's calls by it).
class OpLog {
 public:
  OpLog();
  ~OpLog();
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;
  const std::vector<std::string>& ops() const { return ops_; }
  // Called for every recorded op: lists it in the thread's innermost log.
  static void Note(const ir::OpInfo& info, const ir::Shape& result);

 private:
  static thread_local OpLog* active;
  OpLog* outer_;
  std::vector<std::string> ops_;
};

// PyTorch/XLA's LazyTracing metric: the host time of recording one op (each recorded op and each
// copy onto or within the device adds a sample).
metrics::Metric* LazyTracingMetric();

// Replaces the op's arguments on `stack` with its (lazy) results.
void RecordOp(const ir::OpInfo& info, const c10::OperatorHandle& op, torch::jit::Stack* stack);

class LazyKernel final : public c10::OperatorKernel {
 public:
  explicit LazyKernel(const ir::OpInfo* info) : info_(info) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack) {
    RecordOp(*info_, op, stack);
  }

 private:
  const ir::OpInfo* info_;
};

}  // namespace txla::aten
