#include "python/process_group_transport.h"

#include <ATen/Functions.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ir/shape.h"

namespace txla::python {
namespace {

c10d::ReduceOp ToC10d(runtime::ReduceKind kind) {
  switch (kind) {
    case runtime::ReduceKind::kSum: return c10d::ReduceOp::SUM;
    case runtime::ReduceKind::kProduct: return c10d::ReduceOp::PRODUCT;
    case runtime::ReduceKind::kMin: return c10d::ReduceOp::MIN;
    case runtime::ReduceKind::kMax: return c10d::ReduceOp::MAX;
  }
  throw std::invalid_argument("unknown reduce kind");
}

at::Tensor Wrap(const void* data, int64_t count, runtime::ElementType type) {
  return at::from_blob(const_cast<void*>(data), {count},
                       at::TensorOptions().dtype(ir::ToScalarType(type)));
}

std::string Describe(const std::vector<int64_t>& members) {
  std::string s = "[";
  for (size_t k = 0; k < members.size(); ++k) s += (k ? ", " : "") + std::to_string(members[k]);
  return s + "]";
}

// Waits for a collective; its failure (a replica gone, a timeout) names the collective, the
// replicas it joined and this replica.
void Wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what,
          const std::vector<int64_t>& members, int64_t rank) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(what) + " among replicas " + Describe(members) + " failed on replica " +
                             std::to_string(rank) + ": " + e.what());
  }
}

}  // namespace

ProcessGroupTransport::ProcessGroupTransport(c10::intrusive_ptr<c10d::ProcessGroup> world)
    : world_(std::move(world)), rank_(world_->getRank()), size_(world_->getSize()) {}

void ProcessGroupTransport::AddGroup(std::vector<int64_t> members,
                                     c10::intrusive_ptr<c10d::ProcessGroup> group) {
  std::lock_guard<std::mutex> lock(mu_);
  groups_[std::move(members)] = std::move(group);
}

std::string ProcessGroupTransport::name() const {
  return "torch.distributed " + world_->getBackendName() + ", " + std::to_string(size_) + " processes";
}

std::pair<c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<int64_t>> ProcessGroupTransport::GroupFor(
    const runtime::ReplicaGroups& groups) {
  std::vector<int64_t> members = runtime::GroupOf(rank_, size_, groups);
  std::vector<int64_t> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  bool whole = static_cast<int64_t>(members.size()) == size_;
  for (int64_t k = 0; whole && k < size_; ++k) whole = sorted[k] == k;
  if (whole) return {world_, members};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_.find(members);
  if (it == groups_.end())
    throw std::runtime_error("replica group " + Describe(members) +
                             " has no process group (xm collectives create it when they first name it)");
  return {it->second, members};
}

void ProcessGroupTransport::AllReduce(int, runtime::ReduceKind kind, runtime::ElementType type,
                                      void* data, int64_t count, const runtime::ReplicaGroups& groups) {
  auto [group, members] = GroupFor(groups);
  if (kind == runtime::ReduceKind::kMin || kind == runtime::ReduceKind::kMax) {
    // Gloo's min/max drop a NaN that comes second: gather every member's values and reduce them
    // here, in the same order everywhere, with the kernels' NaN-propagating min/max.
    const size_t bytes = count * runtime::ByteWidth(type);
    std::vector<char> gathered(bytes * members.size());
    AllGather(0, type, data, count, gathered.data(), groups);
    std::memcpy(data, gathered.data(), bytes);
    for (size_t m = 1; m < members.size(); ++m)
      runtime::ReduceInto(kind, type, data, gathered.data() + m * bytes, count);
    return;
  }
  std::vector<at::Tensor> tensors{Wrap(data, count, type)};
  c10d::AllreduceOptions options;
  options.reduceOp = ToC10d(kind);
  Wait(group->allreduce(tensors, options), "all-reduce", members, rank_);
}

void ProcessGroupTransport::AllGather(int, runtime::ElementType type, const void* in, int64_t count,
                                      void* out, const runtime::ReplicaGroups& groups) {
  auto [group, members] = GroupFor(groups);
  // A process group orders its ranks by global rank; the result follows the replica group's order.
  std::vector<int64_t> by_rank = members;
  std::sort(by_rank.begin(), by_rank.end());
  const size_t bytes = count * runtime::ByteWidth(type);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int64_t member : by_rank) {
    outputs[0].push_back(Wrap(static_cast<char*>(out) + runtime::PositionIn(members, member) * bytes, count, type));
  }
  std::vector<at::Tensor> inputs{Wrap(in, count, type)};
  Wait(group->allgather(outputs, inputs), "all-gather", members, rank_);
}

void ProcessGroupTransport::AllToAll(int, runtime::ElementType type, const std::vector<const void*>& send,
                                     const std::vector<int64_t>& send_counts, const std::vector<void*>& recv,
                                     const std::vector<int64_t>& recv_counts, const runtime::ReplicaGroups& groups) {
  auto [group, members] = GroupFor(groups);
  // The process group's ranks follow global rank order; the pieces are in the replica group's.
  std::vector<int64_t> by_rank = members;
  std::sort(by_rank.begin(), by_rank.end());
  const size_t width = runtime::ByteWidth(type);
  std::vector<int64_t> in_splits, out_splits;
  int64_t in_total = 0, out_total = 0;
  for (int64_t member : by_rank) {
    const size_t m = runtime::PositionIn(members, member);
    in_splits.push_back(send_counts.at(m));
    out_splits.push_back(recv_counts.at(m));
    in_total += send_counts[m];
    out_total += recv_counts[m];
  }
  std::vector<char> packed(in_total * width), unpacked(out_total * width);
  size_t at = 0;
  for (int64_t member : by_rank) {
    const size_t m = runtime::PositionIn(members, member);
    if (send_counts[m] > 0) std::memcpy(packed.data() + at, send[m], send_counts[m] * width);
    at += send_counts[m] * width;
  }
  at::Tensor input = Wrap(packed.data(), in_total, type), output = Wrap(unpacked.data(), out_total, type);
  Wait(group->alltoall_base(output, input, out_splits, in_splits), "all-to-all", members, rank_);
  at = 0;
  for (int64_t member : by_rank) {
    const size_t m = runtime::PositionIn(members, member);
    if (recv_counts[m] > 0) std::memcpy(recv[m], unpacked.data() + at, recv_counts[m] * width);
    at += recv_counts[m] * width;
  }
}

int64_t ProcessGroupTransport::GroupRank(int, const runtime::ReplicaGroups& groups) {
  return runtime::PositionIn(runtime::GroupOf(rank_, size_, groups), rank_);
}

}  // namespace txla::python
