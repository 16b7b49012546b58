// What the library's oneDNN callers share (included only where the build found oneDNN).
#pragma once

#include <dnnl.hpp>

#include <cstring>

namespace txla::compiler::library::onednn {

// The process's one CPU engine.
inline dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Whether a primitive is oneDNN's reference kernel (plain loops, "ref:..."): on bf16 operands,
// slower than widening them for the f32 kernels (a CPU without bf16 instructions).
inline bool IsReferenceKernel(const char* implementation) {
  return std::strncmp(implementation, "ref", 3) == 0;
}

}  // namespace txla::compiler::library::onednn
