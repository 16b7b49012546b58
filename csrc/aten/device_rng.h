// Where random ops on the xla device get their seeds.
//
// An op given a generator draws from it. An op without one draws from its device's state: until
// xm.set_rng_state / torch_xla.manual_seed (or get_rng_state) gives the device a state of its own,
// that is torch's default CPU generator, so torch.manual_seed makes xla randomness reproducible;
// afterwards it is the device's own 64-bit state, advanced once per draw (as PyTorch/XLA's is), so
// `s = xm.get_rng_state(); ...; xm.set_rng_state(s)` replays the same draws.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>

namespace txla::aten {

// A seed from `gen` (a CPU generator).
int64_t DrawSeed(at::Generator gen);
// A seed for a random op on `device` that was given no generator.
int64_t DrawDeviceSeed(int device);
void SetDeviceRngState(int device, uint64_t state);
// The device draws from torch's default generator again (its own state is dropped).
void ForgetDeviceRngState(int device);
// The device's state; a device without one of its own takes one from torch's default generator.
uint64_t GetDeviceRngState(int device);

}  // namespace txla::aten
