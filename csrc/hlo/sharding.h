// How a value is laid out over devices, as XLA's HloSharding is spelled in HLO text:
//   {replicated}                                   every device holds all of it
//   {maximal device=3}                             one device holds all of it
//   {manual}                                       the program already works on a shard
//   {devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
//                                                  tiled: dimension d in tile_dims[d] pieces; the
//                                                  devices holding each tile in row-major order,
//                                                  a trailing tile dimension of replicas
// Parse also reads XLA's iota form of the device list, `devices=[2,2]<=[4]` (0,1,2,3) and
// `devices=[2,2]<=[2,2]T(1,0)` (an iota reshaped and transposed: 0,2,1,3); ToString writes the
// explicit list, as PyTorch/XLA's _get_xla_sharding_spec does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace txla::hlo {

struct Sharding {
  enum class Kind { kReplicated, kMaximal, kManual, kTiled };
  Kind kind = Kind::kReplicated;
  std::vector<int64_t> tile_dims;  // kTiled: tiles per dimension (+ the replica count last)
  std::vector<int64_t> devices;    // kTiled: every device once, row-major over tile_dims; kMaximal: one
  bool last_tile_dim_replicate = false;

  static Sharding Replicated() { return {}; }
  static Sharding Maximal(int64_t device) { return {Kind::kMaximal, {}, {device}, false}; }
  static Sharding Manual() { return {Kind::kManual, {}, {}, false}; }
  // Throws std::invalid_argument when the devices are not each of 0..n-1 once, n the product of
  // tile_dims, or a replica dimension is asked for without a dimension to hold it.
  static Sharding Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                        bool last_tile_dim_replicate = false);

  // The tiles per dimension of a value of rank `rank` (without the replica dimension): throws
  // when the sharding has another rank.
  std::vector<int64_t> TilesPerDimension(int64_t rank) const;

  std::string ToString() const;
  // Throws std::invalid_argument naming what it could not read.
  static Sharding Parse(std::string_view text);

  bool operator==(const Sharding& o) const {
    return kind == o.kind && tile_dims == o.tile_dims && devices == o.devices &&
           last_tile_dim_replicate == o.last_tile_dim_replicate;
  }
  bool operator!=(const Sharding& o) const { return !(*this == o); }
};

}  // namespace txla::hlo
