// The schemas of our own operators (namespace txla), declared once for every file that
// implements them: collectives (collective_ops.cc), the max-pooling gradient read from the input
// (max_pool_autograd.cc), linear's gradients (linear_autograd.cc) and recurrent layers
// (recurrent_layers.cc). On xla tensors each is
// recorded through the op table like an aten op (ir/op_table.cc) and lowered in lower/.
#include <torch/library.h>

TORCH_LIBRARY(txla, m) {
  // reduce_type: 0 sum, 1 product, 2 min, 3 max (runtime::ReduceKind).
  m.def("all_reduce(Tensor self, int reduce_type, int[] groups, int group_size, Tensor? token=None) -> Tensor");
  m.def("all_gather(Tensor self, int dim, int[] groups, int group_size, Tensor? token=None) -> Tensor");
  m.def("reduce_scatter(Tensor self, int reduce_type, int dim, int[] groups, int group_size, "
        "Tensor? token=None) -> Tensor");
  // max_pool2d's gradient with each window's maximum found in `self` again, as
  // max_pool2d_with_indices_backward with the indices max_pool2d_with_indices(self, ...) gives.
  // One LSTM (cell 0) or GRU (cell 1) layer's recurrence in one direction over a sequence, and
  // its gradient: the layouts of compiler/library/recurrent.h. What nn.LSTM and nn.GRU record on
  // xla tensors (recurrent_layers.cc).
  m.def("rnn_layer(Tensor input_gates, Tensor w_hh, Tensor b_hh, Tensor h0, Tensor c0, int cell, "
        "bool reverse) -> Tensor");
  m.def("rnn_layer_backward(Tensor grad_h, Tensor grad_hn, Tensor grad_cn, Tensor w_hh, Tensor h0, "
        "Tensor c0, Tensor forward, int cell, bool reverse) -> Tensor");
  // SPMD: `self` laid out over the devices as `sharding` says (XLA syntax): the partitioner's
  // annotation (a `Sharding` custom call); the value itself is unchanged.
  m.def("custom_sharding(Tensor self, str sharding) -> Tensor");
  // SPMD's manual regions: each device's piece of `self` (laid out as `sharding`) as a value of
  // the piece's shape, which the program then works on per device; and back, the pieces as the
  // whole value laid out as `sharding`. XLA's SPMDFullToShardShape / SPMDShardToFullShape.
  m.def("spmd_full_to_shard_shape(Tensor self, str sharding, int[] shard_shape) -> Tensor");
  m.def("spmd_shard_to_full_shape(Tensor self, str sharding, int[] full_shape) -> Tensor");
  m.def("max_pool2d_backward_from_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
        "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode) -> Tensor");
  // aten::linear as one op (linear_autograd.cc; aten's is a composite, decomposed before any
  // backend sees it), and its gradients: grad_output @ weight, grad_output^T @ input over
  // every leading dimension, and grad_output summed to the bias; an undefined tensor for each
  // that output_mask leaves out.
  m.def("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor");
  m.def("linear_backward(Tensor grad_output, Tensor input, Tensor weight, bool[3] output_mask) "
        "-> (Tensor, Tensor, Tensor)");
}
