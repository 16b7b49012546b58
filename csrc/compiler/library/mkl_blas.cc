#include "compiler/library/mkl_blas.h"

#include <dlfcn.h>

#include <mutex>

#include "debug/config.h"

namespace txla::compiler::library {
namespace {

// mkl_service.h's MKL_THREADING_SEQUENTIAL.
constexpr int kMklThreadingSequential = 1;

struct LoadedMkl {
  MklSgemm sgemm = nullptr;
  std::string error;
};

const LoadedMkl& Loaded() {
  static LoadedMkl mkl;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = debug::GetConfig().mkl_library;
    if (path.empty()) {
      mkl.error = "TXLA_MKL_LIBRARY is not set (no PyPI mkl found at import)";
      return;
    }
    // RTLD_LOCAL: torch's own statically linked MKL keeps its symbols, this one its own. Never
    // closed: MKL keeps per-thread buffers for the life of the process.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      mkl.error = std::string("dlopen failed: ") + dlerror();
      return;
    }
    auto set_layer = reinterpret_cast<int (*)(int)>(dlsym(handle, "MKL_Set_Threading_Layer"));
    auto sgemm = reinterpret_cast<MklSgemm>(dlsym(handle, "cblas_sgemm"));
    if (set_layer == nullptr || sgemm == nullptr) {
      mkl.error = path + " lacks MKL_Set_Threading_Layer or cblas_sgemm";
      return;
    }
    if (set_layer(kMklThreadingSequential) != kMklThreadingSequential) {
      mkl.error = path + " would not run sequentially (its threading layer was set before)";
      return;
    }
    mkl.sgemm = sgemm;
  });
  return mkl;
}

}  // namespace

MklSgemm MklSgemmFunction() { return Loaded().sgemm; }

std::string MklLoadError() { return Loaded().error; }

}  // namespace txla::compiler::library
