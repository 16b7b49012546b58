// The table of ATen ops the xla device records lazily. An op is declared once, by name, with an
// optional fast shape rule (the op's Meta kernel is used otherwise) and an optional predicate for
// argument values the device cannot trace (a boolean mask's result size depends on data). Ops not
// in the table run through the CPU fallback and are counted as aten::<name>.
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

struct OpInfo {
  std::string name;  // "aten::add.Tensor"
  ShapeRule shape_rule = nullptr;
  FallbackRule needs_fallback = nullptr;
  WrittenArgsRule written_args = nullptr;
  // Random ops whose schema has no Generator argument draw from the default CPU generator; the
  // node then carries a seed as one extra trailing argument (see the interpreter).
  bool seeds_default_generator = false;
  // Scalar arguments are constants of the graph, not parameters: they choose the computation
  // (a norm's order), so the lowering must know them.
  bool constant_scalars = false;
  // Exchanges data between replicas; ordered by a token chain (csrc/aten/collective_ops.cc).
  bool collective = false;
  hash_t name_hash = 0;

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

}  // namespace txla::ir
