// torch.compile's 'openxla' backends: capturing a traced FX graph and running it again (see
// dynamo_bridge.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace txla::python {

void RegisterDynamoBridge(pybind11::module& m);

}  // namespace txla::python
