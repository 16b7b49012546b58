// torch.compile's 'openxla' backends, the C++ half (torch_xla/core/dynamo_bridge.py is the other):
// an FX graph traced once on the lazy device becomes a graph::CapturedGraph, which later calls
// run by handing over their inputs' buffers: no Python op dispatch, no IR, no hashing per call.
// A call with a pending input inlines the graph into the caller's lazy graph instead (Run).
//
// A trace is bracketed: _xla_dynamo_begin_trace notes the inputs' values (a pending input is
// traced as a stand-in of its shape; a transpose of device data stays a transpose the graph
// computes: TransposedData), the FX graph runs on them lazily, _xla_dynamo_end_trace compares:
// inputs whose value changed were mutated in place by the graph (BatchNorm buffers, optimizer
// state) and become extra outputs that each run writes back.
#include "python/dynamo_bridge.h"

#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/core/Tensor.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "aten/device_rng.h"
#include "aten/lazy_kernel.h"
#include "graph/captured_graph.h"
#include "graph/deferred_views.h"
#include "graph/graph_executor.h"
#include "ir/shape.h"
#include "metrics/metrics.h"
#include "runtime/device.h"
#include "tensor/bridge.h"
#include "tensor/tensor_impl.h"

namespace py = pybind11;

namespace txla::python {
namespace {

// The inputs as they were when a trace began.
struct TraceStart {
  // What the trace runs on: the call's inputs, with a stand-in for each pending one.
  std::vector<at::Tensor> inputs;
  // Per input: traced as a stand-in (device data of its shape, zeros) rather than materialized.
  std::vector<bool> stand_in;
  // The call's own inputs, and their values when the trace began (to put back when it is
  // abandoned: a trace on stand-ins that fails is done again on the materialized inputs).
  std::vector<at::Tensor> call_inputs;
  std::vector<LazyTensorPtr> call_values;
  std::vector<LazyTensorPtr> lazy;
  // An input's buffer, or for a transpose of device data (TransposedData) the data it transposes.
  std::vector<runtime::BufferPtr> buffers;
  // Per input: the hash of the transposing node it was traced as (0: its own data).
  std::vector<ir::hash_t> transposes;
  int device = 0;
  uint64_t epoch = 0;
  // The seeds the trace's random ops draw (a trace runs on the thread that began it).
  std::unique_ptr<aten::SeedRecording> seeds = std::make_unique<aten::SeedRecording>();
};

// The transposing node of an input that is a pending transpose of device data, else null.
// AOT autograd saves a Linear layer's transposed weight for the backward graph; the forward
// graph returns it as a view of the weight (dynamo_bridge.py), and the backward graph takes it
// as the weight's data with the transpose in the graph, where a GEMM reads it through its
// transpose flag: materializing it cost a copy of the weight per step.
const ir::Node* TransposedData(const LazyTensorPtr& lt) {
  if (!lt || !lt->pending() || !graph::IsTransposingView(lt->pending())) return nullptr;
  const ir::Node* transpose = lt->pending().node.get();
  return transpose->operands()[0].node->kind() == ir::NodeKind::kDeviceData ? transpose : nullptr;
}

// The device data `lt` transposes when it is a transpose of device data by the node hashed
// `hash`; empty when it is not (any more).
ir::Value TransposedSource(const LazyTensorPtr& lt, ir::hash_t hash) {
  const ir::Node* transpose = TransposedData(lt);
  return transpose && transpose->hash() == hash ? transpose->operands()[0] : ir::Value{};
}

// Its buffer, or null.
runtime::BufferPtr TransposedBuffer(const LazyTensorPtr& lt, ir::hash_t hash) {
  ir::Value source = TransposedSource(lt, hash);
  return source ? source.node->data() : nullptr;
}

// An input whose value must be computed before a run can read it: pending, and not a transpose
// of device data that the graph takes as it is (`transpose`: its TraceStart::transposes entry).
bool PendingInput(const LazyTensorPtr& lt, ir::hash_t transpose) {
  return transpose == 0 && lt && lt->pending();
}

// Whether a trace ran on a stand-in for some input (TraceStart::stand_in).
bool AnyStandIn(const std::vector<bool>& stand_in) {
  return std::find(stand_in.begin(), stand_in.end(), true) != stand_in.end();
}

// Brings every input to device data (one graph for all that have pending values), except,
// where `transposes` has a nonzero hash, an input that is still a transpose of device data by
// that node. `buffers` gets each input's buffer, or the data such an input transposes. False
// when a transposed input is not that transpose any more.
bool InputBuffers(const std::vector<at::Tensor>& inputs, const std::vector<ir::hash_t>& transposes,
                  std::vector<LazyTensorPtr>* lazy, std::vector<runtime::BufferPtr>* buffers) {
  lazy->clear();
  lazy->reserve(inputs.size());
  buffers->assign(inputs.size(), nullptr);
  std::vector<LazyTensorPtr> pending;
  for (size_t i = 0; i < inputs.size(); ++i) {
    LazyTensorPtr lt = TryGetLazyTensor(inputs[i]);
    if (transposes[i] != 0) {
      (*buffers)[i] = TransposedBuffer(lt, transposes[i]);
      if (!(*buffers)[i]) return false;
    } else if (PendingInput(lt, transposes[i])) {
      pending.push_back(lt);
    }
    lazy->push_back(std::move(lt));
  }
  if (!pending.empty()) {
    // PyTorch/XLA's name: the graph's pending inputs are computed first, in a run of their own.
    TXLA_COUNTER("DynamoSyncInputExecuteTime", 1);
    py::gil_scoped_release no_gil;
    graph::SyncTensors(pending, /*for_read=*/false);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (transposes[i] == 0) (*buffers)[i] = (*lazy)[i]->data();
  return true;
}

// A new value for an input the graph updates in place, as functionalization hands one over: the
// wrapper's value is replaced and its views see the update.
void Publish(const at::Tensor& input, LazyTensorPtr value) {
  if (at::functionalization::impl::isFunctionalTensor(input)) {
    at::functionalization::impl::replace_(input, MakeXlaTensor(std::move(value)));
    at::functionalization::impl::commit_update(input);
    at::functionalization::impl::sync(input);
    return;
  }
  auto* impl = static_cast<XlaTensorImpl*>(input.unsafeGetTensorImpl());
  impl->set_tensor(std::move(value));
}

class DynamoGraph {
 public:
  // Where an output of the FX graph comes from on each run.
  enum class OutputKind : uint8_t {
    kSameTensor,   // the input tensor object itself (graphs that return an argument)
    kInputValue,   // a new tensor holding an input's value at the start of the run
    kConstant,     // a value the trace produced without reading any input
    kComputed,     // a result of the captured graph
  };
  struct Output {
    OutputKind kind;
    size_t index = 0;  // input index or result index
    runtime::BufferPtr constant;
    c10::ScalarType dtype = c10::kFloat;
  };

  static py::object Build(TraceStart& start, const std::vector<at::Tensor>& outputs);

  // The outputs of one run, or None when an input's shape or dtype differs from the trace (the
  // Python side then traces again for the new signature).
  // join_lazy_graph: a call may join the caller's lazy graph (Inline) instead of running now.
  py::object Run(const std::vector<at::Tensor>& inputs, bool join_lazy_graph);
  // Each input's value for an inlined run (see InputBuffers); false as there.
  bool InputValues(const std::vector<at::Tensor>& inputs, std::vector<ir::Value>* values) const;
  bool AnyPending(const std::vector<at::Tensor>& inputs) const;

  const std::string& text() const { return text_; }
  size_t mutated_count() const { return mutated_.size(); }
  size_t seed_count() const { return graph_ ? graph_->seed_count() : 0; }
  std::string hash() const { return graph_ ? std::to_string(graph_->hash()) : ""; }

 private:
  std::shared_ptr<graph::CapturedGraph> graph_;  // null when nothing is computed
  std::vector<ir::Shape> input_shapes_;
  // SPMD: each input's sharding when traced; a call with another layout traces again (the
  // partitioned program was made for these).
  std::vector<std::string> input_shardings_;
  std::vector<ir::hash_t> transposes_;  // TraceStart::transposes
  // Per input: the first input that had its buffer in the trace (itself when none did). The
  // graph reads that one's: a run is the trace's only while they still share it.
  std::vector<size_t> same_buffer_as_;
  std::vector<Output> outputs_;
  std::vector<std::pair<size_t, size_t>> mutated_;  // (input, result)
  std::vector<c10::ScalarType> result_dtypes_;
  // The first run computes what the trace recorded: its inputs' values and its seeds.
  std::vector<runtime::BufferPtr> first_run_inputs_;
  std::vector<runtime::BufferPtr> first_run_seeds_;
  bool first_run_ = true;
  // The step (graph::StepEpoch) in which a call with data inputs last joined the caller's graph.
  uint64_t inlined_data_step_ = ~uint64_t{0};
  std::vector<bool> stand_in_;      // TraceStart::stand_in
  int device_ = 0;
  std::string text_;
};

py::object DynamoGraph::Build(TraceStart& start, const std::vector<at::Tensor>& outputs) {
  if (graph::ExecutionEpoch() != start.epoch)
    return py::str("the graph ran part of itself while it was traced (an op fell back to the CPU "
                   "or a value was read to the host)");
  auto dg = std::make_unique<DynamoGraph>();
  dg->device_ = start.device;
  std::unordered_map<const c10::TensorImpl*, size_t> input_of_impl;
  std::unordered_map<const runtime::Buffer*, size_t> input_of_buffer;
  for (size_t i = 0; i < start.inputs.size(); ++i) {
    input_of_impl.emplace(start.inputs[i].unsafeGetTensorImpl(), i);
    dg->same_buffer_as_.push_back(input_of_buffer.emplace(start.buffers[i].get(), i).first->second);
    dg->input_shapes_.push_back(start.lazy[i]->shape());
    if (runtime::SpmdEnabled()) dg->input_shardings_.push_back(start.lazy[i]->EffectiveSharding());
  }
  dg->transposes_ = start.transposes;
  std::vector<ir::Value> values;
  std::vector<c10::ScalarType> value_dtypes;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const at::Tensor& out = outputs[k];
    Output o{OutputKind::kComputed};
    o.dtype = out.scalar_type();
    if (auto it = input_of_impl.find(out.unsafeGetTensorImpl()); it != input_of_impl.end()) {
      o.kind = OutputKind::kSameTensor;
      o.index = it->second;
    } else {
      LazyTensorPtr lt = TryGetLazyTensor(out);
      if (!lt) return py::str("output " + std::to_string(k) + " is not an xla tensor");
      if (lt->pending()) {
        o.index = values.size();
        values.push_back(lt->pending());
        value_dtypes.push_back(lt->dtype());
      } else if (auto in = input_of_buffer.find(lt->data().get()); in != input_of_buffer.end()) {
        o.kind = OutputKind::kInputValue;
        o.index = in->second;
      } else {
        o.kind = OutputKind::kConstant;
        o.constant = lt->data();
      }
    }
    dg->outputs_.push_back(std::move(o));
  }
  for (size_t i = 0; i < start.inputs.size(); ++i) {
    LazyTensorPtr now = TryGetLazyTensor(start.inputs[i]);
    if (now == start.lazy[i]) {
      runtime::BufferPtr value = start.transposes[i] != 0 ? TransposedBuffer(now, start.transposes[i])
                                 : now->pending()          ? nullptr
                                                           : now->data();
      if (value == start.buffers[i]) continue;
    }
    // Updated in place: the new value is an extra result.
    dg->mutated_.emplace_back(i, values.size());
    values.push_back(now->GetIrValue());
    value_dtypes.push_back(now->dtype());
  }
  if (!values.empty()) {
    std::vector<size_t> root_index;
    {
      py::gil_scoped_release no_gil;
      dg->graph_ = graph::CapturedGraph::Capture(values, start.buffers, start.seeds->seeds(),
                                                 start.device, &root_index,
                                                 /*inline_first=*/true);
    }
    // Outputs refer to values; runs hand out results, which are the deduplicated roots.
    for (Output& o : dg->outputs_)
      if (o.kind == OutputKind::kComputed) o.index = root_index[o.index];
    for (auto& [input, result] : dg->mutated_) result = root_index[result];
    size_t roots = 0;
    for (size_t r : root_index) roots = std::max(roots, r + 1);
    dg->result_dtypes_.resize(roots);
    for (size_t v = 0; v < values.size(); ++v) dg->result_dtypes_[root_index[v]] = value_dtypes[v];
  }
  dg->stand_in_ = start.stand_in;
  dg->first_run_inputs_ = start.buffers;
  dg->first_run_seeds_ = start.seeds->seeds();
  start.seeds.reset();
  TXLA_COUNTER("DynamoCapturedGraph", 1);
  return py::cast(dg.release(), py::return_value_policy::take_ownership);
}

// Whether two inputs' values are one: the same pending value, or data in the same buffer.
bool SameValue(const ir::Value& a, const ir::Value& b) {
  if (a.node == b.node) return a.index == b.index;
  return a.node->kind() == ir::NodeKind::kDeviceData && b.node->kind() == ir::NodeKind::kDeviceData &&
         a.node->data() == b.node->data();
}

bool DynamoGraph::InputValues(const std::vector<at::Tensor>& inputs, std::vector<ir::Value>* values) const {
  values->clear();
  values->reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    LazyTensorPtr lt = TryGetLazyTensor(inputs[i]);
    if (transposes_[i] != 0) {
      ir::Value source = TransposedSource(lt, transposes_[i]);
      if (!source) return false;
      values->push_back(std::move(source));
    } else {
      values->push_back(lt->GetIrValue());
    }
  }
  for (size_t i = 0; i < values->size(); ++i)
    if (!SameValue((*values)[i], (*values)[same_buffer_as_[i]])) return false;
  return true;
}

bool DynamoGraph::AnyPending(const std::vector<at::Tensor>& inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (PendingInput(TryGetLazyTensor(inputs[i]), transposes_[i])) return true;
  return false;
}

py::object DynamoGraph::Run(const std::vector<at::Tensor>& inputs, bool join_lazy_graph) {
  TORCH_CHECK(inputs.size() == input_shapes_.size(), "compiled graph: ", input_shapes_.size(),
              " tensor inputs expected, ", inputs.size(), " given");
  bool first = first_run_;
  if (!first) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!IsXlaTensor(inputs[i]) || inputs[i].scalar_type() != input_shapes_[i].dtype ||
          inputs[i].sizes() != c10::IntArrayRef(input_shapes_[i].sizes))
        return py::none();
      if (!input_shardings_.empty() && TryGetLazyTensor(inputs[i])->EffectiveSharding() != input_shardings_[i])
        return py::none();
    }
  }
  // Inlined: the graph joins the caller's lazy graph, computed at the next barrier with what
  // comes before and after it. Always when an input is pending (rather than a graph computing
  // the input running first). With inputs that are all data, once per step (between two
  // barriers): a training step's forward then joins its backward and update in one graph, as
  // on the lazy path (the MLP's step through 'openxla' 5% faster, the GPT decoder's 6%, and one
  // graph to compile, not two: ResNet-18's first steps 897 -> 752 ms). A second call in the same
  // step runs on its own (gradient accumulation's second micro-batch, an inference loop without
  // barriers), so calls without barriers never grow one graph call after call.
  const uint64_t step = graph::StepEpoch();
  const bool pending = AnyPending(inputs);
  const bool inlined =
      join_lazy_graph && graph_ && graph_->inlinable() && (pending || step != inlined_data_step_);
  if (inlined && !pending) inlined_data_step_ = step;
  std::vector<runtime::BufferPtr> buffers, seeds;
  std::vector<ir::Value> values;  // inlined: what each input is now
  // PyTorch/XLA's names for a cached graph's input gathering and output wrapping; a call that
  // traces again instead (None) is not counted.
  const int64_t gather_start = metrics::NowNs();
  if (first) {
    first_run_ = false;
    // The trace left its own values in the inputs it mutated; the first run starts from the
    // values the trace began with. Inputs traced as stand-ins have theirs still: pending, or
    // materialized now for a graph that cannot join the caller's.
    buffers = std::move(first_run_inputs_);
    seeds = std::move(first_run_seeds_);
    if (inlined) {
      for (size_t i = 0; i < buffers.size(); ++i) {
        if (stand_in_[i]) {
          values.push_back(TryGetLazyTensor(inputs[i])->GetIrValue());
        } else {
          ir::Shape shape(input_shapes_[i].dtype, buffers[i]->dims());
          values.push_back(ir::Value{ir::Node::DeviceData(buffers[i], std::move(shape)), 0});
        }
      }
    } else if (AnyStandIn(stand_in_)) {
      std::vector<LazyTensorPtr> lazy;
      std::vector<runtime::BufferPtr> now;
      if (!InputBuffers(inputs, transposes_, &lazy, &now)) return py::none();
      for (size_t i = 0; i < buffers.size(); ++i)
        if (stand_in_[i]) buffers[i] = now[i];
    }
  } else if (inlined) {
    if (!InputValues(inputs, &values)) return py::none();
  } else {
    std::vector<LazyTensorPtr> lazy;
    if (!InputBuffers(inputs, transposes_, &lazy, &buffers)) return py::none();
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i] != buffers[same_buffer_as_[i]]) return py::none();
  }
  static metrics::Metric* const input_data = metrics::GetMetric("RunCachedGraphInputData");
  input_data->AddSample(static_cast<double>(metrics::NowNs() - gather_start));
  TXLA_COUNTER("DynamoRunCapturedGraph", 1);

  std::vector<at::Tensor> results_as_tensors;
  auto publish = [&](std::vector<LazyTensorPtr> results) {
    for (const LazyTensorPtr& r : results) results_as_tensors.push_back(MakeEntryXlaTensor(r));
    for (const auto& [input, result] : mutated_) Publish(inputs[input], results[result]);
  };
  if (graph_) {
    for (size_t s = seeds.size(); s < graph_->seed_count(); ++s) {
      auto seed = std::make_shared<runtime::Buffer>(runtime::ElementType::kS64,
                                                    std::vector<int64_t>{}, device_);
      int64_t value = aten::DrawDeviceSeed(device_);
      std::memcpy(seed->data(), &value, sizeof(value));
      seeds.push_back(std::move(seed));
    }
    if (inlined) {
      TXLA_COUNTER("DynamoInlinedCapturedGraph", 1);
      std::vector<LazyTensorPtr> results;
      for (ir::Value& v : graph_->Inline(values, seeds)) results.push_back(LazyTensor::FromValue(std::move(v), device_));
      publish(std::move(results));
    } else {
      graph_->Run(buffers, seeds, [&](const std::vector<runtime::BufferPtr>& data) {
        std::vector<LazyTensorPtr> results;
        for (size_t r = 0; r < data.size(); ++r)
          results.push_back(LazyTensor::FromData(data[r], result_dtypes_[r], device_));
        publish(std::move(results));
      });
    }
  }

  TXLA_TIMED("RunCachedGraphOutputData");
  py::list out;
  for (const Output& o : outputs_) {
    switch (o.kind) {
      case OutputKind::kSameTensor: out.append(py::cast(inputs[o.index])); break;
      case OutputKind::kInputValue:
        out.append(py::cast(MakeEntryXlaTensor(
            inlined ? LazyTensor::FromValue(values[o.index], device_)
                    : LazyTensor::FromData(buffers[o.index], o.dtype, device_))));
        break;
      case OutputKind::kConstant:
        out.append(py::cast(MakeEntryXlaTensor(LazyTensor::FromData(o.constant, o.dtype, device_))));
        break;
      case OutputKind::kComputed: out.append(py::cast(results_as_tensors.at(o.index))); break;
    }
  }
  return out;
}

}  // namespace

void RegisterDynamoBridge(py::module& m) {
  py::class_<TraceStart>(m, "_XlaDynamoTrace");
  py::class_<DynamoGraph>(m, "_XlaDynamoGraph")
      .def("__call__", &DynamoGraph::Run, py::arg("inputs"), py::arg("join_lazy_graph"))
      .def_property_readonly("mutated_input_count", &DynamoGraph::mutated_count)
      .def_property_readonly("seed_count", &DynamoGraph::seed_count)
      .def_property_readonly("graph_hash", &DynamoGraph::hash);

  // Notes the inputs' values, with stand-ins for pending inputs (or, without use_stand_ins, those
  // materialized); raises for an input that is not an xla tensor (the Python side runs such
  // graphs lazily instead).
  m.def("_xla_dynamo_begin_trace", [](const std::vector<at::Tensor>& inputs, bool use_stand_ins) {
    auto start = std::make_unique<TraceStart>();
    int device = -1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TORCH_CHECK(IsXlaTensor(inputs[i]), "input ", i, " is a ", TensorTypeName(inputs[i]),
                  ", not an xla tensor");
      int d = DeviceOrdinal(inputs[i].device());
      TORCH_CHECK(device < 0 || d == device, "inputs on more than one xla device");
      device = d;
    }
    start->device = device < 0 ? 0 : device;
    start->inputs = inputs;
    start->call_inputs = inputs;
    start->stand_in.assign(inputs.size(), false);
    // A pending input is traced as a stand-in of its shape rather than materialized: running its
    // graph first cost a compile (70 ms for the loss's gradient that AOTAutograd's backward
    // takes) and a wait, and the trace's graph joins the pending one on its first run anyway.
    // One stand-in per tensor, so inputs passed twice stay one.
    std::unordered_map<const c10::TensorImpl*, at::Tensor> stand_ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      LazyTensorPtr lt = TryGetLazyTensor(inputs[i]);
      start->call_values.push_back(lt);
      const ir::Node* transpose = TransposedData(lt);
      start->transposes.push_back(transpose ? transpose->hash() : 0);
      if (!use_stand_ins || !PendingInput(lt, start->transposes.back())) continue;
      start->stand_in[i] = true;
      at::Tensor& stand_in = stand_ins[inputs[i].unsafeGetTensorImpl()];
      if (!stand_in.defined()) {
        auto zeros =
            std::make_shared<runtime::Buffer>(ir::ToElementType(lt->dtype()), lt->shape().sizes, start->device);
        std::memset(zeros->data(), 0, zeros->size_bytes());
        stand_in = MakeEntryXlaTensor(LazyTensor::FromData(std::move(zeros), lt->dtype(), start->device));
      }
      start->inputs[i] = stand_in;
    }
    InputBuffers(start->inputs, start->transposes, &start->lazy, &start->buffers);
    auto transposed = std::count_if(start->transposes.begin(), start->transposes.end(), [](ir::hash_t h) { return h != 0; });
    if (transposed > 0) TXLA_COUNTER("DynamoTransposedInputs", static_cast<int64_t>(transposed));
    start->epoch = graph::ExecutionEpoch();
    return start;
  });
  // What the trace runs on: the inputs, with stand-ins for pending ones.
  m.def("_xla_dynamo_trace_inputs", [](const TraceStart& start) { return start.inputs; });
  // A trace on stand-ins that raised or read a value: the call's inputs get back the values the
  // trace began with (it may have updated some in place), and materialize for a trace again.
  // False, leaving everything as it is, for a trace without stand-ins.
  m.def("_xla_dynamo_abandon_trace", [](TraceStart& start) {
    if (!AnyStandIn(start.stand_in)) return false;
    for (size_t i = 0; i < start.call_inputs.size(); ++i)
      if (!start.stand_in[i] && TryGetLazyTensor(start.call_inputs[i]) != start.call_values[i])
        Publish(start.call_inputs[i], start.call_values[i]);
    return true;
  });
  // The captured graph, or a str saying why the trace cannot be replayed.
  m.def("_xla_dynamo_end_trace", [](TraceStart& start, const std::vector<at::Tensor>& outputs) {
    return DynamoGraph::Build(start, outputs);
  });
}

}  // namespace txla::python
