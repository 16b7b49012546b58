// The compiler driver: HLO module in, native executable out.
//
//   verify -> (simplify, cse, dce) to a fixed point -> fusion -> dce -> verify
//   -> buffer assignment -> C++ emission -> system compiler -> dlopen
//
// With TXLA_DUMP_PASSES=path, the module is appended to `path` after every pass;
// TXLA_DISABLE_PASSES=algebraic-simplifier,cse,fusion turns passes off (to bisect a miscompile);
// TXLA_PROFILE_KERNELS=1 times every kernel into the metric KernelTime:<kernel name>.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "hlo/instruction.h"
#include "runtime/executable.h"

namespace txla::compiler {

// Codegen cannot handle something in the module (an op or element type): the caller may run the
// graph another way. Distinct from a failed build, which is an error.
class Unsupported : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Building the generated code failed; `what()` names the dumped HLO and source files.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CompileStats {
  int hlo_instructions = 0;  // entry instructions before fusion
  int kernels = 0;           // loop nests and library calls after it
};


// Runs the pipeline in place (exposed for tests).
void RunPipeline(hlo::Module& module);
// `graph_hash` (the lazy-IR graph's hash, 0 for none) also records the result in the persistent
// cache under that hash, so LoadCachedGraph can find it in a later process.
std::shared_ptr<runtime::Executable> Compile(std::unique_ptr<hlo::Module> module,
                                             CompileStats* stats = nullptr, uint64_t graph_hash = 0);
// The executable a persistent-cache graph entry names, without lowering or emitting anything;
// nullptr when there is none (or the cache is off).
std::shared_ptr<runtime::Executable> LoadCachedGraph(uint64_t graph_hash);

}  // namespace txla::compiler
