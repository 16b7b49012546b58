// Combines independent all-reduces into one (XLA's AllReduceCombiner): a partitioned training
// step sums each parameter's gradient over the devices, and every all-reduce is a meeting of all
// devices, whose cost on a busy machine is the waiting, not the bytes. All-reduces with the same
// replica groups, reduction and element type, none depending on another, each at most
// kMaxCombinedBytes, are flattened, concatenated, reduced once and sliced back.
#pragma once

#include <cstdint>

#include "compiler/passes/pass.h"

namespace txla::compiler::spmd {

class AllReduceCombiner : public Pass {
 public:
  static constexpr int64_t kMaxCombinedBytes = int64_t{1} << 20;
  std::string name() const override { return "all-reduce-combiner"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler::spmd
