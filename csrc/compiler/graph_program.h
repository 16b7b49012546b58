// A compiled graph's driver, as data: which step functions run, in which order, on which
// buffers, and which outputs each step releases early. The generated source carries it as two
// comment lines (ProgramText), which the persistent cache's graph entries keep too; the runtime
// finds the functions it names in the graph's library and walks the steps. XLA:CPU runs its
// thunks the same way.
//
// Why data and not code: the driver used to be a generated function, txla_run, of straight-line
// calls with every buffer pointer declared. It was never shared between graphs, so every new
// graph paid the C++ compiler for it even when all its kernels were built before (ResNet-18's
// second graph: 143 KB of source, 60-150 ms of its 150 ms compile). Each step is now a small
// function named by its code (kernel_naming.h), built and reused like a kernel, and what is
// left per graph is numbers, which no compiler reads (a data unit of them took ~20 ms to build).
//
// Encoding (int64 words, written by the emitter, read here; kProgramFormat changes with it):
//   kProgramFormat, function count, slot count,
//   per slot (SlotKind, parameter/output index or arena offset),
//   step count, per step (count of outputs released before it, their indices, StepKind,
//                         index into the program's functions, extent, argument count,
//                         argument slots).
// Outputs released by no step are released when the run returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace txla::compiler {

struct TxlaSupport;

constexpr int64_t kProgramFormat = 1;
enum class SlotKind : int64_t { kParameter = 0, kOutput = 1, kArena = 2 };
enum class StepKind : int64_t {
  kStep = 0,      // a step function: fn(support, buffers)
  kKernel = 1,    // a kernel's trampoline on [0, extent): fn(buffers, 0, extent)
  kParallel = 2,  // the same, split over the runtime's threads: support->parallel_for
};

// A step function gets its buffers' addresses, in the order its code names them.
using StepFn = void (*)(const TxlaSupport* support, void* const* buffers);
// A kernel's trampoline: its buffers (an array of addresses) and a range of its outermost loop.
using TrampolineFn = void (*)(void* buffers, int64_t lo, int64_t hi);

// The program in text, as the generated source ends and graph entries keep it:
//   //@@txla program <word> <word> ...
//   //@@txla functions <name> <name> ...   (the kernels' trampolines and step functions)
struct ProgramText {
  std::vector<int64_t> words;
  std::vector<std::string> functions;
};
std::string FormatProgram(const ProgramText& program);
// The program lines of `text` (a whole source, or a graph entry); nullopt without them.
std::optional<ProgramText> ParseProgram(const std::string& text);

class GraphProgram {
 public:
  GraphProgram() = default;
  // Decodes `words` over `functions` (the addresses of the names a ProgramText lists); throws
  // std::runtime_error naming `library` when they do not parse.
  GraphProgram(const std::vector<int64_t>& words, const std::vector<void*>& functions, const std::string& library);

  void Run(const TxlaSupport* support, const void* const* params, void* const* outputs, char* arena) const;

  // Outputs released before the run ends, in release order.
  std::vector<int64_t> EarlyOutputs() const;

 private:
  struct Slot {
    SlotKind kind;
    int64_t value;
  };
  struct Step {
    StepKind kind;
    void* fn;
    int64_t extent;
    int64_t first_arg, args;        // in arg_slots_
    int64_t first_ready, readies;   // in ready_
  };
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<int64_t> arg_slots_, ready_;
};

}  // namespace txla::compiler
