// The precision a graph's float32 convolutions are lowered with, from the user's switches.
//
// Exact by default: every algorithm that rounds differently from eager's direct float32 sums
// (oneDNN's Winograd convolutions) waits for the user to allow it, the way PyTorch and
// PyTorch/XLA spell that:
//   torch_xla.backends.set_mat_mul_precision('default' | 'high')   (PyTorch/XLA; 'highest' here
//                                                                   until set)
//   torch.set_float32_matmul_precision('high' | 'medium')
//   torch.backends.mkldnn.conv.fp32_precision = 'tf32' (or .mkldnn.fp32_precision,
//                                                       torch.backends.fp32_precision)
// A graph's cut records the precision it was traced under (GraphCut::convolution_precision, part
// of its hash), so a switch flipped between steps compiles the graph again instead of running
// code built for the other setting.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace txla::graph {

// kHighest unless one of the switches above allows reduced precision (then kDefault, or kHigh
// for PyTorch/XLA's 'high').
hlo::Precision UserConvolutionPrecision();

// torch_xla.backends' setting: "default", "high" or "highest" (throws on another word).
void SetMatMulPrecision(const std::string& precision);
std::string MatMulPrecision();

}  // namespace txla::graph
