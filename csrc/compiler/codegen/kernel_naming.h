// Kernels are named by their code. The emitter names a kernel's function, context struct,
// trampoline, buffers and constant tables after HLO instructions (k_fusion_12, b_p3, ...); two
// kernels that differ only in those names are the same code: the same optimizer update for every
// parameter of a shape, a forward kernel the next step's graph repeats. NameByContent renames
// those identifiers canonically and names the kernel by a hash of the result, so identical
// kernels get one name: the emitter emits such a kernel once per graph, and the compiler reuses
// its object from graph to graph (kernel_objects.h).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace txla::compiler {

struct NamedKernel {
  // The pieces given, in the same order, with instruction-derived identifiers renamed.
  std::vector<std::string> pieces;
  // The content hash shared by identical kernels (also the suffix of the kernel-level names).
  std::string hash;
  // Each renamed kernel-level identifier (k_* and t_*, or a step's s_*) -> its new name.
  std::map<std::string, std::string> names;
};

// `pieces` are texts of one kernel (its function, its trampoline, its prototypes, ...), renamed
// consistently across all of them. Identifiers renamed: kernel-level names (the kernel k_ and
// its trampoline t_) become <prefix><hash>[_n]; buffers (b_*) and constant
// tables (c_*) become positional names. String literals are kept as they are: a message that
// names its HLO instruction stays that instruction's.
// kStep: the texts of a driver step (graph_program.h), which calls kernels by their final names:
// only its own name (prefix s_) is named by its content; buffers (b_*) and geometry tables (g_*)
// become positional names.
enum class NamingScope { kKernel, kStep };
NamedKernel NameByContent(const std::vector<std::string>& pieces, NamingScope scope = NamingScope::kKernel);

// The buffer names (b_*) `text` uses, in order of first use (string literals skipped).
std::vector<std::string> BufferIdentifiers(const std::string& text);

}  // namespace txla::compiler
