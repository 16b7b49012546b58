// Shape inference: the shape each instruction must have, given its operands and attributes.
// For instructions whose result is not determined by their operands (parameter, constant,
// convert's element type, reshape and broadcast targets, iota, rng, gather, custom-call) the
// declared shape is taken and checked against what the operands allow.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace txla::hlo {

// Throws std::invalid_argument with a message that names the instruction and the rule broken.
Shape InferShape(const Instruction& instruction);

// Output dimensions of a windowed op (convolution spatial dims, reduce-window).
int64_t WindowedOutputSize(int64_t input, const WindowDim& w);
// Whether the windows tile the input exactly: each input position in exactly one window
// (stride = size, no padding or dilation, no margin left over).
bool WindowsTileExactly(const std::vector<WindowDim>& window, const std::vector<int64_t>& in_dims,
                        const std::vector<int64_t>& out_dims);

}  // namespace txla::hlo
