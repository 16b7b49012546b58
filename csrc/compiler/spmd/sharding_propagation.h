// Completes the shardings of a global SPMD program: every array-shaped instruction of the entry
// gets the layout its op rule (op_rules.h) computes from its operands' layouts. Parameters keep
// theirs (replicated when they have none); an instruction that has one already (a user's
// constraint, a `Sharding` custom call) keeps it, and the partitioner reshards to it.
#pragma once

#include <cstdint>

#include "compiler/passes/pass.h"

namespace txla::compiler::spmd {

class ShardingPropagation : public Pass {
 public:
  explicit ShardingPropagation(int64_t devices) : devices_(devices) {}
  std::string name() const override { return "sharding-propagation"; }
  bool Run(hlo::Module& module) override;

 private:
  int64_t devices_;
};

}  // namespace txla::compiler::spmd
