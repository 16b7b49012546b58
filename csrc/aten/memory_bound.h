// Results no machine of this size can hold, refused at the op that asks for them.
//
// A lazy op allocates nothing when it is recorded, and the compiler may fuse it away: a huge
// `torch.rand(...)` summed at once became one loop over 2^50 elements that ran for days (and
// ignored the test runner's timeout). Eager would have failed to allocate the result. So an op
// whose result is larger than the machine's memory raises what eager raises, out of memory,
// when it is recorded. Views are exempt: eager allocates nothing for them either.
#pragma once

#include <ATen/core/function_schema.h>

#include <vector>

#include "ir/shape.h"

namespace txla::aten {

// Raises torch.OutOfMemoryError (a RuntimeError) naming the op, the result and the bytes when
// one of `results` does not fit in the machine's memory and swap, unless the op is a view.
void CheckResultsFitInMemory(const c10::FunctionSchema& schema, const std::vector<ir::Shape>& results);

}  // namespace txla::aten
