#include "compiler/codegen/loop_invariants.h"

#include <gtest/gtest.h>

namespace txla::compiler::emitter {
namespace {

TEST(LoopInvariantsTest, StatementsThatDoNotReadTheInnerVariableRunBeforeItsLoop) {
  const std::string body =
      "      const float v0 = buf1[((i0 / 64)*63 + txla_iclamp((i0 % 64), 0, 62))];\n"
      "      const float v1 = (float)txla_log(v0);\n"
      "      const float v2 = buf2[(i0*512 + i1)];\n"
      "      const float v3 = (v2 - v1);\n"
      "      const float v4 = buf3[0];\n"
      "      const float v5 = (v4 * 2.00000000000000000e+00f);\n"
      "      const bool v6 = (v3 < v5);\n";
  SplitLoopBody split = HoistLoopInvariants(body, "i1");
  EXPECT_EQ(split.invariant,
            "      const float v0 = buf1[((i0 / 64)*63 + txla_iclamp((i0 % 64), 0, 62))];\n"
            "      const float v1 = (float)txla_log(v0);\n"
            "      const float v4 = buf3[0];\n"
            "      const float v5 = (v4 * 2.00000000000000000e+00f);\n");
  EXPECT_EQ(split.varying,
            "      const float v2 = buf2[(i0*512 + i1)];\n"
            "      const float v3 = (v2 - v1);\n"
            "      const bool v6 = (v3 < v5);\n");
}

TEST(LoopInvariantsTest, OnlyWholeIdentifiersCount) {
  // i10 and vi1 are not i1; v12 is not v1; a number's exponent is not a name.
  SplitLoopBody split = HoistLoopInvariants(
      "      const float v1 = buf[i1];\n"
      "      const float v12 = (buf2[i10] + vi1 + 1e+01f);\n"
      "      const int64_t v13 = (v12 > 0 ? v1 : 0);\n",
      "i1");
  EXPECT_EQ(split.invariant, "      const float v12 = (buf2[i10] + vi1 + 1e+01f);\n");
  EXPECT_EQ(split.varying, "      const float v1 = buf[i1];\n      const int64_t v13 = (v12 > 0 ? v1 : 0);\n");
}

TEST(LoopInvariantsTest, NothingMovesPastALineOfAnotherForm) {
  // A window's accumulator and loop: it and everything after it stay where they are.
  SplitLoopBody split = HoistLoopInvariants(
      "      const float v0 = buf[0];\n"
      "      float acc0 = 0;\n"
      "      for (int64_t w0 = 0; w0 < 3; ++w0) {\n"
      "      acc0 = acc0 + v0;\n"
      "      }\n"
      "      const float v1 = buf2[0];\n",
      "i1");
  EXPECT_EQ(split.invariant, "      const float v0 = buf[0];\n");
  EXPECT_EQ(split.varying,
            "      float acc0 = 0;\n"
            "      for (int64_t w0 = 0; w0 < 3; ++w0) {\n"
            "      acc0 = acc0 + v0;\n"
            "      }\n"
            "      const float v1 = buf2[0];\n");
}

}  // namespace
}  // namespace txla::compiler::emitter
