#include "python/cached_graph_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/content_hash.h"
#include "debug/config.h"
#include "graph/captured_graph.h"
#include "graph/graph_executor.h"
#include "graph/post_order.h"
#include "metrics/metrics.h"
#include "tensor/bridge.h"
#include "tensor/registry.h"

namespace py = pybind11;

namespace txla::python {
namespace {

// The tensors' pending values, each tensor once: what a barrier would compute for them (a tensor
// that holds data, or is returned unchanged, is no output of the graph).
struct PendingSet {
  std::vector<ir::Value> values;
  int device = -1;
};

PendingSet Pending(const std::vector<at::Tensor>& tensors, const char* op) {
  PendingSet set;
  std::unordered_set<const LazyTensor*> seen;
  for (const at::Tensor& tensor : tensors) {
    LazyTensorPtr t = GetLazyTensor(tensor, op);
    TORCH_CHECK(set.device < 0 || set.device == t->device(), op, ": tensors on more than one xla device");
    set.device = t->device();
    if (t->pending() && seen.insert(t.get()).second) set.values.push_back(t->pending());
  }
  return set;
}

// The graph's parameters, each buffer once, in the order the graph first reads them.
std::vector<runtime::BufferPtr> UniqueParameters(const graph::GraphCut& cut) {
  std::vector<runtime::BufferPtr> unique;
  std::unordered_set<const runtime::Buffer*> seen;
  for (const runtime::BufferPtr& p : cut.parameters)
    if (seen.insert(p.get()).second) unique.push_back(p);
  return unique;
}

// The element type each unique parameter holds, as its device-data node says.
std::unordered_map<const runtime::Buffer*, c10::ScalarType> ParameterDtypes(const graph::GraphCut& cut) {
  std::unordered_map<const runtime::Buffer*, c10::ScalarType> dtypes;
  for (const ir::Node* node : cut.nodes)
    if (node->kind() == ir::NodeKind::kDeviceData) dtypes.emplace(node->data().get(), node->shape().dtype);
  return dtypes;
}

// Graphs _xla_warm_up_cache compiled, by the hash _get_graph_hash gives their tensors.
struct WarmGraph {
  std::shared_ptr<graph::CapturedGraph> graph;
  std::vector<c10::ScalarType> parameter_dtypes;
  std::vector<std::vector<int64_t>> parameter_sizes;
  std::vector<c10::ScalarType> result_dtypes;
  int device = 0;
};
std::mutex warm_mutex;
std::map<std::string, WarmGraph>& WarmGraphs() {
  static std::map<std::string, WarmGraph> graphs;
  return graphs;
}

}  // namespace

void RegisterCachedGraphBindings(py::module& m, std::string (*graph_hash)(const std::vector<at::Tensor>&)) {
  m.def("_xla_get_tensor_id", [](const at::Tensor& tensor) {
    return GetLazyTensor(tensor, "_xla_get_tensor_id")->id();
  });
  // The device data the tensors' pending graph reads, each buffer once in the graph's parameter
  // order: (the id of a live tensor holding it, or a negative id for data no tensor holds (a
  // number's shared buffer), an xla tensor over it).
  m.def("_get_tensors_xla_device_data_node", [](const std::vector<at::Tensor>& tensors) {
    PendingSet set = Pending(tensors, "_get_tensors_xla_device_data_node");
    std::vector<int64_t> ids;
    std::vector<at::Tensor> data;
    if (set.values.empty()) return std::make_pair(ids, data);
    graph::GraphCut cut = graph::CutGraph(set.values, nullptr);
    const auto dtypes = ParameterDtypes(cut);
    for (const runtime::BufferPtr& buffer : UniqueParameters(cut)) {
      int64_t id = -1 - static_cast<int64_t>(ids.size());
      for (const LazyTensorPtr& t : registry::TensorsHoldingData(set.device, {buffer.get()}))
        if (id < 0 || t->id() < id) id = t->id();
      ids.push_back(id);
      data.push_back(MakeEntryXlaTensor(LazyTensor::FromData(buffer, dtypes.at(buffer.get()), set.device)));
    }
    return std::make_pair(ids, data);
  });
  // Compiles the tensors' pending graph without running it, for _run_cached_graph to run by
  // their graph hash on other inputs.
  m.def("_xla_warm_up_cache", [graph_hash](const std::vector<at::Tensor>& tensors,
                                           const std::vector<std::string>& devices) {
    PendingSet set = Pending(tensors, "_xla_warm_up_cache");
    if (set.values.empty()) return;
    const std::string hash = graph_hash(tensors);
    graph::GraphCut cut = graph::CutGraph(set.values, nullptr);
    WarmGraph warm;
    warm.device = set.device;
    const auto dtypes = ParameterDtypes(cut);
    std::vector<runtime::BufferPtr> inputs = UniqueParameters(cut);
    for (const runtime::BufferPtr& p : inputs) {
      warm.parameter_dtypes.push_back(dtypes.at(p.get()));
      warm.parameter_sizes.push_back(p->dims());
    }
    for (const ir::Value& root : cut.roots) warm.result_dtypes.push_back(root.shape().dtype);
    std::vector<size_t> root_index;
    warm.graph = graph::CapturedGraph::Capture(set.values, inputs, {}, set.device, &root_index);
    std::lock_guard<std::mutex> lock(warm_mutex);
    WarmGraphs()[hash] = std::move(warm);
  }, py::arg("tensors"), py::arg("devices"));
  // Runs the graph _xla_warm_up_cache compiled under `hash` on `inputs` (xla or host tensors, in
  // the order _get_tensors_xla_device_data_node gives its parameters); returns its results.
  m.def("_run_cached_graph", [](const std::string& hash, const std::vector<at::Tensor>& inputs) {
    WarmGraph warm;
    {
      std::lock_guard<std::mutex> lock(warm_mutex);
      auto it = WarmGraphs().find(hash);
      TORCH_CHECK(it != WarmGraphs().end(), "_run_cached_graph: no graph with hash ", hash,
                  " was compiled (_xla_warm_up_cache compiles one)");
      warm = it->second;
    }
    TORCH_CHECK(inputs.size() == warm.parameter_dtypes.size(), "_run_cached_graph: the graph takes ",
                warm.parameter_dtypes.size(), " inputs, ", inputs.size(), " given");
    std::vector<runtime::BufferPtr> buffers;
    {
      TXLA_TIMED("RunCachedGraphInputData");
      std::vector<LazyTensorPtr> pending;
      std::vector<LazyTensorPtr> lazy;
      for (size_t i = 0; i < inputs.size(); ++i) {
        const at::Tensor& input = inputs[i];
        TORCH_CHECK(input.scalar_type() == warm.parameter_dtypes[i] &&
                        input.sizes() == c10::IntArrayRef(warm.parameter_sizes[i]),
                    "_run_cached_graph: input ", i, " is ", input.scalar_type(), input.sizes(), ", the graph reads ",
                    warm.parameter_dtypes[i], c10::IntArrayRef(warm.parameter_sizes[i]));
        LazyTensorPtr t = TryGetLazyTensor(input);
        if (!t) t = LazyTensor::FromData(TransferToDevice(input.contiguous(), warm.device), input.scalar_type(),
                                         warm.device);
        if (t->pending()) pending.push_back(t);
        lazy.push_back(std::move(t));
      }
      if (!pending.empty()) {
        py::gil_scoped_release no_gil;
        graph::SyncTensors(pending, /*for_read=*/false);
      }
      for (const LazyTensorPtr& t : lazy) buffers.push_back(t->data());
    }
    std::vector<at::Tensor> results;
    warm.graph->Run(buffers, {}, [&](const std::vector<runtime::BufferPtr>& data) {
      TXLA_TIMED("RunCachedGraphOutputData");
      for (size_t r = 0; r < data.size(); ++r)
        results.push_back(MakeEntryXlaTensor(LazyTensor::FromData(data[r], warm.result_dtypes[r], warm.device)));
    });
    return results;
  }, py::arg("hash"), py::arg("inputs"));
}

}  // namespace txla::python
