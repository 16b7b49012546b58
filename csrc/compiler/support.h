// The runtime side of generated code's support table: library routines (GEMM via OpenBLAS)
// the kernels call through function pointers.
#pragma once

#include <mutex>
#include <string>

#include "compiler/codegen/cpp_emitter.h"

namespace txla::compiler {

const TxlaSupport* GetSupportTable();

// What generated code reported while one run was under way (an out-of-range index): the first
// message, checked once the run returns.
struct RunErrors {
  std::mutex mu;
  std::string first;
};

// Routes the reports of this thread (and of the runtime threads it starts) to `errors`.
class ScopedRunErrors {
 public:
  explicit ScopedRunErrors(RunErrors* errors);
  ~ScopedRunErrors();
  ScopedRunErrors(const ScopedRunErrors&) = delete;
  ScopedRunErrors& operator=(const ScopedRunErrors&) = delete;

 private:
  RunErrors* previous_;
};

}  // namespace txla::compiler
