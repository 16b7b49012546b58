// Multi-output loop kernels. A loop fusion that only the graph's outputs and one other loop
// fusion of the same shape read, the latter at each element's own index, is computed inside
// that consumer's loop and written from there: an optimizer's state update and the parameter
// update that reads it (SGD's momentum buffer, AdamW's two moments) become one pass over
// memory, where the consumer used to read back what the producer had just written.
//
// The fusions stay separate instructions in the HLO; buffer assignment keeps the producer's
// operands alive until the consumer's kernel runs, and the emitter writes both from one loop.
#pragma once

#include <unordered_map>
#include <vector>

#include "hlo/instruction.h"

namespace txla::compiler {

struct MergedKernels {
  // A producer -> the consumer whose kernel computes and writes it.
  std::unordered_map<const hlo::Instruction*, const hlo::Instruction*> writer;
  // A consumer -> the producers its kernel also writes, in instruction order.
  std::unordered_map<const hlo::Instruction*, std::vector<const hlo::Instruction*>> extra_outputs;

  // The instruction whose kernel computes `i`: its writer, or `i` itself.
  const hlo::Instruction* KernelOf(const hlo::Instruction* i) const {
    auto found = writer.find(i);
    return found == writer.end() ? i : found->second;
  }
};

MergedKernels FindMergedKernels(const hlo::Module& module);

// Whether the fused parameter reaches the fusion's root through same-shape elementwise ops only:
// then each output element reads the parameter at its own index and nowhere else.
bool ReadAtOwnIndexOnly(const hlo::Instruction* fused_param, const hlo::Instruction* fused_root);

// Whether the loop fusion `fusion` reads the entry instruction `value` only at each output
// element's own index (false if it is not a loop fusion).
bool FusionReadsAtOwnIndexOnly(const hlo::Instruction* fusion, const hlo::Instruction* value);

}  // namespace txla::compiler
