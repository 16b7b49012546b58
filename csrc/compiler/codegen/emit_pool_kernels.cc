// Max pooling's argmax and its gradient as loop kernels, for windows small enough to unroll: the
// fast paths of the txla.max_pool2d_* library calls (emit_library_calls.cc takes the rest).
#include "compiler/codegen/library_call_emitter.h"

#include <sstream>

#include "hlo/shape_inference.h"

namespace txla::compiler::emitter {

namespace {

// A pooling kernel's loops, one per output dimension (i0, i1, ...), opened in `body`; the
// output index they make.
Index OpenWindowLoops(const std::vector<int64_t>& out_dims, std::ostringstream& body) {
  Index idx;
  for (size_t k = 0; k < out_dims.size(); ++k) {
    idx.push_back(IndexExpr::Var("i" + std::to_string(k), out_dims[k]));
    body << "  for (int64_t i" << k << " = 0; i" << k << " < " << out_dims[k] << "; ++i" << k << ")\n";
  }
  return idx;
}

}  // namespace

// Max pooling's argmax as a loop kernel: selects over an unrolled window vectorize, where a
// library loop would branch on the data. Positions in the padding are masked out (read
// clamped, never taken); the index ranges drop the masks wherever they cannot fail.
bool LibraryCallEmitter::EmitPoolIndices(const Instruction& i) {
  const auto& window = i.attrs().window;
  const hlo::Shape& in = i.operand(0)->shape();
  const auto& out_dims = i.shape().dims;
  int64_t positions = 1;
  for (const hlo::WindowDim& w : window) {
    if (w.lhs_dilation != 1) return false;
    positions *= w.size;
  }
  if (positions > 16 || in.rank() < 2 || in.element_count() == 0) return false;
  std::string type = CType(in.type), x = steps_.Operand(i, 0), fn = "k_" + Sanitize(i.name());
  int64_t r = in.rank(), in_w = in.dims[r - 1];
  std::ostringstream body;
  const Index idx = OpenWindowLoops(out_dims, body);
  body << "  {\n    int64_t best = -1;\n    " << type << " m = 0;\n";
  std::vector<int64_t> pos(r, 0);
  for (int64_t p = 0; p < positions; ++p, NextWindowPosition(window, &pos)) {
    WindowRead read = ReadWindowPosition(window, idx, pos, in.dims);
    if (read.never) continue;  // a position that is padding for every output
    const Index& in_idx = read.at;
    std::string inside = read.inside.empty() ? "" : " && " + read.inside;
    std::string flat = (in_idx[r - 2] * in_w + in_idx[r - 1]).str();
    // The first position in the image seeds the maximum; txla_max_takes (runtime/scalar_ops.h)
    // says which later one replaces it.
    body << "    { const " << type << " v = x[" << Linear(in_idx, in.dims) << "]; const bool take = (true" << inside
         << ") & ((best < 0) | txla_max_takes(v, m));\n"
         << "      best = take ? (int64_t)(" << flat << ") : best; m = take ? v : m; }\n";
  }
  body << "    out[" << Linear(idx, out_dims) << "] = best;\n  }\n";
  StepWriter::KernelNames names = steps_.AddKernel(
      i.name(), "TXLA_KERNEL void " + fn + "(int64_t* __restrict__ out, const " + type + "* __restrict__ x)",
      body.str());
  steps_.code() << "  " << names.at(fn) << "(" << BufferName(i) << ", " << x << ");\n";
  return true;
}

// Max pooling's gradient found from the pooled input (txla.max_pool2d_backward_from_input) as a
// loop kernel, for windows that tile the input exactly: each input position is in one window, so
// each window finds its maximum by ATen's rule (as EmitPoolIndices) and writes the gradient to it
// and zeros to its other positions: no scatter, no int64 indices. The zeros are the gradient's
// bits masked off, not a select: a float select on the integer position compiled to branches
// (the MNIST CNN's first pooling, 184K windows: 1.6 ms on one Zen 5 core, masked 0.1 ms; the
// indices kernel alone took 0.19).
bool LibraryCallEmitter::EmitPoolBackwardFromInput(const Instruction& i) {
  const auto& window = i.attrs().window;
  const hlo::Shape& in = i.operand(1)->shape();
  const auto& out_dims = i.operand(0)->shape().dims;
  if (!hlo::WindowsTileExactly(window, in.dims, out_dims)) return false;
  int64_t positions = 1;
  for (const hlo::WindowDim& w : window) positions *= w.size;
  if (positions > 16 || in.rank() < 2 || in.element_count() == 0) return false;
  if (in.type != ElementType::kF32 && in.type != ElementType::kF64) return false;
  const std::string type = CType(in.type), bits = in.type == ElementType::kF32 ? "unsigned int" : "unsigned long long";
  const std::string fn = "k_" + Sanitize(i.name());
  const int64_t r = in.rank();
  std::ostringstream body;
  const Index idx = OpenWindowLoops(out_dims, body);
  body << "  {\n    int best = -1;\n    " << type << " m = 0;\n";
  std::vector<std::string> at;
  std::vector<int64_t> pos(r, 0);
  for (int64_t p = 0; p < positions; ++p, NextWindowPosition(window, &pos)) {
    at.push_back(Linear(ReadWindowPosition(window, idx, pos, in.dims).at, in.dims));
    body << "    { const " << type << " v = x[" << at.back() << "]; const bool take = (best < 0) | txla_max_takes(v, m);\n"
         << "      best = take ? " << p << " : best; m = take ? v : m; }\n";
  }
  body << "    const " << bits << " g = __builtin_bit_cast(" << bits << ", dy[" << Linear(idx, out_dims) << "]);\n";
  for (int64_t p = 0; p < positions; ++p)
    body << "    out[" << at[p] << "] = __builtin_bit_cast(" << type << ", g & (0 - (" << bits << ")(best == " << p
         << ")));\n";
  body << "  }\n";
  StepWriter::KernelNames names = steps_.AddKernel(i.name(),
                                "TXLA_KERNEL void " + fn + "(" + type + "* __restrict__ out, const " + type +
                                    "* __restrict__ dy, const " + type + "* __restrict__ x)",
                                body.str());
  steps_.code() << "  " << names.at(fn) << "(" << BufferName(i) << ", " << steps_.Operand(i, 0) << ", " << steps_.Operand(i, 1) << ");\n";
  return true;
}

}  // namespace txla::compiler::emitter
