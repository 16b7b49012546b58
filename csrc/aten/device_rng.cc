#include "aten/device_rng.h"

#include <ATen/CPUGeneratorImpl.h>

#include <map>
#include <mutex>

namespace txla::aten {
namespace {

struct DeviceStates {
  std::mutex mu;
  std::map<int, uint64_t> own;  // devices with a state of their own
};

DeviceStates& States() {
  static DeviceStates states;
  return states;
}

// Knuth's MMIX LCG step: a full-period walk over 64-bit states.
uint64_t Advance(uint64_t state) { return state * 6364136223846793005ULL + 1442695040888963407ULL; }

}  // namespace

int64_t DrawSeed(at::Generator gen) {
  TORCH_CHECK(gen.device().is_cpu(), "the xla device draws random numbers from CPU generators");
  std::lock_guard<std::mutex> lock(gen.mutex());
  return static_cast<int64_t>(gen.get<at::CPUGeneratorImpl>()->random64() >> 1);
}

int64_t DrawDeviceSeed(int device) {
  {
    DeviceStates& s = States();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.own.find(device);
    if (it != s.own.end()) {
      uint64_t seed = it->second;
      it->second = Advance(seed);
      // Mixed so that neighbouring states give unrelated seeds.
      uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return static_cast<int64_t>((z ^ (z >> 31)) >> 1);
    }
  }
  return DrawSeed(at::detail::getDefaultCPUGenerator());
}

void SetDeviceRngState(int device, uint64_t state) {
  DeviceStates& s = States();
  std::lock_guard<std::mutex> lock(s.mu);
  s.own[device] = state;
}

void ForgetDeviceRngState(int device) {
  DeviceStates& s = States();
  std::lock_guard<std::mutex> lock(s.mu);
  s.own.erase(device);
}

uint64_t GetDeviceRngState(int device) {
  DeviceStates& s = States();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.own.find(device);
    if (it != s.own.end()) return it->second;
  }
  uint64_t state = static_cast<uint64_t>(DrawSeed(at::detail::getDefaultCPUGenerator()));
  std::lock_guard<std::mutex> lock(s.mu);
  return s.own.emplace(device, state).first->second;
}

}  // namespace txla::aten
