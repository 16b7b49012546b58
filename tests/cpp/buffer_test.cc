#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/buffer.h"

namespace txla::runtime {
namespace {

TEST(BufferTest, AllocatesAlignedDenseStorage) {
  Buffer b(ElementType::kF32, {3, 5}, 0);
  EXPECT_EQ(b.element_count(), 15);
  EXPECT_EQ(b.size_bytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(b.ToString(), "f32[3,5] on xla:0");
}

TEST(BufferTest, ZeroDimAndEmptyShapes) {
  Buffer scalar(ElementType::kS64, {}, 1);
  EXPECT_EQ(scalar.element_count(), 1);
  EXPECT_EQ(scalar.size_bytes(), 8u);
  Buffer empty(ElementType::kPred, {0, 4}, 0);
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_NE(empty.data(), nullptr);
}

TEST(BufferTest, AdoptedMemoryKeepsItsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(6, 1.5f);
  std::weak_ptr<std::vector<float>> watch = owner;
  {
    Buffer b(ElementType::kF32, {2, 3}, 0, owner->data(), owner);
    owner.reset();
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(static_cast<float*>(b.data())[5], 1.5f);
  }
  EXPECT_TRUE(watch.expired());
}

TEST(ElementTypeTest, WidthsAndNames) {
  EXPECT_EQ(ByteWidth(ElementType::kBF16), 2u);
  EXPECT_EQ(ByteWidth(ElementType::kF64), 8u);
  EXPECT_STREQ(ElementTypeName(ElementType::kPred), "pred");
  EXPECT_STREQ(ElementTypeName(ElementType::kS32), "s32");
}

}  // namespace
}  // namespace txla::runtime
