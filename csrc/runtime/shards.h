// Values split over devices (SPMD): copying tiles between a whole value and its pieces, and the
// resharding routine partitioned programs call (compiler/spmd: txla.spmd_all_gather and
// txla.spmd_shard). A piece is a device's tile, padded to the tile size where a dimension does
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

enum class ReshardOp : int64_t { kAllGather = 0, kShard = 1 };
// The spec a compiled program hands RunReshard:
//   {op, element type, rank, full dims..., local dims..., devices, per device its offsets...}
std::vector<int64_t> EncodeReshard(ReshardOp op, ElementType type, const std::vector<int64_t>& full,
                                   const std::vector<int64_t>& local,
                                   const std::vector<std::vector<int64_t>>& offsets);
// kAllGather: every device's piece `in` (local dims) gathered into the whole `out`, through the
// collective transport; kShard: this device's piece of the whole `in` written to `out`.
void RunReshard(const int64_t* spec, const void* in, void* out);

}  // namespace txla::runtime
