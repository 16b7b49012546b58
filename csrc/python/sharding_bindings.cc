#include "python/sharding_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <sstream>

#include "compiler/spmd/tile_map.h"
#include "graph/graph_executor.h"
#include "graph/spmd_execution.h"
#include "hlo/sharding.h"
#include "ir/shape.h"
#include "metrics/metrics.h"
#include "runtime/device.h"
#include "runtime/shards.h"
#include "tensor/bridge.h"

namespace py = pybind11;

namespace txla::python {
namespace {

using compiler::spmd::TileMap;

// PyTorch/XLA's ShardingType (xla::OpSharding::Type).
enum ShardingType : int64_t { kReplicated = 0, kMaximal = 1, kTuple = 2, kTiled = 3, kManual = 4, kPartial = 5 };

// The dimensions and row-major elements of a nested Python list of ints.
void Flatten(const py::handle& h, size_t depth, std::vector<int64_t>* dims, std::vector<int64_t>* out) {
  if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h)) {
    out->push_back(h.cast<int64_t>());
    return;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  if (dims->size() == depth) dims->push_back(static_cast<int64_t>(seq.size()));
  TORCH_CHECK((*dims)[depth] == static_cast<int64_t>(seq.size()), "OpSharding: a ragged tile assignment");
  for (const py::handle& item : seq) Flatten(item, depth + 1, dims, out);
}

hlo::Sharding MakeSharding(const py::list& tile_assignment, const py::list& group_assignment,
                           const py::list& replication_groups, int64_t type) {
  TXLA_COUNTER("CreateOpSharding", 1);
  switch (type) {
    case kReplicated: return hlo::Sharding::Replicated();
    case kManual: return hlo::Sharding::Manual();
    case kMaximal: {
      std::vector<int64_t> dims, devices;
      Flatten(tile_assignment, 0, &dims, &devices);
      return hlo::Sharding::Maximal(devices.empty() ? 0 : devices[0]);
    }
    case kTiled: {
      std::vector<int64_t> dims, devices;
      Flatten(tile_assignment, 0, &dims, &devices);
      return hlo::Sharding::Tiled(dims, devices);
    }
    case kPartial: {
      std::vector<int64_t> dims, groups;
      Flatten(group_assignment, 0, &dims, &groups);
      const auto members = replication_groups.cast<std::vector<std::vector<int64_t>>>();
      TORCH_CHECK(!members.empty(), "OpSharding: PARTIAL needs replication groups");
      std::vector<int64_t> devices;
      for (int64_t g : groups) {
        TORCH_CHECK(g >= 0 && g < static_cast<int64_t>(members.size()) && members[g].size() == members[0].size(),
                    "OpSharding: replication groups do not fit the group assignment");
        devices.insert(devices.end(), members[g].begin(), members[g].end());
      }
      dims.push_back(static_cast<int64_t>(members[0].size()));
      return hlo::Sharding::Tiled(dims, devices, /*last_tile_dim_replicate=*/true);
    }
    default: TORCH_CHECK(false, "OpSharding: sharding type ", type, " is not supported");
  }
}

int64_t TypeOf(const hlo::Sharding& s) {
  switch (s.kind) {
    case hlo::Sharding::Kind::kReplicated: return kReplicated;
    case hlo::Sharding::Kind::kMaximal: return kMaximal;
    case hlo::Sharding::Kind::kManual: return kManual;
    case hlo::Sharding::Kind::kTiled: return s.last_tile_dim_replicate ? kPartial : kTiled;
  }
  return kReplicated;
}

// The devices a mesh spans: every process's under SPMD over processes.
int64_t Devices() { return runtime::SpmdDeviceCount(); }

void RequireSpmd(const char* what) {
  TORCH_CHECK(runtime::SpmdEnabled(), what, " needs SPMD: call torch_xla.runtime.use_spmd() first");
}

// `host` placed on the devices as `sharding` says: split into padded pieces, or one whole buffer
// every device reads.
runtime::BufferPtr Place(const at::Tensor& host, const hlo::Sharding& sharding, c10::ScalarType dtype) {
  TXLA_TIMED("TransferToDeviceTime");
  CountTransferToDevice(static_cast<size_t>(host.numel() * host.element_size()));
  at::Tensor src = host.to(ir::ToScalarType(ir::ToElementType(dtype))).contiguous();
  const std::vector<int64_t> full = src.sizes().vec();
  const TileMap map = TileMap::Of(sharding, static_cast<int64_t>(full.size()), Devices());
  if (map.replicated()) return TensorAsBuffer(src, 0, dtype);
  const std::vector<int64_t> local = compiler::spmd::LocalDims(full, map.tiles);
  const auto offsets = compiler::spmd::ShardOffsets(map, full);
  const auto type = ir::ToElementType(dtype);
  std::vector<runtime::BufferPtr> pieces(Devices());  // this process's devices' pieces
  for (const int d : runtime::LocalSpmdDevices()) {
    auto piece = std::make_shared<runtime::Buffer>(type, local, static_cast<int>(d));
    runtime::CutPiece(src.element_size(), src.data_ptr(), full, offsets[d], piece->data(), local);
    pieces[d] = piece;
  }
  return graph::SplitBuffer(type, full, sharding, std::move(pieces));
}

// Raises unless `s` can lay out `t` over this process's devices.
void CheckFits(const hlo::Sharding& s, const LazyTensorPtr& t) {
  const std::string text = s.ToString();
  TORCH_CHECK(s.kind != hlo::Sharding::Kind::kManual, "manual sharding is not supported yet");
  if (s.kind == hlo::Sharding::Kind::kTiled) {
    const int64_t rank = static_cast<int64_t>(t->shape().sizes.size());
    try {
      s.TilesPerDimension(rank);
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "the sharding ", text, " does not fit a tensor of rank ", rank, ": ", e.what());
    }
    TORCH_CHECK(static_cast<int64_t>(s.devices.size()) == Devices(), "the sharding ", text, " places ",
                s.devices.size(), " devices; there are ", Devices());
  }
}

// Sets the tensor's sharding: its data is split now, a pending value is annotated.
void MarkSharding(const at::Tensor& tensor, const hlo::Sharding& sharding) {
  RequireSpmd("mark_sharding");
  LazyTensorPtr t = GetLazyTensor(tensor, "mark_sharding");
  const std::string text = sharding.ToString();
  CheckFits(sharding, t);
  const std::string existing = t->EffectiveSharding();
  TORCH_CHECK(existing.empty() || existing == text || existing == "{replicated}",
              "mark_sharding: the tensor is already sharded as ", existing, "; clear_sharding() it before giving it ",
              text, " (or annotate_custom_sharding() a value in another layout)");
  if (t->pending()) {
    t->SetIrValue(graph::AnnotateSharding(t->pending(), text));
  } else if (existing != text) {
    // Data the virtual device still holds on the host is split straight from there.
    at::Tensor host = t->host().defined() ? t->host() : graph::ToHost(t);
    t->SetData(Place(host, sharding, t->dtype()));
  }
  t->set_sharding(text);
}

// This process's devices' pieces of the tensor (device order), as host tensors: padded tiles of
// a split tensor, copies of a whole one.
std::vector<at::Tensor> Pieces(const LazyTensorPtr& t) {
  std::vector<at::Tensor> out;
  const std::vector<int> local = runtime::LocalSpmdDevices();
  // A value still to be computed is computed first, in its layout: its pieces are what the
  // devices hold then.
  if (t->pending()) graph::SyncTensors({t}, /*for_read=*/true);
  if (t->pending() || !t->data() || !t->data()->shards()) {
    const at::Tensor whole = graph::ToHost(t);
    for (size_t k = 0; k < local.size(); ++k) out.push_back(whole.clone());
    return out;
  }
  for (const int d : local) {
    at::Tensor host = TransferFromDevice(t->data()->shards()->pieces.at(d));
    out.push_back(host.scalar_type() == t->dtype() ? host : host.to(t->dtype()));
  }
  return out;
}

}  // namespace

void RegisterShardingBindings(py::module& m) {
  py::class_<hlo::Sharding>(m, "OpSharding")
      .def(py::init(&MakeSharding))
      .def("__repr__", &hlo::Sharding::ToString)
      .def("__str__", &hlo::Sharding::ToString);
  m.def("_xla_use_spmd", [] { runtime::EnableSpmd(); });
  m.def("_xla_set_auto_sharding", [] { runtime::EnableAutoSharding(); });
  m.def("_xla_get_auto_sharding", [] { return runtime::AutoShardingEnabled(); });
  m.def("_xla_mark_sharding", &MarkSharding);
  m.def("_xla_annotate_custom_sharding", [](const at::Tensor& tensor, const hlo::Sharding& sharding) {
    RequireSpmd("annotate_custom_sharding");
    LazyTensorPtr t = GetLazyTensor(tensor, "annotate_custom_sharding");
    CheckFits(sharding, t);
    t->SetIrValue(graph::AnnotateSharding(t->GetIrValue(), sharding.ToString()));
    t->set_sharding(sharding.ToString());
  });
  m.def("_xla_clear_sharding", [](const at::Tensor& tensor) {
    LazyTensorPtr t = GetLazyTensor(tensor, "clear_sharding");
    t->set_sharding("");
    if (!t->pending() && t->data() && t->data()->shards()) {
      at::Tensor host = graph::ToHost(t);
      t->SetData(TensorAsBuffer(host, 0, t->dtype()));
    }
  });
  m.def("_get_xla_sharding_spec", [](const at::Tensor& tensor) {
    return GetLazyTensor(tensor, "_get_xla_sharding_spec")->EffectiveSharding();
  });
  // The tensor's sharding as an OpSharding (to give another tensor), or None.
  m.def("_get_xla_op_sharding", [](const at::Tensor& tensor) -> py::object {
    const std::string spec = GetLazyTensor(tensor, "_get_xla_op_sharding")->sharding();
    if (spec.empty()) return py::none();
    return py::cast(hlo::Sharding::Parse(spec));
  });
  m.def("_get_xla_sharding_type", [](const at::Tensor& tensor) -> py::object {
    const std::string spec = GetLazyTensor(tensor, "_get_xla_sharding_type")->EffectiveSharding();
    if (spec.empty()) return py::none();
    return py::int_(TypeOf(hlo::Sharding::Parse(spec)));
  });
  m.def("_get_local_shards", [](const std::vector<at::Tensor>& tensors) {
    std::vector<std::vector<std::pair<at::Tensor, std::string>>> out;
    for (const at::Tensor& tensor : tensors) {
      std::vector<std::pair<at::Tensor, std::string>> pieces;
      std::vector<at::Tensor> data = Pieces(GetLazyTensor(tensor, "_get_local_shards"));
      const std::vector<int> local = runtime::LocalSpmdDevices();
      for (size_t k = 0; k < data.size(); ++k) pieces.emplace_back(data[k], runtime::DeviceName(local[k]));
      out.push_back(std::move(pieces));
    }
    return out;
  });
  m.def("_get_local_shard_replica_and_indices", [](const std::vector<at::Tensor>& tensors) {
    py::list out;
    for (const at::Tensor& tensor : tensors) {
      LazyTensorPtr t = GetLazyTensor(tensor, "_get_local_shard_replica_and_indices");
      const std::string spec = t->EffectiveSharding();
      const std::vector<int64_t>& full = t->shape().sizes;
      py::list per_device;
      const hlo::Sharding s = spec.empty() ? hlo::Sharding::Replicated() : hlo::Sharding::Parse(spec);
      const TileMap map = TileMap::Of(s, static_cast<int64_t>(full.size()), Devices());
      if (map.replicated()) {
        for (const int d : runtime::LocalSpmdDevices()) per_device.append(py::make_tuple(d, py::ellipsis()));
      } else {
        const auto offsets = compiler::spmd::ShardOffsets(map, full);
        const auto local = compiler::spmd::LocalDims(full, map.tiles);
        for (const int d : runtime::LocalSpmdDevices()) {
          int64_t replica = 0;
          for (int64_t e = 0; e < d; ++e) replica += map.coords[e] == map.coords[d];
          py::list indices;
          for (size_t k = 0; k < full.size(); ++k) {
            const int64_t start = std::min(offsets[d][k], full[k]);
            const int64_t end = std::min(offsets[d][k] + local[k], full[k]);
            indices.append(py::slice(start, end, 1));
          }
          per_device.append(py::make_tuple(replica, indices));
        }
      }
      out.append(per_device);
    }
    return out;
  });
  m.def("_load_local_shards", [](const at::Tensor& tensor, const std::vector<at::Tensor>& shards,
                                 const std::vector<std::string>& devices) {
    LazyTensorPtr t = GetLazyTensor(tensor, "_load_local_shards");
    const std::string spec = t->EffectiveSharding();
    TORCH_CHECK(!spec.empty(), "_load_local_shards: the tensor has no sharding");
    const hlo::Sharding s = hlo::Sharding::Parse(spec);
    const std::vector<int64_t>& full = t->shape().sizes;
    const TileMap map = TileMap::Of(s, static_cast<int64_t>(full.size()), Devices());
    TORCH_CHECK(!map.replicated(), "_load_local_shards: the tensor is replicated; load it whole instead");
    const std::vector<int> local_devices = runtime::LocalSpmdDevices();
    TORCH_CHECK(shards.size() == local_devices.size() && shards.size() == devices.size(), "_load_local_shards: ",
                shards.size(), " shards for ", local_devices.size(), " devices");
    const auto local = compiler::spmd::LocalDims(full, map.tiles);
    std::vector<runtime::BufferPtr> pieces(shards.size());
    for (size_t k = 0; k < shards.size(); ++k) {
      TORCH_CHECK(shards[k].sizes().vec() == local, "_load_local_shards: shard ", k, " has shape ", shards[k].sizes(),
                  ", a device's shard of this tensor is ", c10::IntArrayRef(local));
      const int d = std::stoi(devices[k].substr(devices[k].find(':') + 1));
      TORCH_CHECK(runtime::IsLocalSpmdDevice(d), "_load_local_shards: ", devices[k], " is not a device of this process");
      pieces.at(d) = TensorAsBuffer(shards[k].to(t->dtype()).contiguous().clone(), d, t->dtype());
    }
    // Written through the dispatcher as an in-place copy, so that every alias of the tensor
    // (a state_dict entry is its parameter detached) sees the loaded value.
    LazyTensorPtr loaded = LazyTensor::FromData(graph::SplitBuffer(ir::ToElementType(t->dtype()), full, s, std::move(pieces)),
                                                t->dtype(), t->device());
    loaded->set_sharding(spec);
    at::Tensor(tensor).copy_(MakeXlaTensor(loaded));
  });
  m.def("_global_tensor_from_cpu_shards", [](const std::vector<at::Tensor>& shards, const hlo::Sharding& sharding,
                                             std::optional<std::vector<int64_t>> global_shape) {
    RequireSpmd("_global_tensor_from_cpu_shards");
    TORCH_CHECK(!shards.empty(), "_global_tensor_from_cpu_shards: no shards");
    for (const at::Tensor& shard : shards)
      TORCH_CHECK(shard.device().is_cpu(), "_global_tensor_from_cpu_shards: shards must be CPU tensors");
    std::vector<int64_t> full = global_shape ? *global_shape : shards[0].sizes().vec();
    TileMap map;
    try {
      map = TileMap::Of(sharding, static_cast<int64_t>(full.size()), Devices());
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "_global_tensor_from_cpu_shards: ", e.what());
    }
    if (!global_shape && !map.replicated())
      for (size_t k = 0; k < full.size(); ++k) full[k] *= map.tiles[k];
    at::Tensor whole = at::zeros(full, shards[0].options());
    if (map.replicated()) {
      TORCH_CHECK(shards[0].sizes().vec() == full, "_global_tensor_from_cpu_shards: a replicated shard has shape ",
                  shards[0].sizes(), ", the tensor ", c10::IntArrayRef(full));
      whole.copy_(shards[0]);
    } else {
      // One shard per device of this process (the others' shards are their processes').
      const std::vector<int> local_devices = runtime::LocalSpmdDevices();
      TORCH_CHECK(shards.size() == local_devices.size(), "_global_tensor_from_cpu_shards: ", shards.size(),
                  " shards for ", local_devices.size(), " devices");
      const auto local = compiler::spmd::LocalDims(full, map.tiles);
      const auto offsets = compiler::spmd::ShardOffsets(map, full);
      for (size_t k = 0; k < local_devices.size(); ++k) {
        const int d = local_devices[k];
        at::Tensor piece = shards[k].contiguous();
        TORCH_CHECK(piece.sizes().vec() == local || piece.sizes().vec() == runtime::ValidExtent(full, local, offsets[d]),
                    "_global_tensor_from_cpu_shards: shard ", d, " has shape ", piece.sizes(), ", expected ",
                    c10::IntArrayRef(local));
        runtime::CopyBlock(piece.element_size(), piece.data_ptr(), piece.sizes().vec(), std::vector<int64_t>(full.size(), 0),
                           whole.data_ptr(), full, offsets[d], runtime::ValidExtent(full, piece.sizes().vec(), offsets[d]));
      }
    }
    auto t = LazyTensor::FromData(Place(whole, sharding, whole.scalar_type()), whole.scalar_type(), 0);
    t->set_sharding(sharding.ToString());
    return MakeEntryXlaTensor(t);
  }, py::arg("shards"), py::arg("sharding"), py::arg("global_shape") = py::none());
  m.def("_get_xla_tensor_debug_info", [](const at::Tensor& tensor) {
    LazyTensorPtr t = TryGetLazyTensor(tensor);
    if (!t) return std::string("Not a XLATensor\n");
    std::string info = "XLATensor {\nTensorID: " + std::to_string(t->id()) + "\nDevice: " +
                       (runtime::SpmdEnabled() ? std::string("SPMD:0") : runtime::DeviceName(t->device())) +
                       "\nXLA Shape: " + t->shape().ToString() + "\n";
    const std::string spec = t->EffectiveSharding();
    if (!spec.empty()) info += "ShardingSpec: " + spec + "\n";
    info += std::string("IR: ") +
            (t->pending() ? t->pending().node->OpName() : "None") + "\n";
    if (t->host().defined()) {
      std::string sizes;
      for (int64_t d : t->host().sizes()) sizes += (sizes.empty() ? "" : ", ") + std::to_string(d);
      info += "Tensor on host: with size [" + sizes + "]\n";
    } else {
      info += "Tensor on host: None\n";
    }
    if (t->on_device() && t->data()->shards()) {
      info += "XLAShardedData: \nData Device: SPMD:0\nOpSharding: " + t->data()->shards()->sharding +
              "\nNumShards: " + std::to_string(t->data()->shards()->pieces.size()) + "\n";
    } else if (t->on_device() || t->donated()) {
      // As PyTorch/XLA prints a buffer: its handle, None while a run is still to fill it,
      // Deleted once donated to a run.
      std::ostringstream handle;
      if (t->donated()) handle << "Deleted";
      else if (t->data()->placeholder()) handle << "None";
      else handle << static_cast<const void*>(t->data().get());
      info += "XLAData: \nData Device: " +
              std::string(runtime::SpmdEnabled() ? "SPMD:0" : runtime::DeviceName(t->device())) +
              "\nData Shape: " + (t->donated() ? t->shape().ToString() : t->data()->ToString()) +
              "\nData Handle: " + handle.str() + "\n";
    } else {
      info += "XLAData: None\n";
    }
    return info + "}\n";
  });
  // Manual regions: between _spmd_full_to_shard_shape and _spmd_shard_to_full_shape the program
  // works on each device's piece as a value of its own (the compiler does not partition it).
  static const std::string manual = hlo::Sharding::Manual().ToString();
  m.def("_mark_manual_sharding", [](const at::Tensor& tensor, const hlo::Sharding& sharding) {
    RequireSpmd("_mark_manual_sharding");
    TORCH_CHECK(sharding.kind == hlo::Sharding::Kind::kManual, "_mark_manual_sharding: ", sharding.ToString(),
                " is not the manual sharding");
    LazyTensorPtr t = GetLazyTensor(tensor, "_mark_manual_sharding");
    if (t->sharding() == sharding.ToString()) return;  // a manual value already (kept between steps)
    TORCH_CHECK(t->pending(), "_mark_manual_sharding: the tensor is data on the device; only a value the program "
                "computes (inside a manual region) can be marked manual");
    t->SetIrValue(graph::AnnotateSharding(t->GetIrValue(), sharding.ToString()));
    t->set_sharding(sharding.ToString());
  });
  m.def("_spmd_full_to_shard_shape", [](const at::Tensor& tensor) {
    RequireSpmd("_spmd_full_to_shard_shape");
    LazyTensorPtr t = GetLazyTensor(tensor, "_spmd_full_to_shard_shape");
    const std::string spec = t->sharding();
    TORCH_CHECK(!spec.empty() && spec != manual, "_spmd_full_to_shard_shape: the tensor has no sharding; "
                "mark_sharding it first (enable_manual_sharding does)");
    const std::vector<int64_t>& full = t->shape().sizes;
    const TileMap map = TileMap::Of(hlo::Sharding::Parse(spec), static_cast<int64_t>(full.size()), Devices());
    const std::vector<int64_t> piece = compiler::spmd::LocalDims(full, map.tiles);
    LazyTensorPtr out = LazyTensor::FromValue(graph::FullToShardShape(graph::ValueInItsLayout(*t), spec, piece),
                                              t->device());
    out->set_sharding(manual);
    return MakeEntryXlaTensor(out);
  });
  m.def("_spmd_shard_to_full_shape", [](const at::Tensor& tensor, const hlo::Sharding& sharding,
                                        const std::vector<int64_t>& full_shape, py::object /*dtype*/) {
    RequireSpmd("_spmd_shard_to_full_shape");
    LazyTensorPtr t = GetLazyTensor(tensor, "_spmd_shard_to_full_shape");
    TORCH_CHECK(t->sharding() == manual, "_spmd_shard_to_full_shape: the tensor is not manually sharded (",
                t->sharding().empty() ? std::string("no sharding") : t->sharding(),
                "); a manual region starts with enable_manual_sharding");
    TORCH_CHECK(sharding.kind != hlo::Sharding::Kind::kManual, "_spmd_shard_to_full_shape: the whole value's "
                "sharding cannot be manual");
    const TileMap map = TileMap::Of(sharding, static_cast<int64_t>(full_shape.size()), Devices());
    const std::vector<int64_t> piece = compiler::spmd::LocalDims(full_shape, map.tiles);
    TORCH_CHECK(t->shape().sizes == piece, "_spmd_shard_to_full_shape: each device holds a piece of shape ",
                c10::IntArrayRef(t->shape().sizes), "; a device's piece of a ", c10::IntArrayRef(full_shape),
                " tensor laid out as ", sharding.ToString(), " is ", c10::IntArrayRef(piece));
    const std::string spec = sharding.ToString();
    LazyTensorPtr out = LazyTensor::FromValue(graph::ShardToFullShape(graph::ValueInItsLayout(*t), spec, full_shape),
                                              t->device());
    out->set_sharding(spec);
    return MakeEntryXlaTensor(out);
  });
  // Collectives inside a manual-sharding region: graph ops among SPMD devices, written once in
  // torch_xla/core/collectives.py with xm's other collectives.
  for (const auto& [name, python] : {std::pair<const char*, const char*>{"_xla_spmd_all_reduce", "spmd_all_reduce"},
                                     {"_xla_spmd_reduce_scatter", "spmd_reduce_scatter"}}) {
    std::string function = python;
    m.def(name, [function](py::args args, py::kwargs kwargs) {
      RequireSpmd(function.c_str());
      return py::module_::import("torch_xla.core.collectives").attr(function.c_str())(*args, **kwargs);
    });
  }
}

}  // namespace txla::python
