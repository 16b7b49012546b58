#include "runtime/device.h"

#include "debug/config.h"

namespace txla::runtime {

int DeviceCount() {
  static const int count = [] {
    int n = static_cast<int>(debug::GetConfig().cpu_num_devices);
    return n < 1 ? 1 : n;
  }();
  return count;
}

std::vector<DeviceInfo> Devices() {
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < DeviceCount(); ++i) devices.push_back(DeviceInfo{i, "CPU"});
  return devices;
}

std::string DeviceName(int ordinal) { return "xla:" + std::to_string(ordinal); }

}  // namespace txla::runtime
