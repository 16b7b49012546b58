#include "graph/numerics.h"

#include <ATen/Context.h>
#include <c10/util/Exception.h>

#include <atomic>

namespace txla::graph {
namespace {

// PyTorch/XLA's setting; this backend starts at 'highest' (its TPU default, 'default', is bf16).
std::atomic<hlo::Precision> mat_mul_precision{hlo::Precision::kHighest};

// Whether one of PyTorch's float32 precision settings for oneDNN allows TF32/BF16-like rounding.
// (The per-backend strings, not float32MatmulPrecision(), which warns that it is deprecated.)
bool TorchAllowsReducedPrecision() {
  const at::Context& context = at::globalContext();
  for (const auto& [backend, op] : {std::pair<const char*, const char*>{"mkldnn", "conv"},
                                    {"mkldnn", "matmul"},
                                    {"mkldnn", "all"},
                                    {"generic", "all"}}) {
    const std::string precision = context.float32Precision(backend, op);
    if (precision == "tf32" || precision == "bf16") return true;
  }
  return false;
}

}  // namespace

hlo::Precision UserConvolutionPrecision() {
  const hlo::Precision ours = mat_mul_precision.load();
  if (ours != hlo::Precision::kHighest) return ours;
  return TorchAllowsReducedPrecision() ? hlo::Precision::kDefault : hlo::Precision::kHighest;
}

void SetMatMulPrecision(const std::string& precision) {
  hlo::Precision p;
  TORCH_CHECK_VALUE(hlo::PrecisionFromName(precision, &p),
                    "mat mul precision must be 'default', 'high' or 'highest', not '", precision, "'");
  mat_mul_precision.store(p);
}

std::string MatMulPrecision() { return hlo::PrecisionName(mat_mul_precision.load()); }

}  // namespace txla::graph
