// torch_xla._XLAC's entry points for checkpointing (PyTorch/XLA 2.9's names): host copies of
// many tensors at once, the preemption sync manager, and the coordinator a multi-process
// checkpoint names.
#pragma once

#include <pybind11/pybind11.h>

namespace txla::python {

void RegisterCheckpointBindings(pybind11::module& m);

}  // namespace txla::python
