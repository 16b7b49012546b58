// Calls into the support table (support_abi.h) with their geometry: GEMM for dots, convolution,
// pooling, sort and recurrent layers for their custom calls (hlo/custom_call.h's rows),
// collectives and SPMD resharding through the runtime. Some geometries run better as a loop
// kernel of their own, written here too: max pooling's small windows (emit_pool_kernels.cc),
// convolutions of few input channels (emit_direct_conv.cc) and of images of a few pixels
// (emit_small_image_conv.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "compiler/codegen/emitter.h"
#include "compiler/codegen/step_writer.h"

namespace txla::compiler::emitter {

class LibraryCallEmitter {
 public:
  explicit LibraryCallEmitter(StepWriter& steps) : steps_(steps) {}

  void EmitDot(const Instruction& dot);
  // A convolution or a custom call.
  void EmitLibraryCall(const Instruction& i);
  // An all-reduce, all-gather or reduce-scatter.
  void EmitCollective(const Instruction& i);

 private:
  // Reads through a virtual transpose: the buffer and whether it is transposed.
  static std::pair<const Instruction*, bool> GemmOperand(const Instruction& i);
  // emit_pool_kernels.cc: max pooling's small windows as loop kernels (false: the library's)
  bool EmitPoolIndices(const Instruction& i);
  bool EmitPoolBackwardFromInput(const Instruction& i);
  // emit_direct_conv.cc: a forward convolution of few input channels as a loop kernel
  bool EmitDirectConv(const Instruction& i);
  // ... and the input gradient of a stride-1 convolution of few input channels, 16 images a vector
  bool EmitDirectConvInputGradient(const Instruction& i);
  // ... and its filter gradient, the groups of 16 images' parts added in order by its step
  bool EmitDirectConvFilterGradient(const Instruction& i);
  // emit_small_image_conv.cc: a convolution of images of a few pixels (or its input gradient),
  // only its valid taps, 16 images a vector
  bool EmitSmallImageConv(const Instruction& i, bool input_gradient);
  // ... and its filter gradient, 16 input channels a vector
  bool EmitSmallImageConvFilterGradient(const Instruction& i);

  StepWriter& steps_;
};

// A float32 convolution (or gradient call) of one group in NCHW/OIHW of this rank without base
// dilation: what the loop-kernel convolutions (emit_direct_conv.cc, emit_small_image_conv.cc) take.
bool IsFloatSingleGroupConv2d(const Instruction& i, int64_t rank);
// A float32 convolution (or gradient call) of one group at stride 1 without dilation or
// padding, in NCHW/OIHW of this rank: what emit_direct_conv.cc's loop kernels take.
bool IsPlainUnitStrideConv2d(const Instruction& i, int64_t rank);

}  // namespace txla::compiler::emitter
