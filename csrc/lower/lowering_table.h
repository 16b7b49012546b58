// The lowering table is assembled from one list per op family, each in its own file.
#pragma once

#include <utility>
#include <vector>

#include "ir/op_names.h"
#include "lower/lowering_context.h"

namespace txla::lower {

using LoweringEntry = std::pair<const char*, LowerFn>;  // an op::... name and its rule
namespace op = ir::op;

// The names every rule file uses.
using hlo::Comparison;
using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using Outs = std::vector<Instruction*>;
using RK = LoweringContext::ReduceKind;

std::vector<LoweringEntry> CoreLowerings();         // lower_ops.cc: arithmetic, products, views, fills, softmax, NLL
std::vector<LoweringEntry> ConvLowerings();         // lower_conv.cc: convolution and its gradients
std::vector<LoweringEntry> NnLowerings();           // lower_nn.cc: pooling, batch norm
std::vector<LoweringEntry> NormLowerings();         // lower_norms.cc: layer and group norm
std::vector<LoweringEntry> ElementwiseLowerings();  // lower_elementwise.cc: activations, math
std::vector<LoweringEntry> ReductionLowerings();    // lower_reductions.cc
std::vector<LoweringEntry> LossLowerings();         // lower_losses.cc
std::vector<LoweringEntry> RandomLowerings();       // lower_random.cc
std::vector<LoweringEntry> IndexingLowerings();     // lower_indexing.cc: gathers, scatters
std::vector<LoweringEntry> ShapeLowerings();        // lower_shapes.cc: slices, padding, joins
std::vector<LoweringEntry> ResampleLowerings();      // lower_resample.cc: upsampling, edge padding
std::vector<LoweringEntry> SpecialLowerings();       // lower_special.cc: special functions, classification
std::vector<LoweringEntry> CollectiveLowerings();   // lower_collectives.cc: all-reduce, ...
std::vector<LoweringEntry> SortedLowerings();       // lower_sorted.cc: order statistics, binary search
std::vector<LoweringEntry> AdaptiveMaxLowerings();  // lower_adaptive_max.cc: adaptive max pooling
std::vector<LoweringEntry> BesselLowerings();       // lower_bessel.cc: i0, i0e, i1, i1e
std::vector<LoweringEntry> GridSampleLowerings();   // lower_grid_sample.cc: grid_sampler_2d
std::vector<LoweringEntry> PatchLowerings();        // lower_patches.cc: im2col / col2im (F.unfold, F.fold)
std::vector<LoweringEntry> RecurrentLowerings();    // lower_recurrent.cc: LSTM and GRU layers

// Adaptive average pooling of the last `spatial` dimensions to `out_dims` (any sizes), and its
// adjoint back to `in_dims` (lower_resample.cc).
hlo::Instruction* AdaptiveAverage(LoweringContext& c, hlo::Instruction* x, const std::vector<int64_t>& out_dims,
                                  int64_t spatial);
hlo::Instruction* AdaptiveAverageAdjoint(LoweringContext& c, hlo::Instruction* g, const std::vector<int64_t>& in_dims,
                                         int64_t spatial);

// Stable ascending (or descending) sort positions of x along `dim`, a library call (NaN sorts
// above every number, as in ATen); the sorted values are x gathered at them (lower_sorted.cc).
hlo::Instruction* SortPositions(LoweringContext& c, hlo::Instruction* x, int64_t dim, bool descending);

inline hlo::ElementType OutType(const ir::Node& n, size_t i = 0) { return ToHlo(n.shape(i).dtype); }

}  // namespace txla::lower
