// What every emitter writes into. For the instruction being emitted: its driver code (kernel
// calls, library calls), the geometry tables and kernel prototypes that code declares, and the
// last kernel call it made; for the whole graph: the kernels (KernelRegistry) and the program
// (ProgramBuilder). The loop, reduction and library-call emitters add kernels and calls here;
// cpp_emitter.cc makes each instruction's driver code a step of the program.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/kernel_registry.h"
#include "compiler/codegen/program_builder.h"
#include "hlo/instruction.h"

namespace txla::compiler::emitter {

// Kernels of this many elements or more pay for a second thread.
constexpr int64_t kParallelElements = 1 << 16;

class StepWriter {
 public:
  StepWriter(const hlo::Module& module, const BufferPlan& plan, bool profile)
      : module_(module), plan_(plan), profile_(profile) {}

  const hlo::Module& module() const { return module_; }
  const BufferPlan& plan() const { return plan_; }
  bool profile() const { return profile_; }
  KernelRegistry& kernels() { return kernels_; }
  ProgramBuilder& program() { return program_; }

  // Whether the plan gives `i` memory of its own.
  bool Materialized(const hlo::Instruction& i) const;
  // The buffer of `i`'s operand k; throws std::invalid_argument when it has none.
  std::string Operand(const hlo::Instruction& i, size_t k) const;

  // The driver code of the instruction being emitted.
  std::ostringstream& code() { return code_; }
  // A table of int64 fields for a library call of `name`, declared in the step function that
  // makes the call: a step of the same geometry is shared. Returns the table's name.
  std::string Geometry(const std::string& name, const std::vector<int64_t>& fields);

  // Kernels are hidden (not static) functions, each between split markers: a large source can
  // then be built as several translation units in parallel. A kernel (its signature and body;
  // what follows it in its unit, its trampoline; what a step that calls it declares besides its
  // prototype) is named by its content (kernel_naming.h) and emitted once however many
  // instructions run it. Returns the kernel-level names the call site uses.
  using KernelNames = std::map<std::string, std::string>;
  KernelNames AddKernel(const std::string& name, const std::string& signature, const std::string& body,
                        const std::string& after = "", const std::string& prototype_extra = "");

  // A kernel function over `buffers` (outputs first, in the call's order) with `body`, its
  // trampoline, and its call in the driver code. kOutermost: direct, or with parallel_extent > 0
  // through support->parallel_for, the kernel then taking a range [lo, hi) of its outermost
  // loop. kFlat: the kernel always takes [lo, hi) of its parallel_extent elements (its length is
  // the call's, not the kernel's), on the threads from kParallelElements.
  struct KernelBuffer {
    std::string type, buffer;
    bool output;
  };
  enum class CallForm { kOutermost, kFlat };
  void EmitKernelCall(const std::string& name, const std::vector<KernelBuffer>& buffers, const std::string& body,
                      int64_t parallel_extent, CallForm form = CallForm::kOutermost);

  // Clears what the previous instruction's driver code left (its code, tables, prototypes, call).
  void BeginStep();
  // The driver code of the instruction `name` made a step of the program, run after outputs
  // `ready` are released: an instruction whose code is just one kernel call becomes an entry
  // that calls the kernel's trampoline, with no step function of its own. False when the
  // instruction wrote no code (nothing runs for it).
  bool FinishStep(const std::string& name, const std::vector<int64_t>& ready);
  // A step function running `chunk` (after the step's tables) once outputs `ready` are released.
  void AddStep(const std::string& name, const std::string& chunk, const std::vector<int64_t>& ready);

 private:
  // The last kernel call emitted.
  struct KernelCall {
    std::string text, trampoline;
    std::vector<std::string> buffers;
    int64_t extent = 0;     // the range [0, extent) a ranged kernel is called on
    bool parallel = false;  // through support->parallel_for
  };
  // XLA_HLO_DEBUG: the lazy IR ops and user lines the instruction `name` computes.
  std::string SourceComment(const std::string& name) const;

  const hlo::Module& module_;
  const BufferPlan& plan_;
  bool profile_;
  KernelRegistry kernels_;   // kernels and step functions, each between markers
  ProgramBuilder program_;   // the buffers, the steps and the program they make
  std::ostringstream code_;  // the driver code of the instruction being emitted
  std::ostringstream tables_;  // its geometry tables
  std::string prototypes_;     // the prototypes of the kernels it calls
  KernelCall call_;
};

}  // namespace txla::compiler::emitter
