// The table of ATen ops the xla device records lazily. An op is one row (op_table.cc), by name,
// with an optional fast shape rule (the op's Meta kernel is used otherwise), an optional
// predicate for argument values the device cannot trace (a boolean mask's result size depends on
// data), the flags below and the in-place overload that records it. The dispatcher registration
// (aten/register.cc), the recorder (aten/lazy_kernel.cc) and the graph passes read the row; the
// lowering (lower/lowering_table.h) has a rule per row, named after the row. Its arguments and
// results are the ATen schema's the row resolves. Ops not in the table run through the CPU
// fallback and are counted as aten::<name>.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/hash.h"
#include "ir/shape.h"

namespace txla::ir {

// Computes output shapes from the op's arguments as the dispatcher passes them (tensors are the
// xla tensors, with sizes and dtypes). nullopt defers to the op's Meta kernel.
using ShapeRule = std::optional<std::vector<Shape>> (*)(c10::ArrayRef<c10::IValue> args);
// True when these arguments need the CPU fallback.
using FallbackRule = bool (*)(c10::ArrayRef<c10::IValue> args);
// Indices of tensor arguments the op writes in place although its schema does not say so
// (native_batch_norm updates its running statistics). Their new values become extra outputs.
using WrittenArgsRule = std::vector<int> (*)(c10::ArrayRef<c10::IValue> args);

enum OpFlag : unsigned {
  // Random ops whose schema has no Generator argument draw from the default CPU generator; the
  // node then carries a seed as one extra trailing argument (see the interpreter).
  kSeedsDefaultGenerator = 1u << 0,
  // Scalar arguments are constants of the graph, not parameters: they choose the computation
  // (a norm's order), so the lowering must know them.
  kConstantScalars = 1u << 1,
  // Exchanges data between replicas; ordered by a token chain (csrc/aten/collective_ops.cc).
  kCollective = 1u << 2,
  // The Meta kernel looks at a Scalar argument's kind (bool, integer, floating, complex: type
  // promotion, integer-alpha checks), never at its value: shapes are cached per kind, so an
  // optimizer's step-dependent factors do not run the (Python) Meta kernel every step.
  kScalarKindOnly = 1u << 3,
  // Functionalization's transposing views (graph/deferred_views.h), and those of them that give
  // back their operand when applied twice.
  kTransposingView = 1u << 4,
  kInvolution = 1u << 5,
  // Dispatched to an edge kernel of aten/copy_kernels.h, which records through this row.
  kEdgeKernel = 1u << 6,
  // Its index tensors (the Tensor?[] argument) may be on the CPU, as PyTorch/XLA's index and
  // index_put take them (x[torch.tensor([1, 3])]): they are copied to the op's device.
  kHostIndices = 1u << 7,
};

struct OpInfo {
  std::string name;  // "aten::add.Tensor"
  ShapeRule shape_rule = nullptr;
  FallbackRule needs_fallback = nullptr;
  WrittenArgsRule written_args = nullptr;
  unsigned flags = 0;  // OpFlag bits
  bool Has(OpFlag flag) const { return (flags & flag) != 0; }
  // The in-place overload ("add_.Tensor") whose calls on raw xla tensors record this op and make
  // its result the tensor's new value (aten/register.cc); empty when there is none.
  std::string inplace;
  hash_t name_hash = 0;
  size_t index = 0;  // the row's position in OpTable()
  // A foreach op's (ir/op_rows.h's TXLA_FOREACH_ROWS): the op applied at each position of its
  // lists, whose scalar flags it shares; nullptr for every other op.
  const OpInfo* element = nullptr;

  // Resolved on first use, after the ATen library has registered its schemas.
  const c10::OperatorHandle& handle() const;
  const c10::FunctionSchema& schema() const { return handle().schema(); }

 private:
  mutable std::optional<c10::OperatorHandle> handle_;
};

// Every op the device records, in declaration order.
const std::vector<OpInfo>& OpTable();
// nullptr when the op is not recorded lazily.
const OpInfo* FindOp(const std::string& qualified_name);

struct Value;
// The sharding (XLA syntax) SPMD's annotation, a txla::custom_sharding node, gives `value`;
// nullptr when `value` is not one.
const std::string* ShardingAnnotation(const Value& value);

}  // namespace txla::ir
