// Collectives executed inside graphs (all-reduce, all-gather, reduce-scatter), and the transports
// that carry them between replicas.
//
// A compiled graph calls a collective when its execution reaches it, on the thread running the
// graph; every replica runs the same graph, so they meet there in the same order. The transport
// is chosen by the host program: one replica alone (the default), the devices of this process as
// replicas (threaded data parallelism), or one replica per process over torch.distributed (set by
// the Python layer, which owns the process groups).
//
// Replica groups are lists of replica ids; empty means one group of every replica. A replica's
// id is its global ordinal (process transport) or its position among the replicating devices
// (in-process transport).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/element_type.h"

namespace txla::runtime {

enum class ReduceKind : int64_t { kSum = 0, kProduct = 1, kMin = 2, kMax = 3 };
using ReplicaGroups = std::vector<std::vector<int64_t>>;

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual std::string name() const = 0;
  // `data` (count elements) becomes the reduction of every group member's `data`.
  virtual void AllReduce(int device, ReduceKind kind, ElementType type, void* data, int64_t count,
                         const ReplicaGroups& groups) = 0;
  // `out` (count elements per member, in group order) receives every member's `in`.
  virtual void AllGather(int device, ElementType type, const void* in, int64_t count, void* out,
                         const ReplicaGroups& groups) = 0;
  // Each member sends `send[m]` (send_counts[m] elements) to the member at position m of its
  // group and receives that member's elements for it in `recv[m]` (recv_counts[m]); counts may
  // differ per pair and be zero. Reduce-scatter and the partitioner's resharding exchanges are
  // built on it.
  virtual void AllToAll(int device, ElementType type, const std::vector<const void*>& send,
                        const std::vector<int64_t>& send_counts, const std::vector<void*>& recv,
                        const std::vector<int64_t>& recv_counts, const ReplicaGroups& groups) = 0;
  // The position of this replica in its group (reduce-scatter keeps that shard).
  virtual int64_t GroupRank(int device, const ReplicaGroups& groups) = 0;
  // Replicas waiting in a collective fail with `why` instead of waiting for a replica that has
  // failed (transports that can tell; a process group has its own timeout).
  virtual void Abort(const std::string& why) {}
};

// The members of the group `replica` belongs to; throws std::invalid_argument when it is in
// none or in several. Empty `groups` means all `replicas`.
std::vector<int64_t> GroupOf(int64_t replica, int64_t replicas, const ReplicaGroups& groups);
// Where `replica` stands in `group` (its group rank; the order gathers and scatters follow).
int64_t PositionIn(const std::vector<int64_t>& group, int64_t replica);

// The transport graphs use from now on (nullptr restores the single-replica default).
void SetCollectiveBackend(std::shared_ptr<CollectiveBackend> backend);
std::shared_ptr<CollectiveBackend> GetCollectiveBackend();
// Whether the transport is the single-replica default (no other replica to stay in step with).
bool SingleReplicaCollectives();
// These devices of this process as the replicas (replica k runs on devices[k]), meeting in memory.
std::shared_ptr<CollectiveBackend> MakeInProcessBackend(std::vector<int> devices);

// SPMD over processes: `local` (the SPMD device ids this process runs) are replicas among
// `devices` in all, numbered process by process, and `across` (one replica per process, e.g. a
// torch.distributed process group) joins this process to the others. The local devices meet in
// memory at each collective; one of them exchanges the process's data with the other processes.
std::shared_ptr<CollectiveBackend> MakeProcessesBackend(std::vector<int> local, int64_t devices,
                                                        std::shared_ptr<CollectiveBackend> across);

// Reduces `count` elements of `src` into `dst` (both `type`).
void ReduceInto(ReduceKind kind, ElementType type, void* dst, const void* src, int64_t count);

// The device whose graph this thread is executing (collectives need to know which replica is
// calling); set for the duration of an execution.
int ExecutingDevice();
class ScopedExecutingDevice {
 public:
  explicit ScopedExecutingDevice(int device);
  ~ScopedExecutingDevice();
  ScopedExecutingDevice(const ScopedExecutingDevice&) = delete;
  ScopedExecutingDevice& operator=(const ScopedExecutingDevice&) = delete;

 private:
  int previous_;
};

// `count` elements of `in` (in group order, count/members per member) reduced over the group,
// this replica's chunk to `out`, over `backend`'s all-to-all.
void ReduceScatter(CollectiveBackend& backend, int device, ReduceKind kind, ElementType type, const void* in,
                   int64_t count, void* out, const ReplicaGroups& groups);

// The spec array a compiled graph hands to a collective (compiler/support.cc decodes it):
//   {op, reduce kind, element type, element count of the input, #groups, group size, members...}
enum class CollectiveOp : int64_t { kAllReduce = 0, kAllGather = 1, kReduceScatter = 2 };
std::vector<int64_t> EncodeCollective(CollectiveOp op, ReduceKind kind, ElementType type,
                                      int64_t count, const ReplicaGroups& groups);
// Runs an encoded collective: `in` to `out` (out may equal in for all-reduce).
void RunCollective(const int64_t* spec, const void* in, void* out);

}  // namespace txla::runtime
