// The collectives as operators: txla::all_reduce, txla::all_gather, txla::reduce_scatter (their
// schemas: txla_ops.cc).
//
// On xla tensors they are recorded into the graph like any table op (ir/op_table.cc) and lowered
// to HLO all-reduce / all-gather / reduce-scatter, which compiled code runs through the
// runtime's transport (runtime/collectives.h) when execution reaches them. The CPU kernels below
// are what the op-by-op interpreter runs for them: the same transport, on host tensors.
//
// Replica groups travel flattened (TorchScript schemas have no int[][]): `groups` holds the
// groups one after another, each `group_size` long; empty means one group of all replicas.
//
// `token` orders collectives: every replica must run them in the same order, and two
// collectives that do not depend on each other could otherwise be scheduled either way round
// (replicas whose graphs differ slightly, a constant here or there, would then disagree). The
// Python layer passes a piece of the previous collective's result, so the graph runs them in the
// order they were traced, as PyTorch/XLA's all-reduce token does.
#include <torch/library.h>

#include <stdexcept>

#include "ir/shape.h"
#include "runtime/collectives.h"

namespace txla::aten {
namespace {

using runtime::CollectiveOp;

runtime::ReplicaGroups Unflatten(c10::IntArrayRef flat, int64_t group_size) {
  runtime::ReplicaGroups groups;
  if (flat.empty()) return groups;
  TORCH_CHECK(group_size > 0 && flat.size() % group_size == 0, "replica groups: ", flat.size(),
              " members do not split into groups of ", group_size);
  for (size_t k = 0; k < flat.size(); k += group_size)
    groups.emplace_back(flat.begin() + k, flat.begin() + k + group_size);
  return groups;
}

runtime::ReduceKind ToReduceKind(int64_t reduce_type) {
  TORCH_CHECK(reduce_type >= 0 && reduce_type <= 3, "unknown reduce type ", reduce_type);
  return static_cast<runtime::ReduceKind>(reduce_type);
}

// Gathers and scatters work on dimension 0 of a contiguous tensor; `dim` is moved there first.
at::Tensor Run(const char* name, CollectiveOp op, runtime::ReduceKind kind, const at::Tensor& self,
               int64_t dim, c10::IntArrayRef groups, int64_t group_size) {
  const bool along = op != CollectiveOp::kAllReduce;
  if (along) dim = c10::maybe_wrap_dim(dim, self.dim());
  at::Tensor in = (along ? self.movedim(dim, 0) : self).contiguous();
  at::Tensor out;
  if (op == CollectiveOp::kAllReduce) {
    out = in.clone();
  } else {
    std::vector<int64_t> sizes = in.sizes().vec();
    sizes[0] = op == CollectiveOp::kAllGather ? sizes[0] * group_size : sizes[0] / group_size;
    out = at::empty(sizes, in.options());
  }
  try {
    std::vector<int64_t> spec = runtime::EncodeCollective(
        op, kind, ir::ToElementType(in.scalar_type()), in.numel(), Unflatten(groups, group_size));
    runtime::RunCollective(spec.data(), in.data_ptr(), out.data_ptr());
  } catch (const std::exception& e) {
    TORCH_CHECK(false, name, ": ", e.what());
  }
  return along ? out.movedim(0, dim).contiguous() : out;
}

at::Tensor AllReduce(const at::Tensor& self, int64_t reduce_type, c10::IntArrayRef groups,
                     int64_t group_size, const c10::optional<at::Tensor>&) {
  return Run("all_reduce", CollectiveOp::kAllReduce, ToReduceKind(reduce_type), self, 0, groups,
             group_size);
}

at::Tensor AllGather(const at::Tensor& self, int64_t dim, c10::IntArrayRef groups, int64_t group_size,
                     const c10::optional<at::Tensor>&) {
  return Run("all_gather", CollectiveOp::kAllGather, runtime::ReduceKind::kSum, self, dim, groups,
             group_size);
}

at::Tensor ReduceScatter(const at::Tensor& self, int64_t reduce_type, int64_t dim,
                         c10::IntArrayRef groups, int64_t group_size, const c10::optional<at::Tensor>&) {
  return Run("reduce_scatter", CollectiveOp::kReduceScatter, ToReduceKind(reduce_type), self, dim,
             groups, group_size);
}

}  // namespace

TORCH_LIBRARY_IMPL(txla, CPU, m) {
  m.impl("all_reduce", TORCH_FN(AllReduce));
  m.impl("all_gather", TORCH_FN(AllGather));
  m.impl("reduce_scatter", TORCH_FN(ReduceScatter));
}

}  // namespace txla::aten
