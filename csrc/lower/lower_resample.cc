// Lowering of resampling: upsampling (nearest; linear, bilinear, trilinear) and the reflection
// and replication paddings, with their gradients, plus pixel (un)shuffle. Every one of them is
// separable: one gather per spatial dimension (its gradient: one scatter-add per dimension, in
// reverse order). Source indices and interpolation weights depend only on sizes and scales, so
// they are computed here, with ATen's own arithmetic (single precision for float inputs), and
// become constant tables in the generated code.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// A weight per row of dimension `dim`, broadcast against a tensor of `dims`.
Instruction* WeightColumn(LoweringContext& c, const std::vector<double>& w, int64_t dim,
                          const std::vector<int64_t>& dims, ElementType t) {
  Instruction* table = c.computation()->AddConstant(
      hlo::Literal::FromDoubles(hlo::Shape::Array(t, {static_cast<int64_t>(w.size())}), w));
  std::vector<int64_t> column(dims.size() - dim, 1);
  column[0] = static_cast<int64_t>(w.size());
  return c.BroadcastTo(c.Reshape(table, column), dims);
}

// ATen's scale for a resized dimension: 1/scale_factor when one was given, else in/out.
template <typename T>
T ScaleValue(const c10::optional<double>& scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}

std::vector<int64_t> NearestIndex(int64_t in, int64_t out, const c10::optional<double>& scale) {
  std::vector<int64_t> index(out);
  const float s = ScaleValue<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) index[o] = o;
    else if (out == 2 * in) index[o] = o >> 1;
    else index[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
  }
  return index;
}

// Linear interpolation along one dimension: out[o] = w0[o] * in[i0[o]] + w1[o] * in[i1[o]].
struct LinearTaps {
  std::vector<int64_t> i0, i1;
  std::vector<double> w0, w1;
};

template <typename T>
LinearTaps LinearTapsOf(int64_t in, int64_t out, bool align_corners, const c10::optional<double>& scale) {
  LinearTaps taps;
  T ratio = align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                          : ScaleValue<T>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      taps.i0.push_back(o), taps.i1.push_back(o), taps.w0.push_back(1), taps.w1.push_back(0);
      continue;
    }
    T real;
    if (align_corners) {
      real = ratio * static_cast<T>(o);
    } else {
      real = static_cast<T>(ratio * (o + 0.5) - 0.5);
      if (real < 0) real = 0;
    }
    int64_t i0 = static_cast<int64_t>(real);
    int64_t offset = i0 < in - 1 ? 1 : 0;
    T lambda1 = std::min(std::max(real - static_cast<T>(i0), T(0)), T(1));
    taps.i0.push_back(i0), taps.i1.push_back(i0 + offset);
    taps.w0.push_back(static_cast<double>(T(1) - lambda1)), taps.w1.push_back(static_cast<double>(lambda1));
  }
  return taps;
}

LinearTaps TapsFor(ElementType t, int64_t in, int64_t out, bool align_corners, const c10::optional<double>& scale) {
  return t == ElementType::kF64 ? LinearTapsOf<double>(in, out, align_corners, scale)
                                : LinearTapsOf<float>(in, out, align_corners, scale);
}

Instruction* InterpolateAlong(LoweringContext& c, Instruction* x, int64_t dim, const LinearTaps& taps) {
  ElementType t = x->shape().type;
  Instruction* a = c.TakeRows(x, c.IndexConstant(taps.i0), dim);
  Instruction* b = c.TakeRows(x, c.IndexConstant(taps.i1), dim);
  const auto& dims = a->shape().dims;
  return c.Elementwise(Opcode::kAdd, {c.Elementwise(Opcode::kMultiply, {a, WeightColumn(c, taps.w0, dim, dims, t)}, t),
                                      c.Elementwise(Opcode::kMultiply, {b, WeightColumn(c, taps.w1, dim, dims, t)}, t)}, t);
}

Instruction* Zeros(LoweringContext& c, const std::vector<int64_t>& dims, ElementType t) {
  return c.BroadcastTo(c.Constant(0, t), dims);
}

Instruction* InterpolateAlongAdjoint(LoweringContext& c, Instruction* g, int64_t dim, int64_t in, const LinearTaps& taps) {
  ElementType t = g->shape().type;
  const auto& dims = g->shape().dims;
  std::vector<int64_t> in_dims = dims;
  in_dims[dim] = in;
  Instruction* acc = c.AddRows(Zeros(c, in_dims, t), c.IndexConstant(taps.i0),
                               c.Elementwise(Opcode::kMultiply, {g, WeightColumn(c, taps.w0, dim, dims, t)}, t), dim);
  return c.AddRows(acc, c.IndexConstant(taps.i1),
                   c.Elementwise(Opcode::kMultiply, {g, WeightColumn(c, taps.w1, dim, dims, t)}, t), dim);
}

c10::optional<double> OptionalDouble(LoweringContext& c, const ir::Node& n, size_t arg) {
  if (arg >= n.args().size() || c.IsNone(n, arg)) return c10::nullopt;
  return c.ConstArg(n, arg).toDouble();
}

Instruction* NearestAlong(LoweringContext& c, Instruction* x, const std::vector<int64_t>& out,
                          const std::vector<c10::optional<double>>& scales) {
  const int64_t first = x->shape().rank() - static_cast<int64_t>(out.size());
  for (size_t s = 0; s < out.size(); ++s) {
    int64_t dim = first + static_cast<int64_t>(s);
    x = c.TakeRows(x, c.IndexConstant(NearestIndex(x->shape().dims[dim], out[s], scales[s])), dim);
  }
  return x;
}

Instruction* NearestAlongAdjoint(LoweringContext& c, Instruction* g, const std::vector<int64_t>& out,
                                 const std::vector<int64_t>& in, const std::vector<c10::optional<double>>& scales) {
  const int64_t first = static_cast<int64_t>(in.size() - out.size());
  for (size_t s = out.size(); s-- > 0;) {
    int64_t dim = first + static_cast<int64_t>(s);
    std::vector<int64_t> dims = g->shape().dims;
    dims[dim] = in[dim];
    g = c.AddRows(Zeros(c, dims, g->shape().type), c.IndexConstant(NearestIndex(in[dim], out[s], scales[s])), g, dim);
  }
  return g;
}

std::vector<c10::optional<double>> ScaleArgs(LoweringContext& c, const ir::Node& n, size_t first, size_t count) {
  std::vector<c10::optional<double>> scales;
  for (size_t s = 0; s < count; ++s) scales.push_back(OptionalDouble(c, n, first + s));
  return scales;
}

// The .vec forms (output_size?, scale_factors?): given factors are also the kernels' scales.
std::vector<c10::optional<double>> ScaleFactors(LoweringContext& c, const ir::Node& n, size_t arg, size_t count) {
  std::vector<c10::optional<double>> scales(count);
  if (c.IsNone(n, arg)) return scales;
  const c10::IValue& v = c.ConstArg(n, arg);
  std::vector<double> factors = v.toDoubleVector();
  for (size_t s = 0; s < count && s < factors.size(); ++s) scales[s] = factors[s];
  return scales;
}

// upsample_nearest{1,2,3}d(self, output_size, scales...)
Outs UpsampleNearest(LoweringContext& c, const ir::Node& n) {
  const auto out = IntList(c.ConstArg(n, 1));
  return {NearestAlong(c, c.Operand(n, 0), out, ScaleArgs(c, n, 2, out.size()))};
}

// upsample_nearest{1,2,3}d_backward(grad_output, output_size, input_size, scales...)
Outs UpsampleNearestBackward(LoweringContext& c, const ir::Node& n) {
  const auto out = IntList(c.ConstArg(n, 1));
  return {NearestAlongAdjoint(c, c.Operand(n, 0), out, IntList(c.ConstArg(n, 2)), ScaleArgs(c, n, 3, out.size()))};
}

// upsample_nearest3d.vec(input, output_size?, scale_factors?) (1.13 gives only this form a CPU
// kernel of its own); the output sizes come from the IR shape.
Outs UpsampleNearestVec(LoweringContext& c, const ir::Node& n) {
  const auto& sizes = n.shape().sizes;
  std::vector<int64_t> out(sizes.begin() + 2, sizes.end());
  return {NearestAlong(c, c.Operand(n, 0), out, ScaleFactors(c, n, 2, out.size()))};
}

// upsample_nearest3d_backward.vec(grad_output, output_size?, input_size, scale_factors?)
Outs UpsampleNearestVecBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* g = c.Operand(n, 0);
  const auto& gd = g->shape().dims;
  std::vector<int64_t> out(gd.begin() + 2, gd.end());
  return {NearestAlongAdjoint(c, g, out, IntList(c.ConstArg(n, 2)), ScaleFactors(c, n, 3, out.size()))};
}

// upsample_{linear1d,bilinear2d,trilinear3d}(self, output_size, align_corners, scales...)
Outs UpsampleLinear(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  ElementType t = OutType(n);
  if (!hlo::IsFloating(t)) throw NotLowered("linear upsampling of an integer type");
  const auto out = IntList(c.ConstArg(n, 1));
  const bool align = c.ConstArg(n, 2).toBool();
  const int64_t first = x->shape().rank() - static_cast<int64_t>(out.size());
  for (size_t s = 0; s < out.size(); ++s) {
    int64_t dim = first + static_cast<int64_t>(s);
    x = InterpolateAlong(c, x, dim, TapsFor(t, x->shape().dims[dim], out[s], align, OptionalDouble(c, n, 3 + s)));
  }
  return {x};
}

// upsample_{linear1d,bilinear2d,trilinear3d}_backward(grad_output, output_size, input_size,
// align_corners, scales...)
Outs UpsampleLinearBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* g = c.Operand(n, 0);
  ElementType t = OutType(n);
  const auto out = IntList(c.ConstArg(n, 1));
  const auto in = IntList(c.ConstArg(n, 2));
  const bool align = c.ConstArg(n, 3).toBool();
  const int64_t first = static_cast<int64_t>(in.size() - out.size());
  for (size_t s = out.size(); s-- > 0;) {
    int64_t dim = first + static_cast<int64_t>(s);
    g = InterpolateAlongAdjoint(c, g, dim, in[dim], TapsFor(t, in[dim], out[s], align, OptionalDouble(c, n, 4 + s)));
  }
  return {g};
}

// Source row of each padded row: reflection mirrors about the edge rows, replication repeats them.
std::vector<int64_t> PadIndex(int64_t size, int64_t lo, int64_t hi, bool reflect) {
  std::vector<int64_t> index;
  for (int64_t o = -lo; o < size + hi; ++o) {
    int64_t i = o;
    if (reflect) {
      if (i < 0) i = -i;
      if (i >= size) i = 2 * (size - 1) - i;
    } else {
      i = std::min(std::max(i, int64_t{0}), size - 1);
    }
    index.push_back(i);
  }
  return index;
}

// The padding's (lo, hi) pairs, last dimension first, as ATen lists them; checked as eager does.
std::vector<std::pair<int64_t, int64_t>> PadPairs(LoweringContext& c, const ir::Node& n, const std::vector<int64_t>& dims,
                                                  bool reflect) {
  const auto pad = IntList(c.ConstArg(n, 1));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t k = 0; k + 1 < pad.size(); k += 2) {
    int64_t dim = static_cast<int64_t>(dims.size()) - 1 - static_cast<int64_t>(k / 2);
    int64_t lo = pad[k], hi = pad[k + 1];
    if (lo < 0 || hi < 0) throw NotLowered("negative padding");
    if (reflect && (lo >= dims[dim] || hi >= dims[dim])) throw NotLowered("reflection padding as wide as the input");
    if (dims[dim] == 0) throw NotLowered("padding an empty dimension");
    pairs.emplace_back(lo, hi);
  }
  return pairs;
}

template <bool kReflect>
Outs PadEdges(LoweringContext& c, const ir::Node& n) {  // (self, padding)
  Instruction* x = c.Operand(n, 0);
  const auto pairs = PadPairs(c, n, x->shape().dims, kReflect);
  for (size_t k = 0; k < pairs.size(); ++k) {
    int64_t dim = x->shape().rank() - 1 - static_cast<int64_t>(k);
    x = c.TakeRows(x, c.IndexConstant(PadIndex(x->shape().dims[dim], pairs[k].first, pairs[k].second, kReflect)), dim);
  }
  return {x};
}

template <bool kReflect>
Outs PadEdgesBackward(LoweringContext& c, const ir::Node& n) {  // (grad_output, self, padding)
  Instruction* g = c.Operand(n, 0);
  const auto in = c.Operand(n, 1)->shape().dims;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  {
    const auto pad = IntList(c.ConstArg(n, 2));
    for (size_t k = 0; k + 1 < pad.size(); k += 2) {
      if (pad[k] < 0 || pad[k + 1] < 0) throw NotLowered("negative padding");
      pairs.emplace_back(pad[k], pad[k + 1]);
    }
  }
  for (size_t k = pairs.size(); k-- > 0;) {
    int64_t dim = static_cast<int64_t>(in.size()) - 1 - static_cast<int64_t>(k);
    std::vector<int64_t> dims = g->shape().dims;
    dims[dim] = in[dim];
    g = c.AddRows(Zeros(c, dims, g->shape().type), c.IndexConstant(PadIndex(in[dim], pairs[k].first, pairs[k].second, kReflect)),
                  g, dim);
  }
  return {g};
}

// pixel_shuffle(self, r): [*, C*r*r, H, W] -> [*, C, H*r, W*r]; pixel_unshuffle is its inverse.
// Both split the channels (or the rows and columns) by r, permute, and merge.
template <bool kShuffle>
Outs PixelShuffle(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const int64_t r = c.ConstArg(n, 1).toInt();
  auto d = x->shape().dims;
  const int64_t b = static_cast<int64_t>(d.size()) - 3;
  std::vector<int64_t> split(d.begin(), d.begin() + b), perm;
  const std::vector<int64_t> parts = kShuffle ? std::vector<int64_t>{d[b] / (r * r), r, r, d[b + 1], d[b + 2]}
                                              : std::vector<int64_t>{d[b], d[b + 1] / r, r, d[b + 2] / r, r};
  split.insert(split.end(), parts.begin(), parts.end());
  for (int64_t k = 0; k < b; ++k) perm.push_back(k);
  for (int64_t k : kShuffle ? std::vector<int64_t>{0, 3, 1, 4, 2} : std::vector<int64_t>{0, 2, 4, 1, 3}) perm.push_back(b + k);
  return {c.Reshape(c.Transpose(c.Reshape(x, split), perm), n.shape().sizes)};
}

// Adaptive average pooling along one dimension: output o averages input rows
// [floor(o * in / out), ceil((o + 1) * in / out)), as tap k of each window (weight 0 past its end).
std::vector<LinearTaps> AdaptiveTaps(int64_t in, int64_t out) {
  std::vector<int64_t> start(out), end(out);
  int64_t longest = 0;
  for (int64_t o = 0; o < out; ++o) {
    start[o] = (o * in) / out;
    end[o] = ((o + 1) * in + out - 1) / out;
    longest = std::max(longest, end[o] - start[o]);
  }
  std::vector<LinearTaps> taps(longest);
  for (int64_t k = 0; k < longest; ++k) {
    for (int64_t o = 0; o < out; ++o) {
      const bool inside = start[o] + k < end[o];
      taps[k].i0.push_back(inside ? start[o] + k : start[o]);
      taps[k].w0.push_back(inside ? 1.0 / static_cast<double>(end[o] - start[o]) : 0.0);
    }
  }
  return taps;
}

}  // namespace

Instruction* AdaptiveAverage(LoweringContext& c, Instruction* x, const std::vector<int64_t>& out_dims, int64_t spatial) {
  ElementType t = x->shape().type;
  const int64_t r = x->shape().rank();
  for (int64_t dim = r - spatial; dim < r; ++dim) {
    Instruction* sum = nullptr;
    for (const LinearTaps& tap : AdaptiveTaps(x->shape().dims[dim], out_dims[dim])) {
      Instruction* rows = c.TakeRows(x, c.IndexConstant(tap.i0), dim);
      Instruction* term = c.Elementwise(Opcode::kMultiply, {rows, WeightColumn(c, tap.w0, dim, rows->shape().dims, t)}, t);
      sum = sum ? c.Elementwise(Opcode::kAdd, {sum, term}, t) : term;
    }
    x = sum;
  }
  return x;
}

Instruction* AdaptiveAverageAdjoint(LoweringContext& c, Instruction* g, const std::vector<int64_t>& in_dims, int64_t spatial) {
  ElementType t = g->shape().type;
  const int64_t r = g->shape().rank();
  for (int64_t dim = r - 1; dim >= r - spatial; --dim) {
    std::vector<int64_t> dims = g->shape().dims;
    dims[dim] = in_dims[dim];
    Instruction* acc = Zeros(c, dims, t);
    for (const LinearTaps& tap : AdaptiveTaps(in_dims[dim], g->shape().dims[dim]))
      acc = c.AddRows(acc, c.IndexConstant(tap.i0),
                      c.Elementwise(Opcode::kMultiply, {g, WeightColumn(c, tap.w0, dim, g->shape().dims, t)}, t), dim);
    g = acc;
  }
  return g;
}

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_upsample_nearest1d, UpsampleNearest)
TXLA_LOWER(aten_upsample_nearest2d, UpsampleNearest)
TXLA_LOWER(aten_upsample_nearest3d, UpsampleNearest)
TXLA_LOWER(aten_upsample_nearest1d_backward, UpsampleNearestBackward)
TXLA_LOWER(aten_upsample_nearest2d_backward, UpsampleNearestBackward)
TXLA_LOWER(aten_upsample_nearest3d_backward, UpsampleNearestBackward)
TXLA_LOWER(aten_upsample_nearest3d_vec, UpsampleNearestVec)
TXLA_LOWER(aten_upsample_nearest3d_backward_vec, UpsampleNearestVecBackward)
TXLA_LOWER(aten_upsample_linear1d, UpsampleLinear)
TXLA_LOWER(aten_upsample_bilinear2d, UpsampleLinear)
TXLA_LOWER(aten_upsample_trilinear3d, UpsampleLinear)
TXLA_LOWER(aten_upsample_linear1d_backward, UpsampleLinearBackward)
TXLA_LOWER(aten_upsample_bilinear2d_backward, UpsampleLinearBackward)
TXLA_LOWER(aten_upsample_trilinear3d_backward, UpsampleLinearBackward)
TXLA_LOWER(aten_reflection_pad1d, PadEdges<true>)
TXLA_LOWER(aten_reflection_pad2d, PadEdges<true>)
TXLA_LOWER(aten_reflection_pad3d, PadEdges<true>)
TXLA_LOWER(aten_replication_pad1d, PadEdges<false>)
TXLA_LOWER(aten_replication_pad2d, PadEdges<false>)
TXLA_LOWER(aten_replication_pad3d, PadEdges<false>)
TXLA_LOWER(aten_reflection_pad1d_backward, PadEdgesBackward<true>)
TXLA_LOWER(aten_reflection_pad2d_backward, PadEdgesBackward<true>)
TXLA_LOWER(aten_reflection_pad3d_backward, PadEdgesBackward<true>)
TXLA_LOWER(aten_replication_pad1d_backward, PadEdgesBackward<false>)
TXLA_LOWER(aten_replication_pad2d_backward, PadEdgesBackward<false>)
TXLA_LOWER(aten_replication_pad3d_backward, PadEdgesBackward<false>)
TXLA_LOWER(aten_pixel_shuffle, PixelShuffle<true>)
TXLA_LOWER(aten_pixel_unshuffle, PixelShuffle<false>)

}  // namespace txla::lower
