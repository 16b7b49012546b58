#include "runtime/device.h"

#include <atomic>
#include <numeric>
#include <stdexcept>

#include "debug/config.h"
#include "runtime/collectives.h"

namespace txla::runtime {

namespace {
std::atomic<bool> started{false};
}  // namespace

int DeviceCount() {
  // The runtime starts at the first question about its devices, as PyTorch/XLA's does: the
  // environment is read again then, so CPU_NUM_DEVICES set after import (PyTorch/XLA's tests set
  // it in setUpClass) is the one used.
  static const int count = [] {
    started.store(true);
    int n = static_cast<int>(debug::ReloadConfig().cpu_num_devices);
    return n < 1 ? 1 : n;
  }();
  return count;
}

bool RuntimeStarted() { return started.load(); }

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
std::atomic<int64_t> spmd_process_index{0}, spmd_process_count{1};
}

void SetSpmdProcesses(int64_t index, int64_t count, std::shared_ptr<CollectiveBackend> across) {
  if (count < 1 || index < 0 || index >= count)
    throw std::invalid_argument("SPMD process " + std::to_string(index) + " of " + std::to_string(count) +
                                " does not exist");
  EnableSpmd();
  spmd_process_index.store(index);
  spmd_process_count.store(count);
  if (count > 1) SetCollectiveBackend(MakeProcessesBackend(LocalSpmdDevices(), SpmdDeviceCount(), std::move(across)));
}

int64_t SpmdProcessIndex() { return spmd_process_index.load(); }
int64_t SpmdProcessCount() { return spmd_process_count.load(); }
int64_t SpmdDeviceCount() { return SpmdProcessCount() * DeviceCount(); }

int FirstLocalSpmdDevice() { return static_cast<int>(SpmdProcessIndex() * DeviceCount()); }

std::vector<int> LocalSpmdDevices() {
  std::vector<int> local(DeviceCount());
  std::iota(local.begin(), local.end(), FirstLocalSpmdDevice());
  return local;
}

bool IsLocalSpmdDevice(int64_t device) {
  return device >= FirstLocalSpmdDevice() && device < FirstLocalSpmdDevice() + DeviceCount();
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
