// An executable made of generated native code: the loaded library, the program that runs its
// steps (graph_program.h), the result shapes and the scratch arena size.
#pragma once

#include <memory>
#include <set>
#include <vector>

#include "compiler/codegen/native_library.h"
#include "compiler/graph_program.h"
#include "hlo/shape.h"
#include "runtime/executable.h"

namespace txla::compiler {

class NativeExecutable final : public runtime::Executable,
                               public std::enable_shared_from_this<NativeExecutable> {
 public:
  // `output_aliases`: (output, earlier output) pairs sharing a buffer; `parameter_outputs`:
  // (output, parameter) pairs where the graph returns a parameter unchanged.
  // `program`: the graph's program (graph_program.h), whose functions `library` defines.
  NativeExecutable(std::unique_ptr<NativeLibrary> library, const ProgramText& program, std::vector<hlo::Shape> outputs,
                   int64_t arena_bytes, std::vector<std::pair<int64_t, int64_t>> output_aliases,
                   std::vector<std::pair<int64_t, int64_t>> parameter_outputs,
                   std::vector<std::pair<int64_t, int64_t>> donations = {});
  std::vector<runtime::BufferPtr> Execute(const std::vector<runtime::BufferPtr>& parameters,
                                          int device) override;
  std::vector<runtime::BufferPtr> Submit(const std::vector<runtime::BufferPtr>& parameters, int device,
                                         std::shared_ptr<runtime::Readiness> start, bool ends_step,
                                         std::shared_ptr<void> release_after_run = nullptr) override;
  std::string kind() const override { return "native"; }
  Footprint footprint() const override;
  int64_t CountDonations(const std::vector<bool>& donatable) const override;
  std::string dump_path() const override { return dump_path_; }
  void set_dump_path(std::string path) { dump_path_ = std::move(path); }
  // "execute graph_<hash>": the run's name on the profiler's timeline.
  std::string trace_name() const {
    size_t slash = dump_path_.rfind('/'), dot = dump_path_.find(".{");
    size_t begin = slash == std::string::npos ? 0 : slash + 1;
    return "execute " + (dump_path_.empty() ? std::string("graph") : dump_path_.substr(begin, dot - begin));
  }

 private:
  // Waits for the inputs; throws, naming this graph, if the run that wrote one failed.
  void WaitForInputs(const std::vector<runtime::BufferPtr>& parameters) const;
  // Output buffers, with shared outputs (aliases, returned parameters) filled in.
  std::vector<runtime::BufferPtr> AllocateOutputs(const std::vector<runtime::BufferPtr>& parameters,
                                                  int device) const;
  // For each output, the parameter whose memory it takes over (-1: none), among those `free` says
  // may be donated: the one rule Run and CountDonations share.
  template <typename Free>
  std::vector<int64_t> Donors(Free free) const;
  // `early`: the readiness of outputs the run releases before it ends (or null).
  void Run(const std::vector<runtime::BufferPtr>& parameters, const std::vector<runtime::BufferPtr>& outputs,
           const std::vector<std::shared_ptr<runtime::Readiness>>* early = nullptr) const;
  std::unique_ptr<NativeLibrary> library_;
  void (*bind_)(const TxlaSupport* support);  // the library's txla_bind
  GraphProgram program_;
  std::vector<hlo::Shape> outputs_;
  int64_t arena_bytes_;
  std::vector<std::pair<int64_t, int64_t>> output_aliases_;
  std::vector<std::pair<int64_t, int64_t>> parameter_outputs_;
  std::vector<std::pair<int64_t, int64_t>> donations_;  // (output, parameter), see BufferPlan
  std::set<int64_t> shared_;  // outputs that reuse another buffer
  // Outputs the program releases before the run returns.
  std::vector<int64_t> early_outputs_;
  std::string dump_path_;
};

}  // namespace txla::compiler
