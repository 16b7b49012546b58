// The collective transport of multi-process jobs: torch.distributed process groups (Gloo), one
// replica per process, driven from the thread that runs a graph (runtime/collectives.h).
//
// The Python layer creates the groups (every process, in the same order, as torch.distributed
// requires) and hands them over: the whole job's group first, then each replica subgroup as a
// collective first names it.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/collectives.h"

namespace txla::python {

class ProcessGroupTransport final : public runtime::CollectiveBackend {
 public:
  explicit ProcessGroupTransport(c10::intrusive_ptr<c10d::ProcessGroup> world);

  // The process group of the replica group `members` (in the group's order) this process is in.
  void AddGroup(std::vector<int64_t> members, c10::intrusive_ptr<c10d::ProcessGroup> group);

  std::string name() const override;
  void AllReduce(int device, runtime::ReduceKind kind, runtime::ElementType type, void* data,
                 int64_t count, const runtime::ReplicaGroups& groups) override;
  void AllGather(int device, runtime::ElementType type, const void* in, int64_t count, void* out,
                 const runtime::ReplicaGroups& groups) override;
  void AllToAll(int device, runtime::ElementType type, const std::vector<const void*>& send,
                const std::vector<int64_t>& send_counts, const std::vector<void*>& recv,
                const std::vector<int64_t>& recv_counts, const runtime::ReplicaGroups& groups) override;
  int64_t GroupRank(int device, const runtime::ReplicaGroups& groups) override;

 private:
  // This process's group and its members in the replica group's order.
  std::pair<c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<int64_t>> GroupFor(
      const runtime::ReplicaGroups& groups);

  c10::intrusive_ptr<c10d::ProcessGroup> world_;
  const int64_t rank_;
  const int64_t size_;
  std::mutex mu_;
  std::map<std::vector<int64_t>, c10::intrusive_ptr<c10d::ProcessGroup>> groups_;
};

}  // namespace txla::python
