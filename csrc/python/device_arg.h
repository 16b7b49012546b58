// A device named by a Python caller ("xla:1", "xla", or "" for the default) as its ordinal; a
// clear error for a device that is not an xla one.
#pragma once

#include <c10/util/Exception.h>

#include <string>

namespace txla::python {

inline int ParseDevice(const std::string& device) {
  if (device.empty()) return 0;
  auto colon = device.find(':');
  TORCH_CHECK(device.rfind("xla", 0) == 0, "not an xla device: ", device);
  return colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1));
}

}  // namespace txla::python
