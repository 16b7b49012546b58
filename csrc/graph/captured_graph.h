// A graph captured once and run again on new inputs without tracing: torch.compile's path.
//
// The dynamo bridge traces an FX graph once on the lazy device; the cut of its outputs becomes a
// CapturedGraph whose every parameter is classified: an input the caller supplies each run
// (matched by buffer identity with the inputs it was traced on), a random op's seed (drawn fresh
// each run, so dropout masks differ per call as they do lazily), or a constant the trace made (a
// Python number, a tensor built inside the graph), kept here. Runs go through the same compile
// cache and execution queue as barriers.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "graph/post_order.h"
#include "runtime/executable.h"

namespace txla::graph {

class CapturedGraph {
 public:
  enum class Source : uint8_t { kInput, kSeed, kConstant };
  struct Parameter {
    Source source = Source::kConstant;
    size_t input = 0;             // kInput: index into the run's inputs; kSeed: into its seeds
    runtime::BufferPtr constant;  // kConstant
  };

  // `values` are the outputs; `root_index` receives each value's index in the run's results.
  // `inputs` are the buffers the trace ran on, in the order every run will supply them; `seeds`
  // the seed parameters the trace's random ops drew, in draw order (every run supplies as many,
  // drawn in that order, so a run after torch.manual_seed(s) gives what the trace gave).
  static std::shared_ptr<CapturedGraph> Capture(const std::vector<ir::Value>& values,
                                                const std::vector<runtime::BufferPtr>& inputs,
                                                const std::vector<runtime::BufferPtr>& seeds,
                                                int device, std::vector<size_t>* root_index);

  size_t seed_count() const { return seed_count_; }
  ir::hash_t hash() const { return hash_; }

  // Queues one run (or runs it, for executables that cannot run asynchronously). `publish`
  // receives the results before the run may start: a caller that hands an input's tensor its
  // new value there lets the run reuse that input's memory for an output.
  void Run(const std::vector<runtime::BufferPtr>& inputs,
           const std::vector<runtime::BufferPtr>& seeds,
           const std::function<void(const std::vector<runtime::BufferPtr>&)>& publish) const;

 private:
  std::vector<Parameter> parameters_;
  std::shared_ptr<runtime::Executable> executable_;
  size_t seed_count_ = 0;
  int device_ = 0;
  ir::hash_t hash_ = 0;
};

}  // namespace txla::graph
