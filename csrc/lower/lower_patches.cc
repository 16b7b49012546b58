// Sliding-window patches: im2col (F.unfold) and its adjoint col2im (F.fold), each the other's
// gradient.
#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// The geometry of 2-D patches: kernel, dilation, padding and stride per spatial dimension, the
// padded image and the grid of patch positions.
struct Patches {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t height, width;  // the image, unpadded
  int64_t padded_h() const { return height + 2 * ph; }
  int64_t padded_w() const { return width + 2 * pw; }
  int64_t out_h() const { return (padded_h() - (dh * (kh - 1) + 1)) / sh + 1; }
  int64_t out_w() const { return (padded_w() - (dw * (kw - 1) + 1)) / sw + 1; }
  int64_t columns() const { return out_h() * out_w(); }  // L
  // Whole patches side by side (ViT's patchify): plain reshapes and a transpose.
  bool Tiles() const {
    return kh == sh && kw == sw && dh == 1 && dw == 1 && ph == 0 && pw == 0 && height % kh == 0 && width % kw == 0;
  }
};

Patches PatchesOf(LoweringContext& c, const ir::Node& n, size_t kernel_arg, int64_t height, int64_t width) {
  auto pair = [&](size_t arg) {
    std::vector<int64_t> v = IntList(c.ConstArg(n, arg));
    return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
  };
  std::vector<int64_t> k = pair(kernel_arg), d = pair(kernel_arg + 1), p = pair(kernel_arg + 2), s = pair(kernel_arg + 3);
  return {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], height, width};
}

// For every (kernel row, kernel column, patch row, patch column), flattened in that order, the
// flat position it reads in the padded image: computed from iotas, so no index table is stored.
Instruction* PatchPositions(LoweringContext& c, const Patches& g) {
  const std::vector<int64_t> grid{g.kh, g.kw, g.out_h(), g.out_w()};
  const hlo::Shape shape = hlo::Shape::Array(ElementType::kS64, grid);
  Builder b{c, ElementType::kS64};
  auto iota = [&](int64_t d) { return c.Iota(shape, d); };
  Instruction* row = b.add(b.mul(iota(0), b.k(static_cast<double>(g.dh))), b.mul(iota(2), b.k(static_cast<double>(g.sh))));
  Instruction* col = b.add(b.mul(iota(1), b.k(static_cast<double>(g.dw))), b.mul(iota(3), b.k(static_cast<double>(g.sw))));
  Instruction* flat = b.add(b.mul(row, b.k(static_cast<double>(g.padded_w()))), col);
  return c.Reshape(flat, {g.kh * g.kw * g.columns()});
}

Instruction* ZeroPadded(LoweringContext& c, Instruction* x, const Patches& g) {
  if (g.ph == 0 && g.pw == 0) return x;
  hlo::Attributes a;
  a.padding.resize(4);
  a.padding[2] = {g.ph, g.ph, 0};
  a.padding[3] = {g.pw, g.pw, 0};
  std::vector<int64_t> dims = x->shape().dims;
  dims[2] = g.padded_h();
  dims[3] = g.padded_w();
  const ElementType t = x->shape().type;
  return c.Add(Opcode::kPad, hlo::Shape::Array(t, dims), {x, c.Constant(0, t)}, a);
}

// im2col(self, kernel_size, dilation, padding, stride): [N, C, H, W] (or [C, H, W]) ->
// [N, C*kh*kw, L], rows ordered (channel, kernel row, kernel column).
Outs Im2col(LoweringContext& c, const ir::Node& n) {
  Instruction* x = c.Operand(n, 0);
  const bool batched = x->shape().rank() == 4;
  const std::vector<int64_t> out_dims = n.shape().sizes;
  if (!batched) x = c.Reshape(x, {1, x->shape().dims[0], x->shape().dims[1], x->shape().dims[2]});
  const int64_t batch = x->shape().dims[0], channels = x->shape().dims[1];
  const Patches g = PatchesOf(c, n, 1, x->shape().dims[2], x->shape().dims[3]);
  if (x->shape().element_count() == 0 || g.columns() == 0) return {c.BroadcastTo(c.Constant(0, x->shape().type), out_dims)};
  Instruction* columns;
  if (g.Tiles()) {
    Instruction* tiles = c.Reshape(x, {batch, channels, g.out_h(), g.kh, g.out_w(), g.kw});
    columns = c.Transpose(tiles, {0, 1, 3, 5, 2, 4});
  } else {
    Instruction* image = c.Reshape(ZeroPadded(c, x, g), {batch, channels, g.padded_h() * g.padded_w()});
    columns = c.TakeRows(image, PatchPositions(c, g), 2);
  }
  return {c.Reshape(columns, out_dims)};
}

// col2im(self, output_size, kernel_size, dilation, padding, stride): [N, C*kh*kw, L] (or
// [C*kh*kw, L]) -> [N, C, H, W], each column's values added at the positions im2col read them
// from (overlapping patches sum).
Outs Col2im(LoweringContext& c, const ir::Node& n) {
  Instruction* cols = c.Operand(n, 0);
  const std::vector<int64_t> out_dims = n.shape().sizes;
  const bool batched = cols->shape().rank() == 3;
  const std::vector<int64_t> size = IntList(c.ConstArg(n, 1));
  const Patches g = PatchesOf(c, n, 2, size.at(0), size.at(1));
  const int64_t batch = batched ? cols->shape().dims[0] : 1;
  const int64_t channels = out_dims[batched ? 1 : 0];
  const ElementType t = cols->shape().type;
  if (cols->shape().element_count() == 0 || g.columns() == 0) return {c.BroadcastTo(c.Constant(0, t), out_dims)};
  const int64_t per_channel = g.kh * g.kw * g.columns();
  Instruction* image;
  if (g.Tiles()) {
    Instruction* tiles = c.Reshape(cols, {batch, channels, g.kh, g.kw, g.out_h(), g.out_w()});
    image = c.Transpose(tiles, {0, 1, 4, 2, 5, 3});
  } else {
    Instruction* zeros = c.BroadcastTo(c.Constant(0, t), {batch, channels, g.padded_h() * g.padded_w()});
    Instruction* sums = c.AddRows(zeros, PatchPositions(c, g), c.Reshape(cols, {batch, channels, per_channel}), 2);
    image = c.Reshape(sums, {batch, channels, g.padded_h(), g.padded_w()});
    if (g.ph != 0) image = c.Slice(image, 2, g.ph, g.ph + g.height);
    if (g.pw != 0) image = c.Slice(image, 3, g.pw, g.pw + g.width);
  }
  return {c.Reshape(image, out_dims)};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_im2col, Im2col)
TXLA_LOWER(aten_col2im, Col2im)

}  // namespace txla::lower
