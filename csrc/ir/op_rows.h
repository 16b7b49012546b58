// Every op the device records lazily, one row each, declared once. Elementwise ops are grouped
// by family; the backward of an op sits beside it. Columns:
//   V(identifier, "qualified name", shape rule, fallback predicate, written-args rule,
//     OpFlag bits, in-place overload)
// op_table.cc expands the rows into the table (shape rules: ir/shape_rules.h; the predicates are
// op_table.cc's); lower/lowering_table.h into a lowering rule per row, by identifier, which the
// op's family file defines (TXLA_LOWER); op_names.h into a constant per name
// (op::aten_add_Tensor), through which kernels name ops, so a misspelt op does not compile.
#pragma once

#define TXLA_OP_ROWS(V)                                                                                               \
  /* Elementwise, unary. */                                                                                           \
  V(aten_abs, "aten::abs", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_neg, "aten::neg", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_exp, "aten::exp", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_log, "aten::log", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_log2, "aten::log2", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_log10, "aten::log10", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_log1p, "aten::log1p", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_expm1, "aten::expm1", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_sqrt, "aten::sqrt", SameAsFirst, nullptr, nullptr, 0, "sqrt_")                                               \
  V(aten_rsqrt, "aten::rsqrt", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_sin, "aten::sin", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_sinc, "aten::sinc", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_cos, "aten::cos", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_tan, "aten::tan", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_asin, "aten::asin", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_acos, "aten::acos", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_atan, "aten::atan", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_sinh, "aten::sinh", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_cosh, "aten::cosh", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_tanh, "aten::tanh", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_erf, "aten::erf", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_erfc, "aten::erfc", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_floor, "aten::floor", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_ceil, "aten::ceil", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_round, "aten::round", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_trunc, "aten::trunc", SameAsFirst, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_frac, "aten::frac", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_sign, "aten::sign", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_sgn, "aten::sgn", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_reciprocal, "aten::reciprocal", SameAsFirst, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_bitwise_not, "aten::bitwise_not", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_logical_not, "aten::logical_not", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_clamp, "aten::clamp", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                                   \
  V(aten_clamp_Tensor, "aten::clamp.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                     \
  V(aten_clamp_min, "aten::clamp_min", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_clamp_max, "aten::clamp_max", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  /* The exponent is part of the graph: ATen computes x**2, x**3, x**-2, x**0.5, x**-0.5 and */                       \
  /* x**-1 without pow, and so does the lowering (lower_ops.cc), which must know it. */                               \
  V(aten_pow_Tensor_Scalar, "aten::pow.Tensor_Scalar", PowTensorScalar, nullptr, nullptr, kConstantScalars, nullptr)  \
  V(aten_pow_Tensor_Tensor, "aten::pow.Tensor_Tensor", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_pow_Scalar, "aten::pow.Scalar", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  /* Activations and their backwards. */                                                                              \
  V(aten_relu, "aten::relu", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_threshold, "aten::threshold", SameAsFirst, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_threshold_backward, "aten::threshold_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                   \
  V(aten_sigmoid, "aten::sigmoid", SameAsFirst, nullptr, nullptr, 0, nullptr)                                         \
  V(aten_sigmoid_backward, "aten::sigmoid_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                       \
  V(aten_tanh_backward, "aten::tanh_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                             \
  V(aten_gelu, "aten::gelu", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_gelu_backward, "aten::gelu_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                             \
  V(aten_silu, "aten::silu", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_leaky_relu, "aten::leaky_relu", SameAsFirst, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_leaky_relu_backward, "aten::leaky_relu_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                 \
  V(aten__prelu_kernel, "aten::_prelu_kernel", nullptr, nullptr, nullptr, 0, nullptr)                                 \
  V(aten__prelu_kernel_backward, "aten::_prelu_kernel_backward", nullptr, nullptr, nullptr, 0, nullptr)               \
  V(aten_elu, "aten::elu", SameAsFirst, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_elu_backward, "aten::elu_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                               \
  V(aten_hardtanh, "aten::hardtanh", SameAsFirst, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_hardtanh_backward, "aten::hardtanh_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                     \
  V(aten_softplus, "aten::softplus", SameAsFirst, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_softplus_backward, "aten::softplus_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                     \
  V(aten_hardsigmoid, "aten::hardsigmoid", SameAsFirst, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_hardsigmoid_backward, "aten::hardsigmoid_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)               \
  V(aten_hardswish, "aten::hardswish", SameAsFirst, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_hardswish_backward, "aten::hardswish_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)                   \
  V(aten_mish, "aten::mish", SameAsFirst, nullptr, nullptr, 0, nullptr)                                               \
  /* Elementwise, binary and ternary. */                                                                              \
  V(aten_add_Tensor, "aten::add.Tensor", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "add_.Tensor")              \
  V(aten_add_Scalar, "aten::add.Scalar", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "add_.Scalar")              \
  V(aten_sub_Tensor, "aten::sub.Tensor", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "sub_.Tensor")              \
  V(aten_sub_Scalar, "aten::sub.Scalar", AddSubTensor, nullptr, nullptr, kScalarKindOnly, nullptr)                    \
  V(aten_rsub_Tensor, "aten::rsub.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                       \
  V(aten_rsub_Scalar, "aten::rsub.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                       \
  V(aten_mul_Tensor, "aten::mul.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "mul_.Tensor")        \
  V(aten_mul_Scalar, "aten::mul.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "mul_.Scalar")        \
  V(aten_div_Tensor, "aten::div.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "div_.Tensor")        \
  V(aten_div_Tensor_mode, "aten::div.Tensor_mode", DivTensorMode, nullptr, nullptr, kScalarKindOnly, nullptr)         \
  V(aten_div_Scalar, "aten::div.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "div_.Scalar")        \
  V(aten_maximum, "aten::maximum", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, nullptr)                    \
  V(aten_minimum, "aten::minimum", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, nullptr)                    \
  V(aten_remainder_Tensor, "aten::remainder.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_remainder_Scalar, "aten::remainder.Scalar", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_fmod_Tensor, "aten::fmod.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_fmod_Scalar, "aten::fmod.Scalar", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_atan2, "aten::atan2", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_copysign_Tensor, "aten::copysign.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten_copysign_Scalar, "aten::copysign.Scalar", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten_eq_Tensor, "aten::eq.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_eq_Scalar, "aten::eq.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_ne_Tensor, "aten::ne.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_ne_Scalar, "aten::ne.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_lt_Tensor, "aten::lt.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_lt_Scalar, "aten::lt.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_le_Tensor, "aten::le.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_le_Scalar, "aten::le.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_gt_Tensor, "aten::gt.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_gt_Scalar, "aten::gt.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_ge_Tensor, "aten::ge.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_ge_Scalar, "aten::ge.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)                           \
  V(aten_logical_and, "aten::logical_and", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_logical_or, "aten::logical_or", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_logical_xor, "aten::logical_xor", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_bitwise_and_Tensor, "aten::bitwise_and.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_bitwise_or_Tensor, "aten::bitwise_or.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_bitwise_xor_Tensor, "aten::bitwise_xor.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_where_self, "aten::where.self", WhereSelf, nullptr, nullptr, kScalarKindOnly, nullptr)                       \
  V(aten_addcmul, "aten::addcmul", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "addcmul_")                 \
  V(aten_addcdiv, "aten::addcdiv", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "addcdiv_")                 \
  V(aten_lerp_Scalar, "aten::lerp.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "lerp_.Scalar")     \
  V(aten_lerp_Tensor, "aten::lerp.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, nullptr)            \
  V(aten_masked_fill_Scalar, "aten::masked_fill.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)         \
  V(aten_masked_fill_Tensor, "aten::masked_fill.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly, nullptr)         \
  /* Reductions and scans. */                                                                                         \
  V(aten_sum, "aten::sum", Sum, nullptr, nullptr, 0, nullptr)                                                         \
  V(aten_sum_dim_IntList, "aten::sum.dim_IntList", Sum, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_mean, "aten::mean", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_mean_dim, "aten::mean.dim", nullptr, nullptr, nullptr, 0, nullptr)                                           \
  V(aten_prod, "aten::prod", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_prod_dim_int, "aten::prod.dim_int", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_amax, "aten::amax", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_amin, "aten::amin", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_max, "aten::max", Max, nullptr, nullptr, 0, nullptr)                                                         \
  V(aten_min, "aten::min", Min, nullptr, nullptr, 0, nullptr)                                                         \
  V(aten_max_dim, "aten::max.dim", Max, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_min_dim, "aten::min.dim", Min, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_argmax, "aten::argmax", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_argmin, "aten::argmin", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_var_correction, "aten::var.correction", nullptr, nullptr, nullptr, 0, nullptr)                               \
  V(aten_std_correction, "aten::std.correction", nullptr, nullptr, nullptr, 0, nullptr)                               \
  V(aten_var_mean_correction, "aten::var_mean.correction", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_std_mean_correction, "aten::std_mean.correction", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_linalg_vector_norm, "aten::linalg_vector_norm", nullptr, nullptr, nullptr, kConstantScalars, nullptr)        \
  V(aten_logsumexp, "aten::logsumexp", nullptr, nullptr, nullptr, 0, nullptr)                                         \
  V(aten_renorm, "aten::renorm", nullptr, nullptr, nullptr, kConstantScalars, nullptr)                                \
  V(aten_aminmax, "aten::aminmax", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_count_nonzero, "aten::count_nonzero", nullptr, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_count_nonzero_dim_IntList, "aten::count_nonzero.dim_IntList", nullptr, nullptr, nullptr, 0, nullptr)         \
  V(aten_norm_ScalarOpt_dim, "aten::norm.ScalarOpt_dim", nullptr, nullptr, nullptr, kConstantScalars, nullptr)        \
  V(aten_any, "aten::any", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_any_dim, "aten::any.dim", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_all, "aten::all", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_all_dim, "aten::all.dim", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_cumsum, "aten::cumsum", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_cumprod, "aten::cumprod", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  /* no Meta kernel */                                                                                                \
  V(aten__logcumsumexp, "aten::_logcumsumexp", SameAsFirst, nullptr, nullptr, 0, nullptr)                             \
  V(aten_cummax, "aten::cummax", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_cummin, "aten::cummin", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_sort, "aten::sort", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_sort_stable, "aten::sort.stable", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_topk, "aten::topk", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  /* Adaptive max pooling (lower_adaptive_max.cc): windows of unequal sizes. */                                       \
  V(aten_adaptive_max_pool2d, "aten::adaptive_max_pool2d", nullptr, NotFloatingFirst, nullptr, 0, nullptr)            \
  V(aten_adaptive_max_pool2d_backward, "aten::adaptive_max_pool2d_backward", nullptr, nullptr, nullptr, 0, nullptr)   \
  /* F.grid_sample on images (lower_grid_sample.cc): bilinear and nearest. */                                         \
  V(aten_grid_sampler_2d, "aten::grid_sampler_2d", nullptr, BicubicGridSample, nullptr, 0, nullptr)                   \
  V(aten_grid_sampler_2d_backward, "aten::grid_sampler_2d_backward", nullptr, BicubicGridSample, nullptr, 0, nullptr) \
  /* Sliding-window patches (lower_patches.cc): F.unfold and F.fold, each the other's gradient. */                    \
  V(aten_im2col, "aten::im2col", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_col2im, "aten::col2im", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  /* Order statistics and binary search (lower_sorted.cc). */                                                         \
  V(aten_kthvalue, "aten::kthvalue", nullptr, UnsortableFirst, nullptr, 0, nullptr)                                   \
  V(aten_mode, "aten::mode", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_median, "aten::median", nullptr, EmptyIntegerOrUnsortable, nullptr, 0, nullptr)                              \
  V(aten_nanmedian, "aten::nanmedian", nullptr, EmptyIntegerOrUnsortable, nullptr, 0, nullptr)                        \
  V(aten_median_dim, "aten::median.dim", nullptr, UnsortableFirst, nullptr, 0, nullptr)                               \
  V(aten_nanmedian_dim, "aten::nanmedian.dim", nullptr, UnsortableFirst, nullptr, 0, nullptr)                         \
  V(aten_searchsorted_Tensor, "aten::searchsorted.Tensor", nullptr, UnsortableSearch, nullptr, 0, nullptr)            \
  V(aten_searchsorted_Scalar, "aten::searchsorted.Scalar", nullptr, UnsortableSearch, nullptr, 0, nullptr)            \
  V(aten_bucketize_Tensor, "aten::bucketize.Tensor", nullptr, UnsortableSearch, nullptr, 0, nullptr)                  \
  V(aten_bucketize_Scalar, "aten::bucketize.Scalar", BucketizeScalar, UnsortableSearch, nullptr, 0, nullptr)          \
  /* Matrix products. */                                                                                              \
  V(aten_mm, "aten::mm", Mm, nullptr, nullptr, 0, nullptr)                                                            \
  /* linear as one node each way (aten/linear_autograd.cc), not t, view, mm, view and add. */                         \
  V(txla_linear, "txla::linear", Linear, LinearOutsideLowering, nullptr, 0, nullptr)                                  \
  V(txla_linear_backward, "txla::linear_backward", LinearBackward, LinearBackwardOutsideLowering, nullptr, 0, nullptr) \
  V(aten_addmm, "aten::addmm", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_bmm, "aten::bmm", MatrixProduct, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_baddbmm, "aten::baddbmm", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_dot, "aten::dot", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_mv, "aten::mv", nullptr, nullptr, nullptr, 0, nullptr)                                                       \
  V(aten_addmv, "aten::addmv", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  /* Neural-network layers and losses. */                                                                             \
  V(aten_convolution, "aten::convolution", Convolution, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_convolution_backward, "aten::convolution_backward", ConvolutionBackward, nullptr, nullptr, 0, nullptr)       \
  V(aten_native_batch_norm, "aten::native_batch_norm", BatchNorm, nullptr, BatchNormRunningStats, 0, nullptr)         \
  /* What AOTAutograd (torch.compile) decomposes batch norm to: native_batch_norm's arguments. */                     \
  V(aten__native_batch_norm_legit, "aten::_native_batch_norm_legit", BatchNorm, nullptr, BatchNormRunningStats, 0, nullptr) \
  V(aten_native_batch_norm_backward, "aten::native_batch_norm_backward", BatchNormBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_native_layer_norm, "aten::native_layer_norm", LayerNorm, nullptr, nullptr, 0, nullptr)                       \
  V(aten_native_layer_norm_backward, "aten::native_layer_norm_backward", LayerNormBackward, nullptr, nullptr, 0, nullptr) \
  /* ATen's kernel for devices without their own is a composite over views: recorded whole. */                        \
  V(aten_native_group_norm, "aten::native_group_norm", GroupNorm, nullptr, nullptr, 0, nullptr)                       \
  V(aten_native_group_norm_backward, "aten::native_group_norm_backward", GroupNormBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_max_pool2d_with_indices, "aten::max_pool2d_with_indices", nullptr, nullptr, nullptr, 0, nullptr)             \
  V(aten_max_pool2d_with_indices_backward, "aten::max_pool2d_with_indices_backward", nullptr, nullptr, nullptr, 0, nullptr) \
  /* recorded by max_pool2d's autograd */                                                                             \
  V(txla_max_pool2d_backward_from_input, "txla::max_pool2d_backward_from_input", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  /* recorded by LSTM's and GRU's autograd (aten/recurrent_layers.cc) */                                              \
  V(txla_rnn_layer, "txla::rnn_layer", RnnLayer, nullptr, nullptr, 0, nullptr)                                        \
  V(txla_rnn_layer_backward, "txla::rnn_layer_backward", RnnLayerBackward, nullptr, nullptr, 0, nullptr)              \
  V(aten_avg_pool2d, "aten::avg_pool2d", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_avg_pool2d_backward, "aten::avg_pool2d_backward", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten__adaptive_avg_pool2d, "aten::_adaptive_avg_pool2d", nullptr, nullptr, nullptr, 0, nullptr)                   \
  V(aten__adaptive_avg_pool2d_backward, "aten::_adaptive_avg_pool2d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_avg_pool3d, "aten::avg_pool3d", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_avg_pool3d_backward, "aten::avg_pool3d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)          \
  V(aten__adaptive_avg_pool3d, "aten::_adaptive_avg_pool3d", nullptr, nullptr, nullptr, 0, nullptr)                   \
  V(aten__adaptive_avg_pool3d_backward, "aten::_adaptive_avg_pool3d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten__softmax, "aten::_softmax", Softmax, nullptr, nullptr, 0, nullptr)                                           \
  V(aten__softmax_backward_data, "aten::_softmax_backward_data", SoftmaxBackward, nullptr, nullptr, 0, nullptr)       \
  /* scaled_dot_product_attention's softmax: one node, not the five of its composite kernel. */                       \
  V(aten__safe_softmax, "aten::_safe_softmax", SafeSoftmax, nullptr, nullptr, 0, nullptr)                             \
  V(aten__log_softmax, "aten::_log_softmax", Softmax, nullptr, nullptr, 0, nullptr)                                   \
  V(aten__log_softmax_backward_data, "aten::_log_softmax_backward_data", SoftmaxBackward, nullptr, nullptr, 0, nullptr) \
  /* scaled_dot_product_attention as one node each way (aten/attention_autograd.cc), not the */                       \
  /* ~20 forward and ~35 backward ops of its math path; the same math (lower_attention.cc). */                        \
  V(aten__scaled_dot_product_flash_attention_for_cpu, "aten::_scaled_dot_product_flash_attention_for_cpu",            \
    FusedAttention, FusedAttentionOutsideLowering, nullptr, 0, nullptr)                                               \
  V(aten__scaled_dot_product_flash_attention_for_cpu_backward,                                                        \
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward", FusedAttentionBackward,                             \
    FusedAttentionBackwardOutsideLowering, nullptr, 0, nullptr)                                                       \
  /* p (1 or 2) chooses the formula; the margin rides along as a constant. */                                         \
  V(aten_multi_margin_loss, "aten::multi_margin_loss", MultiMarginLoss, nullptr, nullptr, kConstantScalars, nullptr)  \
  V(aten_multi_margin_loss_backward, "aten::multi_margin_loss_backward", LikeSelfOfBackward, nullptr, nullptr, kConstantScalars, nullptr) \
  V(aten_nll_loss_forward, "aten::nll_loss_forward", NllLossForward, nullptr, nullptr, 0, nullptr)                    \
  V(aten_nll_loss_backward, "aten::nll_loss_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)              \
  V(aten_nll_loss2d_forward, "aten::nll_loss2d_forward", NllLoss2dForward, nullptr, nullptr, 0, nullptr)              \
  V(aten_nll_loss2d_backward, "aten::nll_loss2d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)          \
  V(aten_mse_loss, "aten::mse_loss", nullptr, nullptr, nullptr, 0, nullptr)                                           \
  V(aten_mse_loss_backward, "aten::mse_loss_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)              \
  V(aten_binary_cross_entropy, "aten::binary_cross_entropy", nullptr, nullptr, nullptr, 0, nullptr)                   \
  V(aten_binary_cross_entropy_backward, "aten::binary_cross_entropy_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_smooth_l1_loss, "aten::smooth_l1_loss", nullptr, nullptr, nullptr, 0, nullptr)                               \
  V(aten_smooth_l1_loss_backward, "aten::smooth_l1_loss_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)  \
  V(aten_huber_loss, "aten::huber_loss", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_huber_loss_backward, "aten::huber_loss_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)          \
  V(aten_embedding, "aten::embedding", nullptr, nullptr, nullptr, 0, nullptr)                                         \
  V(aten_embedding_dense_backward, "aten::embedding_dense_backward", EmbeddingDenseBackward, nullptr, nullptr, 0, nullptr) \
  /* Collectives between replicas (csrc/aten/collective_ops.cc defines them). */                                      \
  V(txla_all_reduce, "txla::all_reduce", LikeFirst, nullptr, nullptr, kCollective, nullptr)                           \
  V(txla_all_gather, "txla::all_gather", AllGather, nullptr, nullptr, kCollective, nullptr)                           \
  V(txla_reduce_scatter, "txla::reduce_scatter", ReduceScatter, nullptr, nullptr, kCollective, nullptr)               \
  /* SPMD's sharding annotation (csrc/aten/sharding_ops.cc). */                                                      \
  V(txla_custom_sharding, "txla::custom_sharding", LikeFirst, nullptr, nullptr, 0, nullptr)                           \
  V(txla_spmd_full_to_shard_shape, "txla::spmd_full_to_shard_shape", FirstWithSizesOfArg2, nullptr, nullptr, 0, nullptr) \
  V(txla_spmd_shard_to_full_shape, "txla::spmd_shard_to_full_shape", FirstWithSizesOfArg2, nullptr, nullptr, 0, nullptr) \
  /* Random numbers: each node draws from its own seed, fixed when the node is traced. */                             \
  V(aten_native_dropout, "aten::native_dropout", NativeDropout, nullptr, nullptr, kSeedsDefaultGenerator, nullptr)    \
  V(aten_native_dropout_backward, "aten::native_dropout_backward", SameAsFirst, nullptr, nullptr, 0, nullptr)         \
  V(aten_bernoulli_p, "aten::bernoulli.p", SameAsFirst, nullptr, nullptr, 0, "bernoulli_.float")                      \
  V(aten_bernoulli_Tensor, "aten::bernoulli.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_bernoulli, "aten::bernoulli", nullptr, nullptr, nullptr, 0, nullptr)                                         \
  V(aten_normal_functional, "aten::normal_functional", SameAsFirst, nullptr, nullptr, 0, "normal_")                   \
  V(aten_uniform, "aten::uniform", SameAsFirst, nullptr, nullptr, 0, "uniform_")                                      \
  /* A random permutation: the sort order of uniform draws. */                                                        \
  V(aten_randperm, "aten::randperm", Randperm, nullptr, nullptr, kSeedsDefaultGenerator, nullptr)                     \
  V(aten_randperm_generator, "aten::randperm.generator", Randperm, nullptr, nullptr, 0, nullptr)                      \
  V(aten_random, "aten::random", SameAsFirst, nullptr, nullptr, 0, "random_")                                         \
  V(aten_random_from, "aten::random.from", RandomFrom, nullptr, nullptr, 0, "random_.from")                           \
  /* Views, as the copies functionalization turns them into. */                                                       \
  V(aten_view_copy, "aten::view_copy", ViewCopy, nullptr, nullptr, 0, nullptr)                                        \
  V(aten_view_copy_dtype, "aten::view_copy.dtype", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten__unsafe_view, "aten::_unsafe_view", ViewCopy, nullptr, nullptr, 0, nullptr)                                  \
  V(aten__reshape_alias_copy, "aten::_reshape_alias_copy", ViewCopy, nullptr, nullptr, 0, nullptr)                    \
  V(aten_slice_copy_Tensor, "aten::slice_copy.Tensor", SliceCopy, nullptr, nullptr, 0, nullptr)                       \
  V(aten_select_copy_int, "aten::select_copy.int", SelectCopy, nullptr, nullptr, 0, nullptr)                          \
  V(aten_transpose_copy_int, "aten::transpose_copy.int", TransposeCopy, nullptr, nullptr, kTransposingView | kInvolution, nullptr) \
  V(aten_t_copy, "aten::t_copy", TCopy, nullptr, nullptr, kTransposingView | kInvolution, nullptr)                    \
  V(aten_permute_copy, "aten::permute_copy", PermuteCopy, nullptr, nullptr, kTransposingView, nullptr)                \
  V(aten_expand_copy, "aten::expand_copy", ExpandCopy, nullptr, nullptr, 0, nullptr)                                  \
  V(aten_unsqueeze_copy, "aten::unsqueeze_copy", UnsqueezeCopy, nullptr, nullptr, 0, nullptr)                         \
  V(aten_squeeze_copy, "aten::squeeze_copy", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_squeeze_copy_dim, "aten::squeeze_copy.dim", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_diagonal_copy, "aten::diagonal_copy", nullptr, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_diag_embed, "aten::diag_embed", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_trace, "aten::trace", Trace, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_as_strided_copy, "aten::as_strided_copy", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten_unfold_copy, "aten::unfold_copy", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_split_copy_Tensor, "aten::split_copy.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_split_with_sizes_copy, "aten::split_with_sizes_copy", nullptr, nullptr, nullptr, 0, nullptr)                 \
  V(aten_unbind_copy_int, "aten::unbind_copy.int", nullptr, nullptr, nullptr, 0, nullptr)                             \
  /* Splits into fresh tensors (LSTM/GRU cells chunk their gates with them); ATen's kernel takes */                   \
  /* views below functionalization, so they are recorded whole and lowered as the copying split. */                   \
  V(aten_unsafe_split_Tensor, "aten::unsafe_split.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_unsafe_split_with_sizes, "aten::unsafe_split_with_sizes", nullptr, nullptr, nullptr, 0, nullptr)             \
  /* Backward ops that are composites over views and in-place writes in ATen: recorded whole, */                      \
  /* so they never run below functionalization on device tensors. */                                                  \
  V(aten_slice_backward, "aten::slice_backward", nullptr, nullptr, nullptr, 0, nullptr)                               \
  /* The inverses functionalization applies when a view is written to (x[1:3].add_(1)); also */                       \
  /* composites over views in ATen, so recorded whole. */                                                             \
  V(aten_slice_scatter, "aten::slice_scatter", LikeFirst, nullptr, nullptr, 0, nullptr)                               \
  V(aten_select_scatter, "aten::select_scatter", LikeFirst, nullptr, nullptr, 0, nullptr)                             \
  V(aten_diagonal_scatter, "aten::diagonal_scatter", LikeFirst, nullptr, nullptr, 0, nullptr)                         \
  V(aten_as_strided_scatter, "aten::as_strided_scatter", LikeFirst, nullptr, nullptr, 0, nullptr)                     \
  V(aten_select_backward, "aten::select_backward", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten_diagonal_backward, "aten::diagonal_backward", nullptr, nullptr, nullptr, 0, nullptr)                         \
  /* Resampling (lower_resample.cc). ATen's .vec overloads are composites that call these. */                         \
  V(aten_upsample_nearest1d, "aten::upsample_nearest1d", Upsample, nullptr, nullptr, 0, nullptr)                      \
  V(aten_upsample_nearest2d, "aten::upsample_nearest2d", Upsample, nullptr, nullptr, 0, nullptr)                      \
  V(aten_upsample_nearest3d, "aten::upsample_nearest3d", Upsample, nullptr, nullptr, 0, nullptr)                      \
  V(aten_upsample_nearest1d_backward, "aten::upsample_nearest1d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_nearest2d_backward, "aten::upsample_nearest2d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_nearest3d_backward, "aten::upsample_nearest3d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_nearest3d_vec, "aten::upsample_nearest3d.vec", UpsampleVec, nullptr, nullptr, 0, nullptr)           \
  V(aten_upsample_nearest3d_backward_vec, "aten::upsample_nearest3d_backward.vec", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_linear1d, "aten::upsample_linear1d", Upsample, nullptr, nullptr, 0, nullptr)                        \
  V(aten_upsample_bilinear2d, "aten::upsample_bilinear2d", Upsample, nullptr, nullptr, 0, nullptr)                    \
  V(aten_upsample_trilinear3d, "aten::upsample_trilinear3d", Upsample, nullptr, nullptr, 0, nullptr)                  \
  V(aten_upsample_linear1d_backward, "aten::upsample_linear1d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_bilinear2d_backward, "aten::upsample_bilinear2d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_upsample_trilinear3d_backward, "aten::upsample_trilinear3d_backward", UpsampleBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_reflection_pad1d, "aten::reflection_pad1d", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_reflection_pad2d, "aten::reflection_pad2d", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_reflection_pad3d, "aten::reflection_pad3d", nullptr, nullptr, nullptr, 0, nullptr)                           \
  V(aten_replication_pad1d, "aten::replication_pad1d", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_replication_pad2d, "aten::replication_pad2d", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_replication_pad3d, "aten::replication_pad3d", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_reflection_pad1d_backward, "aten::reflection_pad1d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_reflection_pad2d_backward, "aten::reflection_pad2d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_reflection_pad3d_backward, "aten::reflection_pad3d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_replication_pad1d_backward, "aten::replication_pad1d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_replication_pad2d_backward, "aten::replication_pad2d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_replication_pad3d_backward, "aten::replication_pad3d_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr) \
  V(aten_pixel_shuffle, "aten::pixel_shuffle", nullptr, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_pixel_unshuffle, "aten::pixel_unshuffle", nullptr, nullptr, nullptr, 0, nullptr)                             \
  /* Special functions, classification, shifts, small layers (lower_special.cc). */                                   \
  V(aten_isnan, "aten::isnan", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_isposinf, "aten::isposinf", nullptr, nullptr, nullptr, 0, nullptr)                                           \
  V(aten_isneginf, "aten::isneginf", nullptr, nullptr, nullptr, 0, nullptr)                                           \
  V(aten_nan_to_num, "aten::nan_to_num", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_lgamma, "aten::lgamma", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_digamma, "aten::digamma", nullptr, nullptr, nullptr, 0, nullptr)                                             \
  V(aten_acosh, "aten::acosh", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_asinh, "aten::asinh", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_atanh, "aten::atanh", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_erfinv, "aten::erfinv", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  /* Modified Bessel functions (lower_bessel.cc); integer inputs compute in the default float. */                     \
  V(aten_i0, "aten::i0", nullptr, nullptr, nullptr, 0, nullptr)                                                       \
  V(aten_special_i0e, "aten::special_i0e", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_special_i1, "aten::special_i1", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_special_i1e, "aten::special_i1e", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_hypot, "aten::hypot", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_gcd, "aten::gcd", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_linalg_cross, "aten::linalg_cross", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_isin_Tensor_Tensor, "aten::isin.Tensor_Tensor", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_isin_Tensor_Scalar, "aten::isin.Tensor_Scalar", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_logit, "aten::logit", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_logit_backward, "aten::logit_backward", nullptr, nullptr, nullptr, 0, nullptr)                               \
  /* ATen's kernel is a composite over views (unsqueeze of an arange): recorded whole. */                             \
  V(aten_mvlgamma, "aten::mvlgamma", nullptr, nullptr, nullptr, 0, nullptr)                                           \
  V(aten_xlogy_Tensor, "aten::xlogy.Tensor", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_xlogy_Scalar_Self, "aten::xlogy.Scalar_Self", nullptr, nullptr, nullptr, 0, nullptr)                         \
  V(aten_xlogy_Scalar_Other, "aten::xlogy.Scalar_Other", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_logaddexp, "aten::logaddexp", nullptr, nullptr, nullptr, 0, nullptr)                                         \
  V(aten___lshift___Scalar, "aten::__lshift__.Scalar", BinaryElementwise, nullptr, nullptr, 0, nullptr)               \
  V(aten___lshift___Tensor, "aten::__lshift__.Tensor", BinaryElementwise, nullptr, nullptr, 0, nullptr)               \
  V(aten___rshift___Scalar, "aten::__rshift__.Scalar", BinaryElementwise, nullptr, nullptr, 0, nullptr)               \
  V(aten___rshift___Tensor, "aten::__rshift__.Tensor", BinaryElementwise, nullptr, nullptr, 0, nullptr)               \
  V(aten_bitwise_left_shift_Tensor, "aten::bitwise_left_shift.Tensor", BinaryElementwise, nullptr, nullptr, 0, nullptr) \
  V(aten_bitwise_right_shift_Tensor, "aten::bitwise_right_shift.Tensor", BinaryElementwise, nullptr, nullptr, 0, nullptr) \
  V(aten_softshrink, "aten::softshrink", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_softshrink_backward, "aten::softshrink_backward", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_hardshrink, "aten::hardshrink", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_hardshrink_backward, "aten::hardshrink_backward", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_glu, "aten::glu", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_glu_backward, "aten::glu_backward", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_log_sigmoid_forward, "aten::log_sigmoid_forward", nullptr, nullptr, nullptr, 0, nullptr)                     \
  V(aten_log_sigmoid_backward, "aten::log_sigmoid_backward", nullptr, nullptr, nullptr, 0, nullptr)                   \
  /* A composite over views in ATen; beta decides whether self is read at all: a constant. */                         \
  V(aten_addr, "aten::addr", nullptr, nullptr, nullptr, kConstantScalars, nullptr)                                    \
  V(aten__cdist_forward, "aten::_cdist_forward", CdistForward, nullptr, nullptr, 0, nullptr)                          \
  V(aten__cdist_backward, "aten::_cdist_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)                  \
  V(aten__pdist_forward, "aten::_pdist_forward", PdistForward, nullptr, nullptr, 0, nullptr)                          \
  V(aten__pdist_backward, "aten::_pdist_backward", LikeSelfOfBackward, nullptr, nullptr, 0, nullptr)                  \
  /* A composite over views (select of the base grid) in ATen: recorded whole. */                                     \
  V(aten_affine_grid_generator, "aten::affine_grid_generator", nullptr, nullptr, nullptr, 0, nullptr)                 \
  V(aten_floor_divide, "aten::floor_divide", BinaryElementwise, nullptr, nullptr, 0, nullptr)                         \
  /* Indexing, joining, reshuffling. */                                                                               \
  V(aten_cat, "aten::cat", Cat, nullptr, nullptr, 0, nullptr)                                                         \
  V(aten_stack, "aten::stack", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_index_select, "aten::index_select", nullptr, nullptr, nullptr, 0, nullptr)                                   \
  V(aten_gather, "aten::gather", Gather, nullptr, nullptr, 0, nullptr)                                                \
  V(aten_scatter_src, "aten::scatter.src", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_scatter_value, "aten::scatter.value", nullptr, nullptr, nullptr, 0, nullptr)                                 \
  V(aten_scatter_add, "aten::scatter_add", nullptr, nullptr, nullptr, 0, nullptr)                                     \
  V(aten_scatter_reduce_two, "aten::scatter_reduce.two", nullptr, nullptr, nullptr, 0, nullptr)                       \
  V(aten_index_Tensor, "aten::index.Tensor", nullptr, HasBooleanIndex, nullptr, kHostIndices, nullptr)                \
  V(aten_index_put, "aten::index_put", nullptr, IndexPutHasBooleanIndex, nullptr, kHostIndices, nullptr)              \
  V(aten_index_add, "aten::index_add", nullptr, nullptr, nullptr, 0, nullptr)                                         \
  V(aten_index_copy, "aten::index_copy", nullptr, nullptr, nullptr, 0, nullptr)                                       \
  V(aten_index_fill_int_Scalar, "aten::index_fill.int_Scalar", nullptr, nullptr, nullptr, 0, nullptr)                 \
  V(aten_index_fill_int_Tensor, "aten::index_fill.int_Tensor", nullptr, nullptr, nullptr, 0, nullptr)                 \
  V(aten_take, "aten::take", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_put, "aten::put", nullptr, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_flip, "aten::flip", Flip, nullptr, nullptr, 0, nullptr)                                                      \
  V(aten_rot90, "aten::rot90", nullptr, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_roll, "aten::roll", Roll, nullptr, nullptr, 0, nullptr)                                                      \
  V(aten_repeat, "aten::repeat", nullptr, nullptr, nullptr, 0, nullptr)                                               \
  V(aten_constant_pad_nd, "aten::constant_pad_nd", nullptr, nullptr, nullptr, 0, nullptr)                             \
  V(aten_tril, "aten::tril", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_triu, "aten::triu", nullptr, nullptr, nullptr, 0, nullptr)                                                   \
  /* Fills, copies, casts. */                                                                                         \
  V(aten_fill_Scalar, "aten::fill.Scalar", SameAsFirst, nullptr, nullptr, kScalarKindOnly, "fill_.Scalar")            \
  V(aten_fill_Tensor, "aten::fill.Tensor", SameAsFirst, nullptr, nullptr, kScalarKindOnly, "fill_.Tensor")            \
  V(aten_zero, "aten::zero", SameAsFirst, nullptr, nullptr, 0, "zero_")                                               \
  V(aten_zeros, "aten::zeros", Factory, nullptr, nullptr, 0, nullptr)                                                 \
  V(aten_ones, "aten::ones", Factory, nullptr, nullptr, 0, nullptr)                                                   \
  V(aten_full, "aten::full", Full, nullptr, nullptr, 0, nullptr)                                                      \
  /* The first backward through a transposed weight allocates its gradient with it. */                                \
  V(aten_new_empty_strided, "aten::new_empty_strided", NewEmptyStrided, nullptr, nullptr, 0, nullptr)                 \
  /* Factories whose ATen composite writes into an out= tensor it resizes: recorded whole. */                         \
  V(aten_arange_start_step, "aten::arange.start_step", Arange, nullptr, nullptr, 0, nullptr)                          \
  V(aten_eye, "aten::eye", Eye, nullptr, nullptr, 0, nullptr)                                                         \
  V(aten_eye_m, "aten::eye.m", Eye, nullptr, nullptr, 0, nullptr)                                                     \
  V(aten_copy, "aten::copy", SameAsFirst, nullptr, nullptr, kEdgeKernel, nullptr)                                     \
  V(aten__to_copy, "aten::_to_copy", ToCopy, nullptr, nullptr, kEdgeKernel, nullptr)                                 \
  TXLA_FOREACH_ROWS(TXLA_FOREACH_AS_OP_ROW, V)

// Foreach ops (what optimizers run with foreach=True) recorded as one node per call, not one per
// tensor through ATen's per-tensor loop: each is its element op applied position by position.
// Columns: F(V, identifier, "qualified name", element row). The element op takes the foreach
// op's arguments, a list giving each position its own entry, its further arguments at their
// defaults; shapes, checks and lowering are the element's (aten/lazy_kernel.cc,
// lower/lower_foreach.cc).
#define TXLA_FOREACH_ROWS(F, V)                                                \
  F(V, aten__foreach_add_Scalar, "aten::_foreach_add.Scalar", aten_add_Scalar)             \
  F(V, aten__foreach_add_List, "aten::_foreach_add.List", aten_add_Tensor)                 \
  F(V, aten__foreach_add_ScalarList, "aten::_foreach_add.ScalarList", aten_add_Scalar)     \
  F(V, aten__foreach_add_Tensor, "aten::_foreach_add.Tensor", aten_add_Tensor)             \
  F(V, aten__foreach_sub_Scalar, "aten::_foreach_sub.Scalar", aten_sub_Scalar)             \
  F(V, aten__foreach_sub_List, "aten::_foreach_sub.List", aten_sub_Tensor)                 \
  F(V, aten__foreach_sub_ScalarList, "aten::_foreach_sub.ScalarList", aten_sub_Scalar)     \
  F(V, aten__foreach_mul_Scalar, "aten::_foreach_mul.Scalar", aten_mul_Scalar)             \
  F(V, aten__foreach_mul_List, "aten::_foreach_mul.List", aten_mul_Tensor)                 \
  F(V, aten__foreach_mul_ScalarList, "aten::_foreach_mul.ScalarList", aten_mul_Scalar)     \
  F(V, aten__foreach_mul_Tensor, "aten::_foreach_mul.Tensor", aten_mul_Tensor)             \
  F(V, aten__foreach_div_Scalar, "aten::_foreach_div.Scalar", aten_div_Scalar)             \
  F(V, aten__foreach_div_List, "aten::_foreach_div.List", aten_div_Tensor)                 \
  F(V, aten__foreach_div_ScalarList, "aten::_foreach_div.ScalarList", aten_div_Scalar)     \
  F(V, aten__foreach_div_Tensor, "aten::_foreach_div.Tensor", aten_div_Tensor)             \
  F(V, aten__foreach_addcmul_Scalar, "aten::_foreach_addcmul.Scalar", aten_addcmul)         \
  F(V, aten__foreach_addcmul_ScalarList, "aten::_foreach_addcmul.ScalarList", aten_addcmul) \
  F(V, aten__foreach_addcdiv_Scalar, "aten::_foreach_addcdiv.Scalar", aten_addcdiv)         \
  F(V, aten__foreach_addcdiv_ScalarList, "aten::_foreach_addcdiv.ScalarList", aten_addcdiv) \
  F(V, aten__foreach_lerp_Scalar, "aten::_foreach_lerp.Scalar", aten_lerp_Scalar)           \
  F(V, aten__foreach_lerp_List, "aten::_foreach_lerp.List", aten_lerp_Tensor)               \
  F(V, aten__foreach_lerp_ScalarList, "aten::_foreach_lerp.ScalarList", aten_lerp_Scalar)   \
  F(V, aten__foreach_maximum_List, "aten::_foreach_maximum.List", aten_maximum)             \
  F(V, aten__foreach_clamp_min_Scalar, "aten::_foreach_clamp_min.Scalar", aten_clamp_min)   \
  F(V, aten__foreach_clamp_max_Scalar, "aten::_foreach_clamp_max.Scalar", aten_clamp_max)   \
  F(V, aten__foreach_pow_Scalar, "aten::_foreach_pow.Scalar", aten_pow_Tensor_Scalar)       \
  F(V, aten__foreach_pow_ScalarList, "aten::_foreach_pow.ScalarList", aten_pow_Tensor_Scalar) \
  F(V, aten__foreach_pow_List, "aten::_foreach_pow.List", aten_pow_Tensor_Tensor)           \
  F(V, aten__foreach_sqrt, "aten::_foreach_sqrt", aten_sqrt)                               \
  F(V, aten__foreach_neg, "aten::_foreach_neg", aten_neg)                                  \
  F(V, aten__foreach_exp, "aten::_foreach_exp", aten_exp)                                  \
  F(V, aten__foreach_abs, "aten::_foreach_abs", aten_abs)                                  \
  F(V, aten__foreach_sign, "aten::_foreach_sign", aten_sign)                               \
  F(V, aten__foreach_reciprocal, "aten::_foreach_reciprocal", aten_reciprocal)             \
  F(V, aten__foreach_zero, "aten::_foreach_zero", aten_zero)

// A foreach row as an op row: its shape rule, checks and flags come from its element row.
#define TXLA_FOREACH_AS_OP_ROW(V, id, name, element) V(id, name, nullptr, nullptr, nullptr, 0, nullptr)
