// torch_xla._XLAC: the C++ core as Python sees it. Function names follow PyTorch/XLA's _XLAC so
// that code written against it runs unchanged.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "aten/device_rng.h"
#include "debug/config.h"
#include "debug/frames.h"
#include "graph/eager_mode.h"
#include "graph/debug_analysis.h"
#include "graph/buffer_donation.h"
#include "graph/graph_executor.h"
#include "graph/post_order.h"
#include "graph/spmd_execution.h"
#include "hlo/printer.h"
#include "ir/ir_dump.h"
#include "ir/op_table.h"
#include "compiler/compile.h"
#include "compiler/content_hash.h"
#include "compiler/library/conv2d_onednn.h"
#include "compiler/library/gemm.h"
#include "compiler/library/mkl_blas.h"
#include "compiler/persistent_cache.h"
#include "lower/lowering.h"
#include "metrics/metrics.h"
#include "metrics/report.h"
#include "metrics/trace.h"
#include "python/dynamo_bridge.h"
#include "python/op_bindings.h"
#include "python/process_group_transport.h"
#include "python/cached_graph_bindings.h"
#include "python/checkpoint_bindings.h"
#include "python/device_arg.h"
#include "python/sharding_bindings.h"
#include "python/signals.h"
#include "python/tensor_info_bindings.h"
#include "runtime/buffer.h"
#include "runtime/collectives.h"
#include "runtime/device.h"
#include "tensor/bridge.h"
#include "tensor/registry.h"

namespace py = pybind11;

namespace txla::python {
namespace {

std::vector<LazyTensorPtr> LazyTensors(const std::vector<at::Tensor>& tensors) {
  std::vector<LazyTensorPtr> out;
  for (const at::Tensor& t : tensors) out.push_back(GetLazyTensor(t, "_XLAC"));
  return out;
}

std::string GraphText(const std::vector<at::Tensor>& tensors, bool dot) {
  std::vector<ir::Value> values;
  for (const LazyTensorPtr& lt : LazyTensors(tensors)) values.push_back(lt->GetIrValue());
  graph::GraphCut cut = graph::CutGraph(values, nullptr);
  return dot ? ir::GraphToDot(cut) : ir::GraphToText(cut);
}

// The HLO module the tensors' pending graph lowers to, before the compiler's passes (as
// PyTorch/XLA's _get_xla_tensors_hlo); an op without a lowering raises, naming it.
// The graph a barrier would cut for the tensors: under SPMD, computing them in the layouts they
// were given.
graph::GraphCut CutAsBarrierWould(const std::vector<at::Tensor>& tensors) {
  std::vector<ir::Value> values;
  for (const LazyTensorPtr& lt : LazyTensors(tensors))
    values.push_back(runtime::SpmdEnabled() ? graph::ValueInItsLayout(*lt) : lt->GetIrValue());
  return graph::CutGraph(values, nullptr);
}

std::string GraphHlo(const std::vector<at::Tensor>& tensors) {
  graph::GraphCut cut = CutAsBarrierWould(tensors);
  std::string missing = lower::FirstUnloweredOp(cut);
  TORCH_CHECK(missing.empty(), "_get_xla_tensors_hlo: ", missing,
              " has no lowering (this graph would run on the interpreter)");
  std::unique_ptr<hlo::Module> module = lower::LowerGraph(cut);
  // Read now: scripts set it around the one dump they want optimized.
  if (debug::ReloadConfig().dump_post_optimizations) {
    if (runtime::SpmdEnabled()) graph::PartitionSpmd(*module, cut);
    compiler::RunPipeline(*module);
  } else if (runtime::SpmdEnabled()) {
    graph::AnnotateParameterShardings(*module, cut);
  }
  return hlo::ToText(*module);
}

// The key a barrier would look the tensors' graph up by (PyTorch/XLA's _get_graph_hash).
std::string GraphHash(const std::vector<at::Tensor>& tensors) {
  return compiler::Hex(graph::CompileCacheKey(CutAsBarrierWould(tensors), debug::GetConfig().sync_tensors_opbyop));
}

std::string PythonFrames() {
  py::gil_scoped_acquire gil;
  py::object stack = py::module::import("traceback").attr("format_stack")();
  std::string out;
  for (py::handle frame : stack) out += "    " + py::cast<std::string>(frame);
  return out;
}

// Files under these directories are library code, not the user's: torch, torch_xla, the standard
// library and installed packages.
const std::vector<std::string>& LibraryDirectories() {
  static const std::vector<std::string> dirs = [] {
    py::gil_scoped_acquire gil;
    std::vector<std::string> out;
    py::module os_path = py::module::import("os.path");
    for (const char* module : {"torch", "torch_xla"}) {
      py::object file = py::module::import(module).attr("__file__");
      out.push_back(py::cast<std::string>(os_path.attr("dirname")(file)) + "/");
    }
    py::dict paths = py::module::import("sysconfig").attr("get_paths")();
    for (const char* key : {"stdlib", "purelib", "platlib"}) out.push_back(py::cast<std::string>(paths[key]) + "/");
    return out;
  }();
  return dirs;
}

std::vector<debug::Frame> PythonFrameList(size_t max_frames) {
  const std::vector<std::string>& library = LibraryDirectories();
  py::gil_scoped_acquire gil;
  std::vector<debug::Frame> out;
  py::object frame;
  try {
    frame = py::module::import("sys").attr("_getframe")(0);
  } catch (const py::error_already_set&) {
    return out;  // a thread running no Python (autograd's backward threads)
  }
  while (!frame.is_none() && out.size() < max_frames) {
    py::object code = frame.attr("f_code");
    debug::Frame f;
    f.function = py::cast<std::string>(code.attr("co_name"));
    f.file = py::cast<std::string>(code.attr("co_filename"));
    f.line = py::cast<int64_t>(frame.attr("f_lineno"));
    for (const std::string& dir : library) f.library |= f.file.rfind(dir, 0) == 0;
    f.library |= f.file.rfind("<frozen ", 0) == 0;
    out.push_back(std::move(f));
    frame = frame.attr("f_back");
  }
  return out;
}

}  // namespace
}  // namespace txla::python

PYBIND11_MODULE(_XLAC, m) {
  using namespace txla;
  using namespace txla::python;
  debug::SetFramesProvider(&PythonFrames);
  debug::SetFrameListProvider(&PythonFrameList);
  metrics::NameThisThread("python (the importing thread)");
  InstallWaitInterrupts();
  debug::GetConfig();  // the environment switches are read at import
  compiler::PrefetchPersistentCacheKeys();
  compiler::library::WarmUpGemm();

  // Every switch: {variable: (value as text, type, changes generated code, what it does)}.
  m.def("_xla_config", [] {
    py::dict out;
    for (const debug::SwitchDescription& s : debug::DescribeConfig())
      out[py::str(s.variable)] = py::make_tuple(s.value, s.type, s.changes_codegen, s.doc);
    return out;
  });
  // Re-reads the environment switches (they are read once, at import).
  m.def("_xla_reload_config", [] { debug::ReloadConfig(); });

  m.def("_xla_metrics_report", [] { return metrics::Report(); });
  m.def("_xla_short_metrics_report",
        [](const std::vector<std::string>& counters, const std::vector<std::string>& names) {
          return metrics::ShortReport(counters, names);
        });
  m.def("_xla_counter_names", [] { return metrics::CounterNames(); });
  m.def("_xla_counter_value", [](const std::string& name) -> py::object {
    metrics::Counter* c = metrics::FindCounter(name);
    // None for a counter never touched or cleared since (as PyTorch/XLA reports it).
    return c && c->Value() != 0 ? py::cast(c->Value()) : py::none();
  });
  m.def("_xla_increment_counter", [](const std::string& name, int64_t value) {
    metrics::GetCounter(name)->Add(value);
  });
  m.def("_xla_metric_names", [] { return metrics::MetricNames(); });
  m.def("_xla_metric_data", [](const std::string& name) -> py::object {
    metrics::Metric* metric = metrics::FindMetric(name);
    if (!metric) return py::none();
    metrics::MetricSnapshot snap = metric->Snapshot();
    if (snap.total_samples == 0) return py::none();  // cleared, as metric_names() reports it
    py::list samples;
    for (size_t i = 0; i < snap.recent_values.size(); ++i)
      samples.append(py::make_tuple(snap.recent_stamps_ns[i], snap.recent_values[i]));
    return py::make_tuple(snap.total_samples, snap.accumulator, samples);
  });
  // Counters the Python layer keeps (e.g. DynamoExtractCompiledGraph), in the same report.
  m.def("_xla_counter_add", [](const std::string& name, int64_t n) { metrics::GetCounter(name)->Add(n); });
  m.def("_clear_xla_counters", [] { metrics::ClearCounters(); });
  m.def("_clear_xla_metrics", [] { metrics::ClearMetrics(); });

  // The profiler's timeline (metrics/trace.h), driven by torch_xla.debug.profiler.
  m.def("_xla_start_trace", [] { metrics::StartTracing(); });
  m.def("_xla_stop_trace", [] {
    py::gil_scoped_release no_gil;
    return metrics::StopTracing();
  });
  m.def("_xla_tracing_active", [] { return metrics::TracingActive(); });
  m.def(
      "_xla_push_trace",
      [](const std::string& name, const std::map<std::string, std::string>& args) {
        metrics::PushHostSpan(name, std::vector<std::pair<std::string, std::string>>(args.begin(), args.end()));
      },
      py::arg("name"), py::arg("args") = std::map<std::string, std::string>{});
  m.def("_xla_pop_trace", [] { metrics::PopHostSpan(); });
  m.def(
      "_xla_step_marker",
      [](const std::string& device, const std::vector<std::string>& devices, bool wait) {
        std::vector<int> ordinals;
        for (const std::string& d : devices) ordinals.push_back(ParseDevice(d));
        if (ordinals.empty()) ordinals.push_back(ParseDevice(device));
        py::gil_scoped_release no_gil;
        graph::MarkStep(ordinals, wait);
      },
      py::arg("device") = "", py::arg("devices") = std::vector<std::string>{},
      py::arg("wait") = true);
  m.def("_set_use_eager_mode", [](bool enabled) { graph::SetEagerMode(enabled); });
  m.def("_get_use_eager_mode", [] { return graph::EagerModeEnabled(); });
  // `with torch_xla._XLAC._suspend_eager_mode():` keeps this thread's ops lazy (a trace).
  struct EagerSuspension {
    std::unique_ptr<graph::SuspendEagerMode> held;
  };
  py::class_<EagerSuspension>(m, "_EagerSuspension")
      .def("__enter__", [](EagerSuspension& s) { s.held = std::make_unique<graph::SuspendEagerMode>(); })
      .def("__exit__", [](EagerSuspension& s, const py::args&) { s.held.reset(); });
  m.def("_suspend_eager_mode", [] { return EagerSuspension{}; });
  m.def(
      "_xla_sync_multi",
      [](const std::vector<at::Tensor>& tensors, const std::vector<std::string>& devices,
         bool wait, bool sync_xla_data) {
        auto lazy = LazyTensors(tensors);
        py::gil_scoped_release no_gil;
        graph::SyncTensors(lazy, /*for_read=*/false, /*ends_step=*/false, /*donate_updated_inputs=*/sync_xla_data);
        if (wait && !lazy.empty()) graph::WaitDeviceOps(lazy.front()->device());
      },
      py::arg("tensors"), py::arg("devices") = std::vector<std::string>{},
      py::arg("wait") = true, py::arg("sync_xla_data") = true);
  // Drops the pending computations of the device's tensors (dynamo's bridge discards what a
  // trace recorded): a tensor whose value was still to be computed becomes a placeholder, which
  // raises when read until it is assigned; one that reads device data holds that data.
  m.def("_clear_pending_irs", [](const std::string& device) {
    for (const LazyTensorPtr& t : registry::PendingTensors(ParseDevice(device))) {
      const ir::Node* node = t->pending().node.get();
      if (node->kind() == ir::NodeKind::kDeviceData) {
        t->SetData(node->data());
      } else {
        t->SetData(std::make_shared<runtime::Buffer>(ir::ToElementType(t->dtype()), t->shape().sizes, t->device(),
                                                     runtime::Buffer::Placeholder{}));
      }
    }
  });
  // Buffer donation (graph/buffer_donation.h), as PyTorch/XLA spells it ("placecholder" too).
  m.def("_set_buffer_donation", [](const at::Tensor& tensor, bool donate) {
    return graph::SetBufferDonation(GetLazyTensor(tensor, "_set_buffer_donation"), donate);
  });
  m.def("_get_buffer_donation", [](const at::Tensor& tensor) {
    return graph::BufferDonationRequested(GetLazyTensor(tensor, "_get_buffer_donation"));
  });
  m.def("_is_placecholder", [](const at::Tensor& tensor) {
    return GetLazyTensor(tensor, "_is_placecholder")->placeholder();
  });
  // A tensor that stands for a graph input while graphs are traced and dumped (xla_builder's
  // create_placeholder_tensor): it has a shape and no value, on the current xla device.
  m.def("_xla_create_placeholder_tensor", [](const std::vector<int64_t>& shape, at::ScalarType dtype) {
    const int device = c10::impl::getDeviceGuardImpl(c10::DeviceType::XLA)->getDevice().index();
    auto buffer = std::make_shared<runtime::Buffer>(ir::ToElementType(dtype), shape, device,
                                                    runtime::Buffer::Placeholder{});
    return MakeEntryXlaTensor(LazyTensor::FromData(std::move(buffer), dtype, device));
  });
  // An opaque id of each tensor's device data (its buffer's address), as PyTorch/XLA's handles.
  m.def("_get_tensors_handle", [](const std::vector<at::Tensor>& tensors) {
    std::vector<int64_t> handles;
    for (const at::Tensor& tensor : tensors) {
      LazyTensorPtr lt = GetLazyTensor(tensor, "_get_tensors_handle");
      TORCH_CHECK(!lt->donated(), "the tensor's buffer is deleted: it was donated to a graph's run");
      TORCH_CHECK(!lt->pending(), "the tensor has no device data yet: its value is pending (sync it first)");
      handles.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(lt->data().get())));
    }
    return handles;
  });
  m.def("_xla_set_enable_alias_with_buffer_donor_config", &graph::SetAliasWithBufferDonorConfig);
  m.def("_xla_get_enable_alias_with_buffer_donor_config", &graph::AliasWithBufferDonorConfig);
  // Blocks (without the GIL) until the tensor's computed value is written; raises its run's
  // error. A pending value must have been submitted (_xla_sync_multi) first.
  m.def("_txla_wait_ready", [](const at::Tensor& tensor) {
    LazyTensorPtr t = GetLazyTensor(tensor, "_txla_wait_ready");
    TORCH_CHECK(!t->pending(), "_txla_wait_ready: the tensor's value has not been submitted to run");
    runtime::BufferPtr data = t->data();
    py::gil_scoped_release no_gil;
    if (data) data->WaitReady();
  });
  m.def(
      "_xla_wait_device_ops",
      [](const std::vector<std::string>& devices) {
        py::gil_scoped_release no_gil;
        if (devices.empty()) {
          for (const auto& d : runtime::Devices()) graph::WaitDeviceOps(d.ordinal);
        } else {
          for (const std::string& d : devices) graph::WaitDeviceOps(ParseDevice(d));
        }
      },
      py::arg("devices") = std::vector<std::string>{});
  m.def(
      "_xla_memory_info",
      [](const std::string& device) {
        ParseDevice(device);  // a clear error for a device that does not exist
        runtime::MemoryUsage usage = runtime::GetMemoryUsage();
        // The devices' memory is the host's: its limit is the machine's physical memory.
        int64_t limit = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
        py::dict info;
        info["bytes_used"] = usage.bytes_used;
        info["peak_bytes_used"] = usage.peak_bytes_used;
        info["bytes_limit"] = limit;
        return info;
      },
      py::arg("device"));
  m.def("_xla_get_default_device", [] { return runtime::DeviceName(0); });
  m.def("_xla_get_all_devices", [] {
    std::vector<std::string> names;
    for (const auto& d : runtime::Devices()) names.push_back(runtime::DeviceName(d.ordinal));
    return names;
  });
  m.def("_xla_device_count", [] { return runtime::DeviceCount(); });
  // PyTorch/XLA's explicit runtime start: the devices exist once asked about. A device type
  // other than CPU (PJRT_DEVICE, read through the Python config) has no runtime here: an error,
  // and the first call's answer stays the answer, as PjRt's client is made once.
  m.def("_init_computation_client", [] {
    static std::once_flag decided;
    static std::string error;
    std::call_once(decided, [] {
      py::object chosen = py::module::import("torch_xla.runtime").attr("device_type")();
      const std::string type = chosen.is_none() ? "CPU" : chosen.cast<std::string>();
      if (type != "CPU")
        error = "No PjRtPlugin registered for: " + type +
                ". Make sure the environment variable PJRT_DEVICE is set to a correct device name.";
    });
    if (!error.empty()) throw std::runtime_error(error);
    runtime::Devices();
  });
  // The runtime starts at the first use of a device (runtime/device.h).
  m.def("_xla_runtime_is_initialized", [] { return runtime::RuntimeStarted(); });
  m.def("_set_current_graph_name", [](const std::string& name) { graph::analysis::SetCurrentGraphName(name); });
  m.def("_get_current_graph_name", [] { return graph::analysis::CurrentGraphName(); });
  m.def("_set_allow_execution", [](bool allowed) { graph::SetExecutionAllowed(allowed); });
  m.def("_get_allow_execution", [] { return graph::ExecutionAllowed(); });
  m.def("_xla_device_kind", [](const std::string& device) { return std::string("CPU"); },
        py::arg("device") = "");
  m.def("_get_xla_tensors_text",
        [](const std::vector<at::Tensor>& tensors) { return GraphText(tensors, false); });
  m.def("_get_xla_tensors_hlo", [](const std::vector<at::Tensor>& tensors) { return GraphHlo(tensors); });
  m.def("_get_graph_hash", [](const std::vector<at::Tensor>& tensors) { return GraphHash(tensors); });
  m.def("_get_xla_tensors_dot",
        [](const std::vector<at::Tensor>& tensors) { return GraphText(tensors, true); });
  m.def("_xla_is_xla_tensor", [](const at::Tensor& t) { return IsXlaTensor(t); });
  m.def("_xla_has_pending_ir", [](const at::Tensor& t) {
    return bool(GetLazyTensor(t, "_xla_has_pending_ir")->pending());
  });
  m.def("_xla_op_table", [] {
    std::vector<std::string> names;
    for (const ir::OpInfo& info : ir::OpTable()) names.push_back(info.name);
    return names;
  });
  m.def("_xla_init_persistent_cache", [](const std::string& path, bool readonly) {
    compiler::InitializePersistentCache(path, readonly);
  }, py::arg("path"), py::arg("readonly") = false);
  m.def("_xla_lowered_ops", [] { return lower::LoweredOps(); });

  // Collective transports (runtime/collectives.h); the Python layer picks one per job.
  m.def("_xla_use_process_group_transport", [](const c10::intrusive_ptr<c10d::ProcessGroup>& world) {
    runtime::SetCollectiveBackend(std::make_shared<ProcessGroupTransport>(world));
  });
  m.def("_xla_add_process_group", [](std::vector<int64_t> members,
                                     const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
    auto transport = std::dynamic_pointer_cast<ProcessGroupTransport>(runtime::GetCollectiveBackend());
    TORCH_CHECK(transport, "_xla_add_process_group: the process-group transport is not in use");
    transport->AddGroup(std::move(members), group);
  });
  m.def("_xla_use_in_process_transport", [](const std::vector<std::string>& devices) {
    std::vector<int> ordinals;
    for (const std::string& d : devices) ordinals.push_back(ParseDevice(d));
    runtime::SetCollectiveBackend(runtime::MakeInProcessBackend(ordinals));
  });
  // SPMD over processes: this process (`index` of `count`) runs its devices of every partitioned
  // program; `world` (one rank per process) carries the collectives between processes.
  m.def("_xla_spmd_join_processes", [](const c10::intrusive_ptr<c10d::ProcessGroup>& world, int64_t index,
                                       int64_t count) {
    TORCH_CHECK(world->getRank() == index && world->getSize() == count, "_xla_spmd_join_processes: the process group ",
                "has rank ", world->getRank(), " of ", world->getSize(), ", not ", index, " of ", count);
    runtime::SetSpmdProcesses(index, count, std::make_shared<ProcessGroupTransport>(world));
  });
  m.def("_xla_spmd_processes", [] { return std::make_pair(runtime::SpmdProcessIndex(), runtime::SpmdProcessCount()); });
  m.def("_xla_spmd_device_count", [] { return runtime::SpmdDeviceCount(); });
  m.def("_xla_reset_collective_transport", [] { runtime::SetCollectiveBackend(nullptr); });
  m.def("_xla_abort_collectives", [](const std::string& why) {
    runtime::GetCollectiveBackend()->Abort(why);
  });
  m.def("_xla_collective_transport", [] { return runtime::GetCollectiveBackend()->name(); });
  m.def("_xla_compile_cache_size", [] { return graph::CompileCacheSize(); });
  RegisterDynamoBridge(m);
  RegisterShardingBindings(m);
  RegisterCheckpointBindings(m);
  RegisterTensorInfoBindings(m);
  RegisterCachedGraphBindings(m, &GraphHash);
  RegisterOpBindings(m);
  // The kernel libraries compiled code calls in this build.
  m.def("_xla_kernel_libraries", [] {
    std::vector<std::string> libs{"openblas"};
    if (compiler::library::OneDnnAvailable()) libs.push_back("onednn");
    if (compiler::library::MklSgemmFunction() != nullptr) libs.push_back("mkl");
    return libs;
  });
  m.def("_xla_set_rng_seed", [](uint64_t seed, const std::string& device) {
    aten::SetDeviceRngState(ParseDevice(device), seed);
  }, py::arg("seed"), py::arg("device") = "");
  // Not in PyTorch/XLA: back to drawing from torch's default generator (tests restore with it).
  m.def("_xla_forget_rng_seed", [](const std::string& device) {
    aten::ForgetDeviceRngState(ParseDevice(device));
  }, py::arg("device") = "");
  m.def("_xla_get_rng_seed", [](const std::string& device) {
    return aten::GetDeviceRngState(ParseDevice(device));
  }, py::arg("device") = "");
  // The device's seed as a device scalar (s64), and the id PyTorch/XLA's dynamo bridge gives the
  // seed among a graph's inputs.
  m.def("_get_base_seed_as_tensor", [](const std::string& device) {
    const int d = ParseDevice(device);
    return at::scalar_tensor(static_cast<int64_t>(aten::GetDeviceRngState(d)),
                             at::TensorOptions().dtype(at::kLong).device(c10::DeviceType::XLA, d));
  }, py::arg("device") = "");
  m.def("_get_seed_info_id", [] { return -127389; });
  // PyTorch/XLA's f32 matmul/convolution precision ('default', 'high', 'highest'): below
  // 'highest', convolutions may run algorithms that round differently (graph/numerics.h).
  m.def("_xla_set_mat_mul_precision", &graph::SetMatMulPrecision);
  m.def("_xla_get_mat_mul_precision", &graph::MatMulPrecision);
  m.def("_xla_live_tensor_count", [](const std::string& device) {
    return registry::LiveCount(ParseDevice(device));
  }, py::arg("device") = "");
}
