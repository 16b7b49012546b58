#include "ir/op_table.h"

#include <unordered_map>

#include "ir/shape_rules.h"

namespace txla::ir {
namespace {

using namespace rules;

bool HasBooleanIndex(c10::ArrayRef<c10::IValue> args) {
  // index.Tensor(self, Tensor?[] indices): a bool/uint8 mask selects a data-dependent count.
  for (const c10::IValue& index : args[1].toListRef()) {
    if (index.isTensor()) {
      auto dtype = index.toTensor().scalar_type();
      if (dtype == c10::kBool || dtype == c10::kByte) return true;
    }
  }
  return false;
}

bool IndexPutHasBooleanIndex(c10::ArrayRef<c10::IValue> args) { return HasBooleanIndex(args); }

// bool, which ATen's order statistics and binary searches reject (the device's sort would take
// it): the CPU fallback raises eager's error. (Complex and wide unsigned tensors never reach the
// device.)
bool Unsortable(const c10::IValue& arg) { return arg.isTensor() && arg.toTensor().scalar_type() == c10::kBool; }

// Pooling of an integer tensor (ATen's kernels are floating only): the CPU fallback's error.
bool NotFloatingFirst(c10::ArrayRef<c10::IValue> args) {
  return args[0].isTensor() && !c10::isFloatingType(args[0].toTensor().scalar_type());
}

// grid_sampler_2d(_backward) with bicubic interpolation (mode 2): the CPU fallback computes it.
bool BicubicGridSample(c10::ArrayRef<c10::IValue> args) {
  const size_t mode = args.size() == 5 ? 2 : 3;  // forward (input, grid, mode, ...) or backward
  return args[mode].toInt() == 2;
}

bool UnsortableFirst(c10::ArrayRef<c10::IValue> args) { return Unsortable(args[0]); }

// median() / nanmedian() of an empty integer tensor: eager returns its NaN conversion.
bool EmptyIntegerOrUnsortable(c10::ArrayRef<c10::IValue> args) {
  if (Unsortable(args[0])) return true;
  const at::Tensor& t = args[0].toTensor();
  return t.numel() == 0 && !c10::isFloatingType(t.scalar_type());
}

// searchsorted / bucketize: the sequence or the values.
bool UnsortableSearch(c10::ArrayRef<c10::IValue> args) { return Unsortable(args[0]) || Unsortable(args[1]); }

std::vector<int> BatchNormRunningStats(c10::ArrayRef<c10::IValue> args) {
  bool training = args[5].toBool();
  bool has_stats = args[3].isTensor() && args[3].toTensor().defined() && args[4].isTensor() &&
                   args[4].toTensor().defined();
  if (training && has_stats) return {3, 4};
  return {};
}

struct OpDecl {
  const char* name;
  ShapeRule shape_rule = nullptr;
  FallbackRule needs_fallback = nullptr;
  WrittenArgsRule written_args = nullptr;
  unsigned flags = 0;  // OpFlag bits
  const char* inplace = nullptr;  // the in-place overload that records this op (OpInfo::inplace)
};

// One line per op. Elementwise ops are grouped by family; the backward of an op sits beside it.
const OpDecl kOps[] = {
    // Elementwise, unary.
    {"aten::abs", SameAsFirst, nullptr},
    {"aten::neg", SameAsFirst, nullptr},
    {"aten::exp", SameAsFirst, nullptr},
    {"aten::log", SameAsFirst, nullptr},
    {"aten::log2", SameAsFirst, nullptr},
    {"aten::log10", SameAsFirst, nullptr},
    {"aten::log1p", SameAsFirst, nullptr},
    {"aten::expm1", SameAsFirst, nullptr},
    {"aten::sqrt", SameAsFirst, nullptr, nullptr, 0, "sqrt_"},
    {"aten::rsqrt", SameAsFirst, nullptr},
    {"aten::sin", SameAsFirst, nullptr},
    {"aten::sinc", nullptr, nullptr},
    {"aten::cos", SameAsFirst, nullptr},
    {"aten::tan", SameAsFirst, nullptr},
    {"aten::asin", SameAsFirst, nullptr},
    {"aten::acos", SameAsFirst, nullptr},
    {"aten::atan", SameAsFirst, nullptr},
    {"aten::sinh", SameAsFirst, nullptr},
    {"aten::cosh", SameAsFirst, nullptr},
    {"aten::tanh", SameAsFirst, nullptr},
    {"aten::erf", SameAsFirst, nullptr},
    {"aten::erfc", SameAsFirst, nullptr},
    {"aten::floor", SameAsFirst, nullptr},
    {"aten::ceil", SameAsFirst, nullptr},
    {"aten::round", SameAsFirst, nullptr},
    {"aten::trunc", SameAsFirst, nullptr},
    {"aten::frac", SameAsFirst, nullptr},
    {"aten::sign", nullptr, nullptr},
    {"aten::sgn", nullptr, nullptr},
    {"aten::reciprocal", SameAsFirst, nullptr},
    {"aten::bitwise_not", nullptr, nullptr},
    {"aten::logical_not", nullptr, nullptr},
    {"aten::clamp", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::clamp.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::clamp_min", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::clamp_max", nullptr, nullptr, nullptr, kScalarKindOnly},
    // The exponent is part of the graph: ATen computes x**2, x**3, x**-2, x**0.5, x**-0.5 and
    // x**-1 without pow, and so does the lowering (lower_ops.cc), which must know it.
    {"aten::pow.Tensor_Scalar", PowTensorScalar, nullptr, nullptr, kConstantScalars},
    {"aten::pow.Tensor_Tensor", nullptr, nullptr},
    {"aten::pow.Scalar", nullptr, nullptr},
    // Activations and their backwards.
    {"aten::relu", SameAsFirst, nullptr},
    {"aten::threshold", SameAsFirst, nullptr},
    {"aten::threshold_backward", SameAsFirst, nullptr},
    {"aten::sigmoid", SameAsFirst, nullptr},
    {"aten::sigmoid_backward", SameAsFirst, nullptr},
    {"aten::tanh_backward", SameAsFirst, nullptr},
    {"aten::gelu", SameAsFirst, nullptr},
    {"aten::gelu_backward", SameAsFirst, nullptr},
    {"aten::silu", SameAsFirst, nullptr},
    {"aten::leaky_relu", SameAsFirst, nullptr},
    {"aten::leaky_relu_backward", SameAsFirst, nullptr},
    {"aten::_prelu_kernel", nullptr, nullptr},
    {"aten::_prelu_kernel_backward", nullptr, nullptr},
    {"aten::elu", SameAsFirst, nullptr},
    {"aten::elu_backward", SameAsFirst, nullptr},
    {"aten::hardtanh", SameAsFirst, nullptr},
    {"aten::hardtanh_backward", SameAsFirst, nullptr},
    {"aten::softplus", SameAsFirst, nullptr},
    {"aten::softplus_backward", SameAsFirst, nullptr},
    {"aten::hardsigmoid", SameAsFirst, nullptr},
    {"aten::hardsigmoid_backward", SameAsFirst, nullptr},
    {"aten::hardswish", SameAsFirst, nullptr},
    {"aten::hardswish_backward", SameAsFirst, nullptr},
    {"aten::mish", SameAsFirst, nullptr},
    // Elementwise, binary and ternary.
    {"aten::add.Tensor", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "add_.Tensor"},
    {"aten::add.Scalar", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "add_.Scalar"},
    {"aten::sub.Tensor", AddSubTensor, nullptr, nullptr, kScalarKindOnly, "sub_.Tensor"},
    {"aten::sub.Scalar", AddSubTensor, nullptr, nullptr, kScalarKindOnly},
    {"aten::rsub.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::rsub.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::mul.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "mul_.Tensor"},
    {"aten::mul.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "mul_.Scalar"},
    {"aten::div.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "div_.Tensor"},
    {"aten::div.Tensor_mode", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::div.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "div_.Scalar"},
    {"aten::maximum", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly},
    {"aten::minimum", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly},
    {"aten::remainder.Tensor", nullptr, nullptr},
    {"aten::remainder.Scalar", nullptr, nullptr},
    {"aten::fmod.Tensor", nullptr, nullptr},
    {"aten::fmod.Scalar", nullptr, nullptr},
    {"aten::atan2", nullptr, nullptr},
    {"aten::copysign.Tensor", nullptr, nullptr},
    {"aten::copysign.Scalar", nullptr, nullptr},
    {"aten::eq.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::eq.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::ne.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::ne.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::lt.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::lt.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::le.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::le.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::gt.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::gt.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::ge.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::ge.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::logical_and", nullptr, nullptr},
    {"aten::logical_or", nullptr, nullptr},
    {"aten::logical_xor", nullptr, nullptr},
    {"aten::bitwise_and.Tensor", nullptr, nullptr},
    {"aten::bitwise_or.Tensor", nullptr, nullptr},
    {"aten::bitwise_xor.Tensor", nullptr, nullptr},
    {"aten::where.self", WhereSelf, nullptr, nullptr, kScalarKindOnly},
    {"aten::addcmul", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "addcmul_"},
    {"aten::addcdiv", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "addcdiv_"},
    {"aten::lerp.Scalar", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly, "lerp_.Scalar"},
    {"aten::lerp.Tensor", SameDtypeBroadcast, nullptr, nullptr, kScalarKindOnly},
    {"aten::masked_fill.Scalar", nullptr, nullptr, nullptr, kScalarKindOnly},
    {"aten::masked_fill.Tensor", nullptr, nullptr, nullptr, kScalarKindOnly},
    // Reductions and scans.
    {"aten::sum", Sum, nullptr},
    {"aten::sum.dim_IntList", Sum, nullptr},
    {"aten::mean", nullptr, nullptr},
    {"aten::mean.dim", nullptr, nullptr},
    {"aten::prod", nullptr, nullptr},
    {"aten::prod.dim_int", nullptr, nullptr},
    {"aten::amax", nullptr, nullptr},
    {"aten::amin", nullptr, nullptr},
    {"aten::max", nullptr, nullptr},
    {"aten::min", nullptr, nullptr},
    {"aten::max.dim", nullptr, nullptr},
    {"aten::min.dim", nullptr, nullptr},
    {"aten::argmax", nullptr, nullptr},
    {"aten::argmin", nullptr, nullptr},
    {"aten::var.correction", nullptr, nullptr},
    {"aten::std.correction", nullptr, nullptr},
    {"aten::var_mean.correction", nullptr, nullptr},
    {"aten::std_mean.correction", nullptr, nullptr},
    {"aten::linalg_vector_norm", nullptr, nullptr, nullptr, kConstantScalars},
    {"aten::logsumexp", nullptr, nullptr},
    {"aten::renorm", nullptr, nullptr, nullptr, kConstantScalars},
    {"aten::aminmax", nullptr, nullptr},
    {"aten::count_nonzero", nullptr, nullptr},
    {"aten::count_nonzero.dim_IntList", nullptr, nullptr},
    {"aten::norm.ScalarOpt_dim", nullptr, nullptr, nullptr, kConstantScalars},
    {"aten::any", nullptr, nullptr},
    {"aten::any.dim", nullptr, nullptr},
    {"aten::all", nullptr, nullptr},
    {"aten::all.dim", nullptr, nullptr},
    {"aten::cumsum", nullptr, nullptr},
    {"aten::cumprod", nullptr, nullptr},
    {"aten::_logcumsumexp", SameAsFirst, nullptr},  // no Meta kernel
    {"aten::cummax", nullptr, nullptr},
    {"aten::cummin", nullptr, nullptr},
    {"aten::sort", nullptr, nullptr},
    {"aten::sort.stable", nullptr, nullptr},
    {"aten::topk", nullptr, nullptr},
    // Adaptive max pooling (lower_adaptive_max.cc): windows of unequal sizes.
    {"aten::adaptive_max_pool2d", nullptr, NotFloatingFirst},
    {"aten::adaptive_max_pool2d_backward", nullptr, nullptr},
    // F.grid_sample on images (lower_grid_sample.cc): bilinear and nearest.
    {"aten::grid_sampler_2d", nullptr, BicubicGridSample},
    {"aten::grid_sampler_2d_backward", nullptr, BicubicGridSample},
    // Sliding-window patches (lower_patches.cc): F.unfold and F.fold, each the other's gradient.
    {"aten::im2col", nullptr, nullptr},
    {"aten::col2im", nullptr, nullptr},
    // Order statistics and binary search (lower_sorted.cc).
    {"aten::kthvalue", nullptr, UnsortableFirst},
    {"aten::mode", nullptr, nullptr},
    {"aten::median", nullptr, EmptyIntegerOrUnsortable},
    {"aten::nanmedian", nullptr, EmptyIntegerOrUnsortable},
    {"aten::median.dim", nullptr, UnsortableFirst},
    {"aten::nanmedian.dim", nullptr, UnsortableFirst},
    {"aten::searchsorted.Tensor", nullptr, UnsortableSearch},
    {"aten::searchsorted.Scalar", nullptr, UnsortableSearch},
    {"aten::bucketize.Tensor", nullptr, UnsortableSearch},
    {"aten::bucketize.Scalar", BucketizeScalar, UnsortableSearch},
    // Matrix products.
    {"aten::mm", MatrixProduct, nullptr},
    {"aten::addmm", nullptr, nullptr},
    {"aten::bmm", MatrixProduct, nullptr},
    {"aten::baddbmm", nullptr, nullptr},
    {"aten::dot", nullptr, nullptr},
    {"aten::mv", nullptr, nullptr},
    {"aten::addmv", nullptr, nullptr},
    // Neural-network layers and losses.
    {"aten::convolution", Convolution, nullptr},
    {"aten::convolution_backward", ConvolutionBackward, nullptr},
    {"aten::native_batch_norm", BatchNorm, nullptr, BatchNormRunningStats},
    // What AOTAutograd (torch.compile) decomposes batch norm to: native_batch_norm's arguments.
    {"aten::_native_batch_norm_legit", BatchNorm, nullptr, BatchNormRunningStats},
    {"aten::native_batch_norm_backward", BatchNormBackward, nullptr},
    {"aten::native_layer_norm", LayerNorm, nullptr},
    {"aten::native_layer_norm_backward", LayerNormBackward, nullptr},
    // ATen's kernel for devices without their own is a composite over views: recorded whole.
    {"aten::native_group_norm", GroupNorm},
    {"aten::native_group_norm_backward", GroupNormBackward},
    {"aten::max_pool2d_with_indices", nullptr, nullptr},
    {"aten::max_pool2d_with_indices_backward", nullptr, nullptr},
    {"txla::max_pool2d_backward_from_input", LikeSelfOfBackward},  // recorded by max_pool2d's autograd
    {"txla::rnn_layer", RnnLayer},  // recorded by LSTM's and GRU's autograd (aten/recurrent_layers.cc)
    {"txla::rnn_layer_backward", RnnLayerBackward},
    {"aten::avg_pool2d", nullptr, nullptr},
    {"aten::avg_pool2d_backward", nullptr, nullptr},
    {"aten::_adaptive_avg_pool2d", nullptr, nullptr},
    {"aten::_adaptive_avg_pool2d_backward", LikeSelfOfBackward},
    {"aten::avg_pool3d"},
    {"aten::avg_pool3d_backward", LikeSelfOfBackward},
    {"aten::_adaptive_avg_pool3d"},
    {"aten::_adaptive_avg_pool3d_backward", LikeSelfOfBackward},
    {"aten::_softmax", Softmax, nullptr},
    {"aten::_softmax_backward_data", SoftmaxBackward, nullptr},
    {"aten::_log_softmax", Softmax, nullptr},
    {"aten::_log_softmax_backward_data", SoftmaxBackward, nullptr},
    // p (1 or 2) chooses the formula; the margin rides along as a constant.
    {"aten::multi_margin_loss", MultiMarginLoss, nullptr, nullptr, kConstantScalars},
    {"aten::multi_margin_loss_backward", LikeSelfOfBackward, nullptr, nullptr, kConstantScalars},
    {"aten::nll_loss_forward", nullptr, nullptr},
    {"aten::nll_loss_backward", nullptr, nullptr},
    {"aten::nll_loss2d_forward", NllLoss2dForward},
    {"aten::nll_loss2d_backward", LikeSelfOfBackward},
    {"aten::mse_loss", nullptr, nullptr},
    {"aten::mse_loss_backward", LikeSelfOfBackward},
    {"aten::binary_cross_entropy", nullptr, nullptr},
    {"aten::binary_cross_entropy_backward", LikeSelfOfBackward},
    {"aten::smooth_l1_loss", nullptr, nullptr},
    {"aten::smooth_l1_loss_backward", LikeSelfOfBackward},
    {"aten::huber_loss", nullptr, nullptr},
    {"aten::huber_loss_backward", LikeSelfOfBackward},
    {"aten::embedding", nullptr, nullptr},
    {"aten::embedding_dense_backward", EmbeddingDenseBackward, nullptr},
    // Collectives between replicas (csrc/aten/collective_ops.cc defines them).
    {"txla::all_reduce", LikeFirst, nullptr, nullptr, kCollective},
    {"txla::all_gather", AllGather, nullptr, nullptr, kCollective},
    {"txla::reduce_scatter", ReduceScatter, nullptr, nullptr, kCollective},
    // Random numbers: each node draws from its own seed, fixed when the node is traced.
    {"aten::native_dropout", NativeDropout, nullptr, nullptr, kSeedsDefaultGenerator},
    {"aten::native_dropout_backward", SameAsFirst, nullptr},
    {"aten::bernoulli.p", SameAsFirst, nullptr, nullptr, 0, "bernoulli_.float"},
    {"aten::bernoulli.Tensor", nullptr, nullptr},
    {"aten::bernoulli", nullptr, nullptr},
    {"aten::normal_functional", SameAsFirst, nullptr, nullptr, 0, "normal_"},
    {"aten::uniform", SameAsFirst, nullptr, nullptr, 0, "uniform_"},
    // A random permutation: the sort order of uniform draws.
    {"aten::randperm", Randperm, nullptr, nullptr, kSeedsDefaultGenerator},
    {"aten::randperm.generator", Randperm, nullptr},
    {"aten::random", SameAsFirst, nullptr, nullptr, 0, "random_"},
    {"aten::random.from", SameAsFirst, nullptr, nullptr, 0, "random_.from"},
    // Views, as the copies functionalization turns them into.
    {"aten::view_copy", ViewCopy, nullptr},
    {"aten::view_copy.dtype", nullptr, nullptr},
    {"aten::_unsafe_view", ViewCopy, nullptr},
    {"aten::_reshape_alias_copy", ViewCopy, nullptr},
    {"aten::slice_copy.Tensor", SliceCopy, nullptr},
    {"aten::select_copy.int", SelectCopy, nullptr},
    {"aten::transpose_copy.int", TransposeCopy, nullptr, nullptr, kTransposingView | kInvolution},
    {"aten::t_copy", TCopy, nullptr, nullptr, kTransposingView | kInvolution},
    {"aten::permute_copy", PermuteCopy, nullptr, nullptr, kTransposingView},
    {"aten::expand_copy", ExpandCopy, nullptr},
    {"aten::unsqueeze_copy", UnsqueezeCopy, nullptr},
    {"aten::squeeze_copy", nullptr, nullptr},
    {"aten::squeeze_copy.dim", nullptr, nullptr},
    {"aten::diagonal_copy", nullptr, nullptr},
    {"aten::diag_embed", nullptr, nullptr},
    {"aten::trace", nullptr, nullptr},
    {"aten::as_strided_copy", nullptr, nullptr},
    {"aten::unfold_copy", nullptr, nullptr},
    {"aten::split_copy.Tensor", nullptr, nullptr},
    {"aten::split_with_sizes_copy", nullptr, nullptr},
    {"aten::unbind_copy.int", nullptr, nullptr},
    // Splits into fresh tensors (LSTM/GRU cells chunk their gates with them); ATen's kernel takes
    // views below functionalization, so they are recorded whole and lowered as the copying split.
    {"aten::unsafe_split.Tensor", nullptr, nullptr},
    {"aten::unsafe_split_with_sizes", nullptr, nullptr},
    // Backward ops that are composites over views and in-place writes in ATen: recorded whole,
    // so they never run below functionalization on device tensors.
    {"aten::slice_backward", nullptr, nullptr},
    // The inverses functionalization applies when a view is written to (x[1:3].add_(1)); also
    // composites over views in ATen, so recorded whole.
    {"aten::slice_scatter", LikeFirst},
    {"aten::select_scatter", LikeFirst},
    {"aten::diagonal_scatter", LikeFirst},
    {"aten::as_strided_scatter", LikeFirst},
    {"aten::select_backward", nullptr, nullptr},
    {"aten::diagonal_backward", nullptr, nullptr},
    // Resampling (lower_resample.cc). ATen's .vec overloads are composites that call these.
    {"aten::upsample_nearest1d", Upsample},
    {"aten::upsample_nearest2d", Upsample},
    {"aten::upsample_nearest3d", Upsample},
    {"aten::upsample_nearest1d_backward", UpsampleBackward},
    {"aten::upsample_nearest2d_backward", UpsampleBackward},
    {"aten::upsample_nearest3d_backward", UpsampleBackward},
    {"aten::upsample_nearest3d.vec", UpsampleVec},
    {"aten::upsample_nearest3d_backward.vec", UpsampleBackward},
    {"aten::upsample_linear1d", Upsample},
    {"aten::upsample_bilinear2d", Upsample},
    {"aten::upsample_trilinear3d", Upsample},
    {"aten::upsample_linear1d_backward", UpsampleBackward},
    {"aten::upsample_bilinear2d_backward", UpsampleBackward},
    {"aten::upsample_trilinear3d_backward", UpsampleBackward},
    {"aten::reflection_pad1d"},
    {"aten::reflection_pad2d"},
    {"aten::reflection_pad3d"},
    {"aten::replication_pad1d"},
    {"aten::replication_pad2d"},
    {"aten::replication_pad3d"},
    {"aten::reflection_pad1d_backward", LikeSelfOfBackward},
    {"aten::reflection_pad2d_backward", LikeSelfOfBackward},
    {"aten::reflection_pad3d_backward", LikeSelfOfBackward},
    {"aten::replication_pad1d_backward", LikeSelfOfBackward},
    {"aten::replication_pad2d_backward", LikeSelfOfBackward},
    {"aten::replication_pad3d_backward", LikeSelfOfBackward},
    {"aten::pixel_shuffle"},
    {"aten::pixel_unshuffle"},
    // Special functions, classification, shifts, small layers (lower_special.cc).
    {"aten::isnan"},
    {"aten::isposinf"},
    {"aten::isneginf"},
    {"aten::nan_to_num"},
    {"aten::lgamma"},
    {"aten::digamma"},
    {"aten::acosh"},
    {"aten::asinh"},
    {"aten::atanh"},
    {"aten::erfinv"},
    // Modified Bessel functions (lower_bessel.cc); integer inputs compute in the default float.
    {"aten::i0"},
    {"aten::special_i0e"},
    {"aten::special_i1"},
    {"aten::special_i1e"},
    {"aten::hypot"},
    {"aten::gcd"},
    {"aten::linalg_cross"},
    {"aten::isin.Tensor_Tensor"},
    {"aten::isin.Tensor_Scalar"},
    {"aten::logit"},
    {"aten::logit_backward"},
    // ATen's kernel is a composite over views (unsqueeze of an arange): recorded whole.
    {"aten::mvlgamma"},
    {"aten::xlogy.Tensor"},
    {"aten::xlogy.Scalar_Self"},
    {"aten::xlogy.Scalar_Other"},
    {"aten::logaddexp"},
    {"aten::__lshift__.Scalar", BinaryElementwise},
    {"aten::__lshift__.Tensor", BinaryElementwise},
    {"aten::__rshift__.Scalar", BinaryElementwise},
    {"aten::__rshift__.Tensor", BinaryElementwise},
    {"aten::bitwise_left_shift.Tensor", BinaryElementwise},
    {"aten::bitwise_right_shift.Tensor", BinaryElementwise},
    {"aten::softshrink"},
    {"aten::softshrink_backward"},
    {"aten::hardshrink"},
    {"aten::hardshrink_backward"},
    {"aten::glu"},
    {"aten::glu_backward"},
    {"aten::log_sigmoid_forward"},
    {"aten::log_sigmoid_backward"},
    // A composite over views in ATen; beta decides whether self is read at all: a constant.
    {"aten::addr", nullptr, nullptr, nullptr, kConstantScalars},
    {"aten::_cdist_forward", CdistForward},
    {"aten::_cdist_backward", LikeSelfOfBackward},
    {"aten::_pdist_forward", PdistForward},
    {"aten::_pdist_backward", LikeSelfOfBackward},
    // A composite over views (select of the base grid) in ATen: recorded whole.
    {"aten::affine_grid_generator"},
    {"aten::floor_divide", BinaryElementwise},
    // Indexing, joining, reshuffling.
    {"aten::cat", nullptr, nullptr},
    {"aten::stack", nullptr, nullptr},
    {"aten::index_select", nullptr, nullptr},
    {"aten::gather", nullptr, nullptr},
    {"aten::scatter.src", nullptr, nullptr},
    {"aten::scatter.value", nullptr, nullptr},
    {"aten::scatter_add", nullptr, nullptr},
    {"aten::scatter_reduce.two", nullptr, nullptr},
    {"aten::index.Tensor", nullptr, HasBooleanIndex, nullptr, kHostIndices},
    {"aten::index_put", nullptr, IndexPutHasBooleanIndex, nullptr, kHostIndices},
    {"aten::index_add", nullptr, nullptr},
    {"aten::index_copy", nullptr, nullptr},
    {"aten::index_fill.int_Scalar", nullptr, nullptr},
    {"aten::index_fill.int_Tensor", nullptr, nullptr},
    {"aten::take", nullptr, nullptr},
    {"aten::put", nullptr, nullptr},
    {"aten::flip", nullptr, nullptr},
    {"aten::rot90", nullptr, nullptr},
    {"aten::roll", nullptr, nullptr},
    {"aten::repeat", nullptr, nullptr},
    {"aten::constant_pad_nd", nullptr, nullptr},
    {"aten::tril", nullptr, nullptr},
    {"aten::triu", nullptr, nullptr},
    // Fills, copies, casts.
    {"aten::fill.Scalar", SameAsFirst, nullptr, nullptr, kScalarKindOnly, "fill_.Scalar"},
    {"aten::fill.Tensor", SameAsFirst, nullptr, nullptr, kScalarKindOnly, "fill_.Tensor"},
    {"aten::zero", SameAsFirst, nullptr, nullptr, 0, "zero_"},
    {"aten::zeros", Factory, nullptr},
    {"aten::ones", Factory, nullptr},
    {"aten::full", nullptr, nullptr},
    // The first backward through a transposed weight allocates its gradient with it.
    {"aten::new_empty_strided", NewEmptyStrided},
    // Factories whose ATen composite writes into an out= tensor it resizes: recorded whole.
    {"aten::arange.start_step", Arange},
    {"aten::eye", Eye},
    {"aten::eye.m", Eye},
    {"aten::copy", SameAsFirst, nullptr, nullptr, kEdgeKernel},
    {"aten::_to_copy", ToCopy, nullptr, nullptr, kEdgeKernel},
};

struct Table {
  std::vector<OpInfo> ops;
  std::unordered_map<std::string, const OpInfo*> by_name;
  Table() {
    ops.reserve(sizeof(kOps) / sizeof(kOps[0]));
    for (const OpDecl& decl : kOps) {
      OpInfo info;
      info.name = decl.name;
      info.shape_rule = decl.shape_rule;
      info.needs_fallback = decl.needs_fallback;
      info.written_args = decl.written_args;
      info.seeds_default_generator = decl.flags & kSeedsDefaultGenerator;
      info.constant_scalars = decl.flags & kConstantScalars;
      info.collective = decl.flags & kCollective;
      info.scalar_kind_only = decl.flags & kScalarKindOnly;
      info.transposing_view = decl.flags & kTransposingView;
      info.involution = decl.flags & kInvolution;
      info.edge_kernel = decl.flags & kEdgeKernel;
      info.host_indices = decl.flags & kHostIndices;
      if (decl.inplace) info.inplace = decl.inplace;
      info.name_hash = HashString(info.name);
      info.index = ops.size();
      ops.push_back(std::move(info));
    }
    for (const OpInfo& info : ops) by_name.emplace(info.name, &info);
  }
};

const Table& GetTable() {
  static const Table* table = new Table();
  return *table;
}

}  // namespace

const c10::OperatorHandle& OpInfo::handle() const {
  if (!handle_) {
    auto dot = name.find('.');
    std::string base = name.substr(0, dot);
    std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
    handle_ = c10::Dispatcher::singleton().findSchemaOrThrow(base.c_str(), overload.c_str());
  }
  return *handle_;
}

const std::vector<OpInfo>& OpTable() { return GetTable().ops; }

const OpInfo* FindOp(const std::string& qualified_name) {
  const auto& by_name = GetTable().by_name;
  auto it = by_name.find(qualified_name);
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace txla::ir
