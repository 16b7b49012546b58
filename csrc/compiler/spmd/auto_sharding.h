// Auto-sharding (PyTorch/XLA's `use_spmd(auto=True)`): chooses layouts for the parameters of a
// global SPMD program that the user left unsharded, so the program is partitioned without
// annotations.
//
// Where XLA solves an integer program over every instruction's layout, this pass searches the
// parameters' layouts greedily, largest parameter first, and leaves the rest to sharding
// propagation. Each candidate (whole, or one dimension split over a mesh axis or over all
// devices) is judged by partitioning the program with it: the estimated time per device of the
// local work (the largest tile each instruction computes; a dot's multiply-adds) plus the bytes
// the inserted collectives move, weighed as a memory-bound copy. Every candidate program is
// correct (the partitioner reshards as needed): the search only chooses among right answers.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/passes/pass.h"

namespace txla::compiler::spmd {

class AutoSharding : public Pass {
 public:
  // `mesh` (its axes' sizes, product `devices`; empty: one axis) bounds the candidate layouts.
  AutoSharding(int64_t devices, std::vector<int64_t> mesh) : devices_(devices), mesh_(std::move(mesh)) {}
  std::string name() const override { return "auto-sharding"; }
  // Gives every entry parameter without a sharding one (replicated when nothing is cheaper).
  bool Run(hlo::Module& module) override;

  // The estimated cost of `module` (whose parameters all carry shardings) once partitioned.
  double Cost(const hlo::Module& module) const;

 private:
  int64_t devices_;
  std::vector<int64_t> mesh_;
};

}  // namespace txla::compiler::spmd
