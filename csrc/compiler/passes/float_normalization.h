// Float normalization: a graph's 16-bit float (bf16, f16) arithmetic is computed in f32.
//
// Every instruction with a 16-bit float result becomes its f32 counterpart: an operand that is
// another such instruction is used at f32 directly, one that is a parameter, constant or explicit
// convert is widened (exactly) by a convert; where a 16-bit value is still needed (an output, an
// explicit convert, an op kept narrow) a convert rounds the f32 value back. So values are rounded
// to the type where they leave the graph or where the program converts them, and not between the
// steps of a composite op: layer norm's mean and variance stay f32 as in eager's float opmath.
// The lowering converts every aten op's 16-bit result to its own type (lower/lower_graph.cc), so
// the rounding eager makes between ops is kept; without those converts (XLA_FLAGS'
// --xla_allow_excess_precision) this is XLA's "excess precision". What stays narrow: parameters,
// constants, converts, bitcasts and tuples.
//
// The kernels and library routines then only ever load and store 16-bit floats (loads widen,
// stores round; codegen/cpp_emitter.cc): scatter and collectives run in f32. A dot
// of two bf16 values keeps its bf16 operands and gets an f32 result: a bf16 GEMM with f32
// accumulation (library/gemm_bf16.h), the product torch.autocast means; a convolution (or its
// gradient) of two bf16 values likewise (library/conv2d.h).
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class FloatNormalization final : public Pass {
 public:
  std::string name() const override { return "float-normalization"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
