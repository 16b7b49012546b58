// The shapes an op's Meta kernel gives: its results' dtypes and sizes, and eager's checks, run on
// meta stand-ins of the op's arguments and cached per argument signature (torch 2.x runs many
// Meta kernels in Python). The recorder (lazy_kernel.cc) uses them where no shape rule applies.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <vector>

#include "ir/op_table.h"

namespace txla::aten {

// How a schema argument is fed into the IR, decided once per op from its schema.
enum class ArgClass : uint8_t {
  kTensor,              // Tensor or Tensor?
  kTensorList,          // Tensor[]
  kOptionalTensorList,  // Tensor?[]
  kScalar,              // Scalar or Scalar?
  kScalarList,          // Scalar[] (a foreach op's per-tensor factors)
  kGenerator,           // Generator?
  kOther,
};

// Each argument's class, from the op's schema (computed once per op).
const std::vector<ArgClass>& ArgClasses(const c10::OperatorHandle& op);

// The op's result shapes for these arguments, by its Meta kernel (raising its errors).
std::vector<ir::Shape> CachedMetaShapes(const ir::OpInfo& info, const c10::OperatorHandle& op,
                                        c10::ArrayRef<c10::IValue> args, const std::vector<ArgClass>& classes);

}  // namespace txla::aten
