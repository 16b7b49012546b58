// Sibling reductions (kernel_merging.h, passes/sibling_reductions.h): which reductions share a
// kernel, how the pass places them next to each other, and the kernel that computes both.
#include <gtest/gtest.h>

#include <stdexcept>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/kernel_merging.h"
#include "compiler/passes/sibling_reductions.h"
#include "hlo/parser.h"
#include "entry_order.h"
#include "hlo/verifier.h"

namespace txla::compiler {
namespace {

// Two column sums of x [4, 8] after fusion: %a = sum(x), %b = sum(x * e); `entry` is the rest.
std::string Module(const std::string& entry) {
  return R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%fa (p0: f32[4,8]) -> f32[8] {
  %p0 = f32[4,8] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[8] reduce(%p0, %z), dimensions={0}, to_apply=%add
}
%fb (q0: f32[4,8], q1: f32[4,8]) -> f32[8] {
  %q0 = f32[4,8] parameter(0)
  %q1 = f32[4,8] parameter(1)
  %m = f32[4,8] multiply(%q0, %q1)
  %z = f32[] constant(0)
  ROOT %r = f32[8] reduce(%m, %z), dimensions={0}, to_apply=%add
}
%fr (r0: f32[4,8]) -> f32[4] {
  %r0 = f32[4,8] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%r0, %z), dimensions={1}, to_apply=%add
}
ENTRY %main {
)" + entry + "}\n";
}

using testing::Named;
using testing::Order;

// Runs the pass on a module whose siblings are %a and %b: the order it leaves, and a buffer plan
// in which %b's kernel writes %a.
BufferPlan ExpectPairedInOrder(hlo::Module& module, const std::string& order) {
  EXPECT_TRUE(SiblingReductions().Run(module));
  hlo::Verify(module);
  EXPECT_EQ(Order(module), order);
  BufferPlan plan = AssignBuffers(module);
  EXPECT_EQ(plan.merged.KernelOf(Named(module, "a")), Named(module, "b"));
  return plan;
}

TEST(SiblingReductionsTest, TheEarlierMovesDownWhenNothingBetweenReadsIt) {
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %a = f32[8] fusion(%x), kind=kInput, calls=%fa
  %e = f32[4,8] exponential(%y)
  %b = f32[8] fusion(%x, %e), kind=kInput, calls=%fb
  ROOT %t = (f32[8], f32[8]) tuple(%a, %b)
)"));
  BufferPlan plan = ExpectPairedInOrder(*module, "x y e a b t");
  // One kernel (after exp's), two rows of accumulators, called with both outputs.
  std::string source = EmitCpp(*module, plan);
  EXPECT_NE(source.find("acc1[o1] = txla_add(acc1[o1], "), std::string::npos) << source;
  EXPECT_NE(source.find("kernel t_"), std::string::npos) << source;
  EXPECT_NE(source.find("(b_b, b_a, b_e, b_x) on [0, 0)"), std::string::npos) << source;
  size_t kernels = 0;
  for (size_t at = source.find("//@@txla kernel "); at != std::string::npos; at = source.find("//@@txla kernel ", at + 1))
    kernels += source.compare(at, 20, "//@@txla kernel end\n") != 0;
  EXPECT_EQ(kernels, 2u) << source;
}

TEST(SiblingReductionsTest, TheLaterMovesUpWhenTheEarliersUserLiesBetween) {
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %a = f32[8] fusion(%x), kind=kInput, calls=%fa
  %n = f32[8] negate(%a)
  %b = f32[8] fusion(%x, %y), kind=kInput, calls=%fb
  ROOT %t = (f32[8], f32[8]) tuple(%n, %b)
)"));
  ExpectPairedInOrder(*module, "x y a b n t");
}

TEST(SiblingReductionsTest, StayApartWhenNeitherCanMove) {
  // %a is read before %b, and %b reads a value computed after %a.
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %a = f32[8] fusion(%x), kind=kInput, calls=%fa
  %n = f32[8] negate(%a)
  %e = f32[4,8] exponential(%y)
  %b = f32[8] fusion(%x, %e), kind=kInput, calls=%fb
  ROOT %t = (f32[8], f32[8]) tuple(%n, %b)
)"));
  EXPECT_FALSE(SiblingReductions().Run(*module));
  EXPECT_EQ(Order(*module), "x y a n e b t");
  EXPECT_TRUE(AssignBuffers(*module).merged.writer.empty());
}

TEST(SiblingReductionsTest, OnlyReductionsOverTheSameLoopsThatShareAnOperandAreSiblings) {
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %w = f32[4,8] parameter(2)
  %a = f32[8] fusion(%x), kind=kInput, calls=%fa
  %rows = f32[4] fusion(%x), kind=kInput, calls=%fr
  %other = f32[8] fusion(%y, %w), kind=kInput, calls=%fb
  %b = f32[8] fusion(%x, %y), kind=kInput, calls=%fb
  ROOT %t = (f32[8], f32[4], f32[8], f32[8]) tuple(%a, %rows, %other, %b)
)"));
  const hlo::Module& m = *module;
  EXPECT_TRUE(AreSiblingReductions(Named(m, "a"), Named(m, "b")));
  EXPECT_FALSE(AreSiblingReductions(Named(m, "a"), Named(m, "rows")));   // other reduced dimension
  EXPECT_FALSE(AreSiblingReductions(Named(m, "a"), Named(m, "other")));  // nothing read in common
  EXPECT_FALSE(AreSiblingReductions(Named(m, "a"), Named(m, "a")));
  EXPECT_TRUE(SiblingReductions().Run(*module));
  EXPECT_EQ(Order(*module), "x y w rows other a b t");
}

TEST(SiblingReductionsTest, AReductionThatReadsTheOtherIsNoSibling) {
  // A variance's sum reads the mean's sum: next to each other, they still cannot share a loop.
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %a = f32[8] fusion(%x), kind=kInput, calls=%fa
  %ab = f32[4,8] broadcast(%a), dimensions={1}
  %b = f32[8] fusion(%x, %ab), kind=kInput, calls=%fb
  ROOT %t = (f32[8], f32[8]) tuple(%a, %b)
)"));
  EXPECT_TRUE(AreSiblingReductions(Named(*module, "a"), Named(*module, "b")));  // not adjacent
  EXPECT_FALSE(SiblingReductions().Run(*module));
  EXPECT_EQ(Order(*module), "x a ab b t");
}

TEST(ComputationTest, MoveBeforeRefusesToPutAnOperandAfterItsUser) {
  auto module = hlo::ParseModule(Module(R"(
  %x = f32[4,8] parameter(0)
  %e = f32[4,8] exponential(%x)
  %n = f32[4,8] negate(%e)
  ROOT %t = (f32[4,8]) tuple(%n)
)"));
  hlo::Computation* entry = module->entry();
  auto at = [&](const char* name) { return Named(*module, name); };
  EXPECT_THROW(entry->MoveBefore(at("n"), at("e")), std::logic_error);
  EXPECT_THROW(entry->MoveBefore(at("e"), at("t")), std::logic_error);
  EXPECT_EQ(Order(*module), "x e n t");  // unchanged by the refused moves
  entry->MoveBefore(at("e"), at("n"));   // already there
  EXPECT_EQ(Order(*module), "x e n t");
}

}  // namespace
}  // namespace txla::compiler
