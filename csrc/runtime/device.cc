#include "runtime/device.h"

#include <atomic>
#include <numeric>

#include "debug/config.h"
#include "runtime/collectives.h"

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

namespace {
std::atomic<bool> spmd{false};
}

void EnableSpmd() {
  if (spmd.exchange(true)) return;
  std::vector<int> devices(DeviceCount());
  std::iota(devices.begin(), devices.end(), 0);
  SetCollectiveBackend(MakeInProcessBackend(devices));
}

namespace {
std::atomic<bool> auto_sharding{false};

// XLA_USE_SPMD / XLA_AUTO_SPMD, applied once, before either mode is first asked about.
void ApplyEnvironmentOnce() {
  static const bool applied = [] {
    if (debug::GetConfig().auto_spmd) EnableAutoSharding();
    else if (debug::GetConfig().use_spmd) EnableSpmd();
    return true;
  }();
  (void)applied;
}
}  // namespace

void EnableAutoSharding() {
  EnableSpmd();
  auto_sharding.store(true);
}

bool AutoShardingEnabled() {
  ApplyEnvironmentOnce();
  return auto_sharding.load();
}

bool SpmdEnabled() {
  ApplyEnvironmentOnce();
  return spmd.load();
}

}  // namespace txla::runtime
