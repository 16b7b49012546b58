// Building a generated source into a shared object, with each kernel compiled once per process.
//
// Kernels are named by their content (kernel_naming.h), so the graphs of one model share most of
// them: the first training step's graph and the steady step's differ in their optimizer updates,
// a forward kernel repeats in the evaluation graph. The kernels a build compiles go into
// kernel-only object files that are remembered by kernel; a later graph links those objects
// instead of compiling the kernels again, and compiles only its new kernels: its program
// (graph_program.h) is data. The steps of a program are named by their code too, and reused the same way.
// Objects live in the work directory for the life of the process and are removed at its exit
// (never shared across processes: the persistent cache is the cross-process cache, keyed by whole
// sources).
#pragma once

#include <string>

namespace txla::compiler {

// Builds `source` (named `source_path` in error messages) into the shared object `object_path`;
// throws std::runtime_error with the compiler's output on failure. Kernels this process compiled
// before are linked from their objects; new kernels build in `units` translation units in
// parallel (0: one per core when they are large). Writes to a temporary name and renames, so
// concurrent builds never see a partial library.
void BuildSharedObject(const std::string& source, const std::string& source_path,
                       const std::string& object_path, int units = 0);

// Forgets every remembered kernel object (tests; a later build compiles all its kernels).
void ForgetKernelObjects();

}  // namespace txla::compiler
