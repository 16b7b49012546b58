// Device buffers of scalar values, shared by every use of one value (PyTorch/XLA's device-data
// cache). An optimizer step passes the same few Python numbers (lr, betas, eps, the step's bias
// correction) to every parameter's ops: hundreds of one-element buffers a step, each allocated,
// written, bound to the graph and freed, for a handful of distinct values.
//
// A cached buffer is never written: a run donates only inputs nothing else holds, and the cache
// holds each of its buffers. Entries are kept least-recently-used first out, up to
// XLA_DEVICE_DATA_CACHE_SIZE values; each miss counts DeviceDataCacheMiss.
#pragma once

#include <cstdint>

#include "runtime/buffer.h"

namespace txla::runtime {

// A rank-0 buffer of `type` on `device` holding `bits` (the value's bytes in that type, in the
// low ByteWidth(type) bytes). The same value on the same device returns the same buffer while
// it stays cached. `*write`, when given, says whether this call wrote a new buffer (a miss) and
// how long that took; a hit reads no clock.
struct ScalarWrite {
  bool made = false;
  int64_t ns = 0;
};
BufferPtr ScalarBuffer(ElementType type, uint64_t bits, int device, ScalarWrite* write = nullptr);

// A new rank-0 buffer of its own holding `bits`, never shared (a random op's seed, which
// torch.compile's replays find by address).
BufferPtr OwnScalarBuffer(ElementType type, uint64_t bits, int device);

}  // namespace txla::runtime
