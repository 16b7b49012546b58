// Forward convolutions as loop kernels instead of library calls, where oneDNN 2.6's blocked
// kernels waste most of their work: few channels (not multiples of its 16-wide blocks) and
// short rows. Two forms, both written straight into NCHW with the layer's bias (dimensions are
// constants in the generated source, so accumulators stay in vector registers):
//
// - Channels: rows cut into a few vectors (16, 8 and 4 floats), one accumulator vector per
//   output channel and piece (up to 24), each input slice loaded once for all output channels.
//   The MNIST CNN's second layer (10->20 5x5 on 12x12, rows of 8): oneDNN ~1.2 ms for half the
//   batch on one core (channels padded to 16 and 32), this kernel 0.41-0.62 ms. Its first layer
//   (1->10 5x5 on 28x28, rows of 16+8): oneDNN padded the 10 output channels to 16 and reordered
//   its blocked output back, 1.0-1.1 ms a step for 18 MFLOP; the row form below 0.33 ms for half
//   the batch on one core, this form 0.20 ms (the row form loads each input slice once per
//   output channel: as many loads as multiply-adds).
// - Rows: an output row of accumulators, each tap adding a weight times a contiguous slice of an
//   input row; for few input channels and rows of 16-64 that the channel form does not take
//   (too many output channels for its registers, or a row not a multiple of 4).
//
// (One Zen 4 EPYC core, 64 images, interleaved runs.)
#include "compiler/codegen/library_call_emitter.h"

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
// The input gradient's images-last copies of dy and dx for 16 images, on a kernel's stack.
constexpr int64_t kMaxImagesLastBytes = 512 * 1024;
// The filter gradient's per-group parts, on its step's stack.
constexpr int64_t kMaxFilterGradientParts = 1024 * 1024;
// Its accumulator registers, one per tap (a 5x5 kernel: 25 of the 32 vector registers, the dy
// vector one more; the shifted input vectors are the multiply-adds' memory operands).
constexpr int64_t kMaxFilterGradientTaps = 25;
constexpr int64_t kMinMultiplyAddsPerCopiedVector = 64;

// One convolution's sizes and the source names of its buffers (bias empty: none).
struct DirectConv {
  int64_t n, c, h, w, o, kh, kw, oh, ow;
  std::string out, in, weights, bias;
  // The images a call computes: a thread's range, or the one image.
  std::string first() const { return n > 1 ? "lo" : "0"; }
  std::string past() const { return n > 1 ? "hi" : "1"; }
};

// A row cut into vectors of 16, 8 and 4 floats (GCC's vector types are powers of two); none
// when the row is not a multiple of 4.
std::vector<int64_t> RowPieces(int64_t width) {
  if (width % 4 != 0) return {};
  std::vector<int64_t> pieces(width / 16, 16);
  int64_t rest = width % 16;  // 0, 4, 8 or 12
  for (int64_t lanes : {8, 4})
    if (rest >= lanes) pieces.push_back(lanes), rest -= lanes;
  return pieces;
}

// Rows of a few vectors: an accumulator vector per output channel and piece of the row, each
// input slice loaded once for all output channels.
std::string ChannelFormBody(const DirectConv& g) {
  std::ostringstream body;
  const int64_t taps = g.c * g.kh * g.kw;  // the weights of all output channels at one tap are this far apart
  const std::vector<int64_t> pieces = RowPieces(g.ow);
  for (int64_t lanes : {16, 8, 4})
    body << "  typedef float txla_v" << lanes << " __attribute__((vector_size(" << lanes * 4 << ")));\n";
  body << "  for (int64_t n = " << g.first() << "; n < " << g.past() << "; ++n)\n"
       << "  for (int64_t r = 0; r < " << g.oh << "; ++r) {\n";
  for (int64_t k = 0; k < g.o; ++k)
    for (size_t p = 0; p < pieces.size(); ++p)
      body << "    txla_v" << pieces[p] << " a" << k << "_" << p << " = {}; a" << k << "_" << p << " += "
           << (g.bias.empty() ? "0.0f" : g.bias + "[" + std::to_string(k) + "]") << ";\n";
  body << "    for (int64_t c = 0; c < " << g.c << "; ++c)\n"
       << "    for (int64_t u = 0; u < " << g.kh << "; ++u)\n"
       << "    for (int64_t v = 0; v < " << g.kw << "; ++v) {\n"
       << "      const float* xp = " << g.in << " + ((n * " << g.c << " + c) * " << g.h << " + r + u) * " << g.w
       << " + v;\n";
  for (size_t p = 0, at = 0; p < pieces.size(); at += pieces[p], ++p)
    body << "      txla_v" << pieces[p] << " x" << p << "; __builtin_memcpy(&x" << p << ", xp + " << at << ", sizeof x"
         << p << ");\n";
  body << "      const float* wp = " << g.weights << " + (c * " << g.kh << " + u) * " << g.kw << " + v;\n";
  for (int64_t k = 0; k < g.o; ++k)
    for (size_t p = 0; p < pieces.size(); ++p)
      body << "      a" << k << "_" << p << " += wp[" << k * taps << "] * x" << p << ";\n";
  body << "    }\n";
  for (int64_t k = 0; k < g.o; ++k) {
    body << "    { float* yr = " << g.out << " + ((n * " << g.o << " + " << k << ") * " << g.oh << " + r) * " << g.ow
         << ";";
    for (size_t p = 0, at = 0; p < pieces.size(); at += pieces[p], ++p)
      body << " __builtin_memcpy(yr + " << at << ", &a" << k << "_" << p << ", sizeof a" << k << "_" << p << ");";
    body << " }\n";
  }
  body << "  }\n";
  return body.str();
}

// Few input channels: a row of accumulators per output channel, a weight times an input slice per tap.
std::string RowFormBody(const DirectConv& g) {
  std::ostringstream body;
  body << "  for (int64_t n = " << g.first() << "; n < " << g.past() << "; ++n)\n"
       << "  for (int64_t o = 0; o < " << g.o << "; ++o)\n"
       << "  for (int64_t r = 0; r < " << g.oh << "; ++r) {\n"
       << "    float acc[" << g.ow << "];\n"
       << "    for (int64_t j = 0; j < " << g.ow << "; ++j) acc[j] = " << (g.bias.empty() ? "0.0f" : g.bias + "[o]")
       << ";\n"
       << "    for (int64_t c = 0; c < " << g.c << "; ++c)\n"
       << "    for (int64_t u = 0; u < " << g.kh << "; ++u) {\n"
       << "      const float* xr = " << g.in << " + ((n * " << g.c << " + c) * " << g.h << " + r + u) * " << g.w << ";\n"
       << "      const float* wr = " << g.weights << " + ((o * " << g.c << " + c) * " << g.kh << " + u) * " << g.kw
       << ";\n"
       << "      for (int64_t v = 0; v < " << g.kw << "; ++v) {\n"
       << "        const float wv = wr[v];\n"
       << "        for (int64_t j = 0; j < " << g.ow << "; ++j) acc[j] += wv * xr[j + v];\n"
       << "      }\n"
       << "    }\n"
       << "    float* yr = " << g.out << " + ((n * " << g.o << " + o) * " << g.oh << " + r) * " << g.ow << ";\n"
       << "    for (int64_t j = 0; j < " << g.ow << "; ++j) yr[j] = acc[j];\n"
       << "  }\n";
  return body.str();
}

// A convolution's sizes (x: n c h w; weights: o c kh kw; dy: n o dh dw) and buffer names for the
// images-last gradient kernels: `images` is dx for the input gradient and x for the filter
// gradient, `weights` w for the one and dw for the other.
struct ImagesLastConv {
  int64_t n, c, h, w, o, kh, kw, dh, dw;
  std::string images, dy, weights;
};

// The start of an images-last kernel's body: the vector type, the loop over groups of 16
// images (the call's range), and each image's `count` floats of `source` copied into
// `copy`[k][image].
std::string ImagesLastGroupStart(const std::string& copy, const std::string& source, int64_t count) {
  std::ostringstream body;
  body << kVector16Typedef << "  for (int64_t group = lo; group < hi; ++group) {\n"
       << "    const int64_t n0 = group * " << kImagesPerVector << ";\n"
       << "    txla_v16 " << copy << "[" << count << "];\n"
       << ImagesLastCopy(copy, source, count);
  return body.str();
}

// The input gradient dx = the full correlation of dy with the kernel, 16 images a vector: each
// call takes groups of 16 images, copies their dy into images-last order on its stack, computes
// dx there (per position, an accumulator vector per input channel; per output channel and valid
// tap, one dy vector times a broadcast weight into all of them: only the taps inside dy, so
// every lane does useful work and nothing multiplies padding), and copies dx back to NCHW.
// The MNIST CNN's 10->20 layer (rows of 8, 12 wide) in oneDNN's NHWC kernels wastes most of
// its vector lanes on 10 and 20 channels.
std::string ImagesLastInputGradientBody(const ImagesLastConv& g) {
  const int64_t v = kImagesPerVector, plane_dx = g.h * g.w, taps = g.kh * g.kw;
  std::ostringstream body;
  body << ImagesLastGroupStart("d", g.dy, g.o * g.dh * g.dw)  // dy[o][row][col]
       << "    txla_v16 x[" << g.c * plane_dx << "];  // dx[c][row][col]\n"
       << "    for (int64_t y = 0; y < " << g.h << "; ++y)\n"
       << "    for (int64_t xx = 0; xx < " << g.w << "; ++xx) {\n";
  for (int64_t c = 0; c < g.c; ++c) body << "      txla_v16 a" << c << " = {};\n";
  body << "      const int64_t u_lo = y > " << g.dh - 1 << " ? y - " << g.dh - 1 << " : 0, u_hi = y < " << g.kh - 1
       << " ? y : " << g.kh - 1 << ";\n"
       << "      const int64_t v_lo = xx > " << g.dw - 1 << " ? xx - " << g.dw - 1 << " : 0, v_hi = xx < " << g.kw - 1
       << " ? xx : " << g.kw - 1 << ";\n"
       << "      for (int64_t o = 0; o < " << g.o << "; ++o)\n"
       << "      for (int64_t u = u_lo; u <= u_hi; ++u)\n"
       << "      for (int64_t t = v_lo; t <= v_hi; ++t) {\n"
       << "        const txla_v16 e = d[(o * " << g.dh << " + y - u) * " << g.dw << " + xx - t];\n"
       << "        const float* wp = " << g.weights << " + (o * " << g.c * g.kh << " + u) * " << g.kw << " + t;\n";
  for (int64_t c = 0; c < g.c; ++c) body << "        a" << c << " += wp[" << c * taps << "] * e;\n";
  body << "      }\n";
  for (int64_t c = 0; c < g.c; ++c)
    body << "      x[(" << c << " * " << g.h << " + y) * " << g.w << " + xx] = a" << c << ";\n";
  body << "    }\n"
       << "    for (int64_t i = 0; i < " << v << "; ++i)\n"
       << "      for (int64_t k = 0; k < " << g.c * plane_dx << "; ++k) " << g.images << "[(n0 + i) * " << g.c * plane_dx
       << " + k] = x[k][i];\n"
       << "  }\n";
  return body.str();
}

// The filter gradient dw[o][c][u][v] = sum over images and positions of dy times the input, 16
// images a vector: each call takes groups of 16 images into images-last copies on its stack
// and, per (output, input channel) pair, keeps an accumulator vector per tap while it walks dy's
// positions (one dy vector, a shifted input vector per tap); the lanes' sum is that group's part,
// written to its own slot of `partial`. its step adds the groups' parts in group order, so the
// sums do not depend on which thread took which group.
std::string ImagesLastFilterGradientBody(const ImagesLastConv& g, const std::string& partial) {
  const int64_t v = kImagesPerVector, taps = g.kh * g.kw;
  std::ostringstream body;
  body << ImagesLastGroupStart("d", g.dy, g.o * g.dh * g.dw)  // dy[o][row][col]
       << "    txla_v16 in[" << g.c * g.h * g.w << "];  // x[c][row][col]\n"
       << ImagesLastCopy("in", g.images, g.c * g.h * g.w)
       << "    float* part = " << partial << " + group * " << g.o * g.c * taps << ";\n"
       << "    for (int64_t o = 0; o < " << g.o << "; ++o)\n"
       << "    for (int64_t c = 0; c < " << g.c << "; ++c) {\n";
  for (int64_t t = 0; t < taps; ++t) body << "      txla_v16 a" << t << " = {};\n";
  body << "      for (int64_t y = 0; y < " << g.dh << "; ++y)\n"
       << "      for (int64_t x = 0; x < " << g.dw << "; ++x) {\n"
       << "        const txla_v16 e = d[(o * " << g.dh << " + y) * " << g.dw << " + x];\n"
       << "        const txla_v16* ip = in + (c * " << g.h << " + y) * " << g.w << " + x;\n";
  for (int64_t u = 0; u < g.kh; ++u)
    for (int64_t t = 0; t < g.kw; ++t)
      body << "        a" << u * g.kw + t << " += e * ip[" << u * g.w + t << "];\n";
  body << "      }\n"
       << "      float* out = part + (o * " << g.c << " + c) * " << taps << ";\n";
  for (int64_t t = 0; t < taps; ++t)
    body << "      { float s = 0.0f; for (int i = 0; i < " << v << "; ++i) s += a" << t << "[i]; out[" << t << "] = s; }\n";
  body << "    }\n  }\n";
  return body.str();
}

}  // namespace

std::string ImagesLastCopy(const std::string& copy, const std::string& source, int64_t count) {
  std::ostringstream body;
  body << "    for (int64_t i = 0; i < " << kImagesPerVector << "; ++i)\n"
       << "      for (int64_t k = 0; k < " << count << "; ++k) " << copy << "[k][i] = " << source << "[(n0 + i) * "
       << count << " + k];\n";
  return body.str();
}

bool IsFloatSingleGroupConv2d(const Instruction& i, int64_t rank) {
  for (const Instruction* t : std::initializer_list<const Instruction*>{i.operand(0), i.operand(1), &i})
    if (t->shape().type != ElementType::kF32) return false;
  return IsCanonicalConv2d(i.attrs(), rank) && i.attrs().feature_group_count == 1;
}

bool IsPlainUnitStrideConv2d(const Instruction& i, int64_t rank) {
  if (!IsFloatSingleGroupConv2d(i, rank)) return false;
  const hlo::Attributes& a = i.attrs();
  for (const hlo::WindowDim& d : a.window)
    if (d.stride != 1 || d.rhs_dilation != 1 || d.pad_lo != 0) return false;
  return true;
}

bool LibraryCallEmitter::EmitDirectConvFilterGradient(const Instruction& i) {
  const hlo::Shape& dy = i.operand(0)->shape();
  const hlo::Shape& x = i.operand(1)->shape();
  const hlo::Shape& dw = i.shape();
  if (!IsPlainUnitStrideConv2d(i, x.rank())) return false;
  ImagesLastConv g{x.dims[0], x.dims[1], x.dims[2], x.dims[3], dw.dims[0], dw.dims[2], dw.dims[3], dy.dims[2], dy.dims[3],
                  steps_.Operand(i, 1), steps_.Operand(i, 0), BufferName(i)};
  const int64_t taps = g.kh * g.kw, groups = g.n / kImagesPerVector, weights = g.o * g.c * taps;
  const int64_t copied = g.o * g.dh * g.dw + g.c * g.h * g.w;  // vectors copied images-last, a group
  const int64_t multiply_adds = weights * g.dh * g.dw;          // vector multiply-adds, a group
  // The copies move one float at a time (16 a vector): worth it only where the multiply-adds
  // outnumber them. The MNIST CNN's 10->20 layer: 118 multiply-adds a copied vector, 0.59-0.61
  // ms against oneDNN's 0.59-0.89; its 1->10 layer: 22, and 0.34-0.36 ms against 0.28-0.36.
  if (g.n == 0 || g.n % kImagesPerVector != 0 || taps > kMaxFilterGradientTaps || copied * 64 > kMaxImagesLastBytes ||
      groups * weights * 4 > kMaxFilterGradientParts || dy.element_count() == 0 ||
      multiply_adds < kMinMultiplyAddsPerCopiedVector * copied)
    return false;
  TXLA_COUNTER("ConvDirectFilterGradientKernels", 1);
  // Block-scoped in its step, so one name serves every such call, and the kernel's text (its
  // parameter is named after the array) is the same in every graph: a later graph links it.
  const std::string partial = "parts";
  steps_.code() << "  {\n  float " << partial << "[" << groups * weights << "];\n";
  std::vector<StepWriter::KernelBuffer> buffers = {{"float", partial, true}, {"float", g.dy, false}, {"float", g.images, false}};
  steps_.EmitKernelCall(i.name(), buffers, ImagesLastFilterGradientBody(g, partial), groups);
  steps_.code() << "  for (int64_t k = 0; k < " << weights << "; ++k) {\n"
       << "    float s = " << partial << "[k];\n"
       << "    for (int64_t p = 1; p < " << groups << "; ++p) s += " << partial << "[p * " << weights << " + k];\n"
       << "    " << BufferName(i) << "[k] = s;\n"
       << "  }\n  }\n";
  return true;
}

bool LibraryCallEmitter::EmitDirectConvInputGradient(const Instruction& i) {
  const hlo::Shape& dy = i.operand(0)->shape();
  const hlo::Shape& w = i.operand(1)->shape();
  const hlo::Shape& dx = i.shape();
  if (!IsPlainUnitStrideConv2d(i, dx.rank())) return false;
  ImagesLastConv g{dx.dims[0], dx.dims[1], dx.dims[2], dx.dims[3], w.dims[0], w.dims[2], w.dims[3], dy.dims[2], dy.dims[3],
                  BufferName(i), steps_.Operand(i, 0), steps_.Operand(i, 1)};
  // Whole vectors of images, an accumulator register per input channel, both image-last copies
  // on the stack (64 bytes an element each).
  const int64_t stack = (g.o * g.dh * g.dw + g.c * g.h * g.w) * 64;
  if (g.n == 0 || g.n % kImagesPerVector != 0 || g.c > kMaxVectorAccumulators || stack > kMaxImagesLastBytes ||
      dy.element_count() == 0)
    return false;
  TXLA_COUNTER("ConvDirectInputGradientKernels", 1);
  std::vector<StepWriter::KernelBuffer> buffers = {{"float", g.images, true}, {"float", g.dy, false}, {"float", g.weights, false}};
  steps_.EmitKernelCall(i.name(), buffers, ImagesLastInputGradientBody(g), g.n / kImagesPerVector);
  return true;
}

bool LibraryCallEmitter::EmitDirectConv(const Instruction& i) {
  const hlo::Shape& x = i.operand(0)->shape();
  const hlo::Shape& w = i.operand(1)->shape();
  const hlo::Shape& y = i.shape();
  if (!IsPlainUnitStrideConv2d(i, x.rank())) return false;
  const bool bias = i.operands().size() == 3;
  if (bias && i.operand(2)->shape().type != ElementType::kF32) return false;
  DirectConv g{x.dims[0], x.dims[1], x.dims[2], x.dims[3], w.dims[0], w.dims[2], w.dims[3], y.dims[2], y.dims[3],
               BufferName(i), steps_.Operand(i, 0), steps_.Operand(i, 1), bias ? steps_.Operand(i, 2) : ""};
  const int64_t pieces = static_cast<int64_t>(RowPieces(g.ow).size());
  const bool channel_form = g.ow >= 8 && pieces > 0 && g.o * pieces <= kMaxVectorAccumulators;
  const bool row_form = g.c <= kMaxDirectInputChannels && g.ow >= kMinDirectRow && g.ow <= kMaxDirectRow;
  if (!(channel_form || row_form) || y.element_count() == 0) return false;
  TXLA_COUNTER("ConvDirectKernels", 1);
  std::vector<StepWriter::KernelBuffer> buffers = {{"float", g.out, true}, {"float", g.in, false}, {"float", g.weights, false}};
  if (bias) buffers.push_back({"float", g.bias, false});
  steps_.EmitKernelCall(i.name(), buffers, channel_form ? ChannelFormBody(g) : RowFormBody(g), g.n > 1 ? g.n : 0);
  return true;
}

}  // namespace txla::compiler::emitter
