// Node hashing: equal graphs hash equal; any change of op, attribute, shape or dtype changes the
// hash; data never enters it, but the pattern of shared parameters does.
#include <gtest/gtest.h>

#include "graph/post_order.h"
#include "ir/node.h"
#include "ir/op_table.h"

namespace txla::ir {
namespace {

runtime::BufferPtr MakeBuffer(c10::ScalarType dtype, std::vector<int64_t> dims) {
  return std::make_shared<runtime::Buffer>(ToElementType(dtype), std::move(dims), 0);
}

Value Data(c10::ScalarType dtype, std::vector<int64_t> dims) {
  auto buffer = MakeBuffer(dtype, dims);
  return Value{Node::DeviceData(buffer, Shape(dtype, dims)), 0};
}

Value Binary(const char* op, Value a, Value b, c10::IValue alpha, const Shape& out) {
  std::vector<Arg> args(3);
  args[0].kind = Arg::Kind::kTensor;
  args[0].operand = 0;
  args[1].kind = Arg::Kind::kTensor;
  args[1].operand = 1;
  args[2].value = alpha;
  return Value{Node::Op(FindOp(op), {a, b}, std::move(args), {out}), 0};
}

const Shape kF32_2x3(c10::kFloat, {2, 3});

TEST(IrHashTest, EqualGraphsHashEqualWhateverTheData) {
  Value a = Binary("aten::add.Tensor", Data(c10::kFloat, {2, 3}), Data(c10::kFloat, {2, 3}), 1,
                   kF32_2x3);
  Value b = Binary("aten::add.Tensor", Data(c10::kFloat, {2, 3}), Data(c10::kFloat, {2, 3}), 1,
                   kF32_2x3);
  EXPECT_EQ(a.hash(), b.hash());
}

TEST(IrHashTest, OpAttributeShapeAndDtypeEachChangeTheHash) {
  auto make = [](const char* op, c10::IValue alpha, c10::ScalarType dtype,
                 std::vector<int64_t> dims) {
    return Binary(op, Data(dtype, dims), Data(dtype, dims), alpha, Shape(dtype, dims)).hash();
  };
  hash_t base = make("aten::add.Tensor", 1, c10::kFloat, {2, 3});
  EXPECT_NE(base, make("aten::sub.Tensor", 1, c10::kFloat, {2, 3}));  // op
  EXPECT_NE(base, make("aten::add.Tensor", 2, c10::kFloat, {2, 3}));  // attribute
  EXPECT_NE(base, make("aten::add.Tensor", 1.0, c10::kFloat, {2, 3}));  // attribute type
  EXPECT_NE(base, make("aten::add.Tensor", 1, c10::kFloat, {3, 2}));  // shape
  EXPECT_NE(base, make("aten::add.Tensor", 1, c10::kFloat, {6}));     // rank
  EXPECT_NE(base, make("aten::add.Tensor", 1, c10::kDouble, {2, 3}));  // dtype
}

TEST(IrHashTest, OperandOrderChangesTheHash) {
  Value x = Data(c10::kFloat, {2, 3});
  Value y = Binary("aten::mul.Tensor", x, x, c10::IValue(), kF32_2x3);
  Value a = Binary("aten::sub.Tensor", x, y, 1, kF32_2x3);
  Value b = Binary("aten::sub.Tensor", y, x, 1, kF32_2x3);
  EXPECT_NE(a.hash(), b.hash());
}

TEST(IrHashTest, ConstantsHashByValueAndType) {
  auto c = [](c10::Scalar v, c10::ScalarType t) { return Node::Constant(v, t)->hash(); };
  EXPECT_EQ(c(1.0, c10::kFloat), c(1.0, c10::kFloat));
  EXPECT_NE(c(1.0, c10::kFloat), c(0.0, c10::kFloat));
  EXPECT_NE(c(1.0, c10::kFloat), c(1.0, c10::kDouble));
}

TEST(IrHashTest, GraphHashSeesWhichParametersAreShared) {
  Value x = Data(c10::kFloat, {2, 3});
  Value y = Data(c10::kFloat, {2, 3});
  auto x_plus_x = graph::CutGraph({Binary("aten::add.Tensor", x, x, 1, kF32_2x3)}, nullptr);
  auto x_plus_y = graph::CutGraph({Binary("aten::add.Tensor", x, y, 1, kF32_2x3)}, nullptr);
  EXPECT_EQ(x_plus_x.parameters.size(), 1u);
  EXPECT_EQ(x_plus_y.parameters.size(), 2u);
  EXPECT_NE(x_plus_x.hash, x_plus_y.hash);

  // Same structure over other buffers: same graph hash.
  Value u = Data(c10::kFloat, {2, 3});
  Value v = Data(c10::kFloat, {2, 3});
  auto u_plus_v = graph::CutGraph({Binary("aten::add.Tensor", u, v, 1, kF32_2x3)}, nullptr);
  EXPECT_EQ(x_plus_y.hash, u_plus_v.hash);
}

TEST(IrHashTest, CutGraphIsPostOrderAndDeduplicatesRoots) {
  Value x = Data(c10::kFloat, {2, 3});
  Value s = Binary("aten::add.Tensor", x, x, 1, kF32_2x3);
  Value p = Binary("aten::mul.Tensor", s, x, c10::IValue(), kF32_2x3);
  std::vector<size_t> root_index;
  auto cut = graph::CutGraph({p, s, p}, &root_index);
  ASSERT_EQ(cut.nodes.size(), 3u);
  EXPECT_EQ(cut.nodes[0]->kind(), NodeKind::kDeviceData);
  EXPECT_EQ(cut.nodes[2], p.node.get());
  EXPECT_EQ(cut.roots.size(), 2u);
  EXPECT_EQ(root_index, (std::vector<size_t>{0, 1, 0}));
}

}  // namespace
}  // namespace txla::ir
