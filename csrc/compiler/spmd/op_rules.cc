#include "compiler/spmd/op_rules.h"

#include <algorithm>

namespace txla::compiler::spmd {
namespace {

using hlo::Instruction;
using hlo::Opcode;

Plan Local(std::vector<TileMap> operands, TileMap result) {
  Plan p;
  p.local = true;
  p.operands = std::move(operands);
  p.result = std::move(result);
  return p;
}

int64_t TileCount(const TileMap& m) {
  int64_t n = 1;
  for (int64_t t : m.tiles) n *= t;
  return n;
}

// Elementwise: every operand of the result's rank on the layout of the most finely tiled one
// (the first of those): a bias broadcast over a batch-and-feature tiled product follows the
// product, never the other way round, which would gather the product.
Plan Elementwise(const Instruction& i, const std::vector<TileMap>& ops, int64_t devices) {
  const int64_t rank = i.shape().rank();
  TileMap target = TileMap::Replicated(rank, devices);
  for (const TileMap& m : ops)
    if (m.rank() == rank && TileCount(m) > TileCount(target)) target = m;
  std::vector<TileMap> want;
  for (const TileMap& m : ops) want.push_back(m.rank() == rank ? target : TileMap::Replicated(m.rank(), devices));
  return Local(std::move(want), target);
}

Plan Broadcast(const Instruction& i, const TileMap& op, const std::vector<int64_t>& from) {
  std::vector<int64_t> pick(i.shape().rank(), -1);
  const auto& dims = i.attrs().dimensions;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (from[k] != i.shape().dims[dims[k]] && op.tiles[k] > 1)
      return WholePlan(i, op.devices());  // a size-1 dimension stretched: not tile by tile
    pick[dims[k]] = static_cast<int64_t>(k);
  }
  return Local({op}, Project(op, pick));
}

Plan Transpose(const Instruction& i, const TileMap& op) {
  return Local({op}, Project(op, i.attrs().dimensions));
}

// Tiles survive a reshape in the dimensions it leaves alone: a common prefix and suffix.
Plan Reshape(const Instruction& i, const TileMap& op, const std::vector<int64_t>& from) {
  const auto& to = i.shape().dims;
  const size_t n = std::min(from.size(), to.size());
  size_t prefix = 0, suffix = 0;
  while (prefix < n && from[prefix] == to[prefix]) ++prefix;
  while (suffix < n - prefix && from[from.size() - 1 - suffix] == to[to.size() - 1 - suffix]) ++suffix;
  std::vector<int64_t> pick(to.size(), -1);
  for (size_t k = 0; k < prefix; ++k) pick[k] = static_cast<int64_t>(k);
  for (size_t k = 0; k < suffix; ++k)
    pick[to.size() - 1 - k] = static_cast<int64_t>(from.size() - 1 - k);
  for (int64_t d = 0; d < op.rank(); ++d) {
    const bool kept = static_cast<size_t>(d) < prefix || static_cast<size_t>(d) >= from.size() - suffix;
    if (op.tiles[d] > 1 && !kept) return WholePlan(i, op.devices());
  }
  return Local({op}, Project(op, pick));
}

// Batch and free dimensions keep their tiles; a tiled contracting dimension leaves partial sums
// (summed over the devices that hold the same output tile).
// `whole` (replicated) cut to `tiled`'s tiles in the paired dimensions (its own dims `mine`,
// tiled's `theirs`): a local slice, no communication, after which the two pair up.
TileMap Follow(const TileMap& whole, const std::vector<int64_t>& mine, const TileMap& tiled,
               const std::vector<int64_t>& theirs) {
  TileMap m = whole;
  for (size_t k = 0; k < mine.size(); ++k) {
    m.tiles[mine[k]] = tiled.tiles[theirs[k]];
    for (int64_t d = 0; d < m.devices(); ++d) m.coords[d][mine[k]] = tiled.coords[d][theirs[k]];
  }
  return m;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Plan PairedDot(const Instruction& i, const TileMap& lhs, const TileMap& rhs, const std::vector<int64_t>& ls);

// `m` whole in every dimension but `kept`.
TileMap WholeBut(const TileMap& m, const std::vector<int64_t>& kept) {
  TileMap out = m;
  for (int64_t d = 0; d < m.rank(); ++d) {
    if (std::find(kept.begin(), kept.end(), d) != kept.end()) continue;
    out.tiles[d] = 1;
    for (auto& c : out.coords) c[d] = 0;
  }
  return out;
}

// When one operand is whole, it follows the other's tiles in the batch and contracting
// dimensions (XLA's GSPMD does the same): a dot with a sharded contraction then sums partial
// products instead of gathering the sharded operand. When both operands' free dimensions are
// split over the same devices (fc1's rows and fc2's columns over one mesh axis), the result
// cannot be split over both: the smaller operand's free dimensions are gathered.
Plan Dot(const Instruction& i, const TileMap& lhs, const TileMap& rhs, const std::vector<hlo::Shape>& shapes) {
  const hlo::DotDims& dd = i.attrs().dot;
  const auto& ls = shapes[0].dims;
  const auto lpaired = Concat(dd.lhs_batch, dd.lhs_contracting), rpaired = Concat(dd.rhs_batch, dd.rhs_contracting);
  Plan plan = rhs.replicated() && !lhs.replicated()   ? PairedDot(i, lhs, Follow(rhs, rpaired, lhs, lpaired), ls)
              : lhs.replicated() && !rhs.replicated() ? PairedDot(i, Follow(lhs, lpaired, rhs, rpaired), rhs, ls)
                                                      : PairedDot(i, lhs, rhs, ls);
  if (!plan.local || plan.result.ToSharding()) return plan;
  if (shapes[1].element_count() <= shapes[0].element_count())
    plan = PairedDot(i, plan.operands[0], WholeBut(plan.operands[1], rpaired), ls);
  else
    plan = PairedDot(i, WholeBut(plan.operands[0], lpaired), plan.operands[1], ls);
  return plan.local && plan.result.ToSharding() ? plan : WholePlan(i, lhs.devices());
}

Plan PairedDot(const Instruction& i, const TileMap& lhs, const TileMap& rhs, const std::vector<int64_t>& ls) {
  const hlo::DotDims& dd = i.attrs().dot;
  const int64_t devices = lhs.devices();
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end())
        out.push_back(d);
    return out;
  };
  const auto lfree = free_dims(lhs.rank(), dd.lhs_batch, dd.lhs_contracting);
  const auto rfree = free_dims(rhs.rank(), dd.rhs_batch, dd.rhs_contracting);
  auto paired = [&](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (lhs.tiles[a[k]] != rhs.tiles[b[k]]) return false;
      for (int64_t d = 0; d < devices; ++d)
        if (lhs.coords[d][a[k]] != rhs.coords[d][b[k]]) return false;
    }
    return true;
  };
  if (!paired(dd.lhs_batch, dd.rhs_batch) || !paired(dd.lhs_contracting, dd.rhs_contracting))
    return WholePlan(i, devices);
  bool partial = false;
  for (int64_t c : dd.lhs_contracting) {
    if (lhs.tiles[c] == 1) continue;
    if (ls[c] % lhs.tiles[c] != 0) return WholePlan(i, devices);  // padding would be summed
    partial = true;
  }
  TileMap result;
  std::vector<std::vector<int64_t>> key(devices), dup(devices);
  auto take = [&](const TileMap& m, const std::vector<int64_t>& dims) {
    for (int64_t k : dims) {
      result.tiles.push_back(m.tiles[k]);
      for (int64_t d = 0; d < devices; ++d) key[d].push_back(m.coords[d][k]);
    }
  };
  take(lhs, dd.lhs_batch);
  take(lhs, lfree);
  take(rhs, rfree);
  result.coords = key;
  Plan p = Local({lhs, rhs}, result);
  if (partial) {
    for (int64_t d = 0; d < devices; ++d)
      for (int64_t c : dd.lhs_contracting) dup[d].push_back(lhs.coords[d][c]);
    p.partial_groups = GroupDevices(devices, key, dup);
  }
  return p;
}

// The reducer's root applied to its two parameters: the op an all-reduce can finish.
bool Combiner(const Instruction& reduce, Opcode* op) {
  const auto& called = reduce.attrs().called;
  if (called.size() != 1) return false;
  const Instruction* root = called[0]->root();
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum: break;
    default: return false;
  }
  if (root->operand(0)->opcode() != Opcode::kParameter || root->operand(1)->opcode() != Opcode::kParameter)
    return false;
  *op = root->opcode();
  return true;
}

Plan Reduce(const Instruction& i, const std::vector<TileMap>& ops, const std::vector<int64_t>& full) {
  const int64_t devices = ops[0].devices();
  Opcode combiner;
  if (i.operands().size() != 2 || i.shape().is_tuple || !Combiner(i, &combiner)) return WholePlan(i, devices);
  const TileMap& in = ops[0];
  const auto& dims = i.attrs().dimensions;
  std::vector<int64_t> kept;
  bool partial = false;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
      kept.push_back(d);
    } else if (in.tiles[d] > 1) {
      if (full[d] % in.tiles[d] != 0) return WholePlan(i, devices);
      partial = true;
    }
  }
  Plan p = Local({in, TileMap::Replicated(0, devices)}, Project(in, kept));
  if (partial) {
    std::vector<std::vector<int64_t>> dup(devices);
    for (int64_t d = 0; d < devices; ++d)
      for (int64_t r : dims) dup[d].push_back(in.coords[d][r]);
    p.partial_groups = GroupDevices(devices, p.result.coords, dup);
    p.combiner = combiner;
  }
  return p;
}

// A window that does not reach across a tiled dimension (size 1, stride 1, no padding there:
// max pooling over the spatial dimensions of a batch-split activation) runs on each tile.
Plan ReduceWindow(const Instruction& i, const std::vector<TileMap>& ops) {
  const int64_t devices = ops[0].devices();
  if (i.operands().size() != 2 || i.shape().is_tuple) return WholePlan(i, devices);
  const TileMap& in = ops[0];
  const auto& window = i.attrs().window;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.tiles[d] == 1) continue;
    const hlo::WindowDim& w = window.at(d);
    if (w.size != 1 || w.stride != 1 || w.pad_lo != 0 || w.pad_hi != 0 || w.lhs_dilation != 1)
      return WholePlan(i, devices);
  }
  return Local({in, TileMap::Replicated(0, devices)}, in);
}

// Layers that compute each example of a batch on its own (convolutions, pooling, and their input
// gradients) run on a device's examples: the operands that carry the batch (in dimension 0)
// keep its split, the others (weights) come whole. A weight's gradient sums over the batch:
// `batch_result` false makes the local results partial sums over the devices' examples.
Plan BatchLocal(const Instruction& i, const std::vector<TileMap>& ops, const std::vector<bool>& batched,
                bool batch_result, int64_t batch) {
  const int64_t devices = ops[0].devices();
  const TileMap* lead = nullptr;
  for (size_t k = 0; k < ops.size(); ++k)
    if (batched[k] && ops[k].rank() > 0 && ops[k].tiles[0] > 1) {
      lead = &ops[k];
      break;
    }
  if (lead == nullptr) return WholePlan(i, devices);
  if (!batch_result && batch % lead->tiles[0] != 0)
    return WholePlan(i, devices);  // padded examples would add to the sums
  auto batch_only = [&](int64_t rank) {
    std::vector<int64_t> pick(rank, -1);
    pick[0] = 0;
    return Project(*lead, pick);
  };
  std::vector<TileMap> want;
  for (size_t k = 0; k < ops.size(); ++k)
    want.push_back(batched[k] ? batch_only(ops[k].rank()) : TileMap::Replicated(ops[k].rank(), devices));
  const int64_t rank = i.shape().rank();
  if (batch_result) return Local(std::move(want), batch_only(rank));
  Plan p = Local(std::move(want), TileMap::Replicated(rank, devices));
  std::vector<std::vector<int64_t>> key(devices), dup(devices);
  for (int64_t d = 0; d < devices; ++d) dup[d] = {lead->coords[d][0]};
  p.partial_groups = GroupDevices(devices, key, dup);
  return p;
}

Plan Convolution(const Instruction& i, const std::vector<TileMap>& ops, int64_t batch) {
  const hlo::ConvDims& c = i.attrs().conv;
  if (c.input_batch != 0 || c.output_batch != 0) return WholePlan(i, ops[0].devices());
  return BatchLocal(i, ops, {true, false}, true, batch);
}

Plan LibraryCall(const Instruction& i, const std::vector<TileMap>& ops, int64_t batch) {
  using hlo::CustomCallTarget;
  switch (i.attrs().custom_call_target) {
    case CustomCallTarget::kConv2dBias: return BatchLocal(i, ops, {true, false, false}, true, batch);       // x, w, b
    case CustomCallTarget::kConv2dBackwardInput: return BatchLocal(i, ops, {true, false}, true, batch);     // dy, w
    case CustomCallTarget::kConv2dBackwardFilter: return BatchLocal(i, ops, {true, true}, false, batch);    // dy, x
    case CustomCallTarget::kMaxPool2dIndices: return BatchLocal(i, ops, {true}, true, batch);               // x
    case CustomCallTarget::kAttention: return BatchLocal(i, ops, {true, true, true}, true, batch);         // q, k, v
    case CustomCallTarget::kMaxPool2dBackward:                                                       // dy, idx
    case CustomCallTarget::kMaxPool2dBackwardFromInput: return BatchLocal(i, ops, {true, true}, true, batch);  // dy, x
    case CustomCallTarget::kSharding:
      if (i.attrs().sharding) {
        TileMap m = TileMap::Of(*i.attrs().sharding, i.shape().rank(), ops[0].devices());
        return Local({m}, m);
      }
      return WholePlan(i, ops[0].devices());
    default: return WholePlan(i, ops[0].devices());
  }
}

}  // namespace

Plan WholePlan(const Instruction& i, int64_t devices) {
  Plan p;
  for (const Instruction* op : i.operands())
    p.operands.push_back(TileMap::Replicated(op->shape().is_tuple ? 0 : op->shape().rank(), devices));
  p.result = TileMap::Replicated(i.shape().is_tuple ? 0 : i.shape().rank(), devices);
  return p;
}

Plan PlanInstruction(const Instruction& i, const std::vector<TileMap>& ops, const std::vector<hlo::Shape>& shapes,
                     int64_t devices) {
  if (i.shape().is_tuple) return WholePlan(i, devices);
  for (const Instruction* op : i.operands())
    if (op->shape().is_tuple) return WholePlan(i, devices);
  const Opcode op = i.opcode();
  if (hlo::IsElementwise(op)) return Elementwise(i, ops, devices);
  // The examples in a batch (dimension 0 of the first operand), for per-example layers.
  const int64_t batch = shapes.empty() || shapes[0].dims.empty() ? 0 : shapes[0].dims[0];
  switch (op) {
    case Opcode::kBroadcast: return Broadcast(i, ops[0], shapes[0].dims);
    case Opcode::kTranspose: return Transpose(i, ops[0]);
    case Opcode::kReshape: return Reshape(i, ops[0], shapes[0].dims);
    case Opcode::kDot: return Dot(i, ops[0], ops[1], shapes);
    case Opcode::kReduce: return Reduce(i, ops, shapes[0].dims);
    case Opcode::kReduceWindow: return ReduceWindow(i, ops);
    case Opcode::kConvolution: return Convolution(i, ops, batch);
    case Opcode::kCustomCall: return LibraryCall(i, ops, batch);
    default: return WholePlan(i, devices);
  }
}

}  // namespace txla::compiler::spmd
