// torch_xla._XLAC's SPMD entry points (PyTorch/XLA 2.9's names): OpSharding, marking and clearing
// shardings, local shards, and the switch into SPMD.
#pragma once

#include <pybind11/pybind11.h>

namespace txla::python {

void RegisterShardingBindings(pybind11::module& m);

}  // namespace txla::python
