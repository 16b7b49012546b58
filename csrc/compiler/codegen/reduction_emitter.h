// Kernels that accumulate. A reduce-rooted fusion's loops over its input, written into the
// fusion kernel the loop emitter opened: one loop nest whose sibling reductions
// (kernel_merging.h) accumulate in the same loops, partial accumulators along a contiguous row
// (staged where the row loads narrow elements), rows of accumulators for leading reduced
// dimensions. Scans and scatter are kernels of their own, each called from its step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/emitter.h"
#include "compiler/codegen/fusion_kernel.h"
#include "compiler/codegen/step_writer.h"

namespace txla::compiler::emitter {

class ReductionEmitter {
 public:
  explicit ReductionEmitter(FusionKernel& kernel) : kernel_(kernel) {}

  // Into how many parts the reduction's threads split it: 0 or 1, it stays on one thread.
  int64_t ParallelExtent(const Instruction& reduce) const;
  // The loops of `reduce` (and its siblings) into the kernel's body, its result stored to `out`.
  void Emit(const Instruction& reduce, const std::string& out);

 private:
  // The reductions the kernel computes in one set of loops: its own, then its siblings', each
  // with its accumulator's name suffix and its output buffer.
  struct Reduction {
    const Instruction* reduce;
    std::string suffix, out;
  };
  std::vector<Reduction> KernelReductions(const Instruction& reduce, const std::string& out) const;
  std::vector<std::string> EmitOperands(const std::vector<Reduction>& all, size_t operand, const Index& idx);
  void EmitRowReduce(const std::vector<Reduction>& all, size_t leading);
  static size_t RowReduceLeading(const Instruction& reduce);
  static std::string ReductionIdentity(const Instruction& reduce, const std::string& init);
  static std::string AccumulatorType(const Instruction& reduce);

  static constexpr int64_t kPartials = 16;  // measured: 16 doubles beat 8 on an exp-sum row
  static_assert((kPartials & (kPartials - 1)) == 0, "partials fold in halves");
  // A row whose elements load narrow types is computed this many elements at a time into a
  // stage array before its partials take them (see Emit).
  static constexpr int64_t kStageElements = 64;
  static_assert(kStageElements % kPartials == 0, "a stage is whole blocks of partials");
  static constexpr int64_t kMaxAccumulatorRow = 1 << 15;
  static constexpr int64_t kRowBlock = 16;
  // Rows of accumulators are split over threads only from this size (see ParallelExtent).
  static constexpr int64_t kParallelRowReduceElements = 1 << 23;

  FusionKernel& kernel_;
};

// The type sums and products of `t` accumulate in: double for f32, else t itself.
inline std::string WideType(ElementType t) { return t == ElementType::kF32 ? "double" : CType(t); }

// scatter: the operand copied, then each update combined into the position its index names.
void EmitScatter(StepWriter& steps, const Instruction& i);
// A scan (every txla.cum* target) along one dimension; `lines` is its geometry from its
// custom-call row, {before d, d's length, after d}.
void EmitScan(StepWriter& steps, const Instruction& i, const std::vector<int64_t>& lines);

}  // namespace txla::compiler::emitter
