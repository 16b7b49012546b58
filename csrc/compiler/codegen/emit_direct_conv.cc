// Forward convolutions as loop kernels instead of library calls, where oneDNN 2.6's blocked
// kernels waste most of their work: few channels (not multiples of its 16-wide blocks) and
// short rows. Two forms, both written straight into NCHW with the layer's bias (dimensions are
// constants in the generated source, so accumulators stay in vector registers):
//
// - Rows: an output row of accumulators, each tap adding a weight times a contiguous slice of an
//   input row; for few input channels and rows of 16-64. The MNIST CNN's first layer (1->10 5x5
//   on 28x28): oneDNN padded the 10 output channels to 16 and reordered its blocked output back,
//   1.0-1.1 ms a step for 18 MFLOP; this kernel 0.37-0.47 ms for half the batch on one core.
// - Channels: rows of exactly one vector (8 or 16 outputs), one accumulator vector per output
//   channel (up to 24), each input slice loaded once for all of them. The MNIST CNN's second
//   layer (10->20 5x5 on 12x12, rows of 8): oneDNN ~1.2 ms for half the batch on one core
//   (channels padded to 16 and 32), this kernel 0.41-0.62 ms.
//
// (One Zen 4 EPYC core, 64 images, interleaved runs.)
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
// The channel form: a vector accumulator per output channel, leaving registers for the input.
constexpr int64_t kMaxVectorAccumulators = 24;

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
  const bool channel_form = (ow == 8 || ow == 16) && o <= kMaxVectorAccumulators;
  const bool row_form = c <= kMaxDirectInputChannels && ow >= kMinDirectRow && ow <= kMaxDirectRow;
  if (!(channel_form || row_form) || y.element_count() == 0) return false;
  const bool bias = i.operands().size() == 3;
  if (bias && i.operand(2)->shape().type != ElementType::kF32) return false;
  TXLA_COUNTER("ConvDirectKernels", 1);
  const std::string out = Buffer(i), in = Operand(i, 0), weights = Operand(i, 1);
  std::ostringstream body;
  const std::string first = n > 1 ? "lo" : "0", past = n > 1 ? "hi" : "1";
  if (channel_form) {
    // The weights of all output channels at one tap are `taps` apart.
    const int64_t taps = c * kh * kw;
    body << "  typedef float txla_row __attribute__((vector_size(" << ow * 4 << ")));\n"
         << "  for (int64_t n = " << first << "; n < " << past << "; ++n)\n"
         << "  for (int64_t r = 0; r < " << oh << "; ++r) {\n";
    for (int64_t k = 0; k < o; ++k)
      body << "    txla_row a" << k << " = {}; a" << k << " += " << (bias ? Operand(i, 2) + "[" + std::to_string(k) + "]" : "0.0f")
           << ";\n";
    body << "    for (int64_t c = 0; c < " << c << "; ++c)\n"
         << "    for (int64_t u = 0; u < " << kh << "; ++u)\n"
         << "    for (int64_t v = 0; v < " << kw << "; ++v) {\n"
         << "      txla_row xv;\n"
         << "      __builtin_memcpy(&xv, " << in << " + ((n * " << c << " + c) * " << h << " + r + u) * " << wd
         << " + v, sizeof xv);\n"
         << "      const float* wp = " << weights << " + (c * " << kh << " + u) * " << kw << " + v;\n";
    for (int64_t k = 0; k < o; ++k) body << "      a" << k << " += wp[" << k * taps << "] * xv;\n";
    body << "    }\n";
    for (int64_t k = 0; k < o; ++k)
      body << "    __builtin_memcpy(" << out << " + ((n * " << o << " + " << k << ") * " << oh << " + r) * " << ow
           << ", &a" << k << ", sizeof a" << k << ");\n";
    body << "  }\n";
    std::vector<KernelBuffer> buffers = {{"float", out, true}, {"float", in, false}, {"float", weights, false}};
    if (bias) buffers.push_back({"float", Operand(i, 2), false});
    EmitKernelCall(i.name(), buffers, body.str(), n > 1 ? n : 0);
    return true;
  }
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
