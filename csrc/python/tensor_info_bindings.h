// torch_xla._XLAC's entry points that describe tensors and the build (PyTorch/XLA 2.9's names):
// a tensor's element type and buffer address, devices' runtime names, CPU fallbacks run, the
// revisions built from, and moving host tensors to devices in one call.
#pragma once

#include <pybind11/pybind11.h>

namespace txla::python {

void RegisterTensorInfoBindings(pybind11::module& m);

}  // namespace txla::python
