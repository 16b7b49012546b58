// A correction to PyTorch's functionalization for collectives (its 1.13 bugs, detach of a view
// and leaking in-place updates, were fixed here until torch 2.x fixed them; the tests that found
// them stay in test_lazy). The fast path for in-place ops is functional_inplace.cc.
//
// torch.distributed's ops (c10d::allreduce_, broadcast_, ...) carry no alias
// annotations, so functionalization's fallback treats them as functional: it hands the process
// group unwrapped tensors, the group writes its results into those behind the wrappers' back
// (views of them, such as DDP's gradient-bucket views, never see the update), and the work's
// result holds raw tensors that DDP then takes views of (as_strided below functionalization).
// These ops pass through functionalization untouched instead: the process group receives the
// user's (wrapped) tensors, and its in-place writes are functionalized like any other.
#include <torch/library.h>

namespace txla::aten {
namespace {

void PassThrough(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                 torch::jit::Stack* stack) {
  op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER,
                                                c10::DispatchKey::Functionalize),
                     stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(c10d, Functionalize, m) {
  for (const char* name : {"broadcast_", "allreduce_", "allgather_", "reduce_scatter_", "reduce_",
                           "gather_", "scatter_", "alltoall_", "send", "recv_"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&PassThrough>());
}

}  // namespace txla::aten
