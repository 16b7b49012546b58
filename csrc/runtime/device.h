// The devices a process sees. On the CPU backend each process offers `CPU_NUM_DEVICES` devices
// (default 1), named xla:0 .. xla:N-1, all backed by host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace txla::runtime {

struct DeviceInfo {
  int ordinal = 0;
  std::string kind = "CPU";  // what the device stands in for, as xm.xla_device_hw() reports
};

// Number of devices this process offers, read from the environment when first asked (the
// runtime's start, as PyTorch/XLA's runtime starts at the first use of a device).
int DeviceCount();
bool RuntimeStarted();
std::vector<DeviceInfo> Devices();
std::string DeviceName(int ordinal);  // "xla:0"

// SPMD (torch_xla.runtime.use_spmd(), XLA_USE_SPMD=1): the program traced on xla:0 is partitioned
// over all DeviceCount() devices, which run it together (their collectives meet in memory).
// Once on, it stays on for the process, as in PyTorch/XLA.
void EnableSpmd();
bool SpmdEnabled();
// SPMD over processes (and hosts): this process is `index` of `count`, each offering
// DeviceCount() devices. The SPMD devices are numbered process by process: this process runs
// devices index*DeviceCount() .. (index+1)*DeviceCount()-1 of every partitioned program, and
// `across` carries the collectives between processes (runtime/collectives.h). Set once, before
// the first partitioned program runs; without it SPMD spans this process's devices.
class CollectiveBackend;
void SetSpmdProcesses(int64_t index, int64_t count, std::shared_ptr<CollectiveBackend> across);
int64_t SpmdProcessIndex();
int64_t SpmdProcessCount();
// Every process's devices: the devices a mesh and a partitioned program span.
int64_t SpmdDeviceCount();
// The SPMD devices this process runs, ascending from the first.
std::vector<int> LocalSpmdDevices();
int FirstLocalSpmdDevice();
bool IsLocalSpmdDevice(int64_t device);

// Auto-sharding (use_spmd(auto=True), XLA_AUTO_SPMD=1): SPMD, and the compiler chooses layouts
// for the parameters the user left unsharded. Stays on for the process.
void EnableAutoSharding();
bool AutoShardingEnabled();

}  // namespace txla::runtime
