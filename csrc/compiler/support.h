// The runtime side of generated code's support table: library routines (GEMM via OpenBLAS)
// the kernels call through function pointers.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/codegen/cpp_emitter.h"
#include "runtime/execution_queue.h"

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

// The outputs the run on this thread releases early (support->output_ready): a readiness per
// output index, null where an output is not released before the run ends.
using EarlyReadiness = std::vector<std::shared_ptr<runtime::Readiness>>;
class ScopedEarlyOutputs {
 public:
  explicit ScopedEarlyOutputs(const EarlyReadiness* outputs);
  ~ScopedEarlyOutputs();
  ScopedEarlyOutputs(const ScopedEarlyOutputs&) = delete;
  ScopedEarlyOutputs& operator=(const ScopedEarlyOutputs&) = delete;

 private:
  const EarlyReadiness* previous_;
};

}  // namespace txla::compiler
