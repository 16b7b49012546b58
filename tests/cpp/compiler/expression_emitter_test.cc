// The expression emitter (compiler/codegen/expression_emitter.h) on a known graph: the loop
// body's statements, the value it names and the buffers it reads, compared in full.
#include <gtest/gtest.h>

#include <string>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/expression_emitter.h"
#include "compiler/compile.h"
#include "hlo/parser.h"

namespace txla::compiler::emitter {
namespace {

// softplus-like: log1p(exp(x + b)) with b broadcast along rows, and a padded column read.
const char* kGraph = R"(HloModule m
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %b = f32[8] parameter(1)
  %bb = f32[4,8] broadcast(%b), dimensions={1}
  %s = f32[4,8] add(%x, %bb)
  %e = f32[4,8] exponential(%s)
  %zero = f32[] constant(0)
  %wide = f32[4,10] pad(%e, %zero), padding=0_0x1_1
  %l = f32[4,10] log-plus-one(%wide)
  ROOT %t = (f32[4,10]) tuple(%l)
}
)";

TEST(ExpressionEmitterTest, AValueIsItsStatementsAndTheBuffersTheyRead) {
  auto module = hlo::ParseModule(kGraph);
  RunPipeline(*module);  // one loop fusion
  BufferPlan plan = AssignBuffers(*module);
  const Instruction* fusion = module->entry()->root()->operand(0);
  ASSERT_EQ(fusion->opcode(), hlo::Opcode::kFusion);
  ExpressionEmitter expr(plan);
  expr.BeginKernel(fusion);
  const hlo::Computation& fused = *fusion->attrs().called.at(0);
  for (const Instruction* p : fused.instructions())
    if (p->opcode() == hlo::Opcode::kParameter) expr.fusion_params[p] = fusion->operand(p->attrs().parameter_number);
  expr.BeginBody();
  const std::string value = expr.Value(*fused.root(), {IndexExpr::Var("i0", 4), IndexExpr::Var("i1", 10)});
  // The pad's reads clamp into the operand and a select picks the padding; the broadcast reads b
  // at the column alone; each value is a statement of its own, named in order.
  EXPECT_EQ(value, "v6");
  EXPECT_EQ(expr.body.str(), R"(      const float v0 = b_b[txla_iclamp((i1 - 1), 0, 7)];
      const float v1 = v0;
      const float v2 = b_x[(i0*8 + txla_iclamp((i1 - 1), 0, 7))];
      const float v3 = (float)txla_add(v2, v1);
      const float v4 = (float)txla_exp(v3);
      const float v5 = (((i1 - 1) >= 0 && (i1 - 1) < 8) ? v4 : 0.00000000000000000e+00f);
      const float v6 = (float)txla_log1p(v5);
)");
  std::string used;
  for (const Instruction* i : expr.used) used += BufferName(*i) + " ";
  EXPECT_EQ(used, "b_b b_x ");
  EXPECT_EQ(expr.tables.str(), "");
}

}  // namespace
}  // namespace txla::compiler::emitter
