// Lowering of convolutions and their gradients: 1-D and 2-D, NCHW / OIHW, as library calls
// (oneDNN or im2col + GEMM, csrc/compiler/library/conv2d.h) the compiler does not fuse into.
#include <ATen/ATen.h>

#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

hlo::ConvDims Nchw2d() {
  hlo::ConvDims d;
  d.input_batch = 0, d.input_feature = 1, d.input_spatial = {2, 3};
  d.kernel_output_feature = 0, d.kernel_input_feature = 1, d.kernel_spatial = {2, 3};
  d.output_batch = 0, d.output_feature = 1, d.output_spatial = {2, 3};
  return d;
}

struct ConvParams {
  hlo::Attributes attrs;
  bool one_d = false;  // conv1d, run as a 2-D convolution over a height of 1
  // A transposed convolution is the input gradient of the forward convolution with the same
  // window and weight (its output_padding only lengthens the output), and the other way round.
  bool transposed = false;
};

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
// and convolution_backward(grad_output, input, weight, ...) share these arguments from `first`.
ConvParams ConvAttrs(LoweringContext& c, const ir::Node& n, size_t first, int64_t rank) {
  if (rank != 3 && rank != 4)
    throw NotLowered("only 1-D and 2-D convolutions have a lowering, not " +
                                std::to_string(rank - 2) + "-D");
  ConvParams p;
  p.one_d = rank == 3;
  p.transposed = c.ConstArg(n, first + 3).toBool();
  auto stride = IntList(c.ConstArg(n, first)), padding = IntList(c.ConstArg(n, first + 1)),
       dilation = IntList(c.ConstArg(n, first + 2));
  if (p.one_d) {
    stride.insert(stride.begin(), 1), padding.insert(padding.begin(), 0), dilation.insert(dilation.begin(), 1);
  }
  p.attrs.conv = Nchw2d();
  p.attrs.feature_group_count = c.ConstArg(n, first + 5).toInt();
  p.attrs.precision = c.convolution_precision();
  for (int s = 0; s < 2; ++s) {
    hlo::WindowDim w;
    w.stride = stride.at(s), w.pad_lo = w.pad_hi = padding.at(s), w.rhs_dilation = dilation.at(s);
    p.attrs.window.push_back(w);
  }
  return p;
}

Instruction* As2d(LoweringContext& c, Instruction* x, bool one_d) {
  if (!one_d) return x;
  auto d = x->shape().dims;
  return c.Reshape(x, {d[0], d[1], 1, d[2]});
}

void SetKernel(ConvParams& p, const Instruction* weight4d) {
  p.attrs.window[0].size = weight4d->shape().dims[2];
  p.attrs.window[1].size = weight4d->shape().dims[3];
}

Outs Convolution(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ConvParams p = ConvAttrs(c, n, 3, x->shape().rank());
  x = As2d(c, x, p.one_d);
  Instruction* w = As2d(c, c.Operand(n, 1), p.one_d);
  SetKernel(p, w);
  const auto& out = n.shape().sizes;
  std::vector<int64_t> dims4 = p.one_d ? std::vector<int64_t>{out[0], out[1], 1, out[2]} : out;
  Instruction* y;
  const ElementType type = OutType(n);
  Instruction* bias = c.IsNone(n, 2) ? nullptr : c.Operand(n, 2);
  // The library call adds the bias as it writes its output (oneDNN's bias argument), sparing a
  // pass over the output: the MNIST CNN's first layer, 0.14-0.17 ms a step on a Zen 4 EPYC.
  const bool bias_in_call = bias != nullptr && !p.transposed && x->shape().type == type &&
                            w->shape().type == type && bias->shape().type == type &&
                            (type == ElementType::kF32 || type == ElementType::kF64);
  if (p.transposed) {
    hlo::Attributes a = p.attrs;
    a.custom_call_target = hlo::CustomCallTarget::kConv2dBackwardInput;
    y = c.Add(Opcode::kCustomCall, hlo::Shape::Array(type, dims4), {x, w}, a);
  } else if (bias_in_call) {
    hlo::Attributes a = p.attrs;
    a.custom_call_target = hlo::CustomCallTarget::kConv2dBias;
    y = c.Add(Opcode::kCustomCall, hlo::Shape::Array(type, dims4), {x, w, bias}, a);
    bias = nullptr;  // added
  } else {
    y = c.Add(Opcode::kConvolution, hlo::Shape::Array(type, dims4), {x, w}, p.attrs);
  }
  y = c.Reshape(y, out);
  if (bias != nullptr) {
    bias = c.Reshape(bias, {out[1], 1});
    if (!p.one_d) bias = c.Reshape(bias, {out[1], 1, 1});
    y = c.Elementwise(Opcode::kAdd, {y, bias}, type);
  }
  return {y};
}

// (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
//  output_padding, groups, output_mask)
Outs ConvolutionBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* dy = c.Operand(n, 0);
  ConvParams p = ConvAttrs(c, n, 4, dy->shape().rank());
  auto mask = c.ConstArg(n, 10).toBoolList();
  Instruction* x = As2d(c, c.Operand(n, 1), p.one_d);
  Instruction* w = As2d(c, c.Operand(n, 2), p.one_d);
  Instruction* dy4 = As2d(c, dy, p.one_d);
  SetKernel(p, w);
  ElementType t = OutType(n, mask[0] ? 0 : mask[1] ? 1 : 2);
  Outs outs(3, nullptr);
  if (mask[0]) {
    hlo::Attributes a = p.attrs;
    if (p.transposed) {
      outs[0] = c.Add(Opcode::kConvolution, hlo::Shape::Array(t, x->shape().dims), {dy4, w}, a);
    } else {
      a.custom_call_target = hlo::CustomCallTarget::kConv2dBackwardInput;
      outs[0] = c.Add(Opcode::kCustomCall, hlo::Shape::Array(t, x->shape().dims), {dy4, w}, a);
    }
    outs[0] = c.Reshape(outs[0], n.shape(0).sizes);
  }
  if (mask[1]) {
    hlo::Attributes a = p.attrs;
    a.custom_call_target = hlo::CustomCallTarget::kConv2dBackwardFilter;
    // The filter gradient of the forward convolution whose output is (transposed: whose input
    // is) grad_output.
    std::vector<Instruction*> operands = p.transposed ? std::vector<Instruction*>{x, dy4} : std::vector<Instruction*>{dy4, x};
    outs[1] = c.Reshape(c.Add(Opcode::kCustomCall, hlo::Shape::Array(t, w->shape().dims), operands, a),
                        n.shape(1).sizes);
  }
  if (mask[2]) {
    std::vector<int64_t> dims = {0};
    for (int64_t d = 2; d < dy->shape().rank(); ++d) dims.push_back(d);
    outs[2] = c.Reshape(c.Reduce(dy, dims, RK::kSum), n.shape(2).sizes);
  }
  return outs;
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_convolution, Convolution)
TXLA_LOWER(aten_convolution_backward, ConvolutionBackward)

}  // namespace txla::lower
