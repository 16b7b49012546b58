// SPMD over processes: the devices of this process meet in memory at each collective, and the
// thread of the first of them exchanges the whole process's data with the other processes over
// the `across` transport (one replica per process). Every SPMD device runs the same program, so
// all local devices reach every collective, in the same order, whatever their replica groups.
//
// All-reduce and all-gather gather every device's contribution to every process and reduce them
// there in group order: the bits are those one process with all the devices computes.
#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "runtime/barrier.h"
#include "runtime/collectives.h"

namespace txla::runtime {
namespace {

class ProcessesBackend final : public CollectiveBackend {
 public:
  ProcessesBackend(std::vector<int> local, int64_t devices, std::shared_ptr<CollectiveBackend> across)
      : local_(std::move(local)),
        devices_(devices),
        per_process_(static_cast<int64_t>(local_.size())),
        processes_(devices / per_process_),
        across_(std::move(across)),
        barrier_(local_.size()),
        posted_(local_.size()),
        what_(local_.size()) {
    if (local_.empty() || devices % per_process_ != 0)
      throw std::invalid_argument("SPMD over processes: " + std::to_string(devices) + " devices do not divide into "
                                  "processes of " + std::to_string(local_.size()));
  }
  ~ProcessesBackend() override { barrier_.Break("the SPMD collective transport was replaced"); }

  std::string name() const override {
    return std::to_string(per_process_) + " devices in each of " + std::to_string(processes_) + " processes over " +
           across_->name();
  }

  void AllReduce(int device, ReduceKind kind, ElementType type, void* data, int64_t count,
                 const ReplicaGroups& groups) override {
    const size_t bytes = count * ByteWidth(type);
    Round(device, data, "all-reduce of " + std::to_string(count) + " " + ElementTypeName(type),
          [&] { GatherEverywhere(bytes); }, [&] {
            const std::vector<int64_t> group = GroupOf(device, devices_, groups);
            std::memcpy(data, gathered_.data() + group[0] * bytes, bytes);
            for (size_t m = 1; m < group.size(); ++m)
              ReduceInto(kind, type, data, gathered_.data() + group[m] * bytes, count);
          });
  }

  void AllGather(int device, ElementType type, const void* in, int64_t count, void* out,
                 const ReplicaGroups& groups) override {
    const size_t bytes = count * ByteWidth(type);
    Round(device, in, "all-gather of " + std::to_string(count) + " " + ElementTypeName(type),
          [&] { GatherEverywhere(bytes); }, [&] {
            const std::vector<int64_t> group = GroupOf(device, devices_, groups);
            for (size_t m = 0; m < group.size(); ++m)
              std::memcpy(static_cast<char*>(out) + m * bytes, gathered_.data() + group[m] * bytes, bytes);
          });
  }

  void AllToAll(int device, ElementType type, const std::vector<const void*>& send, const std::vector<int64_t>& send_counts,
                const std::vector<void*>& recv, const std::vector<int64_t>& recv_counts,
                const ReplicaGroups& groups) override {
    Posted mine{&send, &send_counts, &recv, &recv_counts, GroupOf(device, devices_, groups)};
    Round(device, &mine, std::string("all-to-all of ") + ElementTypeName(type),
          [&] { ExchangeAllToAll(ByteWidth(type)); }, [] {});
  }

  int64_t GroupRank(int device, const ReplicaGroups& groups) override {
    return PositionIn(GroupOf(device, devices_, groups), device);
  }

  void Abort(const std::string& why) override {
    barrier_.Break(why);
    across_->Abort(why);
  }

 private:
  // What a device brings to an all-to-all.
  struct Posted {
    const std::vector<const void*>* send;
    const std::vector<int64_t>* send_counts;
    const std::vector<void*>* recv;
    const std::vector<int64_t>* recv_counts;
    std::vector<int64_t> group;
  };

  size_t LocalIndex(int device) const {
    auto it = std::find(local_.begin(), local_.end(), device);
    if (it == local_.end())
      throw std::invalid_argument("device " + std::to_string(device) + " is not one of this process's SPMD devices");
    return it - local_.begin();
  }
  int64_t ProcessOf(int64_t device) const { return device / per_process_; }
  int64_t Me() const { return ProcessOf(local_[0]); }

  // One collective: every local device posts, the first runs `exchange` (the step between
  // processes), then each runs `finish`. A failure fails every local device, after all have left
  // the shared state alone.
  void Round(int device, const void* posted, const std::string& what, const std::function<void()>& exchange,
             const std::function<void()>& finish) {
    const size_t position = LocalIndex(device);
    posted_[position] = posted;
    what_[position] = what;
    barrier_.Wait();  // every device posted
    if (position == 0) {
      error_.clear();
      for (size_t k = 1; k < what_.size() && error_.empty(); ++k)
        if (what_[k] != what_[0])
          error_ = "devices reached different collectives: [" + std::to_string(local_[0]) + "] " + what_[0] + " [" +
                   std::to_string(local_[k]) + "] " + what_[k];
      if (error_.empty()) {
        try {
          exchange();
        } catch (const std::exception& e) {
          error_ = e.what();
        }
      }
    }
    barrier_.Wait();  // the exchange is done (or failed)
    std::string error = error_;
    if (error.empty()) {
      try {
        finish();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    barrier_.Wait();  // every device done reading what the others posted
    if (!error.empty()) throw std::runtime_error(error);
  }

  // Every device's `bytes` (posted, in device order) to every process: gathered_[device * bytes].
  void GatherEverywhere(size_t bytes) {
    std::vector<char> mine(bytes * local_.size());
    for (size_t k = 0; k < local_.size(); ++k) std::memcpy(mine.data() + k * bytes, posted_[k], bytes);
    gathered_.resize(bytes * devices_);
    across_->AllGather(0, ElementType::kU8, mine.data(), static_cast<int64_t>(mine.size()), gathered_.data(), {});
  }

  // Each device's pieces for devices of other processes travel in one message per process pair:
  // source device ascending, then destination device ascending, the order both ends compute.
  void ExchangeAllToAll(int64_t width) {
    std::vector<const Posted*> posts(local_.size());
    for (size_t k = 0; k < local_.size(); ++k) posts[k] = static_cast<const Posted*>(posted_[k]);
    std::vector<std::vector<char>> out(processes_), in(processes_);
    std::vector<int64_t> out_bytes(processes_, 0), in_bytes(processes_, 0);
    // Local pairs copy within memory; other pairs are packed per process.
    for (size_t s = 0; s < local_.size(); ++s) {
      const Posted& src = *posts[s];
      std::vector<int64_t> ascending = src.group;
      std::sort(ascending.begin(), ascending.end());
      for (const int64_t dst : ascending) {
        const size_t m = PositionIn(src.group, dst);
        const int64_t bytes = src.send_counts->at(m) * width;
        if (ProcessOf(dst) == Me()) {
          const Posted& to = *posts[LocalIndex(static_cast<int>(dst))];
          const size_t from_position = PositionIn(to.group, local_[s]);
          if (to.recv_counts->at(from_position) * width != bytes)
            throw std::logic_error("all-to-all: device " + std::to_string(local_[s]) + " sends " +
                                   std::to_string(bytes) + " bytes to device " + std::to_string(dst) + ", which expects " +
                                   std::to_string(to.recv_counts->at(from_position) * width));
          if (bytes > 0) std::memcpy(to.recv->at(from_position), src.send->at(m), bytes);
          continue;
        }
        std::vector<char>& message = out[ProcessOf(dst)];
        const char* piece = static_cast<const char*>(src.send->at(m));
        message.insert(message.end(), piece, piece + bytes);
      }
    }
    // What arrives from process p: for each of its devices in this group (ascending), for each
    // local destination (ascending), the destination's expected count.
    for (size_t d = 0; d < local_.size(); ++d) {
      const Posted& dst = *posts[d];
      for (size_t m = 0; m < dst.group.size(); ++m)
        if (ProcessOf(dst.group[m]) != Me()) in_bytes[ProcessOf(dst.group[m])] += dst.recv_counts->at(m) * width;
    }
    std::vector<const void*> send(processes_);
    std::vector<void*> recv(processes_);
    for (int64_t p = 0; p < processes_; ++p) {
      out_bytes[p] = static_cast<int64_t>(out[p].size());
      in[p].resize(in_bytes[p]);
      send[p] = out[p].data();
      recv[p] = in[p].data();
    }
    across_->AllToAll(0, ElementType::kU8, send, out_bytes, recv, in_bytes, {});
    std::vector<int64_t> read(processes_, 0);
    for (int64_t src = 0; src < devices_; ++src) {
      const int64_t p = ProcessOf(src);
      if (p == Me()) continue;
      for (size_t d = 0; d < local_.size(); ++d) {
        const Posted& dst = *posts[d];
        const auto it = std::find(dst.group.begin(), dst.group.end(), src);
        if (it == dst.group.end()) continue;
        const size_t m = it - dst.group.begin();
        const int64_t bytes = dst.recv_counts->at(m) * width;
        if (bytes > 0) std::memcpy(dst.recv->at(m), in[p].data() + read[p], bytes);
        read[p] += bytes;
      }
    }
  }

  const std::vector<int> local_;
  const int64_t devices_, per_process_, processes_;
  const std::shared_ptr<CollectiveBackend> across_;
  Barrier barrier_;
  std::vector<const void*> posted_;
  std::vector<std::string> what_;
  std::string error_;           // of the current round, set by the first device
  std::vector<char> gathered_;  // every device's contribution, set by the first device
};

}  // namespace

std::shared_ptr<CollectiveBackend> MakeProcessesBackend(std::vector<int> local, int64_t devices,
                                                        std::shared_ptr<CollectiveBackend> across) {
  if (!across) throw std::invalid_argument("SPMD over processes needs a transport between them");
  return std::make_shared<ProcessesBackend>(std::move(local), devices, std::move(across));
}

}  // namespace txla::runtime
