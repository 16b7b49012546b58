// The graph's program as the emitter builds it (compiler/graph_program.h): the buffers its steps
// name, each step's function (written once per content, between kernel markers), and the
// program's words with the listing a reader of the dump sees. Knows nothing of HLO: the emitter
// says which buffers exist and what each step runs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/graph_program.h"

namespace txla::compiler::emitter {

// An instruction's name as a C++ identifier.
std::string Sanitize(const std::string& name);

class ProgramBuilder {
 public:
  struct BufferRef {
    std::string type;  // the element type in memory
    bool read_only;
    SlotKind kind;
    int64_t value;  // parameter or output index, or arena offset
  };
  void DeclareBuffer(const std::string& id, BufferRef ref) { buffers_[id] = std::move(ref); }
  // Throws std::invalid_argument naming the step when `id` has no buffer.
  const BufferRef& Buffer(const std::string& step, const std::string& id) const;

  // A step function s_<name> over the buffers (b_*) `body` names, its kernels declared by
  // `prototypes`, run after outputs `ready` are released. Returns the function's text between
  // markers when no earlier step had its content, "" when one did (the program calls that one).
  std::string AddStep(const std::string& name, const std::string& prototypes, const std::string& body,
                      const std::vector<int64_t>& ready);
  // A program entry calling `function` (a kernel's trampoline, or a step) on `buffers`.
  void AddEntry(const std::string& name, StepKind kind, const std::string& function, int64_t extent,
                const std::vector<std::string>& buffers, const std::vector<int64_t>& ready);
  // The program as comment lines: one a step for the reader, then the words the runtime parses.
  std::string Listing() const;

 private:
  std::map<std::string, BufferRef> buffers_;       // by buffer name (b_*)
  std::map<std::string, int64_t> function_index_;  // by function name
  std::vector<std::string> functions_order_;       // the functions the program names, in order
  std::set<std::string> emitted_steps_;            // step content hashes
  std::map<std::string, int64_t> slot_index_;
  std::vector<int64_t> slot_words_, step_words_;
  std::ostringstream listing_;
  int64_t steps_ = 0;
};

}  // namespace txla::compiler::emitter
