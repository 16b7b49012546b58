// A constant per recorded op's qualified name (ir/op_rows.h): op::aten_add_Tensor is
// "aten::add.Tensor". Code that names an op (a lowering rule, a kernel recording an op) uses
// these, so the name is written once and a misspelling does not compile.
#pragma once

#include "ir/op_rows.h"

namespace txla::ir::op {

#define TXLA_OP_NAME(id, name, shape_rule, needs_fallback, written_args, flags, inplace) \
  inline constexpr const char id[] = name;
TXLA_OP_ROWS(TXLA_OP_NAME)
#undef TXLA_OP_NAME

}  // namespace txla::ir::op
