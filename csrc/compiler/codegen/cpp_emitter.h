// Emits the entry computation of a fused, buffer-assigned HLO module as one self-contained C++
// translation unit with no #includes at all, so the system compiler builds it in a
// fraction of a second:
//
//   extern "C" void txla_run(const TxlaSupport* support, const void* const* params,
//                            void* const* outputs, char* arena);
//
// Each fusion is one loop nest over its output; the values inside it are expressions at the loop
// index (broadcast, transpose, reshape and slice only remap the index). A reduce-rooted fusion
// adds an inner loop over the reduced dimensions. Dots call the GEMM in the support table the
// runtime passes in (OpenBLAS), so generated code links against nothing.
#pragma once

#include <string>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/support_abi.h"
#include "hlo/instruction.h"

namespace txla::compiler {

// The ABI between generated code and the runtime (support_abi.h); the emitter prints the same
// entries into the generated prelude.
struct TxlaSupport {
#define TXLA_SUPPORT_FIELD(ret, name, params) ret(*name) params;
  TXLA_SUPPORT_ABI(TXLA_SUPPORT_FIELD)
#undef TXLA_SUPPORT_FIELD
};

// Marker lines in the emitted source: after the prelude, after each kernel function, and before
// txla_run. SplitSource cuts a source there into translation units that build in parallel.
extern const char* const kKernelsBegin;
extern const char* const kKernelEnd;
extern const char* const kRunBegin;
// `units` translation units (fewer for small sources), each prelude + some kernels; the last
// also holds txla_run. Joined by a link they make the same library as the whole source.
std::vector<std::string> SplitSource(const std::string& source, int units);

// Throws std::invalid_argument for what it cannot emit (an opcode or element type); callers run
// such graphs on the interpreter instead.
// With `profile`, every kernel is bracketed by support->kernel_begin/kernel_end.
std::string EmitCpp(const hlo::Module& module, const BufferPlan& plan, bool profile = false);
// Number of kernels (loop nests and library calls) the emitted code runs.
int CountKernels(const hlo::Module& module);

}  // namespace txla::compiler
