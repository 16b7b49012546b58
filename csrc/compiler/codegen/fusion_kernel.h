// The loop kernel being emitted for a fusion (or an elementwise op, or an array constant): the
// expressions of its values, the producers and sibling reductions it also writes
// (kernel_merging.h), how its threads split it, and its body. The loop emitter opens it and the
// reduction emitter fills the body of a reduce-rooted one. What the kernel reads decides the shape
// of its loops (loop_reads.cc): which trailing dimensions run as one loop, whether it is walked in
// tiles, whether a reduction stages its narrow loads.
#pragma once

#include <cstdint>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/expression_emitter.h"
#include "hlo/instruction.h"

namespace txla::compiler::emitter {

class FusionKernel {
 public:
  explicit FusionKernel(const BufferPlan& plan) : expr(plan), plan_(plan) {}

  // The values at a loop index; its context names the fused parameters and inlined producers.
  ExpressionEmitter expr;
  // The producers the kernel also writes, and (for a reduction) the fused roots of the sibling
  // reductions it also computes, in the order of extra_outputs.
  std::vector<const hlo::Instruction*> extra_outputs;
  std::vector<const hlo::Instruction*> sibling_reductions;
  // Whether the kernel splits its outermost loop over threads, into how many parts.
  bool parallel = false;
  int64_t parallel_extent = 0;
  // The loops the kernel runs.
  std::ostringstream body;

  // loop_reads.cc. The first of `root`'s dimensions [k, rank), k >= first_candidate, that a loop
  // nest over its shape runs as one loop (rank: none).
  size_t MergedInnerDimensions(const hlo::Instruction& root, size_t first_candidate) const;
  // Whether `i`, whose dimension j is the root's dimension root_dim_of[j], reads the root's
  // dimensions [k, root_rank) only as their own row-major offset.
  bool ReadsMergeable(const hlo::Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k,
                      size_t root_rank) const;
  // Whether the kernel (`root` and the producers it also writes) reads through a transpose that
  // moves the last dimension.
  bool KernelTransposesLastDimension(const hlo::Instruction& root) const;
  // Whether everything the kernel reads comes through a transpose of rows to columns.
  bool ReadsOnlyThroughTransposedRows(const hlo::Instruction& root) const;
  // Whether computing `i` loads elements narrower than 4 bytes.
  bool LoadsNarrowElements(const hlo::Instruction& i, std::set<const hlo::Instruction*>* seen) const;

 private:
  using MergeableReads = std::set<std::pair<const hlo::Instruction*, std::vector<int64_t>>>;
  bool ReadsMergeable(const hlo::Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k, size_t root_rank,
                      MergeableReads* seen) const;
  bool TransposesLastDimension(const hlo::Instruction& root) const;
  bool Materialized(const hlo::Instruction& i) const { return IsMaterialized(plan_, i); }

  const BufferPlan& plan_;
};

}  // namespace txla::compiler::emitter
