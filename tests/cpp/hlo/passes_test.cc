// Compiler passes: hand-written HLO in, expected HLO out.
#include <gtest/gtest.h>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/compile.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/float_normalization.h"
#include "compiler/passes/fusion.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace txla::compiler {
namespace {

std::string Entry(const std::string& body) { return "HloModule m\n\nENTRY %main {\n" + body + "}\n"; }

// Entry() with an f32 %add computation for reductions to apply.
std::string WithAdd(const std::string& body) {
  return "HloModule m\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
         "  ROOT %s = f32[] add(%x, %y)\n}\nENTRY %main {" + body + "}\n";
}

// The entry computation's text with instructions renamed by position: names are labels, so
// comparing this compares structure.
std::string Structure(hlo::Module& module) {
  int k = 0;
  for (hlo::Instruction* i : module.entry()->instructions()) i->set_name("v" + std::to_string(k++));
  return hlo::ToText(*module.entry());
}

// Runs `pass` on `before` and compares the entry computation's text with `after` (parsed and
// reprinted, so spacing and optional operand shapes do not matter).
void ExpectPass(Pass& pass, const std::string& before, const std::string& after, bool changed = true) {
  auto module = hlo::ParseModule(before);
  hlo::Verify(*module);
  EXPECT_EQ(pass.Run(*module), changed);
  DeadCodeElimination().Run(*module);
  hlo::Verify(*module);
  auto expected = hlo::ParseModule(after);
  EXPECT_EQ(Structure(*module), Structure(*expected));
}

TEST(DceTest, RemovesUnusedInstructions) {
  DeadCodeElimination dce;
  ExpectPass(dce,
             Entry("  %p = f32[4] parameter(0)\n  %dead = f32[4] exponential(%p)\n"
                   "  ROOT %n = f32[4] negate(%p)\n"),
             Entry("  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n"));
}

TEST(CseTest, MergesIdenticalInstructions) {
  CommonSubexpressionElimination cse;
  ExpectPass(cse,
             Entry("  %p = f32[4] parameter(0)\n  %a = f32[4] exponential(%p)\n"
                   "  %b = f32[4] exponential(%p)\n  ROOT %s = f32[4] add(%a, %b)\n"),
             Entry("  %p = f32[4] parameter(0)\n  %a = f32[4] exponential(%p)\n"
                   "  ROOT %s = f32[4] add(%a, %a)\n"));
}

TEST(CseTest, KeepsDistinctParametersAndAttributes) {
  CommonSubexpressionElimination cse;
  std::string text = Entry(
      "  %p = f32[2,3] parameter(0)\n  %q = f32[2,3] parameter(1)\n"
      "  %a = f32[2] reduce(%p, %z), dimensions={1}, to_apply=%add\n");
  auto module = hlo::ParseModule(Entry(
      "  %p = f32[4] parameter(0)\n  %q = f32[4] parameter(1)\n"
      "  %a = pred[4] compare(%p, %q), direction=LT\n  %b = pred[4] compare(%p, %q), direction=GT\n"
      "  ROOT %t = (pred[4], pred[4]) tuple(%a, %b)\n"));
  EXPECT_FALSE(cse.Run(*module));
}

TEST(CseTest, ConstantsThatAProgramTellsApartStayApart) {
  CommonSubexpressionElimination cse;
  // -0.0 and 0.0 (copysign and 1 / x see the sign); integers past 2^53, equal as doubles.
  auto module = hlo::ParseModule(Entry(
      "  %z = f32[] constant(0)\n  %n = f32[] constant(-0)\n"
      "  %i = s64[] constant(9007199254740993)\n  %j = s64[] constant(9007199254740992)\n"
      "  ROOT %t = (f32[], f32[], s64[], s64[]) tuple(%z, %n, %i, %j)\n"));
  EXPECT_FALSE(cse.Run(*module)) << hlo::ToText(*module);
  // NaNs are one value; equal constants merge.
  ExpectPass(cse,
             Entry("  %a = f32[] constant(nan)\n  %b = f32[] constant(nan)\n  %c = f32[] constant(-0)\n"
                   "  %d = f32[] constant(-0)\n  ROOT %t = (f32[], f32[], f32[], f32[]) tuple(%a, %b, %c, %d)\n"),
             Entry("  %a = f32[] constant(nan)\n  %c = f32[] constant(-0)\n"
                   "  ROOT %t = (f32[], f32[], f32[], f32[]) tuple(%a, %a, %c, %c)\n"));
}

// bf16 arithmetic is computed in f32 and rounded once, where the value leaves the graph; an
// explicit convert still rounds; a transpose of a narrow value and a bf16 product keep their
// 16-bit operands (the product accumulates into f32).
TEST(FloatNormalizationTest, ComputesIn32BitsAndRoundsAtTheEdges) {
  FloatNormalization normalization;
  ExpectPass(normalization,
             Entry("  %p = bf16[4] parameter(0)\n  %c = bf16[] constant(0.1)\n"
                   "  %b = bf16[4] broadcast(%c), dimensions={}\n  %m = bf16[4] multiply(%p, %b)\n"
                   "  %e = bf16[4] exponential(%m)\n  %f = f32[4] convert(%e)\n"
                   "  ROOT %t = (bf16[4], f32[4]) tuple(%e, %f)\n"),
             Entry("  %p = bf16[4] parameter(0)\n  %c = f32[] constant(0.1)\n"
                   "  %b = f32[4] broadcast(%c), dimensions={}\n  %w = f32[4] convert(%p)\n"
                   "  %m = f32[4] multiply(%w, %b)\n"
                   "  %e = f32[4] exponential(%m)\n  %r = bf16[4] convert(%e)\n  %f = f32[4] convert(%r)\n"
                   "  ROOT %t = (bf16[4], f32[4]) tuple(%r, %f)\n"));
  ExpectPass(normalization,
             Entry("  %x = f32[3,5] parameter(0)\n  %y = f32[2,5] parameter(1)\n"
                   "  %a = bf16[3,5] convert(%x)\n  %b = bf16[2,5] convert(%y)\n"
                   "  %bt = bf16[5,2] transpose(%b), dimensions={1,0}\n"
                   "  ROOT %d = bf16[3,2] dot(%a, %bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
             Entry("  %x = f32[3,5] parameter(0)\n  %y = f32[2,5] parameter(1)\n"
                   "  %a = bf16[3,5] convert(%x)\n  %b = bf16[2,5] convert(%y)\n"
                   "  %bt = bf16[5,2] transpose(%b), dimensions={1,0}\n"
                   "  %d = f32[3,2] dot(%a, %bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                   "  ROOT %r = bf16[3,2] convert(%d)\n"));
  // A product's operand computed wider is rounded before its transpose: the GEMM reads the
  // rounded value through the transpose, no transposing copy.
  ExpectPass(normalization,
             Entry("  %x = bf16[3,5] parameter(0)\n  %y = bf16[5,2] parameter(1)\n"
                   "  %e = bf16[5,2] exponential(%y)\n  %et = bf16[2,5] transpose(%e), dimensions={1,0}\n"
                   "  ROOT %d = bf16[3,2] dot(%x, %et), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"),
             Entry("  %x = bf16[3,5] parameter(0)\n  %y = bf16[5,2] parameter(1)\n"
                   "  %w = f32[5,2] convert(%y)\n  %e = f32[5,2] exponential(%w)\n  %r = bf16[5,2] convert(%e)\n"
                   "  %t = bf16[2,5] transpose(%r), dimensions={1,0}\n"
                   "  %d = f32[3,2] dot(%x, %t), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
                   "  ROOT %o = bf16[3,2] convert(%d)\n"));
}

// A convolution and its gradients of two bf16 values keep their 16-bit operands and get f32
// results (the library's bf16 kernels accumulate in f32); a bias stays an f32 operand.
TEST(FloatNormalizationTest, Bf16ConvolutionsKeepTheirOperandsAndAccumulateInF32) {
  FloatNormalization normalization;
  ExpectPass(normalization,
             Entry("  %x = bf16[1,4,9,9] parameter(0)\n  %w = bf16[6,4,3,3] parameter(1)\n"
                   "  %b = bf16[6] parameter(2)\n"
                   "  %y = bf16[1,6,7,7] custom-call(%x, %w, %b), custom_call_target=\"txla.conv2d_bias\", "
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  %dw = bf16[6,4,3,3] custom-call(%y, %x), custom_call_target=\"txla.conv2d_backward_filter\", "
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  %c = bf16[1,6,7,7] convolution(%x, %w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  ROOT %t = (bf16[6,4,3,3], bf16[1,6,7,7]) tuple(%dw, %c)\n"),
             Entry("  %x = bf16[1,4,9,9] parameter(0)\n  %w = bf16[6,4,3,3] parameter(1)\n"
                   "  %b = bf16[6] parameter(2)\n  %bw = f32[6] convert(%b)\n"
                   "  %y = f32[1,6,7,7] custom-call(%x, %w, %bw), custom_call_target=\"txla.conv2d_bias\", "
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  %yr = bf16[1,6,7,7] convert(%y)\n"
                   "  %dw = f32[6,4,3,3] custom-call(%yr, %x), custom_call_target=\"txla.conv2d_backward_filter\", "
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  %dwr = bf16[6,4,3,3] convert(%dw)\n"
                   "  %c = f32[1,6,7,7] convolution(%x, %w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
                   "  %cr = bf16[1,6,7,7] convert(%c)\n"
                   "  ROOT %t = (bf16[6,4,3,3], bf16[1,6,7,7]) tuple(%dwr, %cr)\n"));
}

TEST(SimplifierTest, AdditiveAndMultiplicativeIdentities) {
  AlgebraicSimplifier simplifier;
  ExpectPass(simplifier,
             Entry("  %p = f32[4] parameter(0)\n  %zero = f32[] constant(0)\n"
                   "  %z = f32[4] broadcast(%zero), dimensions={}\n  %one = f32[] constant(1)\n"
                   "  %o = f32[4] broadcast(%one), dimensions={}\n"
                   "  %a = f32[4] add(%p, %z)\n  %m = f32[4] multiply(%o, %a)\n"
                   "  ROOT %d = f32[4] divide(%m, %o)\n"),
             Entry("  ROOT %p = f32[4] parameter(0)\n"));
}

TEST(SimplifierTest, BroadcastsOfScalarsSinkAndCompose) {
  AlgebraicSimplifier simplifier;
  // multiply(broadcast(a), broadcast(b)) -> broadcast(multiply(a, b)); broadcast of a broadcast
  // composes; a broadcast to its own shape disappears.
  ExpectPass(simplifier,
             Entry("  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %p = f32[3] parameter(2)\n"
                   "  %ba = f32[2,3] broadcast(%a), dimensions={}\n  %bb = f32[2,3] broadcast(%b), dimensions={}\n"
                   "  %m = f32[2,3] multiply(%ba, %bb)\n"
                   "  %q = f32[2,3] broadcast(%p), dimensions={1}\n  %qq = f32[4,2,3] broadcast(%q), dimensions={1,2}\n"
                   "  %same = f32[3] broadcast(%p), dimensions={0}\n"
                   "  ROOT %t = (f32[2,3], f32[4,2,3], f32[3]) tuple(%m, %qq, %same)\n"),
             Entry("  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %p = f32[3] parameter(2)\n"
                   "  %ab = f32[] multiply(%a, %b)\n  %m = f32[2,3] broadcast(%ab), dimensions={}\n"
                   "  %qq = f32[4,2,3] broadcast(%p), dimensions={2}\n"
                   "  ROOT %t = (f32[2,3], f32[4,2,3], f32[3]) tuple(%m, %qq, %p)\n"));
}

TEST(ConstantFoldingTest, FoldsExactArithmeticAndShapes) {
  ConstantFolding folding;
  ExpectPass(folding,
             Entry("  %a = f32[] constant(1.5)\n  %b = f32[] constant(2)\n  %s = f32[] add(%a, %b)\n"
                   "  %c = f32[2,2] constant({ {1, 2}, {3, 4} })\n  %t = f32[2,2] transpose(%c), dimensions={1,0}\n"
                   "  %k = pred[] compare(%a, %b), direction=LT\n  %i = s32[] convert(%s)\n"
                   "  %p = f32[2,2] parameter(0)\n  %bs = f32[2,2] broadcast(%s), dimensions={}\n"
                   "  %u = f32[2,2] multiply(%p, %bs)\n"
                   "  ROOT %r = (f32[2,2], f32[2,2], pred[], s32[]) tuple(%u, %t, %k, %i)\n"),
             Entry("  %p = f32[2,2] parameter(0)\n  %s = f32[] constant(3.5)\n"
                   "  %t = f32[2,2] constant({ {1, 3}, {2, 4} })\n"
                   "  %k = pred[] constant(true)\n  %i = s32[] constant(3)\n"
                   "  %bs = f32[2,2] broadcast(%s), dimensions={}\n"
                   "  %u = f32[2,2] multiply(%p, %bs)\n"
                   "  ROOT %r = (f32[2,2], f32[2,2], pred[], s32[]) tuple(%u, %t, %k, %i)\n"));
}

TEST(SimplifierTest, DoesNotFoldTimesZero) {  // x * 0 is NaN for x = inf or NaN
  AlgebraicSimplifier simplifier;
  auto module = hlo::ParseModule(Entry(
      "  %p = f32[4] parameter(0)\n  %zero = f32[] constant(0)\n"
      "  %z = f32[4] broadcast(%zero), dimensions={}\n  ROOT %m = f32[4] multiply(%p, %z)\n"));
  EXPECT_FALSE(simplifier.Run(*module));
}

TEST(SimplifierTest, TransposeAndReshapeChains) {
  AlgebraicSimplifier simplifier;
  ExpectPass(simplifier,
             Entry("  %p = f32[2,3,4] parameter(0)\n"
                   "  %t1 = f32[3,4,2] transpose(%p), dimensions={1,2,0}\n"
                   "  %t2 = f32[2,3,4] transpose(%t1), dimensions={2,0,1}\n"
                   "  %r1 = f32[6,4] reshape(%t2)\n  ROOT %r2 = f32[24] reshape(%r1)\n"),
             Entry("  %p = f32[2,3,4] parameter(0)\n  ROOT %r2 = f32[24] reshape(%p)\n"));
}

TEST(SimplifierTest, TransposeOfDotSwapsOperands) {
  AlgebraicSimplifier simplifier;
  ExpectPass(simplifier,
             Entry("  %a = f32[3,4] parameter(0)\n  %b = f32[4,5] parameter(1)\n"
                   "  %d = f32[3,5] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                   "  ROOT %t = f32[5,3] transpose(%d), dimensions={1,0}\n"),
             Entry("  %a = f32[3,4] parameter(0)\n  %b = f32[4,5] parameter(1)\n"
                   "  ROOT %t = f32[5,3] dot(%b, %a), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"));
}

TEST(SimplifierTest, RoundTripConversionsThroughAWiderTypeVanish) {
  AlgebraicSimplifier simplifier;
  // A mask through float and back (ReLU's backward): the mask itself.
  ExpectPass(simplifier,
             Entry("  %p = f32[4] parameter(0)\n  %q = f32[4] parameter(1)\n"
                   "  %m = pred[4] compare(%p, %q), direction=LE\n  %f = f32[4] convert(%m)\n"
                   "  ROOT %b = pred[4] convert(%f)\n"),
             Entry("  %p = f32[4] parameter(0)\n  %q = f32[4] parameter(1)\n"
                   "  ROOT %m = pred[4] compare(%p, %q), direction=LE\n"));
  // Through a narrower type values change: kept.
  for (const char* narrow : {"s32", "f32", "pred"}) {
    auto module = hlo::ParseModule(Entry(std::string("  %p = s64[4] parameter(0)\n  %n = ") + narrow +
                                         "[4] convert(%p)\n  ROOT %b = s64[4] convert(%n)\n"));
    EXPECT_FALSE(simplifier.Run(*module)) << narrow;
  }
  auto module = hlo::ParseModule(Entry("  %p = f64[4] parameter(0)\n  %n = f32[4] convert(%p)\n"
                                       "  ROOT %b = f64[4] convert(%n)\n"));
  EXPECT_FALSE(simplifier.Run(*module));
}

TEST(SimplifierTest, AConversionAndAReshapeInEitherOrderAreOneValue) {
  // Through torch.compile the bf16 GPT decoder's GELU output was converted then reshaped for one
  // reader and reshaped then converted for another: one order (reshape outermost) lets CSE
  // compute it once.
  AlgebraicSimplifier simplifier;
  CommonSubexpressionElimination cse;
  auto module = hlo::ParseModule(Entry(
      "  %x = f32[8,64] parameter(0)\n  %e = f32[8,64] exponential(%x)\n"
      "  %c1 = bf16[8,64] convert(%e)\n  %r1 = bf16[512] reshape(%c1)\n"
      "  %r2 = f32[512] reshape(%e)\n  %c2 = bf16[512] convert(%r2)\n"
      "  ROOT %t = (bf16[512], bf16[512]) tuple(%r1, %c2)\n"));
  for (int round = 0; round < 4; ++round) {
    bool changed = simplifier.Run(*module);
    changed |= cse.Run(*module);
    DeadCodeElimination().Run(*module);
    if (!changed) break;
  }
  hlo::Verify(*module);
  const hlo::Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1)) << hlo::ToText(*module->entry());
  EXPECT_EQ(root->operand(0)->opcode(), hlo::Opcode::kReshape);
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), hlo::Opcode::kConvert);
}

TEST(SimplifierTest, ConversionsMoveBelowTheTransposesTheyRead) {
  // Autocast's bf16 copy of a Linear weight read transposed by a dot: the conversion runs over
  // the weight's own layout, and the dot reads the transpose through its flags.
  AlgebraicSimplifier simplifier;
  auto module = hlo::ParseModule(Entry(
      "  %w = f32[6,4] parameter(0)\n  %x = bf16[3,4] parameter(1)\n"
      "  %t = f32[4,6] transpose(%w), dimensions={1,0}\n  %c = bf16[4,6] convert(%t)\n"
      "  ROOT %d = f32[3,6] dot(%x, %c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"));
  EXPECT_TRUE(simplifier.Run(*module));
  DeadCodeElimination().Run(*module);
  hlo::Verify(*module);
  const hlo::Instruction* rhs = module->entry()->root()->operand(1);
  ASSERT_EQ(rhs->opcode(), hlo::Opcode::kTranspose) << hlo::ToText(*module->entry());
  EXPECT_EQ(rhs->shape().type, hlo::ElementType::kBF16);
  ASSERT_EQ(rhs->operand(0)->opcode(), hlo::Opcode::kConvert);
  EXPECT_EQ(rhs->operand(0)->operand(0)->opcode(), hlo::Opcode::kParameter);
  EXPECT_EQ(rhs->operand(0)->shape().dims, (std::vector<int64_t>{6, 4}));
  // A transpose read by something else as well stays where it is (no second transpose).
  auto shared = hlo::ParseModule(Entry(
      "  %w = f32[6,4] parameter(0)\n  %t = f32[4,6] transpose(%w), dimensions={1,0}\n"
      "  %c = bf16[4,6] convert(%t)\n  ROOT %r = (f32[4,6], bf16[4,6]) tuple(%t, %c)\n"));
  EXPECT_FALSE(simplifier.Run(*shared));
  // Above a product the transpose folds into, the transpose goes down instead: a weight gradient
  // under autocast, a bf16 product widened to f32 and transposed, is the product of the swapped
  // operands, widened.
  auto gradient = hlo::ParseModule(Entry(
      "  %g = bf16[3,4] parameter(0)\n  %x = bf16[3,6] parameter(1)\n"
      "  %d = f32[4,6] dot(%g, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
      "  %b = bf16[4,6] convert(%d)\n  %f = f32[4,6] convert(%b)\n"
      "  ROOT %t = f32[6,4] transpose(%f), dimensions={1,0}\n"));
  for (int round = 0; round < 4 && simplifier.Run(*gradient); ++round) DeadCodeElimination().Run(*gradient);
  hlo::Verify(*gradient);
  const hlo::Instruction* root = gradient->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::Opcode::kConvert) << hlo::ToText(*gradient->entry());
  ASSERT_EQ(root->operand(0)->opcode(), hlo::Opcode::kConvert);
  const hlo::Instruction* dot = root->operand(0)->operand(0);
  ASSERT_EQ(dot->opcode(), hlo::Opcode::kDot) << hlo::ToText(*gradient->entry());
  EXPECT_EQ(dot->shape().dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(dot->operand(0)->name(), "x");
}

TEST(FusionTest, ElementwiseChainBecomesOneLoop) {
  auto module = hlo::ParseModule(Entry(
      "  %p = f32[8,4] parameter(0)\n  %q = f32[4] parameter(1)\n"
      "  %b = f32[8,4] broadcast(%q), dimensions={1}\n  %a = f32[8,4] add(%p, %b)\n"
      "  %e = f32[8,4] exponential(%a)\n  %zero = f32[] constant(0)\n"
      "  %z = f32[8,4] broadcast(%zero), dimensions={}\n  %r = f32[8,4] maximum(%e, %z)\n"
      "  ROOT %t = (f32[8,4]) tuple(%r)\n"));
  EXPECT_TRUE(Fusion().Run(*module));
  hlo::Verify(*module);
  EXPECT_EQ(CountKernels(*module), 1);
  std::string text = hlo::ToText(*module->entry());
  EXPECT_NE(text.find("kind=kLoop"), std::string::npos) << text;
  EXPECT_EQ(module->entry()->instruction_count(), 4u) << text;  // p, q, fusion, tuple
}

TEST(FusionTest, ReductionFusesItsProducersButIsMaterialized) {
  auto module = hlo::ParseModule(WithAdd(R"(
  %p = f32[8,4] parameter(0)
  %e = f32[8,4] exponential(%p)
  %zero = f32[] constant(0)
  %sum = f32[8] reduce(%e, %zero), dimensions={1}, to_apply=%add
  %b = f32[8,4] broadcast(%sum), dimensions={0}
  %d = f32[8,4] divide(%e, %b)
  ROOT %t = (f32[8,4]) tuple(%d)
)"));
  EXPECT_TRUE(Fusion().Run(*module));
  hlo::Verify(*module);
  // softmax-like: the reduction (exp inside) and the division (exp computed again inside it,
  // cheaper than a round trip through memory).
  EXPECT_EQ(CountKernels(*module), 2);
  std::string text = hlo::ToText(*module->entry());
  EXPECT_NE(text.find("kind=kInput"), std::string::npos) << text;
}

TEST(FusionTest, AnIotaGoesIntoEveryConsumerInsteadOfAKernelOfItsOwn) {
  // Cross-entropy's class indices compared with the targets by the loss and by its gradient, in
  // two fusions that a reduction keeps apart: the iota is computed in each.
  auto module = hlo::ParseModule(WithAdd(R"(
  %t = s64[6] parameter(0)
  %p = f32[6,10] parameter(1)
  %classes = s64[6,10] iota(), iota_dimension=1
  %tb = s64[6,10] broadcast(%t), dimensions={0}
  %hit = pred[6,10] compare(%classes, %tb), direction=EQ
  %zero = f32[] constant(0)
  %zb = f32[6,10] broadcast(%zero), dimensions={}
  %picked = f32[6,10] select(%hit, %p, %zb)
  %loss = f32[6] reduce(%picked, %zero), dimensions={1}, to_apply=%add
  %lb = f32[6,10] broadcast(%loss), dimensions={0}
  %miss = pred[6,10] compare(%classes, %tb), direction=NE
  %grad = f32[6,10] select(%miss, %lb, %zb)
  ROOT %out = (f32[6], f32[6,10]) tuple(%loss, %grad)
)"));
  EXPECT_TRUE(Fusion().Run(*module));
  hlo::Verify(*module);
  EXPECT_EQ(CountKernels(*module), 2) << hlo::ToText(*module);
  for (const hlo::Instruction* i : module->entry()->instructions())
    EXPECT_NE(i->opcode(), hlo::Opcode::kIota) << hlo::ToText(*module);
}

TEST(FusionTest, DotsStayOutsideAndTransposesFeedThemForFree) {
  auto module = hlo::ParseModule(Entry(
      "  %x = f32[8,16] parameter(0)\n  %w = f32[4,16] parameter(1)\n"
      "  %wt = f32[16,4] transpose(%w), dimensions={1,0}\n"
      "  %d = f32[8,4] dot(%x, %wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  %zero = f32[] constant(0)\n  %z = f32[8,4] broadcast(%zero), dimensions={}\n"
      "  %r = f32[8,4] maximum(%d, %z)\n  ROOT %t = (f32[8,4]) tuple(%r)\n"));
  Fusion().Run(*module);
  EXPECT_EQ(CountKernels(*module), 2);  // the GEMM and the relu loop; no transpose kernel
  BufferPlan plan = AssignBuffers(*module);
  std::string source = EmitCpp(*module, plan);
  EXPECT_NE(source.find("support->gemm_f32(1, 0, 1, 8, 4, 16"), std::string::npos) << source;
}

TEST(BufferAssignmentTest, ReusesDeadTempsAndExtendsVirtualOperands) {
  auto module = hlo::ParseModule(Entry(
      "  %p = f32[64] parameter(0)\n"
      "  %a = f32[64] exponential(%p)\n  %b = f32[64] negate(%a)\n"
      "  %c = f32[64] exponential(%b)\n  %d = f32[64] negate(%c)\n"
      "  ROOT %t = (f32[64]) tuple(%d)\n"));
  // Unfused: each op is its own kernel, so a..c are temps; a is dead when c is made.
  BufferPlan plan = AssignBuffers(*module);
  EXPECT_EQ(plan.arena_bytes, 2 * 256);
  EXPECT_EQ(plan.slots.at(module->entry()->root()->operand(0)).kind, BufferSlot::Kind::kOutput);
}

TEST(PipelineTest, MlpForwardHasFarFewerKernelsThanInstructions) {
  auto module = hlo::ParseModule(R"(HloModule mlp
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}
ENTRY %main {
  %x = f32[128,784] parameter(0)
  %w1 = f32[512,784] parameter(1)
  %b1 = f32[512] parameter(2)
  %w2 = f32[10,512] parameter(3)
  %b2 = f32[10] parameter(4)
  %w1t = f32[784,512] transpose(%w1), dimensions={1,0}
  %h = f32[128,512] dot(%x, %w1t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b1b = f32[128,512] broadcast(%b1), dimensions={1}
  %hb = f32[128,512] add(%h, %b1b)
  %zero = f32[] constant(0)
  %zb = f32[128,512] broadcast(%zero), dimensions={}
  %r = f32[128,512] maximum(%hb, %zb)
  %w2t = f32[512,10] transpose(%w2), dimensions={1,0}
  %o = f32[128,10] dot(%r, %w2t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b2b = f32[128,10] broadcast(%b2), dimensions={1}
  %ob = f32[128,10] add(%o, %b2b)
  %ninf = f32[] constant(-inf)
  %mx = f32[128] reduce(%ob, %ninf), dimensions={1}, to_apply=%max
  %mxb = f32[128,10] broadcast(%mx), dimensions={0}
  %s = f32[128,10] subtract(%ob, %mxb)
  %e = f32[128,10] exponential(%s)
  %se = f32[128] reduce(%e, %zero), dimensions={1}, to_apply=%add
  %l = f32[128] log(%se)
  %lb = f32[128,10] broadcast(%l), dimensions={0}
  %out = f32[128,10] subtract(%s, %lb)
  ROOT %t = (f32[128,10]) tuple(%out)
}
)");
  int instructions = static_cast<int>(module->entry()->instruction_count());
  RunPipeline(*module);
  int kernels = CountKernels(*module);
  // 2 GEMMs + bias/relu loop + max reduce + exp-sum reduce + output loop.
  EXPECT_EQ(kernels, 6);
  EXPECT_LE(kernels * 4, instructions) << hlo::ToText(*module);
}

}  // namespace
}  // namespace txla::compiler

namespace txla::compiler {
namespace {

const char* kPoolModule = R"(HloModule m
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}
ENTRY %main {
  %p = f32[2,3,8,8] parameter(0)
  %ninf = f32[] constant(-inf)
  %pool = f32[2,3,4,4] reduce-window(%p, %ninf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=%max
  %zero = f32[] constant(0)
  %z = f32[2,3,4,4] broadcast(%zero), dimensions={}
  %relu = f32[2,3,4,4] maximum(%pool, %z)
  %idx = s64[2,3,4,4] custom-call(%p), custom_call_target="txla.max_pool2d_indices", window={size=1x1x2x2 stride=1x1x2x2}
  ROOT %t = (f32[2,3,4,4], s64[2,3,4,4]) tuple(%relu, %idx)
}
)";

TEST(FusionTest, PoolingFusesIntoItsConsumerAndLibraryCallsStayOut) {
  auto module = hlo::ParseModule(kPoolModule);
  EXPECT_TRUE(Fusion().Run(*module));
  hlo::Verify(*module);
  // relu(max_pool(x)) is one loop kernel; the argmax is its own kernel.
  EXPECT_EQ(CountKernels(*module), 2);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(text.find("reduce-window"), std::string::npos) << text;
  EXPECT_NE(text.find("custom_call_target=\"txla.max_pool2d_indices\", window={size=1x1x2x2 stride=1x1x2x2}"),
            std::string::npos) << text;
  // The printed module parses back to the same text.
  EXPECT_EQ(hlo::ToText(*hlo::ParseModule(text)), text);
}

// `levels` steps of x = op(x, f(x)) over f32[16] (f elementwise or a reverse), as an entry.
std::string ReconvergingChain(int levels, const std::string& op, bool reverse) {
  std::string body = "  %x0 = f32[16] parameter(0)\n";
  for (int k = 1; k <= levels; ++k) {
    std::string prev = "%x" + std::to_string(k - 1), f = "%f" + std::to_string(k);
    body += "  " + f + " = f32[16] " + (reverse ? "reverse(" + prev + "), dimensions={0}" : "negate(" + prev + ")") +
            "\n  %x" + std::to_string(k) + " = f32[16] " + op + "(" + prev + ", " + f + ")\n";
  }
  return Entry(body + "  ROOT %t = (f32[16]) tuple(%x" + std::to_string(levels) + ")\n");
}

TEST(FusionTest, AValueReadAtOtherIndicesIsMaterializedBeforeItsCodeMultiplies) {
  // x + reverse(x), repeated: inside one loop each step computes the previous value at two
  // indices, so one kernel would hold 2^levels copies of the first value's code.
  auto module = hlo::ParseModule(ReconvergingChain(12, "add", true));
  Fusion().Run(*module);
  hlo::Verify(*module);
  // At most 15 copies of any value per kernel: a kernel spans 4 steps and stores its oldest
  // value's next-older one, which 5 steps would compute 16 times.
  EXPECT_EQ(CountKernels(*module), 3) << hlo::ToText(*module);
  // A short chain stays one kernel, and so does a long one read elementwise only (each value
  // is computed once per element however many users read it).
  auto short_chain = hlo::ParseModule(ReconvergingChain(4, "add", true));
  Fusion().Run(*short_chain);
  EXPECT_EQ(CountKernels(*short_chain), 1) << hlo::ToText(*short_chain);
  auto elementwise = hlo::ParseModule(ReconvergingChain(60, "multiply", false));
  Fusion().Run(*elementwise);
  EXPECT_EQ(CountKernels(*elementwise), 1);
}

TEST(CodegenTest, LongChainsThatReadEachValueTwiceCompileInLinearTime) {
  // Each value read twice by the next (lerp_'s a + w * (b - a) repeated): the emitter's check
  // for loops it may run as one used to walk every path, 2^60 here. Emitting it at all is the test.
  for (bool reverse : {false, true}) {
    auto module = hlo::ParseModule(ReconvergingChain(60, "multiply", reverse));
    RunPipeline(*module);
    std::string source = EmitCpp(*module, AssignBuffers(*module));
    EXPECT_NE(source.find("//@@txla program "), std::string::npos);
  }
}

TEST(CodegenTest, PoolingWindowsInsideTheImageAreUnrolledWithoutBoundsChecks) {
  auto module = hlo::ParseModule(kPoolModule);
  RunPipeline(*module);
  std::string source = EmitCpp(*module, AssignBuffers(*module));
  EXPECT_EQ(source.find("continue;"), std::string::npos) << source;
  EXPECT_NE(source.find("txla_max("), std::string::npos) << source;
  EXPECT_NE(source.find("const bool take"), std::string::npos) << source;  // argmax by selects
}

}  // namespace
}  // namespace txla::compiler
