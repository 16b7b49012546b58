// Values split over devices (SPMD): copying tiles between a whole value and its pieces, and the
// resharding routine partitioned programs call (compiler/spmd: txla.spmd_all_gather,
// txla.spmd_shard, txla.spmd_exchange, txla.spmd_reduce_scatter). A piece is a device's tile, padded to the tile size where a dimension does
// not divide; the padding is zero when the runtime writes it.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/element_type.h"

namespace txla::runtime {

// Copies the block of dimensions `extent` starting at `src_at` in `src` (a row-major array of
// `src_dims`) to `dst_at` in `dst`; `bytes` per element.
void CopyBlock(int64_t bytes, const void* src, const std::vector<int64_t>& src_dims,
               const std::vector<int64_t>& src_at, void* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_at, const std::vector<int64_t>& extent);
// The part of a piece of dimensions `local` at `offset` that lies inside `full` (no padding).
std::vector<int64_t> ValidExtent(const std::vector<int64_t>& full, const std::vector<int64_t>& local,
                                 const std::vector<int64_t>& offset);
// Writes the piece of dimensions `local` starting at `at` of `whole` (dimensions `full`) to
// `piece`, zeros where it reaches past the whole (padding).
void CutPiece(int64_t bytes, const void* whole, const std::vector<int64_t>& full, const std::vector<int64_t>& at,
              void* piece, const std::vector<int64_t>& local);

// How a value of some full shape lies over the devices: every device's piece has dimensions
// `local` and starts at its `offsets[device]` (a whole value: local = full, offsets all zero).
struct Layout {
  std::vector<int64_t> local;
  std::vector<std::vector<int64_t>> offsets;
  static Layout Whole(const std::vector<int64_t>& full, int64_t devices);
};

// A block of the full value: where it starts and its extent.
struct Box {
  std::vector<int64_t> at, extent;
  int64_t count() const;
};
// What device `src` sends device `dst` when a value moves from layout `from` to `to`: the parts
// of dst's new piece held in src's piece, each part sent by one holder (dst itself when it holds
// it, else the lowest device that does), in an order both sides compute alike. Parts outside
// `full` (padding) are never sent.
std::vector<Box> ExchangeBoxes(const std::vector<int64_t>& full, const Layout& from, const Layout& to, int64_t src,
                               int64_t dst);

enum class ReshardOp : int64_t {
  kAllGather = 0,      // every device's piece gathered whole (to = whole)
  kShard = 1,          // this device's piece cut from the whole value (from = whole)
  kExchange = 2,       // pieces of one tiling exchanged into another (an all-to-all, or a
                       // collective-permute when each device's piece comes from one other)
  kReduceScatter = 3,  // partial sums in `from` (the same piece on every member of a group)
                       // reduced over the group, each member keeping its piece of `to`
};
// The spec a compiled program hands RunReshard:
//   {op, element type, rank, full dims..., devices, from.local..., to.local...,
//    from offsets per device..., to offsets per device..., #groups, group size, members...}
std::vector<int64_t> EncodeReshard(ReshardOp op, ElementType type, const std::vector<int64_t>& full,
                                   const Layout& from, const Layout& to,
                                   const std::vector<std::vector<int64_t>>& groups = {});
// Runs an encoded resharding on the executing device: its piece `in` (from) to `out` (to),
// through the collective transport.
void RunReshard(const int64_t* spec, const void* in, void* out);

}  // namespace txla::runtime
