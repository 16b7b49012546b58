// PyTorch/XLA's entry points for running a compiled graph again by its hash, which its older
// dynamo bridge and its tests use: the device data a graph reads (_get_tensors_xla_device_data_node),
// compiling without running (_xla_warm_up_cache), and running the compiled graph on other inputs
// (_run_cached_graph), with tensors' ids (_xla_get_tensor_id).
#pragma once

#include <ATen/core/Tensor.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace txla::python {

// `graph_hash`: _get_graph_hash's key for a list of tensors, under which graphs are kept.
void RegisterCachedGraphBindings(pybind11::module& m, std::string (*graph_hash)(const std::vector<at::Tensor>&));

}  // namespace txla::python
