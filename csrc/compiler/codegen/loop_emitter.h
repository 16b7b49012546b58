// Loop kernels: the kernel of a fusion, an elementwise op or an array constant is one loop nest
// over its output (a reduce-rooted one's loops come from the reduction emitter), split across
// threads when it is large, walked in tiles when it reads through a transpose, cut at a
// concatenation's boundaries, or one flat loop of a length given at the call where kernels of
// several lengths in the graph are then the same code.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/emitter.h"
#include "compiler/codegen/fusion_kernel.h"
#include "compiler/codegen/reduction_emitter.h"
#include "compiler/codegen/step_writer.h"

namespace txla::compiler::emitter {

class LoopEmitter {
 public:
  explicit LoopEmitter(StepWriter& steps) : LoopEmitter(steps, /*probing_flat=*/false) {}

  // Decides which of the graph's loop kernels are emitted flat; before the first Emit.
  void ChooseFlatKernels() { flat_kernels_ = FlatKernelsOfManyLengths(); }
  // The kernel of `i` (a fusion, an elementwise op or an array constant) and its call, in the
  // step being written.
  void Emit(const Instruction& i);

 private:
  // A probe emits only the flat candidates, each as it would be flat, to compare them.
  LoopEmitter(StepWriter& steps, bool probing_flat)
      : steps_(steps), kernel_(steps.plan()), reductions_(kernel_), probing_flat_(probing_flat) {}

  bool Parallelizable(const Instruction& root);
  void EmitLoop(const Instruction& root, const std::string& out);
  std::string LoopNest(const Instruction& root, const std::string& out,
                       const std::vector<std::pair<int64_t, int64_t>>& ranges, bool may_split);
  // The innermost loop's body; the statements that do not change along `inner_var` go to
  // `*invariant`, for the caller to place before that loop.
  std::string LoopBody(const Instruction& root, const std::string& out, const Index& idx, const std::string& offset,
                       const std::string& indent, const std::string& inner_var, std::string* invariant);
  bool Flat(const Instruction& root) const;
  std::set<const Instruction*> FlatKernelsOfManyLengths();
  void EmitFlatLoop(const Instruction& root, const std::string& out);

  static constexpr int64_t kTile = 8;  // one vector of floats; measured best for 512x512

  StepWriter& steps_;
  FusionKernel kernel_;
  ReductionEmitter reductions_;  // the loops of a reduce-rooted kernel
  std::set<const Instruction*> flat_kernels_;
  const bool probing_flat_;
  // What the last LoopNest emitted: tiles indexed as tile * kTile + offset (or would have, in a
  // first pass that may split), and tiles walked down columns (since EmitLoop began).
  bool nest_has_tile_indices_ = false, nest_walked_down_columns_ = false;
};

}  // namespace txla::compiler::emitter
