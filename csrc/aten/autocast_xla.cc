// torch.autocast('xla'): the AutocastXLA dispatch key's kernels. PyTorch core registers autocast
// policies for CUDA, CPU and others but leaves XLA's to the backend; these are the policy lists
// core keeps for CUDA (ATen/autocast_mode.h), so a model autocasts on the device as it does on
// a GPU: matmuls and convolutions in the autocast dtype (bf16 by default on XLA), precision-
// sensitive ops (exp, softmax, sums, norms, losses) in f32, mixed-type ops at the widest type.
// Every other op falls through to the device's own kernels.
#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace txla::aten_autocast {
namespace {

// The KERNEL macros and core's signature lists name these unqualified (core expands them inside
// namespace at).
using namespace at::autocast;
using at::Dimname;
using at::DimnameList;
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

#define ADD_NS(RAW_OP) at::RAW_OP
#define TXLA_KERNEL_XLA(...) KERNEL(c10::DeviceType::XLA, __VA_ARGS__)
#define TXLA_LOW_PRECISION_FP(...) TXLA_KERNEL_XLA(__VA_ARGS__, lower_precision_fp)
#define TXLA_FP32(...) TXLA_KERNEL_XLA(__VA_ARGS__, fp32)
#define TXLA_FP32_SET_OPT_DTYPE(...) TXLA_KERNEL_XLA(__VA_ARGS__, fp32_set_opt_dtype)
#define TXLA_PROMOTE(...) TXLA_KERNEL_XLA(__VA_ARGS__, promote)
#define TXLA_DIFFERENT_REDISPATCH_SIGNATURE(REDISPATCH_FUNC, REGISTER_NAME, REGISTER_SIGNATURE, \
                                            REDISPATCH_SIGNATURE, POLICY)                        \
  KERNEL_DIFFERENT_REDISPATCH_SIGNATURE(c10::DeviceType::XLA, REDISPATCH_FUNC, REGISTER_NAME,    \
                                        REGISTER_SIGNATURE, REDISPATCH_SIGNATURE, POLICY)

TORCH_LIBRARY_IMPL(_, AutocastXLA, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastXLA, m) {
  AT_FORALL_LOWER_PRECISION_FP(TXLA_LOW_PRECISION_FP)
  AT_FORALL_FP32(TXLA_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TXLA_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(TXLA_DIFFERENT_REDISPATCH_SIGNATURE)
  AT_FORALL_PROMOTE(TXLA_PROMOTE)
}

}  // namespace
}  // namespace txla::aten_autocast
