// Where each device's piece of a value lies: a sharding (hlo/sharding.h) read as, per device, the
// coordinates of the tile it holds. The SPMD passes reason per device with it (N is small):
// whether a local op on each device's operand tiles computes that device's result tile, which
// devices hold partial sums of the same tile, which devices replicate one another. Two shardings
// that place every tile on the same devices are equal here even when their texts differ.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/sharding.h"
#include "runtime/shards.h"

namespace txla::compiler::spmd {

struct TileMap {
  std::vector<int64_t> tiles;                // pieces per dimension (all 1: replicated)
  std::vector<std::vector<int64_t>> coords;  // coords[device][dimension]

  // Every device holds all of a value of rank `rank`.
  static TileMap Replicated(int64_t rank, int64_t devices);
  // `sharding` over `devices` devices for a value of rank `rank`: maximal and manual shardings
  // read as replicated (every device computes on what it holds). Throws std::invalid_argument
  // when a tiled sharding has another rank or names a device outside [0, devices).
  static TileMap Of(const hlo::Sharding& sharding, int64_t rank, int64_t devices);

  int64_t rank() const { return static_cast<int64_t>(tiles.size()); }
  int64_t devices() const { return static_cast<int64_t>(coords.size()); }
  bool replicated() const;
  // The sharding that places the tiles so (devices of one tile ascending in the replica
  // dimension); nullopt when tiles are held by unequal numbers of devices, which XLA's
  // syntax cannot say.
  std::optional<hlo::Sharding> ToSharding() const;

  bool operator==(const TileMap& o) const { return tiles == o.tiles && coords == o.coords; }
  bool operator!=(const TileMap& o) const { return !(*this == o); }
};

// A map over the dimensions `pick` of `from`: dimension k is from's dimension pick[k], or whole
// where pick[k] < 0 (what a broadcast, transpose or reduction makes of its operand's tiles).
// Where every device's piece of a value of dimensions `full` lies under `map`.
runtime::Layout LayoutOf(const TileMap& map, const std::vector<int64_t>& full);

TileMap Project(const TileMap& from, const std::vector<int64_t>& pick);

// A device's piece of a value of dimensions `full`: ceil(full / tiles) in each dimension, the
// last pieces padded (XLA's shard shape).
std::vector<int64_t> LocalDims(const std::vector<int64_t>& full, const std::vector<int64_t>& tiles);
// Whether every tiled dimension divides evenly (no piece holds padding).
bool Even(const std::vector<int64_t>& full, const std::vector<int64_t>& tiles);
// Where each device's piece starts in the full value: coords * local dims.
std::vector<std::vector<int64_t>> ShardOffsets(const TileMap& map, const std::vector<int64_t>& full);

// Devices split into groups by `key(device)`: devices with equal keys form a group, and within
// a group devices whose `dup(device)` repeats go to separate groups (the i-th device with a given
// dup value to the i-th subgroup), so no group holds the same partial piece twice. Groups and
// their members ascend.
std::vector<std::vector<int64_t>> GroupDevices(int64_t devices, const std::vector<std::vector<int64_t>>& key,
                                               const std::vector<std::vector<int64_t>>& dup);

}  // namespace txla::compiler::spmd
