#include "runtime/collectives.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>

#include "metrics/metrics.h"
#include "runtime/barrier.h"
#include "runtime/scalar_ops.h"

namespace txla::runtime {
namespace {

template <typename T>
void ReduceTyped(ReduceKind kind, T* dst, const T* src, int64_t count) {
  switch (kind) {
    case ReduceKind::kSum:
      for (int64_t i = 0; i < count; ++i) dst[i] = txla_add(dst[i], src[i]);
      return;
    case ReduceKind::kProduct:
      for (int64_t i = 0; i < count; ++i) dst[i] = txla_mul(dst[i], src[i]);
      return;
    case ReduceKind::kMin:  // NaN wins, as in torch.minimum: the kernels' own function
      for (int64_t i = 0; i < count; ++i) dst[i] = txla_min(dst[i], src[i]);
      return;
    case ReduceKind::kMax:
      for (int64_t i = 0; i < count; ++i) dst[i] = txla_max(dst[i], src[i]);
      return;
  }
}

// The one replica's group must be itself alone; other groups (of replicas of a world a process
// group speaks for, which never run here) are not its concern.
void CheckAlone(const ReplicaGroups& groups) {
  if (groups.empty()) return;
  for (const auto& g : groups) {
    if (std::count(g.begin(), g.end(), 0) == 0) continue;
    if (g.size() != 1)
      throw std::invalid_argument("replica group of " + std::to_string(g.size()) + " replicas: there is 1 replica");
    return;
  }
  throw std::invalid_argument("replica 0 is in no replica group");
}

// Everyone alone: one replica, groups of one.
class SingleReplicaBackend final : public CollectiveBackend {
 public:
  std::string name() const override { return "single replica"; }
  void AllReduce(int device, ReduceKind, ElementType, void*, int64_t, const ReplicaGroups& groups) override {
    CheckAlone(groups);
  }
  void AllGather(int device, ElementType type, const void* in, int64_t count, void* out,
                 const ReplicaGroups& groups) override {
    CheckAlone(groups);
    if (out != in) std::memmove(out, in, count * ByteWidth(type));
  }
  void AllToAll(int, ElementType type, const std::vector<const void*>& send, const std::vector<int64_t>& send_counts,
                const std::vector<void*>& recv, const std::vector<int64_t>&, const ReplicaGroups& groups) override {
    CheckAlone(groups);
    if (recv.at(0) != send.at(0)) std::memmove(recv[0], send[0], send_counts.at(0) * ByteWidth(type));
  }
  int64_t GroupRank(int device, const ReplicaGroups& groups) override {
    CheckAlone(groups);
    return 0;
  }
};

// The members of one replica group meet: each posts its input, then each reads all of them.
// `what` names the collective and its size: members that disagree (replicas that traced
// different programs) fail together instead of reading each other's memory wrongly.
class Meeting {
 public:
  explicit Meeting(size_t members) : barrier_(members), inputs_(members), what_(members) {}

  void Meet(size_t position, const void* input, const std::string& what,
            const std::function<void(const std::vector<const void*>&)>& read_all) {
    inputs_[position] = input;
    what_[position] = what;
    barrier_.Wait();  // every input posted
    const bool agree = std::all_of(what_.begin(), what_.end(), [&](const std::string& w) { return w == what_[0]; });
    std::string disagreement;
    if (agree) {
      read_all(inputs_);
    } else {
      disagreement = "replicas reached different collectives:";
      for (size_t m = 0; m < what_.size(); ++m) disagreement += " [" + std::to_string(m) + "] " + what_[m];
    }
    barrier_.Wait();  // every member done reading: inputs may change again
    if (!agree) throw std::runtime_error(disagreement);
  }

  // An all-reduce in place over the members' `data`: member p sums slice p of every member's
  // data (in group order, so every replica gets the same sums) while the others sum theirs, then
  // writes its slice into every member's data. Each member reads and writes the array once,
  // where summing all of it on every member read it once per member.
  void AllReduce(size_t position, void* data, const std::string& what, ReduceKind kind, ElementType type,
                 int64_t count) {
    const size_t members = inputs_.size();
    const int64_t width = ByteWidth(type);
    const int64_t lo = count * static_cast<int64_t>(position) / static_cast<int64_t>(members);
    const int64_t hi = count * static_cast<int64_t>(position + 1) / static_cast<int64_t>(members);
    std::vector<char> slice;
    Meet(position, data, what, [&](const std::vector<const void*>& inputs) {
      slice.assign(static_cast<const char*>(inputs[0]) + lo * width, static_cast<const char*>(inputs[0]) + hi * width);
      for (size_t m = 1; m < members; ++m)
        ReduceInto(kind, type, slice.data(), static_cast<const char*>(inputs[m]) + lo * width, hi - lo);
    });
    // Nobody reads the arrays now, and no member can post new ones before the barrier below.
    for (size_t m = 0; m < members; ++m)
      if (hi > lo)
        std::memcpy(const_cast<char*>(static_cast<const char*>(inputs_[m])) + lo * width, slice.data(), (hi - lo) * width);
    barrier_.Wait();  // every slice written everywhere
  }

  void Break(const std::string& why) { barrier_.Break(why); }

 private:
  Barrier barrier_;
  std::vector<const void*> inputs_;
  std::vector<std::string> what_;
};

class InProcessBackend final : public CollectiveBackend {
 public:
  explicit InProcessBackend(std::vector<int> devices) : devices_(std::move(devices)) {}
  ~InProcessBackend() override { Break("the in-process collective transport was replaced"); }

  std::string name() const override { return std::to_string(devices_.size()) + " devices in process"; }

  void AllReduce(int device, ReduceKind kind, ElementType type, void* data, int64_t count,
                 const ReplicaGroups& groups) override {
    auto [meeting, position] = Join(device, groups);
    meeting->AllReduce(position, data, "all-reduce of " + std::to_string(count) + " " + ElementTypeName(type), kind,
                       type, count);
  }

  void AllGather(int device, ElementType type, const void* in, int64_t count, void* out,
                 const ReplicaGroups& groups) override {
    const size_t bytes = count * ByteWidth(type);
    Meet(device, groups, in, "all-gather of " + std::to_string(count) + " " + ElementTypeName(type),
         [&](const std::vector<const void*>& inputs) {
      for (size_t m = 0; m < inputs.size(); ++m)
        std::memcpy(static_cast<char*>(out) + m * bytes, inputs[m], bytes);
    });
  }

  void AllToAll(int device, ElementType type, const std::vector<const void*>& send, const std::vector<int64_t>& send_counts,
                const std::vector<void*>& recv, const std::vector<int64_t>& recv_counts,
                const ReplicaGroups& groups) override {
    auto [meeting, position] = Join(device, groups);
    // A member posts its sends; each reads what every member addressed to it.
    struct Posted {
      const std::vector<const void*>* send;
      const std::vector<int64_t>* counts;
    } mine{&send, &send_counts};
    const size_t width = ByteWidth(type);
    std::string mismatch;  // thrown after the meeting: every member must leave it
    meeting->Meet(position, &mine, std::string("all-to-all of ") + ElementTypeName(type),
                  [&](const std::vector<const void*>& inputs) {
      for (size_t m = 0; m < inputs.size(); ++m) {
        const auto* from = static_cast<const Posted*>(inputs[m]);
        const int64_t count = from->counts->at(position);
        if (count != recv_counts.at(m)) {
          mismatch = "all-to-all: member " + std::to_string(m) + " sends " + std::to_string(count) +
                     " elements where " + std::to_string(recv_counts[m]) + " are expected";
        } else if (count > 0) {
          std::memcpy(recv[m], from->send->at(position), count * width);
        }
      }
    });
    if (!mismatch.empty()) throw std::logic_error(mismatch);
  }

  int64_t GroupRank(int device, const ReplicaGroups& groups) override {
    const int64_t replica = ReplicaOf(device);
    return PositionIn(GroupOf(replica, devices_.size(), groups), replica);
  }

  void Abort(const std::string& why) override { Break(why); }

  void Break(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = why;
    for (auto& [members, meeting] : meetings_) meeting->Break(why);
  }

 private:
  // The meeting of the group `device` belongs to, and its position there.
  std::pair<std::shared_ptr<Meeting>, size_t> Join(int device, const ReplicaGroups& groups) {
    const int64_t replica = ReplicaOf(device);
    std::vector<int64_t> group = GroupOf(replica, devices_.size(), groups);
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = meetings_[group];
    if (!slot) {
      slot = std::make_shared<Meeting>(group.size());
      if (!broken_.empty()) slot->Break(broken_);
    }
    return {slot, static_cast<size_t>(PositionIn(group, replica))};
  }

  void Meet(int device, const ReplicaGroups& groups, const void* input, const std::string& what,
            const std::function<void(const std::vector<const void*>&)>& read_all) {
    auto [meeting, position] = Join(device, groups);
    meeting->Meet(position, input, what, read_all);
  }

  int64_t ReplicaOf(int device) const {
    auto it = std::find(devices_.begin(), devices_.end(), device);
    if (it == devices_.end())
      throw std::invalid_argument("device " + std::to_string(device) + " is not one of the replicating devices");
    return it - devices_.begin();
  }

  const std::vector<int> devices_;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Meeting>> meetings_;
  std::string broken_;
};

std::mutex backend_mu;
std::shared_ptr<CollectiveBackend>& Backend() {
  static auto* backend = new std::shared_ptr<CollectiveBackend>(std::make_shared<SingleReplicaBackend>());
  return *backend;
}

thread_local int executing_device = 0;

}  // namespace

std::vector<int64_t> GroupOf(int64_t replica, int64_t replicas, const ReplicaGroups& groups) {
  if (groups.empty()) {
    std::vector<int64_t> all(replicas);
    for (int64_t r = 0; r < replicas; ++r) all[r] = r;
    return all;
  }
  const std::vector<int64_t>* found = nullptr;
  for (const auto& g : groups) {
    for (int64_t member : g) {
      if (member < 0 || member >= replicas)
        throw std::invalid_argument("replica group member " + std::to_string(member) +
                                    " does not exist: there are " + std::to_string(replicas) +
                                    " replicas");
    }
    if (std::count(g.begin(), g.end(), replica) == 0) continue;
    if (found) throw std::invalid_argument("replica " + std::to_string(replica) + " is in two replica groups");
    found = &g;
  }
  if (!found) throw std::invalid_argument("replica " + std::to_string(replica) + " is in no replica group");
  return *found;
}

int64_t PositionIn(const std::vector<int64_t>& group, int64_t replica) {
  return std::find(group.begin(), group.end(), replica) - group.begin();
}

void SetCollectiveBackend(std::shared_ptr<CollectiveBackend> backend) {
  std::lock_guard<std::mutex> lock(backend_mu);
  Backend() = backend ? std::move(backend) : std::make_shared<SingleReplicaBackend>();
}

std::shared_ptr<CollectiveBackend> GetCollectiveBackend() {
  std::lock_guard<std::mutex> lock(backend_mu);
  return Backend();
}

bool SingleReplicaCollectives() {
  std::lock_guard<std::mutex> lock(backend_mu);
  return dynamic_cast<const SingleReplicaBackend*>(Backend().get()) != nullptr;
}

std::shared_ptr<CollectiveBackend> MakeInProcessBackend(std::vector<int> devices) {
  if (devices.empty()) throw std::invalid_argument("an in-process collective needs at least one device");
  return std::make_shared<InProcessBackend>(std::move(devices));
}

void ReduceInto(ReduceKind kind, ElementType type, void* dst, const void* src, int64_t count) {
  switch (type) {
    case ElementType::kF32: return ReduceTyped(kind, static_cast<float*>(dst), static_cast<const float*>(src), count);
    case ElementType::kF64: return ReduceTyped(kind, static_cast<double*>(dst), static_cast<const double*>(src), count);
    case ElementType::kS64: return ReduceTyped(kind, static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), count);
    case ElementType::kS32: return ReduceTyped(kind, static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), count);
    case ElementType::kS16: return ReduceTyped(kind, static_cast<int16_t*>(dst), static_cast<const int16_t*>(src), count);
    case ElementType::kS8: return ReduceTyped(kind, static_cast<int8_t*>(dst), static_cast<const int8_t*>(src), count);
    case ElementType::kU8: return ReduceTyped(kind, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), count);
    default:
      throw std::invalid_argument(std::string("collectives on ") + ElementTypeName(type) + " are not supported");
  }
}

int ExecutingDevice() { return executing_device; }

ScopedExecutingDevice::ScopedExecutingDevice(int device) : previous_(executing_device) {
  executing_device = device;
}
ScopedExecutingDevice::~ScopedExecutingDevice() { executing_device = previous_; }

std::vector<int64_t> EncodeCollective(CollectiveOp op, ReduceKind kind, ElementType type,
                                      int64_t count, const ReplicaGroups& groups) {
  const size_t group_size = groups.empty() ? 0 : groups[0].size();
  std::vector<int64_t> spec = {static_cast<int64_t>(op), static_cast<int64_t>(kind),
                               static_cast<int64_t>(type), count,
                               static_cast<int64_t>(groups.size()), static_cast<int64_t>(group_size)};
  for (const auto& g : groups) {
    if (g.size() != group_size) throw std::invalid_argument("replica groups must all have the same size");
    spec.insert(spec.end(), g.begin(), g.end());
  }
  return spec;
}

void ReduceScatter(CollectiveBackend& backend, int device, ReduceKind kind, ElementType type, const void* in,
                   int64_t count, void* out, const ReplicaGroups& groups) {
  const int64_t members = static_cast<int64_t>(groups.empty() ? 0 : groups[0].size());
  if (members == 0 || count % members != 0)
    throw std::invalid_argument("reduce-scatter of " + std::to_string(count) + " elements over groups of " +
                                std::to_string(members));
  const int64_t chunk = count / members;
  const size_t bytes = chunk * ByteWidth(type);
  // Member m's chunk of every member goes to m, which reduces them in group order (the order an
  // all-reduce sums in, so both give the same bits).
  std::vector<char> received(bytes * members);
  std::vector<const void*> send(members);
  std::vector<void*> recv(members);
  for (int64_t m = 0; m < members; ++m) {
    send[m] = static_cast<const char*>(in) + m * bytes;
    recv[m] = received.data() + m * bytes;
  }
  const std::vector<int64_t> counts(members, chunk);
  backend.AllToAll(device, type, send, counts, recv, counts, groups);
  std::memcpy(out, received.data(), bytes);
  for (int64_t m = 1; m < members; ++m) ReduceInto(kind, type, out, received.data() + m * bytes, chunk);
}

void RunCollective(const int64_t* spec, const void* in, void* out) {
  auto op = static_cast<CollectiveOp>(spec[0]);
  auto kind = static_cast<ReduceKind>(spec[1]);
  auto type = static_cast<ElementType>(spec[2]);
  const int64_t count = spec[3];
  ReplicaGroups groups(spec[4]);
  for (int64_t g = 0; g < spec[4]; ++g) groups[g].assign(spec + 6 + g * spec[5], spec + 6 + (g + 1) * spec[5]);
  std::shared_ptr<CollectiveBackend> backend = GetCollectiveBackend();
  const int device = ExecutingDevice();
  const size_t bytes = count * ByteWidth(type);
  TXLA_TIMED("CollectiveTime");
  // What the collective delivers to this replica (an all-gather: every member's piece).
  static metrics::Counter* delivered = metrics::GetCounter("CollectiveBytes");
  delivered->Add(static_cast<int64_t>(op == CollectiveOp::kAllGather ? bytes * std::max<int64_t>(spec[5], 1) : bytes));
  switch (op) {
    case CollectiveOp::kAllReduce:
      metrics::GetCounter("CollectiveAllReduce")->Add(1);
      if (out != in) std::memmove(out, in, bytes);
      backend->AllReduce(device, kind, type, out, count, groups);
      return;
    case CollectiveOp::kAllGather: {
      metrics::GetCounter("CollectiveAllGather")->Add(1);
      // A buffer plan may place the output over the input it no longer needs afterwards.
      const char* from = static_cast<const char*>(in);
      const char* to = static_cast<const char*>(out);
      std::vector<char> copy;
      if (from < to + bytes * std::max<int64_t>(spec[5], 1) && to < from + bytes) {
        copy.assign(from, from + bytes);
        in = copy.data();
      }
      backend->AllGather(device, type, in, count, out, groups);
      return;
    }
    case CollectiveOp::kReduceScatter: {
      metrics::GetCounter("CollectiveReduceScatter")->Add(1);
      if (groups.empty()) throw std::invalid_argument("reduce-scatter needs explicit replica groups");
      ReduceScatter(*backend, device, kind, type, in, count, out, groups);
      return;
    }
  }
  throw std::invalid_argument("unknown collective " + std::to_string(spec[0]));
}

}  // namespace txla::runtime
