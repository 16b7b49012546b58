// The closed set of our custom calls, declared once. A row is one target: its enum, the name
// HLO text gives it (custom_call_target="..."), the support-table routine that computes it
// (compiler/codegen/support_abi.h has one slot per element type, `<routine>_f32` and so on; `loop`
// where the emitter writes the computation as a kernel of its own), and the geometry the call is
// given (compiler/codegen/emit_library_calls.cc: one function per kind). Lowering builds the calls,
// the compiler expands the last two columns; no other layer names a target.
#pragma once

#include <string_view>

namespace txla::hlo {

// V(enum, "custom_call_target", routine, geometry)
#define TXLA_CUSTOM_CALL_TARGETS(V)                                                                       \
  /* the forward convolution with the layer's bias as a third operand (kConvolution has none) */       \
  V(kConv2dBias, "txla.conv2d_bias", conv2d, Conv)                                                       \
  V(kConv2dBackwardInput, "txla.conv2d_backward_input", conv2d_backward_input, Conv)                     \
  V(kConv2dBackwardFilter, "txla.conv2d_backward_filter", conv2d_backward_filter, Conv)                  \
  /* max pooling's argmax (s64 positions in the plane), its gradient from them or from the input */    \
  V(kMaxPool2dIndices, "txla.max_pool2d_indices", max_pool2d_indices, Pool)                              \
  V(kMaxPool2dBackward, "txla.max_pool2d_backward", max_pool2d_backward, Pool)                           \
  V(kMaxPool2dBackwardFromInput, "txla.max_pool2d_backward_from_input", max_pool2d_backward_from_input,  \
    Pool)                                                                                                \
  /* dimensions={d}; index=1 for descending */                                                          \
  V(kSortIndices, "txla.sort_indices", sort_indices, Sort)                                               \
  /* (input_gates, w_hh, b_hh, h0, c0) and the gradient's (grad_h, grad_hn, grad_cn, w_hh, h0, c0, */    \
  /* forward); dimensions={0}: the layer runs from the last step */                                     \
  V(kLstmLayer, "txla.lstm_layer", rnn_layer, Recurrent)                                                 \
  V(kLstmLayerBackward, "txla.lstm_layer_backward", rnn_layer_backward, Recurrent)                       \
  V(kGruLayer, "txla.gru_layer", rnn_layer, Recurrent)                                                   \
  V(kGruLayerBackward, "txla.gru_layer_backward", rnn_layer_backward, Recurrent)                         \
  /* (q, k, v) [B, H, ., .], q and k scaled: [B, H, L, Ev + 1], each query's output and its */          \
  /* logsumexp; index=1 for the causal mask */                                                          \
  V(kAttention, "txla.attention", attention, Attention)                                                  \
  /* running scans along dimensions={d} */                                                              \
  V(kCumsum, "txla.cumsum", loop, Scan)                                                                  \
  V(kCumprod, "txla.cumprod", loop, Scan)                                                                \
  V(kCumlogsumexp, "txla.cumlogsumexp", loop, Scan)                                                      \
  V(kCummaxIndices, "txla.cummax_indices", loop, Scan)                                                   \
  V(kCumminIndices, "txla.cummin_indices", loop, Scan)                                                  \
  /* SPMD (compiler/spmd): an annotation the partitioner consumes (XLA's names), and the */             \
  /* resharding it writes: a tiled value gathered whole, a whole value cut to this device's tile, */   \
  /* tiles exchanged into another tiling and partial sums reduce-scattered (operand_sharding= the */  \
  /* layout moved from, dimensions= the whole value's; replica_groups= the partial sums' groups) */    \
  V(kSharding, "Sharding", partitioner, Partitioner)                                                     \
  V(kSpmdFullToShardShape, "SPMDFullToShardShape", partitioner, Partitioner)                             \
  V(kSpmdShardToFullShape, "SPMDShardToFullShape", partitioner, Partitioner)                             \
  V(kSpmdAllGather, "txla.spmd_all_gather", reshard, Reshard)                                            \
  V(kSpmdShard, "txla.spmd_shard", reshard, Reshard)                                                     \
  V(kSpmdExchange, "txla.spmd_exchange", reshard, Reshard)                                               \
  V(kSpmdReduceScatter, "txla.spmd_reduce_scatter", reshard, Reshard)

enum class CustomCallTarget {
  kNone,  // not a custom call
#define TXLA_CUSTOM_CALL_ENUM(e, name, routine, geometry) e,
  TXLA_CUSTOM_CALL_TARGETS(TXLA_CUSTOM_CALL_ENUM)
#undef TXLA_CUSTOM_CALL_ENUM
};

std::string_view CustomCallTargetName(CustomCallTarget target);
// Throws std::invalid_argument for a target that is not ours.
CustomCallTarget ParseCustomCallTarget(std::string_view name);

}  // namespace txla::hlo
