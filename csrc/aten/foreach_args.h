// A foreach row's element op, position by position (ir/op_rows.h's TXLA_FOREACH_ROWS): the
// recorder takes the element op's shapes and checks at each position of the lists, so a foreach
// call records one node with an output per position, and its errors are eager's.
#pragma once

#include <ATen/core/ivalue.h>

#include <vector>

#include "aten/meta_shapes.h"
#include "ir/op_table.h"

namespace txla::aten {

// The number of positions of a foreach op's lists, with eager's checks: no list empty, all of
// one length. (The first call of a row also checks that its element takes its arguments.)
size_t ForeachLength(const ir::OpInfo& foreach, c10::ArrayRef<c10::IValue> args,
                     const std::vector<ArgClass>& classes);

// The element op's arguments at `position` (< ForeachLength): each list argument's entry there,
// the other arguments as they are, the element's further arguments at their defaults.
void ElementArguments(const ir::OpInfo& foreach, c10::ArrayRef<c10::IValue> args,
                      const std::vector<ArgClass>& classes, size_t position, std::vector<c10::IValue>* out);

}  // namespace txla::aten
