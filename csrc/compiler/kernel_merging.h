// Multi-output loop kernels. A loop fusion that only the graph's outputs and one other loop
// fusion of the same shape read, the latter at each element's own index, is computed inside
// that consumer's loop and written from there: an optimizer's state update and the parameter
// update that reads it (SGD's momentum buffer, AdamW's two moments) become one pass over
// memory, where the consumer used to read back what the producer had just written.
//
// Sibling reductions: two reductions over the same loops (input shape and reduced dimensions)
// that read a common full-size operand, placed next to each other (passes/sibling_reductions.h),
// run as one kernel with an accumulator each, the later one's kernel writing both: batch norm's
// backward sums dy and dy * xhat over (N, H, W), layer norm's backward sums g and g * xhat per
// row and dy and dy * xhat per column, each pair in one pass over the activations instead of two.
//
// The fusions stay separate instructions in the HLO; buffer assignment keeps the written value's
// operands alive until the writing kernel runs, and the emitter writes both from one loop.
#pragma once

#include <unordered_map>
#include <vector>

#include "hlo/instruction.h"

namespace txla::compiler {

struct MergedKernels {
  // A producer -> the consumer whose kernel computes and writes it.
  std::unordered_map<const hlo::Instruction*, const hlo::Instruction*> writer;
  // A kernel -> what it also writes, in instruction order: the producers it reads (a loop
  // kernel), or its sibling reduction (a reduction kernel).
  std::unordered_map<const hlo::Instruction*, std::vector<const hlo::Instruction*>> extra_outputs;

  // The instruction whose kernel computes `i`: its writer, or `i` itself.
  const hlo::Instruction* KernelOf(const hlo::Instruction* i) const {
    auto found = writer.find(i);
    return found == writer.end() ? i : found->second;
  }
};

MergedKernels FindMergedKernels(const hlo::Module& module);

// A reduction fusion's reduce (nullptr for anything else).
const hlo::Instruction* ReductionOf(const hlo::Instruction* fusion);

// Whether the reduction fusions `a` and `b` can run as one kernel: the same loops (input shape,
// reduced dimensions), a bounded row of accumulators, a full-size operand both read, and
// neither reading the other (a kernel placed between them could still: the pass checks that).
bool AreSiblingReductions(const hlo::Instruction* a, const hlo::Instruction* b);

// Whether the fused parameter reaches the fusion's root through same-shape elementwise ops only:
// then each output element reads the parameter at its own index and nowhere else.
bool ReadAtOwnIndexOnly(const hlo::Instruction* fused_param, const hlo::Instruction* fused_root);

// Whether the loop fusion `fusion` reads the entry instruction `value` only at each output
// element's own index (false if it is not a loop fusion).
bool FusionReadsAtOwnIndexOnly(const hlo::Instruction* fusion, const hlo::Instruction* value);

}  // namespace txla::compiler
