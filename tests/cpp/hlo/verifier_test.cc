// The verifier rejects modules whose shapes do not follow from their operands, naming the rule.
#include <gtest/gtest.h>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace txla::hlo {
namespace {

std::string VerifyError(const std::string& body) {
  auto module = ParseModule("HloModule m\nENTRY %main {\n" + body + "}\n");
  try {
    Verify(*module);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(HloVerifierTest, AcceptsAConsistentModule) {
  EXPECT_EQ(VerifyError("  %p = f32[2,3] parameter(0)\n  ROOT %t = f32[3,2] transpose(%p), dimensions={1,0}\n"), "");
}

// Found by the parser fuzzer: windows and dimension labels are checked before any arithmetic
// uses them (a repeated label read past a vector, a zero stride divided by zero).
TEST(HloVerifierTest, RejectsBadWindowsAndDimensionLabels) {
  const std::string operands = "  %x = f32[1,1,4,4] parameter(0)\n  %w = f32[1,1,2,2] parameter(1)\n";
  EXPECT_NE(VerifyError(operands + "  ROOT %c = f32[1,1,3,3] convolution(%x, %w), window={size=2x2}, "
                                   "dim_labels=bf00_oi01->bf01\n")
                .find("dim_labels must name each dimension"),
            std::string::npos);
  EXPECT_NE(VerifyError(operands + "  ROOT %c = f32[1,1,3,3] convolution(%x, %w), window={size=2x2 stride=0x1}, "
                                   "dim_labels=bf01_oi01->bf01\n")
                .find("strides and dilations must be in [1, 2^31)"),
            std::string::npos);
  auto module = ParseModule(
      "HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %s = f32[] add(%a, %b)\n}\nENTRY %main {\n  %x = f32[4] parameter(0)\n  %z = f32[] constant(0)\n"
      "  ROOT %r = f32[4] reduce-window(%x, %z), window={size=0}, to_apply=%add\n}\n");
  try {
    Verify(*module);
    ADD_FAILURE() << "a window of size 0 verified";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("window sizes"), std::string::npos) << e.what();
  }
}

TEST(HloVerifierTest, RejectsWrongDeclaredShapes) {
  EXPECT_NE(VerifyError("  %p = f32[2,3] parameter(0)\n  ROOT %t = f32[2,3] transpose(%p), dimensions={1,0}\n")
                .find("declared f32[2,3]{1,0} but its operands give f32[3,2]{1,0}"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[2,3] parameter(0)\n  %b = f32[3] parameter(1)\n  ROOT %s = f32[2,3] add(%a, %b)\n")
                .find("operand shapes differ"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[3,4] parameter(0)\n  %b = f32[5,2] parameter(1)\n  ROOT %d = f32[3,2] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n")
                .find("contracting dimensions differ"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[6] parameter(0)\n  ROOT %r = f32[4] reshape(%a)\n").find("element count"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[3] parameter(0)\n  ROOT %b = f32[2,4] broadcast(%a), dimensions={1}\n")
                .find("does not map"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[4] parameter(0)\n  ROOT %s = f32[2] slice(%a), slice={[2:6]}\n")
                .find("out of bounds"),
            std::string::npos);
}

TEST(HloVerifierTest, RejectsBadParameterNumbering) {
  EXPECT_NE(VerifyError("  %a = f32[] parameter(0)\n  %b = f32[] parameter(2)\n  ROOT %s = f32[] add(%a, %b)\n")
                .find("numbered 0..n-1"),
            std::string::npos);
  EXPECT_NE(VerifyError("  %a = f32[] parameter(0)\n  %b = f32[] parameter(0)\n  ROOT %s = f32[] add(%a, %b)\n")
                .find("appears twice"),
            std::string::npos);
}

TEST(HloVerifierTest, ChecksCalledComputationArity) {
  auto module = ParseModule(R"(HloModule m
%f (p: f32[2]) -> f32[2] {
  ROOT %p = f32[2] parameter(0)
}
ENTRY %main {
  %a = f32[2] parameter(0)
  ROOT %c = f32[2] call(%a, %a), to_apply=%f
}
)");
  EXPECT_THROW(Verify(*module), std::invalid_argument);
}

}  // namespace
}  // namespace txla::hlo
