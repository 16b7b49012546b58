#include "python/tensor_info_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "aten/lazy_kernel.h"
#include "ir/node.h"
#include "ir/shape.h"
#include "metrics/metrics.h"
#include "python/device_arg.h"
#include "runtime/element_type.h"
#include "tensor/bridge.h"

namespace py = pybind11;

namespace txla::python {
namespace {

// The op logs Python opened on this thread, innermost last (each closes the one it opened).
std::vector<std::unique_ptr<aten::OpLog>>& OpenLogs() {
  thread_local std::vector<std::unique_ptr<aten::OpLog>> logs;
  return logs;
}

}  // namespace

void RegisterTensorInfoBindings(py::module& m) {
  // The runtime's own names of the devices ("CPU:0" for "xla:0").
  m.def("_xla_real_devices", [](const std::vector<std::string>& devices) {
    std::vector<std::string> names;
    for (const std::string& d : devices) names.push_back("CPU:" + std::to_string(ParseDevice(d)));
    return names;
  });
  // The element type the device holds the tensor in, by XLA's name ("f32", "bf16", "s64").
  m.def("_get_xla_tensor_shape_type", [](const at::Tensor& tensor) {
    LazyTensorPtr t = GetLazyTensor(tensor, "_get_xla_tensor_shape_type");
    return std::string(runtime::ElementTypeName(ir::ToElementType(t->dtype())));
  });
  // The address of the device buffer holding the tensor's value: one it holds, or the one its
  // pending value reads unchanged (a tensor just created from host data). A tensor whose value
  // is still to be computed has none until a sync.
  m.def("_unsafe_buffer_pointer", [](const at::Tensor& tensor) {
    LazyTensorPtr t = GetLazyTensor(tensor, "_unsafe_buffer_pointer");
    runtime::BufferPtr buffer = t->data();
    if (!buffer && t->pending().node && t->pending().node->kind() == ir::NodeKind::kDeviceData)
      buffer = t->pending().node->data();
    TORCH_CHECK(buffer, "_unsafe_buffer_pointer: the tensor's value is not computed yet "
                        "(torch_xla.sync() computes it)");
    buffer->WaitReady();
    buffer->Materialize();
    return reinterpret_cast<uintptr_t>(buffer->data());
  });
  // Host tensors copied to the devices named, one each.
  m.def("_xla_tensors_from_aten", [](const std::vector<at::Tensor>& tensors, const std::vector<std::string>& devices) {
    TORCH_CHECK_VALUE(tensors.size() == devices.size(), "_xla_tensors_from_aten: ", tensors.size(),
                      " tensors but ", devices.size(), " devices");
    std::vector<at::Tensor> out;
    out.reserve(tensors.size());
    for (size_t k = 0; k < tensors.size(); ++k) out.push_back(tensors[k].to(c10::Device(devices[k])));
    return out;
  });
  // The ops that ran on the CPU instead of the device since the metrics were cleared, by their
  // counters' names ("aten::nonzero").
  m.def("_get_executed_fallback_ops", [] {
    std::vector<std::string> ops;
    for (const std::string& name : metrics::CounterNames())
      if (name.rfind("aten::", 0) == 0) ops.push_back(name);
    return ops;
  });
  // The ops this thread records while the log is open, described as PyTorch/XLA's dynamic
  // shape detector does (torch_xla.compile(max_different_graphs=N)); logs nest.
  m.def("_xla_op_log_begin", [] { OpenLogs().push_back(std::make_unique<aten::OpLog>()); });
  m.def("_xla_op_log_end", [] {
    TORCH_CHECK(!OpenLogs().empty(), "_xla_op_log_end: no op log open on this thread");
    std::vector<std::string> ops = OpenLogs().back()->ops();
    OpenLogs().pop_back();
    return ops;
  });

  // Per tensor, whether reading it would run a graph: a pending computation, not just data
  // sent from the host (CPU tensors need none).
  m.def("_check_tensor_need_materialization", [](const std::vector<at::Tensor>& tensors) {
    std::vector<bool> need;
    for (const at::Tensor& tensor : tensors) {
      LazyTensorPtr t = TryGetLazyTensor(tensor);
      need.push_back(t && t->pending().node && t->pending().node->kind() != ir::NodeKind::kDeviceData);
    }
    return need;
  });
  // The size of one dimension as a device scalar (s32), as PyTorch/XLA gives the bound of a
  // dynamic dimension; shapes here are static, so it is the tensor's size.
  m.def("_get_xla_tensor_dimension_size", [](const at::Tensor& tensor, int64_t dim) {
    GetLazyTensor(tensor, "_get_xla_tensor_dimension_size");  // raises for a tensor not on the device
    const int64_t d = c10::maybe_wrap_dim(dim, tensor.dim());
    return at::scalar_tensor(tensor.size(d), tensor.options().dtype(at::kInt));
  }, py::arg("tensor"), py::arg("dim"));
  // The kernels are registered with the dispatcher when the library loads; the first call counts
  // that registration once (RegisterXLAFunctions), as PyTorch/XLA's backend initialization does.
  m.def("_init_xla_lazy_backend", [] {
    static std::once_flag counted;
    std::call_once(counted, [] { metrics::GetCounter("RegisterXLAFunctions")->Add(1); });
  });

  // The revisions this build was made from: this project's checkout and the torch it is for.
  m.def("_get_git_revs", [] {
    py::dict revs;
    revs["xla"] = py::module::import("torch_xla._build_info").attr("GIT_REVISION");
    revs["torch"] = py::module::import("torch.version").attr("git_version");
    return revs;
  });
}

}  // namespace txla::python
