#include "runtime/shards.h"

#include <cstring>

#include "metrics/metrics.h"
#include "runtime/collectives.h"

namespace txla::runtime {
namespace {

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

void CopyRows(int64_t bytes, const char* src, const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_at,
              char* dst, const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_at,
              const std::vector<int64_t>& extent, size_t d, int64_t src_base, int64_t dst_base) {
  const size_t rank = extent.size();
  if (d + 1 == rank) {
    std::memcpy(dst + (dst_base * dst_dims[d] + dst_at[d]) * bytes, src + (src_base * src_dims[d] + src_at[d]) * bytes,
                extent[d] * bytes);
    return;
  }
  for (int64_t k = 0; k < extent[d]; ++k)
    CopyRows(bytes, src, src_dims, src_at, dst, dst_dims, dst_at, extent, d + 1,
             src_base * src_dims[d] + src_at[d] + k, dst_base * dst_dims[d] + dst_at[d] + k);
}

}  // namespace

void CopyBlock(int64_t bytes, const void* src, const std::vector<int64_t>& src_dims,
               const std::vector<int64_t>& src_at, void* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_at, const std::vector<int64_t>& extent) {
  for (int64_t e : extent)
    if (e <= 0) return;
  if (extent.empty()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  CopyRows(bytes, static_cast<const char*>(src), src_dims, src_at, static_cast<char*>(dst), dst_dims, dst_at, extent,
           0, 0, 0);
}

std::vector<int64_t> ValidExtent(const std::vector<int64_t>& full, const std::vector<int64_t>& local,
                                 const std::vector<int64_t>& offset) {
  std::vector<int64_t> extent(full.size());
  for (size_t d = 0; d < full.size(); ++d)
    extent[d] = std::max<int64_t>(0, std::min(local[d], full[d] - offset[d]));
  return extent;
}

void CutPiece(int64_t bytes, const void* whole, const std::vector<int64_t>& full, const std::vector<int64_t>& at,
              void* piece, const std::vector<int64_t>& local) {
  int64_t count = 1;
  for (int64_t n : local) count *= n;
  std::memset(piece, 0, static_cast<size_t>(count * bytes));
  CopyBlock(bytes, whole, full, at, piece, local, std::vector<int64_t>(full.size(), 0), ValidExtent(full, local, at));
}

std::vector<int64_t> EncodeReshard(ReshardOp op, ElementType type, const std::vector<int64_t>& full,
                                   const std::vector<int64_t>& local,
                                   const std::vector<std::vector<int64_t>>& offsets) {
  std::vector<int64_t> spec{static_cast<int64_t>(op), static_cast<int64_t>(type), static_cast<int64_t>(full.size())};
  spec.insert(spec.end(), full.begin(), full.end());
  spec.insert(spec.end(), local.begin(), local.end());
  spec.push_back(static_cast<int64_t>(offsets.size()));
  for (const auto& o : offsets) spec.insert(spec.end(), o.begin(), o.end());
  return spec;
}

void RunReshard(const int64_t* spec, const void* in, void* out) {
  const auto op = static_cast<ReshardOp>(spec[0]);
  const auto type = static_cast<ElementType>(spec[1]);
  const int64_t rank = spec[2];
  const std::vector<int64_t> full(spec + 3, spec + 3 + rank), local(spec + 3 + rank, spec + 3 + 2 * rank);
  const int64_t devices = spec[3 + 2 * rank];
  const int64_t* offsets = spec + 4 + 2 * rank;
  auto offset_of = [&](int64_t d) { return std::vector<int64_t>(offsets + d * rank, offsets + (d + 1) * rank); };
  const int64_t bytes = ByteWidth(type);
  const int64_t piece = Count(local);
  const std::vector<int64_t> origin(rank, 0);
  TXLA_TIMED("CollectiveTime");
  if (op == ReshardOp::kShard) {
    CutPiece(bytes, in, full, offset_of(ExecutingDevice()), out, local);
    return;
  }
  metrics::GetCounter("CollectiveAllGather")->Add(1);
  metrics::GetCounter("CollectiveBytes")->Add(piece * bytes * devices);
  std::vector<char> gathered(static_cast<size_t>(piece * bytes * devices));
  GetCollectiveBackend()->AllGather(ExecutingDevice(), type, in, piece, gathered.data(), {});
  for (int64_t d = 0; d < devices; ++d) {
    const std::vector<int64_t> at = offset_of(d);
    CopyBlock(bytes, gathered.data() + d * piece * bytes, local, origin, out, full, at, ValidExtent(full, local, at));
  }
}

}  // namespace txla::runtime
