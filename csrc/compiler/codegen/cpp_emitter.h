// Emits the entry computation of a fused, buffer-assigned HLO module as one self-contained C++
// translation unit with no #includes at all, so the system compiler builds it in a
// fraction of a second: its kernels, the step functions that call libraries, and the graph's
// program (graph_program.h): comment lines at its end that list what runs in order, read by the
// runtime, not by the compiler. The library exports the functions the program names and
//
//   extern "C" void txla_bind(const TxlaSupport* support);  // called before each run
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
#define TXLA_SUPPORT_FIELD(ret, name, params, host) ret(*name) params;
  TXLA_SUPPORT_ABI(TXLA_SUPPORT_FIELD)
#undef TXLA_SUPPORT_FIELD
};

// Marker lines in the emitted source: after the prelude, around each kernel function (the begin
// line names the kernel's content hash), and before the program. ParseSource cuts a source there:
// kernels build as translation units of their own, in parallel and reused across graphs
// (kernel_objects.h).
extern const char* const kKernelsBegin;
extern const char* const kKernelBegin;  // followed by the kernel's content hash and its first user
extern const char* const kKernelEnd;
extern const char* const kRunBegin;

struct SourceKernel {
  std::string hash;  // kernel_naming.h: equal for identical kernels in any graph
  std::string text;  // from its begin marker to its end marker, both included
};
// prelude + every kernel's text + run == the source. Not valid when the markers are missing.
struct SourceParts {
  bool valid = false;
  std::string prelude;  // what every translation unit starts with
  std::vector<SourceKernel> kernels;
  std::string run;  // the program: comment lines, nothing to compile
};
SourceParts ParseSource(const std::string& source);

// Throws std::invalid_argument for what it cannot emit (an opcode or element type); callers run
// such graphs on the interpreter instead.
// With `profile`, every kernel is bracketed by support->kernel_begin/kernel_end.
std::string EmitCpp(const hlo::Module& module, const BufferPlan& plan, bool profile = false);
// Number of kernels (loop nests and library calls) the emitted code runs.
int CountKernels(const hlo::Module& module);

}  // namespace txla::compiler
