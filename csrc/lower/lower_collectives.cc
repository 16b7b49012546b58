// Collectives: txla::all_reduce / all_gather / reduce_scatter (csrc/aten/collective_ops.cc) to
// HLO all-reduce / all-gather / reduce-scatter. Gathering and scattering happen along dimension
// 0 (contiguous blocks); any other dimension is transposed there and back around the collective.
// A token argument (the previous collective's, see collective_ops.cc) becomes a second operand:
// it only orders the collectives.
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

std::vector<std::vector<int64_t>> ReplicaGroups(LoweringContext& c, const ir::Node& n, size_t groups_arg) {
  std::vector<int64_t> flat = IntList(c.ConstArg(n, groups_arg));
  int64_t size = c.ConstArg(n, groups_arg + 1).toInt();
  std::vector<std::vector<int64_t>> groups;
  for (size_t k = 0; size > 0 && k < flat.size(); k += size)
    groups.emplace_back(flat.begin() + k, flat.begin() + k + size);
  return groups;
}

RK ReduceKindArg(LoweringContext& c, const ir::Node& n, size_t arg) {
  switch (c.ConstArg(n, arg).toInt()) {  // runtime::ReduceKind's numbering
    case 0: return RK::kSum;
    case 1: return RK::kProd;
    case 2: return RK::kMin;
    case 3: return RK::kMax;
    default: throw NotLowered("an unknown reduce type");
  }
}

// The collective's operands: its input, then the ordering token when there is one.
std::vector<Instruction*> WithToken(LoweringContext& c, const ir::Node& n, Instruction* x, size_t token_arg) {
  if (c.IsNone(n, token_arg)) return {x};
  return {x, c.Operand(n, token_arg)};
}

// Moves `dim` to the front: the permutation and its inverse.
std::pair<std::vector<int64_t>, std::vector<int64_t>> ToFront(int64_t dim, int64_t rank) {
  std::vector<int64_t> perm{dim}, inverse(rank);
  for (int64_t k = 0; k < rank; ++k)
    if (k != dim) perm.push_back(k);
  for (int64_t k = 0; k < rank; ++k) inverse[perm[k]] = k;
  return {perm, inverse};
}

// all-gather (no reducer) or reduce-scatter along `dim`.
Instruction* Along(LoweringContext& c, const ir::Node& n, Opcode op, Instruction* x, int64_t dim,
                   hlo::Attributes attrs, size_t token_arg) {
  const int64_t rank = x->shape().rank();
  if (rank == 0) throw NotLowered("a collective along a dimension of a 0-dim tensor");
  dim = WrapDim(dim, rank);
  auto [perm, inverse] = ToFront(dim, rank);
  Instruction* front = dim == 0 ? x : c.Transpose(x, perm);
  const int64_t members = static_cast<int64_t>(attrs.replica_groups.at(0).size());
  std::vector<int64_t> dims = front->shape().dims;
  dims[0] = op == Opcode::kAllGather ? dims[0] * members : dims[0] / members;
  attrs.dimensions = {0};
  Instruction* out = c.Add(op, hlo::Shape::Array(x->shape().type, dims), WithToken(c, n, front, token_arg), attrs);
  return dim == 0 ? out : c.Transpose(out, inverse);
}

Outs AllReduce(LoweringContext& c, const ir::Node& n) {  // all_reduce(self, reduce_type, groups, group_size)
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  a.called = {c.ReducerComputation(ReduceKindArg(c, n, 1), x->shape().type)};
  a.replica_groups = ReplicaGroups(c, n, 2);
  return {c.Add(Opcode::kAllReduce, x->shape(), WithToken(c, n, x, 4), a)};
}

Outs AllGather(LoweringContext& c, const ir::Node& n) {  // all_gather(self, dim, groups, group_size)
  hlo::Attributes a;
  a.replica_groups = ReplicaGroups(c, n, 2);
  if (a.replica_groups.empty()) throw NotLowered("all_gather without explicit replica groups");
  return {Along(c, n, Opcode::kAllGather, c.Operand(n, 0), c.ConstArg(n, 1).toInt(), a, 4)};
}

Outs ReduceScatter(LoweringContext& c, const ir::Node& n) {  // reduce_scatter(self, reduce_type, dim, groups, group_size)
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  a.called = {c.ReducerComputation(ReduceKindArg(c, n, 1), x->shape().type)};
  a.replica_groups = ReplicaGroups(c, n, 3);
  if (a.replica_groups.empty()) throw NotLowered("reduce_scatter without explicit replica groups");
  return {Along(c, n, Opcode::kReduceScatter, x, c.ConstArg(n, 2).toInt(), a, 5)};
}

// custom_sharding(self, sharding): XLA's `Sharding` custom call, which the SPMD partitioner
// consumes (a program that is not partitioned cannot run it).
Outs CustomSharding(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  a.custom_call_target = hlo::CustomCallTarget::kSharding;
  a.sharding = hlo::Sharding::Parse(c.ConstArg(n, 1).toStringRef());
  return {c.Add(Opcode::kCustomCall, x->shape(), {x}, a)};
}

// spmd_full_to_shard_shape / spmd_shard_to_full_shape(self, sharding, sizes): XLA's custom
// calls around a manual region; the first's result is manual, the second's laid out as given.
Outs ManualRegionBoundary(LoweringContext& c, const ir::Node& n, hlo::CustomCallTarget target) {
  Instruction* x = c.Operand(n, 0);
  hlo::Attributes a;
  a.custom_call_target = target;
  a.sharding = target == hlo::CustomCallTarget::kSpmdFullToShardShape
                   ? hlo::Sharding::Manual()
                   : hlo::Sharding::Parse(c.ConstArg(n, 1).toStringRef());
  return {c.Add(Opcode::kCustomCall, hlo::Shape::Array(x->shape().type, c.ConstArg(n, 2).toIntVector()), {x}, a)};
}

Outs FullToShardShape(LoweringContext& c, const ir::Node& n) {
  return ManualRegionBoundary(c, n, hlo::CustomCallTarget::kSpmdFullToShardShape);
}

Outs ShardToFullShape(LoweringContext& c, const ir::Node& n) {
  return ManualRegionBoundary(c, n, hlo::CustomCallTarget::kSpmdShardToFullShape);
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(txla_all_reduce, AllReduce)
TXLA_LOWER(txla_all_gather, AllGather)
TXLA_LOWER(txla_reduce_scatter, ReduceScatter)
TXLA_LOWER(txla_custom_sharding, CustomSharding)
TXLA_LOWER(txla_spmd_full_to_shard_shape, FullToShardShape)
TXLA_LOWER(txla_spmd_shard_to_full_shape, ShardToFullShape)

}  // namespace txla::lower
