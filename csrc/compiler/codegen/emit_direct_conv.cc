// Forward convolutions of few input channels as loop kernels instead of library calls.
//
// With one input channel (the MNIST CNN's first layer, 1->10 5x5 on 28x28 images) oneDNN 2.6
// pads the 10 output channels to a 16-wide block and reorders its blocked output back to NCHW:
// 1.0-1.1 ms a step for 18 MFLOP. Here each output row is a small array of accumulators the
// compiler keeps in vector registers (its dimensions are constants in the generated source),
// every tap adding a weight times a contiguous slice of an input row: 0.37-0.47 ms for half the
// batch on one Zen 4 core, written straight into NCHW.
#include "compiler/codegen/emitter.h"

#include "metrics/metrics.h"

namespace txla::compiler::emitter {
namespace {

// Few input channels: more, and the library's blocked kernels reuse each input load across many
// output channels, which a row of accumulators does not.
constexpr int64_t kMaxDirectInputChannels = 4;
// A row of at least a vector of outputs, and few enough that its accumulators stay in registers.
constexpr int64_t kMinDirectRow = 16;
constexpr int64_t kMaxDirectRow = 64;

}  // namespace

bool Emitter::EmitDirectConv(const Instruction& i) {
  const hlo::Attributes& a = i.attrs();
  const hlo::Shape& x = i.operand(0)->shape();
  const hlo::Shape& w = i.operand(1)->shape();
  const hlo::Shape& y = i.shape();
  if (x.type != ElementType::kF32 || w.type != ElementType::kF32 || y.type != ElementType::kF32) return false;
  if (!IsCanonicalConv2d(a, x.rank()) || a.feature_group_count != 1) return false;
  for (const hlo::WindowDim& d : a.window)
    if (d.stride != 1 || d.rhs_dilation != 1 || d.pad_lo != 0) return false;
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t o = w.dims[0], kh = w.dims[2], kw = w.dims[3], oh = y.dims[2], ow = y.dims[3];
  if (c > kMaxDirectInputChannels || ow < kMinDirectRow || ow > kMaxDirectRow || y.element_count() == 0) return false;
  const bool bias = i.operands().size() == 3;
  if (bias && i.operand(2)->shape().type != ElementType::kF32) return false;
  TXLA_COUNTER("ConvDirectKernels", 1);
  const std::string out = Buffer(i), in = Operand(i, 0), weights = Operand(i, 1);
  std::ostringstream body;
  const std::string first = n > 1 ? "lo" : "0", past = n > 1 ? "hi" : "1";
  body << "  for (int64_t n = " << first << "; n < " << past << "; ++n)\n"
       << "  for (int64_t o = 0; o < " << o << "; ++o)\n"
       << "  for (int64_t r = 0; r < " << oh << "; ++r) {\n"
       << "    float acc[" << ow << "];\n"
       << "    for (int64_t j = 0; j < " << ow << "; ++j) acc[j] = " << (bias ? Operand(i, 2) + "[o]" : "0.0f")
       << ";\n"
       << "    for (int64_t c = 0; c < " << c << "; ++c)\n"
       << "    for (int64_t u = 0; u < " << kh << "; ++u) {\n"
       << "      const float* xr = " << in << " + ((n * " << c << " + c) * " << h << " + r + u) * " << wd << ";\n"
       << "      const float* wr = " << weights << " + ((o * " << c << " + c) * " << kh << " + u) * " << kw << ";\n"
       << "      for (int64_t v = 0; v < " << kw << "; ++v) {\n"
       << "        const float wv = wr[v];\n"
       << "        for (int64_t j = 0; j < " << ow << "; ++j) acc[j] += wv * xr[j + v];\n"
       << "      }\n"
       << "    }\n"
       << "    float* yr = " << out << " + ((n * " << o << " + o) * " << oh << " + r) * " << ow << ";\n"
       << "    for (int64_t j = 0; j < " << ow << "; ++j) yr[j] = acc[j];\n"
       << "  }\n";
  std::vector<KernelBuffer> buffers = {{"float", out, true}, {"float", in, false}, {"float", weights, false}};
  if (bias) buffers.push_back({"float", Operand(i, 2), false});
  EmitKernelCall(i.name(), buffers, body.str(), n > 1 ? n : 0);
  return true;
}

}  // namespace txla::compiler::emitter
