// Buffer assignment: where each materialized value of the entry computation lives when the
// compiled code runs. Parameters are the caller's buffers; values the graph returns are written
// straight into the output buffers; every other kernel result gets a slice of one arena, and a
// slice is reused once the value in it is dead (first fit over freed ranges).
#pragma once

#include <unordered_map>
#include <vector>

#include "compiler/kernel_merging.h"
#include "hlo/instruction.h"

namespace txla::compiler {

struct BufferSlot {
  // kAlias: a reshape read in place, in its operand's buffer (`base`): a row-major reshape keeps
  // every element's linear position, so copying it (400 KB of the MLP's input, GPT's 1 MB
  // gradients reshaped for their GEMMs) bought nothing.
  enum class Kind { kParameter, kOutput, kTemp, kInline, kVirtual, kAlias };
  Kind kind = Kind::kTemp;
  int64_t index = 0;   // parameter number or output index
  int64_t offset = 0;  // arena offset (kTemp)
  const hlo::Instruction* base = nullptr;  // kAlias
};

struct BufferPlan {
  std::unordered_map<const hlo::Instruction*, BufferSlot> slots;
  int64_t arena_bytes = 0;
  // Outputs that are a scalar constant: written by the generated code.
  std::vector<std::pair<int64_t, const hlo::Instruction*>> output_copies;
  // Outputs that repeat another output (output index) or pass a parameter through (parameter
  // number): device buffers are immutable, so the runtime hands out the same buffer, no copy.
  std::vector<std::pair<int64_t, int64_t>> output_aliases;
  std::vector<std::pair<int64_t, int64_t>> parameter_outputs;
  // (output, parameter) pairs where the output may be written over the parameter's buffer when
  // the runtime finds nothing else holds it (a donated parameter, updated in place): the output's
  // loop kernel is the parameter's last reader and reads it only at the index it writes. An
  // output may have several candidates; the runtime uses the first free one.
  std::vector<std::pair<int64_t, int64_t>> donations;
  // Loop fusions written by another's kernel (kernel_merging.h).
  MergedKernels merged;

  // A value read where its users run, in another value's buffer (a virtual transpose or an
  // alias): it has no kernel of its own.
  bool IsView(const hlo::Instruction* i) const;
};

// A transpose whose users are all dots is never materialized: the dot reads its operand with the
// transpose flag. A matrix (2-D), or a batch of matrices each transposed ({0, 2, 1}) read by
// batched dots whose batch dimension leads.
bool IsVirtualTranspose(const hlo::Instruction& i);
int64_t ByteSize(const hlo::Shape& shape);
BufferPlan AssignBuffers(const hlo::Module& module);

}  // namespace txla::compiler
