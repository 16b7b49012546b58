#include <gtest/gtest.h>

#include <cmath>

#include "hlo/literal.h"
#include "hlo/shape.h"

namespace txla::hlo {
namespace {

TEST(HloShapeTest, PrintsXlaSyntaxWithDefaultLayout) {
  EXPECT_EQ(Shape::Array(ElementType::kF32, {128, 512}).ToString(), "f32[128,512]{1,0}");
  EXPECT_EQ(Shape::Array(ElementType::kS64, {4, 3, 2}).ToString(), "s64[4,3,2]{2,1,0}");
  EXPECT_EQ(Shape::Scalar(ElementType::kPred).ToString(), "pred[]");
  EXPECT_EQ(Shape::Array(ElementType::kF32, {2, 3}).ToString(false), "f32[2,3]");
  Shape t = Shape::Tuple({Shape::Array(ElementType::kF32, {4}), Shape::Scalar(ElementType::kS32)});
  EXPECT_EQ(t.ToString(), "(f32[4]{0}, s32[])");
}

TEST(HloShapeTest, EqualityAndCounts) {
  EXPECT_EQ(Shape::Array(ElementType::kF32, {2, 3}), Shape::Array(ElementType::kF32, {2, 3}));
  EXPECT_NE(Shape::Array(ElementType::kF32, {2, 3}), Shape::Array(ElementType::kF64, {2, 3}));
  EXPECT_NE(Shape::Array(ElementType::kF32, {2, 3}), Shape::Array(ElementType::kF32, {3, 2}));
  EXPECT_EQ(Shape::Array(ElementType::kF32, {2, 0, 3}).element_count(), 0);
  EXPECT_EQ(Shape::Scalar(ElementType::kF32).element_count(), 1);
}

TEST(HloShapeTest, ElementTypeNamesRoundTrip) {
  for (const char* name : {"pred", "s8", "s16", "s32", "s64", "u8", "f16", "bf16", "f32", "f64"})
    EXPECT_STREQ(runtime::ElementTypeName(ParseElementType(name)), name);
  EXPECT_THROW(ParseElementType("c64"), std::invalid_argument);
}

TEST(HloLiteralTest, PrintsScalarsArraysAndSpecialValues) {
  EXPECT_EQ(Literal::Scalar(ElementType::kF32, 1).ToString(), "1");
  EXPECT_EQ(Literal::Scalar(ElementType::kF32, 0.5).ToString(), "0.5");
  EXPECT_EQ(Literal::Scalar(ElementType::kF32, -INFINITY).ToString(), "-inf");
  EXPECT_EQ(Literal::Scalar(ElementType::kPred, 1).ToString(), "true");
  Literal m = Literal::FromInts(Shape::Array(ElementType::kS32, {2, 2}), {1, 2, 3, 4});
  EXPECT_EQ(m.ToString(), "{{1, 2}, {3, 4}}");
  EXPECT_TRUE(Literal::FromDoubles(Shape::Array(ElementType::kF32, {3}), {1, 1, 1}).IsAll(1));
  EXPECT_FALSE(m.IsAll(1));
  EXPECT_THROW(Literal::FromInts(Shape::Array(ElementType::kS32, {2}), {1}), std::invalid_argument);
}

}  // namespace
}  // namespace txla::hlo
