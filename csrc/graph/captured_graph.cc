#include "graph/captured_graph.h"

#include <c10/util/Exception.h>

#include <unordered_map>

#include "graph/debug_analysis.h"
#include "graph/executor_internal.h"
#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "runtime/execution_queue.h"

namespace txla::graph {

std::shared_ptr<CapturedGraph> CapturedGraph::Capture(const std::vector<ir::Value>& values,
                                                      const std::vector<runtime::BufferPtr>& inputs,
                                                      const std::vector<runtime::BufferPtr>& seeds,
                                                      int device,
                                                      std::vector<size_t>* root_index,
                                                      bool inline_first) {
  auto graph = std::make_shared<CapturedGraph>();
  graph->device_ = device;
  GraphCut cut = CutGraph(values, root_index);
  graph->hash_ = cut.hash;
  graph->precision_ = cut.convolution_precision;
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
  graph->Record(cut);
  if (!inline_first || !graph->inlinable_) {
    bool compiled = false;
    graph->executable_ = GetOrCompile(cut, /*op_by_op=*/false, &compiled);
    if (compiled) analysis::OnDynamoCompile(cut, device, graph->executable_->footprint());
  }
  return graph;
}

void CapturedGraph::Record(const GraphCut& cut) {
  // CutGraph left each node's post-order position in cut_index.
  auto ref = [](const ir::Value& v) { return std::make_pair(v.node->cut_index, v.index); };
  size_t parameter = 0;
  recorded_.reserve(cut.nodes.size());
  for (const ir::Node* node : cut.nodes) {
    RecordedNode r;
    r.kind = node->kind();
    r.shapes = node->shapes();
    r.frames = node->frames();
    if (node->user_frame()) r.user_frame = *node->user_frame();
    switch (node->kind()) {
      case ir::NodeKind::kDeviceData: r.parameter = parameter++; break;
      case ir::NodeKind::kConstant: r.constant = node->constant(); break;
      case ir::NodeKind::kOp:
        r.op = node->op();
        r.args = node->args();
        r.operands.reserve(node->operands().size());
        for (const ir::Value& v : node->operands()) r.operands.push_back(ref(v));
        if (node->op()->Has(ir::kCollective)) inlinable_ = false;
        break;
    }
    recorded_.push_back(std::move(r));
  }
  for (const ir::Value& root : cut.roots) roots_.push_back(ref(root));
}

std::vector<ir::Value> CapturedGraph::Build(
    const std::function<ir::Value(size_t parameter, const ir::Shape& shape)>& parameter_value) const {
  // Per recorded node: the value its output 0 is now (an op's node, or what a parameter reads).
  std::vector<ir::Value> made(recorded_.size());
  auto value = [&](const std::pair<uint32_t, uint32_t>& ref) {
    const ir::Value& v = made[ref.first];
    return ir::Value{v.node, v.index + ref.second};
  };
  for (size_t k = 0; k < recorded_.size(); ++k) {
    const RecordedNode& r = recorded_[k];
    switch (r.kind) {
      case ir::NodeKind::kDeviceData: made[k] = parameter_value(r.parameter, r.shapes[0]); break;
      case ir::NodeKind::kConstant:
        made[k] = ir::Value{ir::Node::Constant(r.constant, r.shapes[0].dtype), 0};
        break;
      case ir::NodeKind::kOp: {
        std::vector<ir::Value> operands;
        operands.reserve(r.operands.size());
        for (const auto& ref : r.operands) operands.push_back(value(ref));
        ir::NodePtr node = ir::Node::Op(r.op, std::move(operands), r.args, r.shapes);
        if (!r.frames.empty()) node->set_frames(r.frames);
        if (r.user_frame) node->set_user_frame(*r.user_frame);
        made[k] = ir::Value{std::move(node), 0};
        break;
      }
    }
  }
  std::vector<ir::Value> results;
  results.reserve(roots_.size());
  for (const auto& ref : roots_) results.push_back(value(ref));
  return results;
}

std::vector<ir::Value> CapturedGraph::Inline(const std::vector<ir::Value>& inputs,
                                             const std::vector<runtime::BufferPtr>& seeds) const {
  TORCH_CHECK(inlinable_, "captured graph: a graph with collectives cannot be inlined");
  TORCH_CHECK(seeds.size() == seed_count_, "captured graph: ", seed_count_, " seeds needed, ",
              seeds.size(), " given");
  TXLA_COUNTER("CapturedGraphInlinedNodes", static_cast<int64_t>(recorded_.size()));
  return Build([&](size_t parameter, const ir::Shape& shape) {
    const Parameter& p = parameters_[parameter];
    if (p.source == Source::kInput) {
      const ir::Value& in = inputs.at(p.input);
      TORCH_CHECK(in.shape() == shape, "captured graph: input ", p.input, " is ",
                  in.shape().ToString(), ", the traced input was ", shape.ToString());
      return in;
    }
    return ir::Value{ir::Node::DeviceData(p.source == Source::kSeed ? seeds[p.input] : p.constant, shape), 0};
  });
}

std::shared_ptr<runtime::Executable> CapturedGraph::GetExecutable(
    const std::vector<runtime::BufferPtr>& parameters) const {
  std::unique_lock<std::mutex> lock(executable_mutex_);
  if (!executable_) {
    // One device-data node per recorded one, as the trace had: the cut has the trace's
    // parameters in the trace's order, and its hash.
    std::vector<ir::Value> values = Build([&](size_t parameter, const ir::Shape& shape) {
      return ir::Value{ir::Node::DeviceData(parameters[parameter], shape), 0};
    });
    GraphCut cut = CutGraph(values, nullptr, precision_);
    TORCH_CHECK(cut.hash == hash_ && cut.parameters.size() == parameters.size(),
                "captured graph: the recorded nodes do not make the traced graph again");
    bool compiled = false;
    executable_ = GetOrCompile(cut, /*op_by_op=*/false, &compiled);
    if (compiled) {
      std::shared_ptr<runtime::Executable> executable = executable_;
      lock.unlock();  // the report takes the GIL
      analysis::OnDynamoCompile(cut, device_, executable->footprint());
      return executable;
    }
  }
  return executable_;
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
  std::shared_ptr<runtime::Executable> executable = GetExecutable(parameters);
  analysis::OnDynamoExecute(hash_, parameters.size(), roots_.size(), device_);
  std::lock_guard<std::mutex> device_lock(DeviceSyncMutex(device_));
  AdvanceExecutionEpoch();
  if (runtime::AsyncExecution()) {
    struct Gate {
      std::shared_ptr<runtime::Readiness> readiness = std::make_shared<runtime::Readiness>();
      ~Gate() { readiness->MarkReady(); }
    } gate;
    std::vector<runtime::BufferPtr> results = executable->Submit(parameters, device_, gate.readiness,
                                                                  /*ends_step=*/false);
    if (!results.empty()) {
      parameters.clear();  // the run holds what it needs; the inputs' old values may be donated
      publish(results);
      return;  // ~Gate opens the run
    }
  }
  runtime::DrainQueuesOf(device_);
  std::vector<runtime::BufferPtr> results;
  {
    TXLA_TIMED("ExecuteTime");
    results = executable->Execute(parameters, device_);
  }
  publish(results);
}

}  // namespace txla::graph
