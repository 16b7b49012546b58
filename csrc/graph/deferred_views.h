// Transposed views a barrier leaves pending instead of computing.
//
// A Linear layer's weight gradient is a transpose of the GEMM autograd computes (`mm(x.t(),
// dy).t()`: lazy tensors report contiguous strides, so autograd takes the row-major branch), and
// functionalization keeps the GEMM's result alive as the view's base. A barrier would then write
// both the GEMM and its transpose, and the transpose is a whole extra pass (0.2 ms of the MLP's
// 3 ms step) for a value the next step's zero_grad drops unread. So at a barrier a pending
// tensor that is only a transpose of another tensor's result, or of device data, stays pending
// as that transpose of the other's new data: it is computed where it is used (fused into the
// graph that reads it), or when its value is read.
#pragma once

#include <vector>

#include "tensor/lazy_tensor.h"

namespace txla::graph {

// Whether `value` is one of functionalization's transposing view ops (t, transpose, permute) of
// its single operand.
bool IsTransposingView(const ir::Value& value);

struct DeferredView {
  LazyTensorPtr tensor;
  LazyTensorPtr source;     // whose result it becomes a transpose of; null: it stays as it is
  ir::NodePtr transpose;    // the transposing node whose op and arguments relate the two
};

// Takes the deferrable tensors out of `pending` (the tensors a barrier is about to compute).
std::vector<DeferredView> TakeDeferredViews(std::vector<LazyTensorPtr>* pending);

// Once every source holds its new data: each deferred tensor becomes the transpose of it.
void RebaseDeferredViews(const std::vector<DeferredView>& views);

}  // namespace txla::graph
