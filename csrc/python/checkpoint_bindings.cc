#include "python/checkpoint_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <optional>
#include <string>

#include "graph/graph_executor.h"
#include "runtime/preemption.h"
#include "tensor/bridge.h"

namespace py = pybind11;

namespace txla::python {
namespace {

// The job's coordinator as the checkpointing code named it; the transport between processes is
// torch.distributed's (Gloo), which has its own rendezvous, so this only records and checks.
struct Coordinator {
  int64_t rank = 0;
  int64_t world_size = 1;
  std::string master_addr;
};
std::optional<Coordinator> coordinator;

}  // namespace

void RegisterCheckpointBindings(py::module& m) {
  // Host copies of `tensors` (xla ones computed together first; others returned as they are).
  m.def("_xla_get_cpu_tensors", [](const std::vector<at::Tensor>& tensors) {
    std::vector<LazyTensorPtr> lazy, xla;  // per tensor (null: not an xla tensor); the xla ones
    for (const at::Tensor& t : tensors) {
      lazy.push_back(TryGetLazyTensor(t));
      if (lazy.back()) xla.push_back(lazy.back());
    }
    {
      py::gil_scoped_release no_gil;
      if (!xla.empty()) graph::SyncTensors(xla, /*for_read=*/true);
    }
    std::vector<at::Tensor> out;
    for (size_t k = 0; k < tensors.size(); ++k)
      out.push_back(lazy[k] ? graph::ToHost(lazy[k], "_xla_get_cpu_tensors") : tensors[k]);
    return out;
  });
  m.def(
      "_ensure_xla_coordinator_initialized",
      [](int64_t global_rank, int64_t world_size, const std::string& master_addr, const py::object& /*port*/) {
        TORCH_CHECK(world_size > 0 && global_rank >= 0 && global_rank < world_size,
                    "_ensure_xla_coordinator_initialized: rank ", global_rank, " is not in a world of ", world_size);
        if (!coordinator) {
          coordinator = Coordinator{global_rank, world_size, master_addr};
          return;
        }
        TORCH_CHECK(coordinator->rank == global_rank && coordinator->world_size == world_size,
                    "_ensure_xla_coordinator_initialized: already initialized as rank ", coordinator->rank, " of ",
                    coordinator->world_size);
      },
      py::arg("global_rank"), py::arg("world_size"), py::arg("master_addr"), py::arg("port") = py::none());
  m.def("_activate_preemption_sync_manager", [] { runtime::ActivatePreemptionSyncManager(); });
  m.def("_deactivate_preemption_sync_manager", [] { runtime::DeactivatePreemptionSyncManager(); });
  m.def("_sync_point_reached", [](int64_t step) { return runtime::SyncPointReached(step); });
  // The job-wide form CheckpointManager uses: `noticed` is whether any process has a notice.
  m.def("_txla_preemption_noticed", [] { return runtime::PreemptionNoticed(); });
  m.def("_txla_sync_point_reached", [](int64_t step, bool noticed) { return runtime::SyncPointReached(step, noticed); });
}

}  // namespace txla::python
