#include "graph/captured_graph.h"

#include <c10/util/Exception.h>

#include <unordered_map>

#include "graph/executor_internal.h"
#include "metrics/metrics.h"
#include "runtime/execution_queue.h"

namespace txla::graph {

std::shared_ptr<CapturedGraph> CapturedGraph::Capture(const std::vector<ir::Value>& values,
                                                      const std::vector<runtime::BufferPtr>& inputs,
                                                      const std::vector<runtime::BufferPtr>& seeds,
                                                      int device,
                                                      std::vector<size_t>* root_index) {
  auto graph = std::make_shared<CapturedGraph>();
  graph->device_ = device;
  GraphCut cut = CutGraph(values, root_index);
  graph->hash_ = cut.hash;
  std::unordered_map<const runtime::Buffer*, size_t> input_index;
  for (size_t i = 0; i < inputs.size(); ++i) input_index.emplace(inputs[i].get(), i);
  std::unordered_map<const runtime::Buffer*, size_t> seed_index;
  for (size_t i = 0; i < seeds.size(); ++i) seed_index.emplace(seeds[i].get(), i);
  graph->seed_count_ = seeds.size();
  for (const runtime::BufferPtr& buffer : cut.parameters) {
    Parameter p;
    if (auto it = input_index.find(buffer.get()); it != input_index.end()) {
      p.source = Source::kInput;
      p.input = it->second;
    } else if (auto seed = seed_index.find(buffer.get()); seed != seed_index.end()) {
      p.source = Source::kSeed;
      p.input = seed->second;
    } else {
      p.constant = buffer;
    }
    graph->parameters_.push_back(std::move(p));
  }
  graph->executable_ = GetOrCompile(cut, /*op_by_op=*/false);
  return graph;
}

void CapturedGraph::Run(
    const std::vector<runtime::BufferPtr>& inputs, const std::vector<runtime::BufferPtr>& seeds,
    const std::function<void(const std::vector<runtime::BufferPtr>&)>& publish) const {
  TORCH_CHECK(seeds.size() == seed_count_, "captured graph: ", seed_count_, " seeds needed, ",
              seeds.size(), " given");
  std::vector<runtime::BufferPtr> parameters;
  parameters.reserve(parameters_.size());
  for (const Parameter& p : parameters_) {
    switch (p.source) {
      case Source::kInput: parameters.push_back(inputs.at(p.input)); break;
      case Source::kSeed: parameters.push_back(seeds[p.input]); break;
      case Source::kConstant: parameters.push_back(p.constant); break;
    }
  }
  std::lock_guard<std::mutex> device_lock(DeviceSyncMutex(device_));
  AdvanceExecutionEpoch();
  if (runtime::AsyncExecution()) {
    struct Gate {
      std::shared_ptr<runtime::Readiness> readiness = std::make_shared<runtime::Readiness>();
      ~Gate() { readiness->MarkReady(); }
    } gate;
    std::vector<runtime::BufferPtr> results = executable_->Submit(parameters, device_, gate.readiness,
                                                                  /*ends_step=*/false);
    if (!results.empty()) {
      parameters.clear();  // the run holds what it needs; the inputs' old values may be donated
      publish(results);
      return;  // ~Gate opens the run
    }
  }
  runtime::QueueFor(device_).Drain();
  std::vector<runtime::BufferPtr> results;
  {
    TXLA_TIMED("ExecuteTime");
    results = executable_->Execute(parameters, device_);
  }
  publish(results);
}

}  // namespace txla::graph
