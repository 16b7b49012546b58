// A graph captured once and run again on new inputs without tracing: torch.compile's path.
//
// The dynamo bridge traces an FX graph once on the lazy device; the cut of its outputs becomes a
// CapturedGraph whose every parameter is classified: an input the caller supplies each run
// (matched by buffer identity with the inputs it was traced on), a random op's seed (drawn fresh
// each run, so dropout masks differ per call as they do lazily), or a constant the trace made (a
// Python number, a tensor built inside the graph), kept here. Runs go through the same compile
// cache and execution queue as barriers.
//
// A graph can also join its caller's lazy graph instead of running (Inline): its recorded ops are
// made again as IR over the caller's values. A backward graph whose input is the lazily computed
// loss's gradient then needs no graph of its own to compute that input first: loss, backward and
// the optimizer's update become one graph at the barrier, as on the lazy path.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "debug/frames.h"
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
  // `inline_first`: the first use will be Inline, so compiling waits for the first Run (a graph
  // that is only ever inlined is never compiled on its own).
  static std::shared_ptr<CapturedGraph> Capture(const std::vector<ir::Value>& values,
                                                const std::vector<runtime::BufferPtr>& inputs,
                                                const std::vector<runtime::BufferPtr>& seeds,
                                                int device, std::vector<size_t>* root_index,
                                                bool inline_first = false);

  size_t seed_count() const { return seed_count_; }
  ir::hash_t hash() const { return hash_; }
  // False for a graph with collectives: their ordering tokens form one chain per graph, and a
  // second chain inside the caller's graph could order them differently across processes.
  bool inlinable() const { return inlinable_; }

  // The results (one per root, as Run's) as lazy values: the recorded ops made again over
  // `inputs` (the IR value each input stands for now, of the traced input's shape) and `seeds`.
  // Nothing runs or compiles; the caller's next barrier computes them with the rest of its graph.
  std::vector<ir::Value> Inline(const std::vector<ir::Value>& inputs,
                                const std::vector<runtime::BufferPtr>& seeds) const;

  // Queues one run (or runs it, for executables that cannot run asynchronously). `publish`
  // receives the results before the run may start: a caller that hands an input's tensor its
  // new value there lets the run reuse that input's memory for an output.
  void Run(const std::vector<runtime::BufferPtr>& inputs,
           const std::vector<runtime::BufferPtr>& seeds,
           const std::function<void(const std::vector<runtime::BufferPtr>&)>& publish) const;

 private:
  void Record(const GraphCut& cut);
  // The recorded nodes made again, with `parameter_value` for each device-data node; the roots.
  std::vector<ir::Value> Build(
      const std::function<ir::Value(size_t parameter, const ir::Shape& shape)>& parameter_value) const;
  // The executable, compiled on first use from the recorded nodes over `parameters`.
  std::shared_ptr<runtime::Executable> GetExecutable(const std::vector<runtime::BufferPtr>& parameters) const;

  // One node of the recorded graph, in post-order, without its buffers (keeping the trace's
  // nodes would keep every buffer they read alive).
  struct RecordedNode {
    ir::NodeKind kind = ir::NodeKind::kOp;
    const ir::OpInfo* op = nullptr;  // kOp
    std::vector<ir::Arg> args;
    std::vector<ir::Shape> shapes;
    std::vector<std::pair<uint32_t, uint32_t>> operands;  // (recorded node, output)
    size_t parameter = 0;   // kDeviceData: index into parameters_
    c10::Scalar constant;   // kConstant
    // Where the trace made it (kept under XLA_IR_DEBUG / PT_XLA_DEBUG): an inlined graph's dumps
    // and compile reasons name the same lines as the trace's.
    std::string frames;
    std::optional<debug::Frame> user_frame;
  };

  std::vector<Parameter> parameters_;
  std::vector<RecordedNode> recorded_;
  std::vector<std::pair<uint32_t, uint32_t>> roots_;  // (recorded node, output)
  bool inlinable_ = true;
  mutable std::mutex executable_mutex_;
  mutable std::shared_ptr<runtime::Executable> executable_;
  size_t seed_count_ = 0;
  int device_ = 0;
  ir::hash_t hash_ = 0;
  hlo::Precision precision_ = hlo::Precision::kHighest;  // the trace's, kept for its compile
};

}  // namespace txla::graph
