// HLO text in, HLO text out: what the parser reads, the printer writes back unchanged.
#include <gtest/gtest.h>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace txla::hlo {
namespace {

// Parses, verifies, prints; the printed text must equal the input.
void ExpectRoundTrip(const std::string& text) {
  auto module = ParseModule(text);
  Verify(*module);
  EXPECT_EQ(ToText(*module), text);
}

TEST(HloTextTest, ElementwiseBroadcastAndConstants) {
  ExpectRoundTrip(R"(HloModule m

ENTRY %main (p0: f32[2,3], p1: f32[3]) -> f32[2,3] {
  %p0 = f32[2,3]{1,0} parameter(0)
  %p1 = f32[3]{0} parameter(1)
  %broadcast.1 = f32[2,3]{1,0} broadcast(f32[3]{0} %p1), dimensions={1}
  %multiply.2 = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %p0, f32[2,3]{1,0} %broadcast.1)
  %constant.3 = f32[] constant(0.5)
  %broadcast.4 = f32[2,3]{1,0} broadcast(f32[] %constant.3), dimensions={}
  %compare.5 = pred[2,3]{1,0} compare(f32[2,3]{1,0} %multiply.2, f32[2,3]{1,0} %broadcast.4), direction=GT
  ROOT %select.6 = f32[2,3]{1,0} select(pred[2,3]{1,0} %compare.5, f32[2,3]{1,0} %multiply.2, f32[2,3]{1,0} %broadcast.4)
}
)");
}

TEST(HloTextTest, SourceMetadataRoundTripsAndXlasOtherFieldsAreRead) {
  ExpectRoundTrip(R"(HloModule m

ENTRY %main (p0: f32[2,3]) -> f32[2,3] {
  %p0 = f32[2,3]{1,0} parameter(0)
  ROOT %exponential.1 = f32[2,3]{1,0} exponential(f32[2,3]{1,0} %p0), metadata={op_type="aten::exp" source_file="/home/me/train.py" source_line=42}
}
)");
  // XLA's dumps carry op_name too (and may omit the source): read, what we keep printed back.
  auto module = ParseModule(R"(HloModule m

ENTRY %main (p0: f32[2]) -> f32[2] {
  %p0 = f32[2]{0} parameter(0)
  ROOT %negate.1 = f32[2]{0} negate(f32[2]{0} %p0), metadata={op_type="aten::neg" op_name="jit(f)/neg"}
}
)");
  const Attributes::Metadata& m = module->entry()->root()->attrs().metadata;
  EXPECT_EQ(m.op_type, "aten::neg");
  EXPECT_TRUE(m.source_file.empty());
  EXPECT_NE(ToText(*module).find("metadata={op_type=\"aten::neg\"}"), std::string::npos);
}

TEST(HloTextTest, ReduceWithCalledComputation) {
  ExpectRoundTrip(R"(HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.0 = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p0: f32[4,5]) -> f32[4] {
  %p0 = f32[4,5]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %reduce.1 = f32[4]{0} reduce(f32[4,5]{1,0} %p0, f32[] %zero), dimensions={1}, to_apply=%add
}
)");
}

TEST(HloTextTest, ShapeOpsDotConvolutionAndPooling) {
  ExpectRoundTrip(R"(HloModule m

%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %maximum.0 = f32[] maximum(f32[] %x, f32[] %y)
}

ENTRY %main (x: f32[8,1,28,28], w: f32[10,1,5,5], a: f32[3,4], b: f32[4,5]) -> (f32[8,10,12,12], f32[3,5], f32[2,2], f32[5,6], f32[4,3], s32[5], f32[3,8]) {
  %x = f32[8,1,28,28]{3,2,1,0} parameter(0)
  %w = f32[10,1,5,5]{3,2,1,0} parameter(1)
  %a = f32[3,4]{1,0} parameter(2)
  %b = f32[4,5]{1,0} parameter(3)
  %conv = f32[8,10,24,24]{3,2,1,0} convolution(f32[8,1,28,28]{3,2,1,0} %x, f32[10,1,5,5]{3,2,1,0} %w), window={size=5x5}, dim_labels=bf01_oi01->bf01
  %neg_inf = f32[] constant(-inf)
  %pool = f32[8,10,12,12]{3,2,1,0} reduce-window(f32[8,10,24,24]{3,2,1,0} %conv, f32[] %neg_inf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=%max
  %dot = f32[3,5]{1,0} dot(f32[3,4]{1,0} %a, f32[4,5]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %slice = f32[2,2]{1,0} slice(f32[3,4]{1,0} %a), slice={[0:2], [0:4:2]}
  %zero = f32[] constant(0)
  %pad = f32[5,6]{1,0} pad(f32[3,4]{1,0} %a, f32[] %zero), padding=1_1x0_2
  %transpose = f32[4,3]{1,0} transpose(f32[3,4]{1,0} %a), dimensions={1,0}
  %iota = s32[5]{0} iota(), iota_dimension=0
  %concatenate = f32[3,8]{1,0} concatenate(f32[3,4]{1,0} %a, f32[3,4]{1,0} %a), dimensions={1}
  ROOT %tuple = (f32[8,10,12,12]{3,2,1,0}, f32[3,5]{1,0}, f32[2,2]{1,0}, f32[5,6]{1,0}, f32[4,3]{1,0}, s32[5]{0}, f32[3,8]{1,0}) tuple(f32[8,10,12,12]{3,2,1,0} %pool, f32[3,5]{1,0} %dot, f32[2,2]{1,0} %slice, f32[5,6]{1,0} %pad, f32[4,3]{1,0} %transpose, s32[5]{0} %iota, f32[3,8]{1,0} %concatenate)
}
)");
}

TEST(HloTextTest, BatchedDotPaddedStridedConvolutionAndFusion) {
  ExpectRoundTrip(R"(HloModule m

%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %add.0 = f32[4]{0} add(f32[4]{0} %p0, f32[4]{0} %p1)
  ROOT %tanh.1 = f32[4]{0} tanh(f32[4]{0} %add.0)
}

ENTRY %main (a: f32[2,3,4], b: f32[2,4,5], x: f32[1,4,9,9], w: f32[6,2,3,3], u: f32[4]) -> (f32[2,3,5], f32[1,6,5,5], f32[4]) {
  %a = f32[2,3,4]{2,1,0} parameter(0)
  %b = f32[2,4,5]{2,1,0} parameter(1)
  %x = f32[1,4,9,9]{3,2,1,0} parameter(2)
  %w = f32[6,2,3,3]{3,2,1,0} parameter(3)
  %u = f32[4]{0} parameter(4)
  %bmm = f32[2,3,5]{2,1,0} dot(f32[2,3,4]{2,1,0} %a, f32[2,4,5]{2,1,0} %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  %conv = f32[1,6,5,5]{3,2,1,0} convolution(f32[1,4,9,9]{3,2,1,0} %x, f32[6,2,3,3]{3,2,1,0} %w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
  %fusion = f32[4]{0} fusion(f32[4]{0} %u, f32[4]{0} %u), kind=kLoop, calls=%fused
  ROOT %tuple = (f32[2,3,5]{2,1,0}, f32[1,6,5,5]{3,2,1,0}, f32[4]{0}) tuple(f32[2,3,5]{2,1,0} %bmm, f32[1,6,5,5]{3,2,1,0} %conv, f32[4]{0} %fusion)
}
)");
}

TEST(HloTextTest, CollectivesWithReplicaGroupsAndTokens) {
  ExpectRoundTrip(R"(HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.0 = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p0: f32[4,6]) -> (f32[4,6], f32[8,6], f32[2,6]) {
  %p0 = f32[4,6]{1,0} parameter(0)
  %all-reduce.1 = f32[4,6]{1,0} all-reduce(f32[4,6]{1,0} %p0), replica_groups={}, to_apply=%add
  %all-gather.2 = f32[8,6]{1,0} all-gather(f32[4,6]{1,0} %p0, f32[4,6]{1,0} %all-reduce.1), dimensions={0}, replica_groups={{1,0},{3,2}}
  %reduce-scatter.3 = f32[2,6]{1,0} reduce-scatter(f32[4,6]{1,0} %p0), dimensions={0}, replica_groups={{0,1},{2,3}}, to_apply=%add
  ROOT %tuple.4 = (f32[4,6]{1,0}, f32[8,6]{1,0}, f32[2,6]{1,0}) tuple(f32[4,6]{1,0} %all-reduce.1, f32[8,6]{1,0} %all-gather.2, f32[2,6]{1,0} %reduce-scatter.3)
}
)");
}

TEST(HloTextTest, OperandShapesAndLayoutsAreOptionalOnInput) {
  auto module = ParseModule(R"(HloModule m
ENTRY %main {
  %p0 = f32[2,2] parameter(0)
  ROOT %n = f32[2,2] negate(%p0)  // a comment
}
)");
  Verify(*module);
  EXPECT_EQ(ToText(*module->entry()->root()), "ROOT %n = f32[2,2]{1,0} negate(f32[2,2]{1,0} %p0)");
}

// XLA's operand_precision on convolutions and the library calls that carry their geometry;
// operands of two precisions read as the higher (exact wins), an unknown word is an error.
TEST(HloTextTest, OperandPrecisionRoundTripsAndTheHighestWins) {
  ExpectRoundTrip(R"(HloModule m

ENTRY %main (x: f32[1,4,9,9], w: f32[6,4,3,3]) -> (f32[1,6,7,7], f32[1,4,9,9]) {
  %x = f32[1,4,9,9]{3,2,1,0} parameter(0)
  %w = f32[6,4,3,3]{3,2,1,0} parameter(1)
  %conv = f32[1,6,7,7]{3,2,1,0} convolution(f32[1,4,9,9]{3,2,1,0} %x, f32[6,4,3,3]{3,2,1,0} %w), window={size=3x3}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
  %dx = f32[1,4,9,9]{3,2,1,0} custom-call(f32[1,6,7,7]{3,2,1,0} %conv, f32[6,4,3,3]{3,2,1,0} %w), custom_call_target="txla.conv2d_backward_input", window={size=3x3}, dim_labels=bf01_oi01->bf01, operand_precision={high,high}
  ROOT %tuple = (f32[1,6,7,7]{3,2,1,0}, f32[1,4,9,9]{3,2,1,0}) tuple(f32[1,6,7,7]{3,2,1,0} %conv, f32[1,4,9,9]{3,2,1,0} %dx)
}
)");
  const std::string mixed = R"(HloModule m
ENTRY %main {
  %x = f32[1,4,9,9] parameter(0)
  %w = f32[6,4,3,3] parameter(1)
  ROOT %conv = f32[1,6,7,7] convolution(%x, %w), window={size=3x3}, dim_labels=bf01_oi01->bf01, operand_precision={default,highest}
}
)";
  EXPECT_EQ(ParseModule(mixed)->entry()->root()->attrs().precision, Precision::kHighest);
  std::string unknown = mixed;
  unknown.replace(unknown.find("default,highest"), 15, "default,fastest");
  EXPECT_THROW(ParseModule(unknown), std::invalid_argument);
  std::string absent = mixed;
  absent.erase(absent.find(", operand_precision"), std::string(", operand_precision={default,highest}").size());
  EXPECT_EQ(ParseModule(absent)->entry()->root()->attrs().precision, Precision::kDefault);
}

TEST(HloTextTest, ErrorsNameTheLine) {
  try {
    ParseModule("HloModule m\nENTRY %main {\n  %p0 = f32[2] parameter(0)\n  ROOT %n = f32[2] frobnicate(%p0)\n}\n");
    FAIL() << "expected a parse error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("frobnicate"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseModule("HloModule m\nENTRY %main {\n  ROOT %n = f32[2] negate(%missing)\n}\n"),
               std::invalid_argument);
}

}  // namespace
}  // namespace txla::hlo
