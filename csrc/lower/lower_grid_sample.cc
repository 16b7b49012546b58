// grid_sampler_2d (F.grid_sample on 4-D inputs) and its gradients, bilinear and nearest, with
// ATen's padding modes and corner alignment (bicubic keeps the CPU fallback: op_table.cc). Each
// output position reads its corners by a gather over the flattened image; the input's gradient
// scatters back to them.
#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// A source coordinate along an axis of `size` pixels, and its derivative with respect to the
// grid's normalized coordinate.
struct Axis {
  Instruction* at;
  Instruction* slope;
};

// clip_coordinates_set_grad: into [0, size - 1]; a clipped coordinate, the bounds included, has
// no gradient.
Axis Clip(Builder& b, Axis a, int64_t size) {
  const double top = static_cast<double>(size - 1);
  Instruction* inside = b.all(b.cmp(Comparison::kGt, a.at, b.k(0)), b.cmp(Comparison::kLt, a.at, b.k(top)));
  Instruction* at = b.c.Elementwise(Opcode::kMinimum, {b.c.Elementwise(Opcode::kMaximum, {a.at, b.k(0)}, b.t), b.k(top)}, b.t);
  return {at, b.sel(inside, a.slope, b.k(0))};
}

// reflect_coordinates_set_grad: folded into [low, high] / 2 (twice_low, twice_high in half
// pixels) as a mirror would; each fold flips the derivative's sign.
Axis Reflect(Builder& b, Axis a, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return {b.k(0), b.k(0)};
  const double low = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  Instruction* shifted = b.sub(a.at, b.k(low));
  Instruction* below = b.cmp(Comparison::kLt, shifted, b.k(0));
  Instruction* in = b(Opcode::kAbs, shifted);
  Instruction* extra = b(Opcode::kRemainder, in, b.k(span));
  Instruction* flips = b(Opcode::kFloor, b.div(in, b.k(span)));
  Instruction* even = b.cmp(Comparison::kEq, b.mul(b(Opcode::kFloor, b.mul(flips, b.k(0.5))), b.k(2)), flips);
  Instruction* sign = b.sel(below, b.k(-1), b.k(1));
  return {b.sel(even, b.add(extra, b.k(low)), b.sub(b.k(span + low), extra)),
          b.mul(a.slope, b.sel(even, sign, b(Opcode::kNegate, sign)))};
}

// grid_sampler_compute_source_index_set_grad.
Axis SourceIndex(Builder& b, Instruction* coord, int64_t size, int64_t padding, bool align_corners) {
  const double n = static_cast<double>(size);
  // -1 and 1 are the corner pixels' centres (align_corners) or their outer edges.
  Axis a = align_corners ? Axis{b.mul(b.add(coord, b.k(1)), b.k((n - 1) / 2)), b.k((n - 1) / 2)}
                         : Axis{b.div(b.sub(b.mul(b.add(coord, b.k(1)), b.k(n)), b.k(1)), b.k(2)), b.k(n / 2)};
  if (padding == kBorder) return Clip(b, a, size);
  if (padding == kReflection)
    return Clip(b, align_corners ? Reflect(b, a, 0, 2 * (size - 1)) : Reflect(b, a, -1, 2 * size - 1), size);
  return a;
}

// What both passes need: the image as [N, C, H*W], the grid's source coordinates as [N, P]
// (P = Ho * Wo), and per corner its position, its weight and whether it lies in the image.
struct Sampling {
  int64_t batch, channels, height, width, points;
  Instruction* plane;
  Axis x, y;
  struct Corner {
    Instruction* flat;    // s64 [N, C, P], clamped into the image
    Instruction* inside;  // pred [N, 1, P]
    Instruction* weight;  // [N, 1, P]
  };
  std::vector<Corner> corners;  // bilinear: nw, ne, sw, se; nearest: one
  // Bilinear: the weights of the x0 and x1 columns and the y0 and y1 rows ([N, 1, P]).
  Instruction *left = nullptr, *right = nullptr, *top = nullptr, *bottom = nullptr;
};

Sampling SamplingOf(LoweringContext& c, const ir::Node& n, size_t input_arg, ElementType t) {
  Instruction* input = c.Operand(n, input_arg);
  Instruction* grid = c.Convert(c.Operand(n, input_arg + 1), t);
  const int64_t mode = c.ConstArg(n, input_arg + 2).toInt(), padding = c.ConstArg(n, input_arg + 3).toInt();
  const bool align = c.ConstArg(n, input_arg + 4).toBool();
  Sampling s;
  const std::vector<int64_t>& in = input->shape().dims;
  s.batch = in[0], s.channels = in[1], s.height = in[2], s.width = in[3];
  s.points = grid->shape().dims[1] * grid->shape().dims[2];
  s.plane = c.Reshape(input, {s.batch, s.channels, s.height * s.width});
  Builder b{c, t};
  auto coord = [&](int64_t k) { return c.Reshape(c.Slice(grid, 3, k, k + 1), {s.batch, 1, s.points}); };
  s.x = SourceIndex(b, coord(0), s.width, padding, align);
  s.y = SourceIndex(b, coord(1), s.height, padding, align);
  Builder i64{c, ElementType::kS64};
  auto corner = [&](Instruction* cx, Instruction* cy, Instruction* weight) {
    Instruction* inside = b.all(b.all(b.cmp(Comparison::kGe, cx, b.k(0)), b.cmp(Comparison::kLt, cx, b.k(static_cast<double>(s.width)))),
                                b.all(b.cmp(Comparison::kGe, cy, b.k(0)), b.cmp(Comparison::kLt, cy, b.k(static_cast<double>(s.height)))));
    auto index = [&](Instruction* v, int64_t size) {
      Instruction* clamped = c.Elementwise(Opcode::kMinimum, {c.Elementwise(Opcode::kMaximum, {v, b.k(0)}, t), b.k(static_cast<double>(size - 1))}, t);
      return c.Convert(clamped, ElementType::kS64);
    };
    Instruction* flat = i64.add(i64.mul(index(cy, s.height), i64.k(static_cast<double>(s.width))), index(cx, s.width));
    s.corners.push_back({c.BroadcastTo(flat, {s.batch, s.channels, s.points}), inside, weight});
  };
  if (mode == kNearest) {
    corner(b(Opcode::kRoundNearestEven, s.x.at), b(Opcode::kRoundNearestEven, s.y.at), b.k(1));
  } else {
    Instruction* x0 = b(Opcode::kFloor, s.x.at);
    Instruction* y0 = b(Opcode::kFloor, s.y.at);
    Instruction* x1 = b.add(x0, b.k(1));
    Instruction* y1 = b.add(y0, b.k(1));
    s.left = b.sub(x1, s.x.at);
    s.right = b.sub(s.x.at, x0);
    s.top = b.sub(y1, s.y.at);
    s.bottom = b.sub(s.y.at, y0);
    corner(x0, y0, b.mul(s.left, s.top));      // nw
    corner(x1, y0, b.mul(s.right, s.top));     // ne
    corner(x0, y1, b.mul(s.left, s.bottom));   // sw
    corner(x1, y1, b.mul(s.right, s.bottom));  // se
  }
  return s;
}

// Corner k's image values, 0 outside the image: [N, C, P].
Instruction* CornerValues(LoweringContext& c, const Sampling& s, size_t k, ElementType t) {
  Builder b{c, t};
  const Sampling::Corner& corner = s.corners[k];
  return b.sel(c.BroadcastTo(corner.inside, {s.batch, s.channels, s.points}), c.TakeAlong(s.plane, corner.flat, 2), b.k(0));
}

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
Outs GridSampler2d(LoweringContext& c, const ir::Node& n) {
  const ElementType t = OutType(n);
  if (n.shape().numel() == 0) return {c.BroadcastTo(c.Constant(0, t), n.shape().sizes)};
  Sampling s = SamplingOf(c, n, 0, t);
  Builder b{c, t};
  Instruction* out = nullptr;
  for (size_t k = 0; k < s.corners.size(); ++k) {
    Instruction* term = b.mul(CornerValues(c, s, k, t), s.corners[k].weight);
    out = out ? b.add(out, term) : term;
  }
  return {c.Reshape(out, n.shape().sizes)};
}

// grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
// align_corners, output_mask) -> (grad_input, grad_grid)
Outs GridSampler2dBackward(LoweringContext& c, const ir::Node& n) {
  const ElementType t = OutType(n, 1);
  const std::vector<bool> mask = c.ConstArg(n, 6).toBoolList().vec();
  const std::vector<int64_t> in_dims = n.shape(0).sizes, grid_dims = n.shape(1).sizes;
  Builder b{c, t};
  if (n.shape(0).numel() == 0 || n.shape(1).numel() == 0)
    return {mask[0] ? c.BroadcastTo(b.k(0), in_dims) : nullptr, mask[1] ? c.BroadcastTo(b.k(0), grid_dims) : nullptr};
  Sampling s = SamplingOf(c, n, 1, t);
  Instruction* g = c.Reshape(c.Convert(c.Operand(n, 0), t), {s.batch, s.channels, s.points});
  Outs grads = {nullptr, nullptr};
  if (mask[0]) {  // each output's gradient, weighted, into the corners it read
    std::vector<Instruction*> at, add;
    for (const Sampling::Corner& corner : s.corners) {
      at.push_back(corner.flat);
      add.push_back(b.mul(g, b.sel(corner.inside, corner.weight, b.k(0))));
    }
    hlo::Attributes join;
    join.dimensions = {2};
    const int64_t all = s.points * static_cast<int64_t>(s.corners.size());
    Instruction* index = at.size() == 1 ? at[0] : c.Add(Opcode::kConcatenate, hlo::Shape::Array(ElementType::kS64, {s.batch, s.channels, all}), at, join);
    Instruction* updates = add.size() == 1 ? add[0] : c.Add(Opcode::kConcatenate, hlo::Shape::Array(t, {s.batch, s.channels, all}), add, join);
    Instruction* sums = c.AddAlong(c.BroadcastTo(b.k(0), s.plane->shape().dims), index, updates, 2);
    grads[0] = c.Convert(c.Reshape(sums, in_dims), OutType(n, 0));
  }
  if (mask[1]) {
    if (s.corners.size() == 1) {  // nearest: no gradient for the grid
      grads[1] = c.BroadcastTo(b.k(0), grid_dims);
    } else {
      Instruction* v[4];
      for (size_t k = 0; k < 4; ++k) v[k] = CornerValues(c, s, k, t);
      // d out / d x: the row differences (ne - nw above, se - sw below); d out / d y alike.
      Instruction* dx = b.add(b.mul(b.sub(v[1], v[0]), s.top), b.mul(b.sub(v[3], v[2]), s.bottom));
      Instruction* dy = b.add(b.mul(b.sub(v[2], v[0]), s.left), b.mul(b.sub(v[3], v[1]), s.right));
      auto total = [&](Instruction* d, const Axis& axis) {
        Instruction* sum = c.Reduce(b.mul(d, g), {1}, RK::kSum, /*keepdim=*/true);  // [N, 1, P]
        return c.Reshape(b.mul(sum, axis.slope), {s.batch, s.points, 1});
      };
      hlo::Attributes last;
      last.dimensions = {2};
      Instruction* both = c.Add(Opcode::kConcatenate, hlo::Shape::Array(t, {s.batch, s.points, 2}), {total(dx, s.x), total(dy, s.y)}, last);
      grads[1] = c.Reshape(both, grid_dims);
    }
    grads[1] = c.Convert(grads[1], OutType(n, 1));
  }
  return grads;
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_grid_sampler_2d, GridSampler2d)
TXLA_LOWER(aten_grid_sampler_2d_backward, GridSampler2dBackward)

}  // namespace txla::lower
