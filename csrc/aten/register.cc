// Registration with the dispatcher: every op-table entry gets the recording kernel, a few ops get
// the edge kernels of copy_kernels.h, and everything else falls back to CPU.
#include <torch/library.h>

#include <set>
#include <string>

#include "aten/copy_kernels.h"
#include "aten/cpu_fallback.h"
#include "aten/lazy_kernel.h"
#include "ir/op_table.h"

namespace txla::aten {
namespace {

void FallbackKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  CpuFallback(op, stack);
}

// Table ops whose XLA kernel is one of the edge kernels; the table entry is still what they
// record through.
const std::set<std::string>& EdgeKernelOps() {
  static const std::set<std::string> ops = {"aten::copy", "aten::_to_copy"};
  return ops;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  for (const ir::OpInfo& info : ir::OpTable()) {
    if (EdgeKernelOps().count(info.name)) continue;
    m.impl(info.name.substr(6).c_str(),  // without "aten::"
           torch::CppFunction::makeFromBoxedFunctor(std::make_unique<LazyKernel>(&info)));
  }
  m.impl("empty.memory_format", torch::CppFunction::makeFromBoxedFunction<&EmptyKernel>());
  m.impl("empty_strided", torch::CppFunction::makeFromBoxedFunction<&EmptyKernel>());
  m.impl("_to_copy", torch::CppFunction::makeFromBoxedFunction<&ToCopyKernel>());
  m.impl("copy", torch::CppFunction::makeFromBoxedFunction<&CopyKernel>());
  m.impl("_copy_from", TORCH_FN(CopyFrom));
  m.impl("_copy_from_and_resize", TORCH_FN(CopyFromAndResize));
  m.impl("clone", TORCH_FN(Clone));
  m.impl("_local_scalar_dense", TORCH_FN(LocalScalarDense));
  m.impl("lift", TORCH_FN(Lift));
}

TORCH_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&FallbackKernel>());
}

}  // namespace txla::aten
