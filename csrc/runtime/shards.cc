#include "runtime/shards.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

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

Layout Layout::Whole(const std::vector<int64_t>& full, int64_t devices) {
  return {full, std::vector<std::vector<int64_t>>(devices, std::vector<int64_t>(full.size(), 0))};
}

int64_t Box::count() const { return Count(extent); }

namespace {

// The part of the block [at, at + extent) inside [lo, lo + size) and inside the full value.
bool Intersect(const std::vector<int64_t>& full, const std::vector<int64_t>& at, const std::vector<int64_t>& extent,
               const std::vector<int64_t>& lo, const std::vector<int64_t>& size, Box* out) {
  const size_t rank = full.size();
  out->at.assign(rank, 0);
  out->extent.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t begin = std::max({at[d], lo[d], int64_t{0}});
    const int64_t end = std::min({at[d] + extent[d], lo[d] + size[d], full[d]});
    if (end <= begin) return false;
    out->at[d] = begin;
    out->extent[d] = end - begin;
  }
  return true;
}

std::vector<int64_t> Minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> r(a.size());
  for (size_t d = 0; d < a.size(); ++d) r[d] = a[d] - b[d];
  return r;
}

}  // namespace

std::vector<Box> ExchangeBoxes(const std::vector<int64_t>& full, const Layout& from, const Layout& to, int64_t src,
                               int64_t dst) {
  std::vector<Box> boxes;
  const int64_t devices = static_cast<int64_t>(from.offsets.size());
  for (int64_t t = 0; t < devices; ++t) {
    bool first = true;  // t is the lowest device holding its piece
    for (int64_t e = 0; e < t && first; ++e) first = from.offsets[e] != from.offsets[t];
    if (!first) continue;
    const int64_t holder = from.offsets[dst] == from.offsets[t] ? dst : t;
    if (holder != src) continue;
    Box box;
    if (Intersect(full, from.offsets[t], from.local, to.offsets[dst], to.local, &box)) boxes.push_back(std::move(box));
  }
  return boxes;
}

std::vector<int64_t> EncodeReshard(ReshardOp op, ElementType type, const std::vector<int64_t>& full,
                                   const Layout& from, const Layout& to,
                                   const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> spec{static_cast<int64_t>(op), static_cast<int64_t>(type), static_cast<int64_t>(full.size())};
  spec.insert(spec.end(), full.begin(), full.end());
  spec.push_back(static_cast<int64_t>(from.offsets.size()));
  spec.insert(spec.end(), from.local.begin(), from.local.end());
  spec.insert(spec.end(), to.local.begin(), to.local.end());
  for (const auto& o : from.offsets) spec.insert(spec.end(), o.begin(), o.end());
  for (const auto& o : to.offsets) spec.insert(spec.end(), o.begin(), o.end());
  const size_t group_size = groups.empty() ? 0 : groups[0].size();
  spec.push_back(static_cast<int64_t>(groups.size()));
  spec.push_back(static_cast<int64_t>(group_size));
  for (const auto& g : groups) {
    if (g.size() != group_size) throw std::invalid_argument("reshard: replica groups must all have the same size");
    spec.insert(spec.end(), g.begin(), g.end());
  }
  return spec;
}

namespace {

struct DecodedReshard {
  ReshardOp op;
  ElementType type;
  std::vector<int64_t> full;
  Layout from, to;
  std::vector<std::vector<int64_t>> groups;
};

DecodedReshard Decode(const int64_t* spec) {
  DecodedReshard r;
  r.op = static_cast<ReshardOp>(spec[0]);
  r.type = static_cast<ElementType>(spec[1]);
  const int64_t rank = spec[2];
  const int64_t* at = spec + 3;
  auto take = [&](int64_t n) {
    std::vector<int64_t> v(at, at + n);
    at += n;
    return v;
  };
  r.full = take(rank);
  const int64_t devices = *at++;
  r.from.local = take(rank);
  r.to.local = take(rank);
  for (int64_t d = 0; d < devices; ++d) r.from.offsets.push_back(take(rank));
  for (int64_t d = 0; d < devices; ++d) r.to.offsets.push_back(take(rank));
  const int64_t groups = *at++;
  const int64_t group_size = *at++;
  for (int64_t g = 0; g < groups; ++g) r.groups.push_back(take(group_size));
  return r;
}

// Exchanges pieces of one tiling into another: each device sends every other device the parts of
// its new piece it holds, packed box after box, over one all-to-all of every device.
void Exchange(const DecodedReshard& r, const void* in, void* out) {
  const int64_t me = ExecutingDevice();
  const int64_t devices = static_cast<int64_t>(r.from.offsets.size());
  const int64_t bytes = ByteWidth(r.type);
  std::memset(out, 0, static_cast<size_t>(Count(r.to.local) * bytes));
  std::vector<std::vector<char>> send(devices), recv(devices);
  std::vector<int64_t> send_counts(devices, 0), recv_counts(devices, 0);
  std::vector<std::vector<Box>> incoming(devices);
  for (int64_t d = 0; d < devices; ++d) {
    const std::vector<Box> outgoing = ExchangeBoxes(r.full, r.from, r.to, me, d);
    if (d == me) {  // what this device keeps moves within its own memory
      for (const Box& b : outgoing)
        CopyBlock(bytes, in, r.from.local, Minus(b.at, r.from.offsets[me]), out, r.to.local,
                  Minus(b.at, r.to.offsets[me]), b.extent);
      continue;
    }
    for (const Box& b : outgoing) send_counts[d] += b.count();
    send[d].resize(static_cast<size_t>(send_counts[d] * bytes));
    int64_t packed = 0;
    for (const Box& b : outgoing) {
      CopyBlock(bytes, in, r.from.local, Minus(b.at, r.from.offsets[me]), send[d].data() + packed * bytes, b.extent,
                std::vector<int64_t>(b.extent.size(), 0), b.extent);
      packed += b.count();
    }
    incoming[d] = ExchangeBoxes(r.full, r.from, r.to, d, me);
    for (const Box& b : incoming[d]) recv_counts[d] += b.count();
    recv[d].resize(static_cast<size_t>(recv_counts[d] * bytes));
  }
  std::vector<const void*> send_at(devices);
  std::vector<void*> recv_at(devices);
  for (int64_t d = 0; d < devices; ++d) {
    send_at[d] = send[d].data();
    recv_at[d] = recv[d].data();
  }
  int64_t received = 0;
  for (int64_t c : recv_counts) received += c;
  metrics::GetCounter("CollectiveBytes")->Add(received * bytes);
  GetCollectiveBackend()->AllToAll(static_cast<int>(me), r.type, send_at, send_counts, recv_at, recv_counts, {});
  for (int64_t d = 0; d < devices; ++d) {
    int64_t unpacked = 0;
    for (const Box& b : incoming[d]) {
      CopyBlock(bytes, recv[d].data() + unpacked * bytes, b.extent, std::vector<int64_t>(b.extent.size(), 0), out,
                r.to.local, Minus(b.at, r.to.offsets[me]), b.extent);
      unpacked += b.count();
    }
  }
}

// Partial sums reduced over each group, every member keeping its piece of `to` (cut from the
// group's common piece of `from`, zero where it reaches past the value).
void ReduceScatterPieces(const DecodedReshard& r, const void* in, void* out) {
  const int64_t me = ExecutingDevice();
  const int64_t bytes = ByteWidth(r.type);
  const std::vector<int64_t> group =
      GroupOf(me, static_cast<int64_t>(r.from.offsets.size()), r.groups);
  const int64_t piece = Count(r.to.local);
  std::vector<char> chunks(static_cast<size_t>(piece * bytes * group.size()));
  for (size_t m = 0; m < group.size(); ++m) {
    const std::vector<int64_t>& to_at = r.to.offsets[group[m]];
    Box box;  // the member's piece inside this device's partial piece
    if (!Intersect(r.full, r.from.offsets[me], r.from.local, to_at, r.to.local, &box)) continue;
    CopyBlock(bytes, in, r.from.local, Minus(box.at, r.from.offsets[me]), chunks.data() + m * piece * bytes,
              r.to.local, Minus(box.at, to_at), box.extent);
  }
  metrics::GetCounter("CollectiveReduceScatter")->Add(1);
  metrics::GetCounter("CollectiveBytes")->Add(piece * bytes * static_cast<int64_t>(group.size()));
  ReduceScatter(*GetCollectiveBackend(), static_cast<int>(me), ReduceKind::kSum, r.type, chunks.data(),
                piece * static_cast<int64_t>(group.size()), out, r.groups);
}

}  // namespace

void RunReshard(const int64_t* spec, const void* in, void* out) {
  const DecodedReshard r = Decode(spec);
  const int64_t bytes = ByteWidth(r.type);
  const int64_t devices = static_cast<int64_t>(r.from.offsets.size());
  TXLA_TIMED("CollectiveTime");
  switch (r.op) {
    case ReshardOp::kShard:
      CutPiece(bytes, in, r.full, r.to.offsets.at(ExecutingDevice()), out, r.to.local);
      return;
    case ReshardOp::kAllGather: {
      const int64_t piece = Count(r.from.local);
      metrics::GetCounter("CollectiveAllGather")->Add(1);
      metrics::GetCounter("CollectiveBytes")->Add(piece * bytes * devices);
      std::vector<char> gathered(static_cast<size_t>(piece * bytes * devices));
      GetCollectiveBackend()->AllGather(ExecutingDevice(), r.type, in, piece, gathered.data(), {});
      const std::vector<int64_t> origin(r.full.size(), 0);
      for (int64_t d = 0; d < devices; ++d) {
        const std::vector<int64_t>& at = r.from.offsets[d];
        CopyBlock(bytes, gathered.data() + d * piece * bytes, r.from.local, origin, out, r.full, at,
                  ValidExtent(r.full, r.from.local, at));
      }
      return;
    }
    case ReshardOp::kExchange:
      metrics::GetCounter("CollectiveAllToAll")->Add(1);
      Exchange(r, in, out);
      return;
    case ReshardOp::kReduceScatter:
      ReduceScatterPieces(r, in, out);
      return;
  }
  throw std::invalid_argument("unknown resharding " + std::to_string(spec[0]));
}

}  // namespace txla::runtime
