// Convolutions of images of a few pixels (ResNet-18's last stages: 512 channels of 2x2, 256 of
// 4x4) as loop kernels. With a 3x3 window padded by one, a 2x2 output position sees 4 of
// its 9 taps: oneDNN's blocked kernels still walk whole rows of the padded window (and reorder
// the 9.4 MB weight into their layout on every call), so the stage ran at a third of the others'
// rate. Here the valid (output position, input position, tap) triples are listed when the kernel
// is generated, so every multiply-add is useful, and the weight is read where it lies.
//
// The forward pass and the input gradient are one computation with the channel roles swapped:
//   out[n][a][p] = sum over b and the triples (p, q, t) of W(a, b, t) * in[n][b][q]
// forward: a output channels, b input channels, in = x, out = y, W(a, b, t) = w[a][b][t];
// input gradient: a input channels, b output channels, in = dy, out = dx, W(a, b, t) = w[b][a][t],
// the triples read backwards (the gradient flows from output position to input position).
// A call takes (group of 16 images, block of R output channels) units: it copies the group's
// images into images-last order on its stack, then per input channel loads the few position
// vectors once and multiplies them into R x positions accumulator registers by broadcast weights.
#include "compiler/codegen/library_call_emitter.h"

#include "metrics/metrics.h"

namespace txla::compiler::emitter {
namespace {

// Accumulator registers: output channels of a block times output positions (32 vector registers,
// the positions of one input channel and a broadcast weight need the rest).
constexpr int64_t kMaxAccumulators = 24;
// Images of at most 4x4 (ResNet-18's last two stages): beyond, an output channel's positions do
// not fit the registers. At 4x4 (256 channels) the forward pass took 0.57-0.58 ms a call against
// oneDNN's 0.73-0.78, the filter gradient 0.55-0.57 against 0.91-0.96, the input gradient
// 0.64-0.65 against 0.62-0.72 (ResNet-18's step, Zen 4).
constexpr int64_t kMaxForwardOutputPositions = 16;
constexpr int64_t kMaxInputPositions = 16;
// Either is an output channel's accumulators (the input gradient's outputs are input positions).
static_assert(kMaxForwardOutputPositions <= kMaxAccumulators && kMaxInputPositions <= kMaxAccumulators);
// The group's images-last copy, on the kernel's stack (64 bytes a position and channel).
constexpr int64_t kMaxImagesLastBytes = 512 * 1024;

struct Triple {
  int64_t out_position, in_position, tap;
};

// One kernel's sizes: A output channels of `out_positions`, B input channels of `in_positions`,
// the weight of (a, b, tap) at a * a_stride + b * b_stride + tap.
struct SmallImageConv {
  int64_t n, a, b, out_positions, in_positions, a_stride, b_stride, taps;
  int64_t block = 1;  // output channels a unit (BlockOf)
  std::vector<Triple> triples;
  std::string out, in, weights, bias;
};

// The forward convolution's valid (output position, input position, tap) triples.
std::vector<Triple> ForwardTriples(const hlo::Attributes& attrs, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  const hlo::WindowDim &wh = attrs.window[0], &ww = attrs.window[1];
  std::vector<Triple> triples;
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x)
      for (int64_t u = 0; u < wh.size; ++u)
        for (int64_t v = 0; v < ww.size; ++v) {
          const int64_t iy = y * wh.stride - wh.pad_lo + u * wh.rhs_dilation;
          const int64_t ix = x * ww.stride - ww.pad_lo + v * ww.rhs_dilation;
          if (iy >= 0 && iy < h && ix >= 0 && ix < w) triples.push_back({y * ow + x, iy * w + ix, u * ww.size + v});
        }
  return triples;
}

// The largest block of output channels that divides them and keeps its accumulators (`each` a
// channel) within `registers`.
int64_t BlockOf(int64_t channels, int64_t each, int64_t registers = kMaxAccumulators) {
  for (int64_t r = registers / each; r > 1; --r)
    if (channels % r == 0) return r;
  return 1;
}

std::string SmallImageBody(const SmallImageConv& g) {
  const int64_t v = kImagesPerVector, block = g.block, blocks = g.a / block, copied = g.b * g.in_positions;
  std::ostringstream body;
  body << kVector16Typedef << "  txla_v16 in[" << copied << "];  // in[channel][position][image], 16 images\n"
       << "  int64_t copied = -1;\n"
       << "  for (int64_t unit = lo; unit < hi; ++unit) {\n"
       << "    const int64_t group = unit / " << blocks << ", a0 = unit % " << blocks << " * " << block << ";\n"
       << "    const int64_t n0 = group * " << v << ";\n"
       << "    if (group != copied) {\n"
       << ImagesLastCopy("in", g.in, copied) << "      copied = group;\n"
       << "    }\n";
  for (int64_t r = 0; r < block; ++r)
    for (int64_t p = 0; p < g.out_positions; ++p)
      body << "    txla_v16 a" << r << "_" << p << " = {};"
           << (g.bias.empty() ? "" : " a" + std::to_string(r) + "_" + std::to_string(p) + " += " + g.bias + "[a0 + " +
                                         std::to_string(r) + "];")
           << "\n";
  body << "    for (int64_t b = 0; b < " << g.b << "; ++b) {\n"
       << "      const txla_v16* iv = in + b * " << g.in_positions << ";\n"
       << "      const float* wp = " << g.weights << " + a0 * " << g.a_stride << " + b * " << g.b_stride << ";\n";
  for (int64_t q = 0; q < g.in_positions; ++q) body << "      const txla_v16 i" << q << " = iv[" << q << "];\n";
  for (int64_t r = 0; r < block; ++r) {
    std::vector<bool> loaded(static_cast<size_t>(g.taps), false);
    for (const Triple& t : g.triples) {
      std::string w = "w" + std::to_string(r) + "_" + std::to_string(t.tap);
      if (!loaded[static_cast<size_t>(t.tap)]) {
        body << "      const float " << w << " = wp[" << r * g.a_stride + t.tap << "];\n";
        loaded[static_cast<size_t>(t.tap)] = true;
      }
      body << "      a" << r << "_" << t.out_position << " += " << w << " * i" << t.in_position << ";\n";
    }
  }
  body << "    }\n";
  for (int64_t r = 0; r < block; ++r)
    for (int64_t p = 0; p < g.out_positions; ++p)
      body << "    for (int64_t i = 0; i < " << v << "; ++i) " << g.out << "[(n0 + i) * " << g.a * g.out_positions
           << " + (a0 + " << r << ") * " << g.out_positions << " + " << p << "] = a" << r << "_" << p << "[i];\n";
  body << "  }\n";
  return body.str();
}

// The filter gradient dw[o][c][t] = sum over images and the tap's (p, q) pairs of
// dy[n][o][p] * x[n][c][q], 16 input channels a vector: a call takes (block of 16 input channels,
// block of R output channels) units; per unit it copies those channels of every image
// channels-last onto its stack (once per channel block), keeps R x taps accumulators and walks the
// images in order (so the sum does not depend on the threads), each dy value a broadcast scalar.
// Vectorizing over images instead would end every (o, c) pair in a horizontal sum per tap.
struct SmallImageFilterGradient {
  int64_t n, c, o, out_positions, in_positions, taps;
  int64_t block = 1;  // output channels a unit (FilterGradientBlock)
  std::vector<Triple> triples;
  std::string dw, dy, x;
};

constexpr int64_t kChannelsPerVector = 16;
// Vector registers for the filter gradient's accumulators and an image's input positions.
constexpr int64_t kFilterGradientRegisters = 28;
constexpr int64_t kMaxFilterGradientOutputPositions = 16;

int64_t FilterGradientBlock(const SmallImageFilterGradient& g) {
  return BlockOf(g.o, g.taps, kFilterGradientRegisters - g.in_positions);
}

std::string SmallImageFilterGradientBody(const SmallImageFilterGradient& g) {
  const int64_t q = g.in_positions, block = g.block, blocks = g.o / block;
  std::ostringstream body;
  body << kVector16Typedef << "  txla_v16 xv[" << g.n * q << "];  // xv[image][position][16 channels]\n"
       << "  int64_t copied = -1;\n"
       << "  for (int64_t unit = lo; unit < hi; ++unit) {\n"
       << "    const int64_t cb = unit / " << blocks << ", o0 = unit % " << blocks << " * " << block
       << ", c0 = cb * " << kChannelsPerVector << ";\n"
       << "    if (cb != copied) {\n"
       << "      for (int64_t n = 0; n < " << g.n << "; ++n)\n"
       << "        for (int64_t j = 0; j < " << kChannelsPerVector << "; ++j)\n"
       << "          for (int64_t k = 0; k < " << q << "; ++k) xv[n * " << q << " + k][j] = " << g.x << "[(n * " << g.c
       << " + c0 + j) * " << q << " + k];\n"
       << "      copied = cb;\n"
       << "    }\n";
  for (int64_t r = 0; r < block; ++r)
    for (int64_t t = 0; t < g.taps; ++t) body << "    txla_v16 a" << r << "_" << t << " = {};\n";
  body << "    for (int64_t n = 0; n < " << g.n << "; ++n) {\n"
       << "      const txla_v16* iv = xv + n * " << q << ";\n";
  for (int64_t k = 0; k < q; ++k) body << "      const txla_v16 i" << k << " = iv[" << k << "];\n";
  for (int64_t r = 0; r < block; ++r) {
    body << "      const float* e" << r << " = " << g.dy << " + (n * " << g.o << " + o0 + " << r << ") * "
         << g.out_positions << ";\n";
    for (const Triple& t : g.triples)
      body << "      a" << r << "_" << t.tap << " += e" << r << "[" << t.out_position << "] * i" << t.in_position
           << ";\n";
  }
  body << "    }\n";
  for (int64_t r = 0; r < block; ++r) {
    body << "    { float* d = " << g.dw << " + ((o0 + " << r << ") * " << g.c << " + c0) * " << g.taps << ";\n"
         << "      for (int64_t j = 0; j < " << kChannelsPerVector << "; ++j) {";
    for (int64_t t = 0; t < g.taps; ++t) body << " d[j * " << g.taps << " + " << t << "] = a" << r << "_" << t << "[j];";
    body << " } }\n";
  }
  body << "  }\n";
  return body.str();
}

}  // namespace

bool LibraryCallEmitter::EmitSmallImageConv(const Instruction& i, bool input_gradient) {
  // Forward: (x, w[, bias]) -> y; input gradient: (dy, w) -> dx.
  const hlo::Shape& w = i.operand(1)->shape();
  const hlo::Shape& x = input_gradient ? i.shape() : i.operand(0)->shape();
  const hlo::Shape& y = input_gradient ? i.operand(0)->shape() : i.shape();
  // whole vectors of images, few positions
  if (!IsFloatSingleGroupConv2d(i, x.rank())) return false;
  if (x.dims[0] == 0 || x.dims[0] % kImagesPerVector != 0 || y.dims[2] * y.dims[3] > kMaxForwardOutputPositions ||
      x.dims[2] * x.dims[3] > kMaxInputPositions || x.element_count() == 0 || y.element_count() == 0)
    return false;
  const bool bias = !input_gradient && i.operands().size() == 3;
  if (bias && i.operand(2)->shape().type != ElementType::kF32) return false;
  const int64_t taps = w.dims[2] * w.dims[3], in_positions = x.dims[2] * x.dims[3];
  const int64_t out_positions = y.dims[2] * y.dims[3];
  SmallImageConv g;
  g.n = x.dims[0];
  g.taps = taps;
  g.triples = ForwardTriples(i.attrs(), x.dims[2], x.dims[3], y.dims[2], y.dims[3]);
  g.out = BufferName(i);
  g.in = steps_.Operand(i, 0);
  g.weights = steps_.Operand(i, 1);
  if (!input_gradient) {
    g.a = y.dims[1], g.b = x.dims[1], g.out_positions = out_positions, g.in_positions = in_positions;
    g.a_stride = x.dims[1] * taps, g.b_stride = taps;
    if (bias) g.bias = steps_.Operand(i, 2);
  } else {
    g.a = x.dims[1], g.b = y.dims[1], g.out_positions = in_positions, g.in_positions = out_positions;
    g.a_stride = taps, g.b_stride = x.dims[1] * taps;
    for (Triple& t : g.triples) std::swap(t.out_position, t.in_position);
  }
  if (g.b * g.in_positions * 64 > kMaxImagesLastBytes) return false;
  g.block = BlockOf(g.a, g.out_positions);
  if (input_gradient)  // (one counter a call site: the macro keeps its counter in a static)
    TXLA_COUNTER("ConvSmallImageInputGradientKernels", 1);
  else
    TXLA_COUNTER("ConvSmallImageKernels", 1);
  std::vector<StepWriter::KernelBuffer> buffers = {{"float", g.out, true}, {"float", g.in, false}, {"float", g.weights, false}};
  if (bias) buffers.push_back({"float", g.bias, false});
  steps_.EmitKernelCall(i.name(), buffers, SmallImageBody(g), g.n / kImagesPerVector * (g.a / g.block));
  return true;
}

bool LibraryCallEmitter::EmitSmallImageConvFilterGradient(const Instruction& i) {
  // (dy, x) -> dw
  const hlo::Shape& dy = i.operand(0)->shape();
  const hlo::Shape& x = i.operand(1)->shape();
  const hlo::Shape& dw = i.shape();
  if (!IsFloatSingleGroupConv2d(i, x.rank())) return false;
  SmallImageFilterGradient g{x.dims[0], x.dims[1], dw.dims[0], dy.dims[2] * dy.dims[3], x.dims[2] * x.dims[3],
                             dw.dims[2] * dw.dims[3]};
  if (g.n == 0 || g.c == 0 || g.c % kChannelsPerVector != 0 || g.o == 0 || g.out_positions > kMaxFilterGradientOutputPositions ||
      g.out_positions == 0 || g.in_positions > kMaxInputPositions || g.taps > kFilterGradientRegisters - g.in_positions ||
      g.n * g.in_positions * 64 > kMaxImagesLastBytes)
    return false;
  g.block = FilterGradientBlock(g);
  g.triples = ForwardTriples(i.attrs(), x.dims[2], x.dims[3], dy.dims[2], dy.dims[3]);
  g.dw = BufferName(i), g.dy = steps_.Operand(i, 0), g.x = steps_.Operand(i, 1);
  TXLA_COUNTER("ConvSmallImageFilterGradientKernels", 1);
  std::vector<StepWriter::KernelBuffer> buffers = {{"float", g.dw, true}, {"float", g.dy, false}, {"float", g.x, false}};
  steps_.EmitKernelCall(i.name(), buffers, SmallImageFilterGradientBody(g), g.c / kChannelsPerVector * (g.o / g.block));
  return true;
}

}  // namespace txla::compiler::emitter
