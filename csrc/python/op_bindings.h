// XLA's operations that PyTorch/XLA exposes through torch_xla._XLAC (_xla_dot_general): recorded
// as the torch ops with the same meaning, so they join the lazy graph like any other.
#pragma once

#include <pybind11/pybind11.h>

namespace txla::python {

void RegisterOpBindings(pybind11::module& m);

}  // namespace txla::python
