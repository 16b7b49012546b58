#include "compiler/spmd/spmd_partitioner.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "compiler/spmd/op_rules.h"

namespace txla::compiler::spmd {
namespace {

using hlo::CustomCallTarget;
using hlo::Instruction;
using hlo::Opcode;

class Partitioner {
 public:
  Partitioner(hlo::Module& module, int64_t devices, std::vector<SpmdPartitioner::Reshard>* inserted)
      : module_(module), c_(*module.entry()), devices_(devices), inserted_(inserted) {}

  void Run() {
    const std::vector<Instruction*> order = c_.instructions();
    for (Instruction* i : order) full_[i] = i->shape();
    for (Instruction* i : order) Partition(i);
    c_.SortTopologically();
  }

 private:
  TileMap MapOf(const Instruction* i) const {
    auto known = layout_.find(i);
    if (known != layout_.end()) return known->second;
    const hlo::Shape& s = full_.at(i);
    if (!i->attrs().sharding)
      throw std::logic_error("spmd-partitioner: " + i->name() + " has no sharding (run sharding-propagation first)");
    return TileMap::Of(*i->attrs().sharding, s.rank(), devices_);
  }

  hlo::Sharding ShardingOf(const TileMap& m, const Instruction* at) const {
    std::optional<hlo::Sharding> s = m.ToSharding();
    if (!s) throw std::logic_error("spmd-partitioner: a layout of " + at->name() + " has no sharding syntax");
    return *s;
  }

  static hlo::Shape WithDims(const hlo::Shape& s, std::vector<int64_t> dims) {
    return hlo::Shape::Array(s.type, std::move(dims));
  }

  Instruction* AddCustomCall(CustomCallTarget target, hlo::Shape shape, Instruction* operand,
                             const hlo::Sharding& sharding) {
    hlo::Attributes a;
    a.custom_call_target = target;
    a.sharding = sharding;
    return c_.Add(Opcode::kCustomCall, std::move(shape), {operand}, a);
  }

  void Count(const std::string& kind, const hlo::Shape& received) {
    inserted_->push_back({kind, received.element_count() * static_cast<int64_t>(runtime::ByteWidth(received.type)),
                          why_});
  }

  // A whole value `value` computed again at `to`'s tiles, when it is a broadcast (of a scalar, a
  // bias) or elementwise over such: cheaper than computing it whole to cut a tile out of it
  // (GSPMD reaches the same by propagating the user's sharding backwards). nullptr otherwise.
  Instruction* Localize(Instruction* value, const TileMap& to, int depth = 0) {
    if (depth > 4 || value->shape().is_tuple) return nullptr;
    const hlo::Shape& full = full_.at(value);
    const hlo::Shape local = WithDims(full, LocalDims(full.dims, to.tiles));
    // `value` again over `operands`, at the tile (its whole-value sharding dropped).
    auto again = [&](std::vector<Instruction*> operands) {
      hlo::Attributes a = value->attrs();
      a.sharding.reset();
      return c_.Add(value->opcode(), local, std::move(operands), a);
    };
    if (value->opcode() == Opcode::kBroadcast) {
      const auto& dims = value->attrs().dimensions;
      const Instruction* op = value->operand(0);
      for (size_t k = 0; k < dims.size(); ++k)
        if (to.tiles[dims[k]] > 1 && full_.at(op).dims[k] != full.dims[dims[k]]) return nullptr;
      const TileMap want = Project(to, dims);  // the operand's tiles under the new ones
      Instruction* operand = value->operand(0);
      const TileMap have = MapOf(operand);
      if (have != want) operand = Reshard(operand, full_.at(operand), have, want);
      return again({operand});
    }
    if (value->opcode() == Opcode::kIota) {  // the same in every tile along an untiled dimension
      if (to.tiles[value->attrs().index] > 1) return nullptr;
      return again({});
    }
    if (hlo::IsElementwise(value->opcode())) {
      std::vector<Instruction*> operands;
      for (Instruction* op : value->operands()) {
        if (full_.at(op).rank() == 0) {
          operands.push_back(op);
          continue;
        }
        if (!MapOf(op).replicated()) return nullptr;
        Instruction* local_op = Localize(op, to, depth + 1);
        if (local_op == nullptr) return nullptr;
        operands.push_back(local_op);
      }
      return again(std::move(operands));
    }
    return nullptr;
  }

  // `value` (a local value of the full shape `full`, laid out as `from`) laid out as `to`.
  Instruction* Reshard(Instruction* value, const hlo::Shape& full, const TileMap& from, const TileMap& to) {
    if (from == to) return value;
    // A broadcast is made again at the new tiles from its (small) operand, whatever its layout.
    if (from.replicated() || value->opcode() == Opcode::kBroadcast)
      if (Instruction* local = Localize(value, to)) return local;
    if (!from.replicated() && !to.replicated()) return Exchange(value, full, from, to);
    if (!from.replicated()) {
      value = AddCustomCall(CustomCallTarget::kSpmdAllGather, full, value, ShardingOf(from, value));
      Count("all-gather", full);
    }
    if (!to.replicated()) {
      value = AddCustomCall(CustomCallTarget::kSpmdShard, WithDims(full, LocalDims(full.dims, to.tiles)), value,
                            ShardingOf(to, value));
      Count("shard", value->shape());
    }
    return value;
  }

  // A tiled value moved to another tiling: each device receives just the parts of its new piece
  // it lacks (runtime::ExchangeBoxes), a collective-permute when they come from one other device
  // (the same tiles on other devices), else an all-to-all.
  Instruction* Exchange(Instruction* value, const hlo::Shape& full, const TileMap& from, const TileMap& to) {
    const runtime::Layout a = LayoutOf(from, full.dims), b = LayoutOf(to, full.dims);
    int64_t most = 0, most_sources = 0;
    for (int64_t dst = 0; dst < devices_; ++dst) {
      int64_t received = 0, sources = 0;
      for (int64_t src = 0; src < devices_; ++src) {
        if (src == dst) continue;
        int64_t count = 0;
        for (const runtime::Box& box : runtime::ExchangeBoxes(full.dims, a, b, src, dst)) count += box.count();
        received += count;
        sources += count > 0;
      }
      most = std::max(most, received);
      most_sources = std::max(most_sources, sources);
    }
    hlo::Attributes attrs;
    attrs.custom_call_target = CustomCallTarget::kSpmdExchange;
    attrs.sharding = ShardingOf(to, value);
    attrs.operand_sharding = ShardingOf(from, value);
    attrs.dimensions = full.dims;
    Instruction* moved = c_.Add(Opcode::kCustomCall, WithDims(full, b.local), {value}, attrs);
    inserted_->push_back({most_sources <= 1 ? "collective-permute" : "all-to-all",
                          most * static_cast<int64_t>(runtime::ByteWidth(full.type)), why_});
    return moved;
  }

  // Partial sums of `value` (each device's piece of `from`, the same piece on every member of
  // a group) reduced over `groups`, every device keeping its piece of `to`: a reduce-scatter,
  // when each device's piece of `to` lies within its piece of `from`. nullptr otherwise.
  Instruction* ReduceScatter(Instruction* value, const hlo::Shape& full, const TileMap& from, const TileMap& to,
                             const std::vector<std::vector<int64_t>>& groups) {
    if (to.replicated()) return nullptr;
    const runtime::Layout a = LayoutOf(from, full.dims), b = LayoutOf(to, full.dims);
    for (const auto& g : groups)
      for (size_t m = 0; m < g.size(); ++m) {
        if (a.offsets[g[m]] != a.offsets[g[0]]) return nullptr;
        // Members keeping the same piece would each receive it whole: an all-reduce moves less.
        for (size_t e = 0; e < m; ++e)
          if (b.offsets[g[m]] == b.offsets[g[e]]) return nullptr;
      }
    for (int64_t d = 0; d < devices_; ++d)
      for (size_t k = 0; k < full.dims.size(); ++k) {
        const int64_t lo = b.offsets[d][k], hi = std::min(lo + b.local[k], full.dims[k]);
        if (hi > lo && (lo < a.offsets[d][k] || hi > a.offsets[d][k] + a.local[k])) return nullptr;
      }
    hlo::Attributes attrs;
    attrs.custom_call_target = CustomCallTarget::kSpmdReduceScatter;
    attrs.sharding = ShardingOf(to, value);
    attrs.operand_sharding = from.replicated() ? hlo::Sharding::Replicated() : ShardingOf(from, value);
    attrs.dimensions = full.dims;
    attrs.replica_groups = groups;
    const hlo::Shape local = WithDims(full, b.local);
    Instruction* scattered = c_.Add(Opcode::kCustomCall, local, {value}, attrs);
    // Each device receives its piece from every member of its group.
    Count("reduce-scatter", WithDims(full, {local.element_count() * static_cast<int64_t>(groups.at(0).size())}));
    return scattered;
  }

  hlo::Computation* CombinerComputation(Opcode op, hlo::ElementType type) {
    auto key = std::make_pair(op, type);
    auto it = combiners_.find(key);
    if (it != combiners_.end()) return it->second;
    hlo::Computation* c = module_.AddComputation(module_.UniqueName("spmd_combiner"));
    Instruction* a = c->AddParameter(0, hlo::Shape::Scalar(type));
    Instruction* b = c->AddParameter(1, hlo::Shape::Scalar(type));
    c->set_root(c->Add(op, hlo::Shape::Scalar(type), {a, b}));
    return combiners_[key] = c;
  }

  // Every use of `from` by `users` (and the root) now reads `to`.
  void Redirect(Instruction* from, Instruction* to, const std::vector<Instruction*>& users) {
    for (Instruction* u : users)
      for (size_t k = 0; k < u->operands().size(); ++k)
        if (u->operand(k) == from) u->ReplaceOperand(k, to);
    if (c_.root() == from) c_.set_root(to);
  }

  void Partition(Instruction* i) {
    if (i->opcode() == Opcode::kTuple) {  // outputs stay in their layouts: each device's tiles
      std::vector<hlo::Shape> parts;
      for (const Instruction* op : i->operands()) parts.push_back(op->shape());
      i->set_shape(hlo::Shape::Tuple(std::move(parts)));
      return;
    }
    if (i->opcode() == Opcode::kParameter) {
      const TileMap m = MapOf(i);
      i->set_shape(WithDims(i->shape(), LocalDims(i->shape().dims, m.tiles)));
      return;
    }
    const CustomCallTarget boundary = i->opcode() == Opcode::kCustomCall ? i->attrs().custom_call_target
                                                                          : CustomCallTarget::kNone;
    if (boundary == CustomCallTarget::kSpmdFullToShardShape || boundary == CustomCallTarget::kSpmdShardToFullShape) {
      PartitionManualBoundary(i);
      return;
    }
    std::vector<TileMap> have;
    std::vector<hlo::Shape> whole;
    for (const Instruction* op : i->operands()) {
      have.push_back(op->shape().is_tuple ? TileMap::Replicated(0, devices_) : MapOf(op));
      whole.push_back(full_.at(op));
    }
    const Plan plan = PlanInstruction(*i, have, whole, devices_);
    for (size_t k = 0; k < i->operands().size(); ++k) {
      Instruction* op = i->operand(k);
      if (op->shape().is_tuple) continue;
      why_ = "operand " + std::to_string(k) + " of " + i->name() + " (" + std::string(hlo::OpcodeName(i->opcode())) +
             (plan.local ? ")" : ", which has no partitioned form: it runs whole)");
      Instruction* brought = Reshard(op, full_.at(op), have[k], plan.operands[k]);
      if (brought != op) i->ReplaceOperand(k, brought);
    }
    const std::vector<Instruction*> users = i->users();
    if (!i->shape().is_tuple) i->set_shape(WithDims(i->shape(), LocalDims(i->shape().dims, plan.result.tiles)));
    Instruction* out = i;
    const CustomCallTarget target = i->attrs().custom_call_target;
    bool in_layout = i->shape().is_tuple;  // `out` is already in the layout i was given
    if (i->opcode() == Opcode::kCustomCall && target == CustomCallTarget::kSharding) {
      out = i->operand(0);  // the annotation has done its work: its operand is in its layout
    } else if (!plan.partial_groups.empty()) {
      const std::string what = i->name() + " (" + std::string(hlo::OpcodeName(i->opcode())) + ")";
      Instruction* scattered = nullptr;
      if (plan.combiner == Opcode::kAdd && !i->shape().is_tuple) {
        why_ = "partial sums of " + what + ", each device keeping its piece";
        scattered = ReduceScatter(i, full_.at(i), plan.result, MapOf(i), plan.partial_groups);
      }
      if (scattered) {
        out = scattered;
        in_layout = true;
      } else {
        hlo::Attributes a;
        a.called = {CombinerComputation(plan.combiner, i->shape().type)};
        a.replica_groups = plan.partial_groups;
        out = c_.Add(Opcode::kAllReduce, i->shape(), {i}, a);
        why_ = "partial sums of " + what;
        Count("all-reduce", i->shape());
      }
    }
    why_ = "the result of " + i->name() + " to the layout it was given";
    if (!in_layout) out = Reshard(out, full_.at(i), plan.result, MapOf(i));
    if (out != i) {
      // Later instructions read `out` where they read `i`: in i's layout, of i's full shape.
      // (A resharding custom call's own sharding attribute says what it gathers or cuts, so the
      // layout is kept aside rather than written over it.)
      full_[out] = full_.at(i);
      layout_.insert_or_assign(out, MapOf(i));
      Redirect(i, out, users);
    }
    if (out != i && i->users().empty() && c_.root() != i) c_.Remove(i);
  }

  // Entering a manual region (SPMDFullToShardShape) or leaving one (SPMDShardToFullShape): on
  // each device the value on both sides is the same piece, so the boundary becomes the identity
  // on the local buffer (a reshape to its own shape). Entering, the operand is brought to the
  // layout it was given; leaving, the manual piece must be the layout's piece.
  void PartitionManualBoundary(Instruction* i) {
    Instruction* op = i->operand(0);
    const bool entering = i->attrs().custom_call_target == CustomCallTarget::kSpmdFullToShardShape;
    if (entering && op->attrs().sharding && op->attrs().sharding->kind == hlo::Sharding::Kind::kManual)
      throw std::invalid_argument("spmd-partitioner: " + i->name() + " enters a manual region from a manual value");
    if (!entering && !(op->attrs().sharding && op->attrs().sharding->kind == hlo::Sharding::Kind::kManual))
      throw std::invalid_argument("spmd-partitioner: " + i->name() + " leaves a manual region from a value that is "
                                  "not manual");
    const std::vector<int64_t> piece =
        entering ? i->shape().dims : LocalDims(i->shape().dims, MapOf(i).tiles);
    if (op->shape().dims != piece)
      throw std::invalid_argument("spmd-partitioner: " + i->name() + ": each device's piece is " +
                                  hlo::Shape::Array(op->shape().type, op->shape().dims).ToString() +
                                  ", the manual region's is " + hlo::Shape::Array(op->shape().type, piece).ToString());
    Instruction* same = c_.Add(Opcode::kReshape, op->shape(), {op});
    full_[same] = full_.at(i);
    layout_.insert_or_assign(same, entering ? TileMap::Replicated(i->shape().rank(), devices_) : MapOf(i));
    const std::vector<Instruction*> users = i->users();  // Redirect changes i's users
    Redirect(i, same, users);
    if (i->users().empty() && c_.root() != i) c_.Remove(i);
  }

  hlo::Module& module_;
  hlo::Computation& c_;
  int64_t devices_;
  std::vector<SpmdPartitioner::Reshard>* inserted_;
  std::unordered_map<const Instruction*, hlo::Shape> full_;
  std::unordered_map<const Instruction*, TileMap> layout_;  // of values later instructions read instead
  std::map<std::pair<Opcode, hlo::ElementType>, hlo::Computation*> combiners_;
  std::string why_;  // what the resharding being inserted is for
};

}  // namespace

bool SpmdPartitioner::Run(hlo::Module& module) {
  inserted_.clear();
  Partitioner(module, devices_, &inserted_).Run();
  return true;
}

}  // namespace txla::compiler::spmd
