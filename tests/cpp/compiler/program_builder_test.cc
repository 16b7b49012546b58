// The program builder (compiler/codegen/program_builder.h) on a known sequence of steps: the
// step functions and the program it writes, compared in full.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "compiler/codegen/program_builder.h"

namespace txla::compiler::emitter {
namespace {

ProgramBuilder ThreeBuffers() {
  ProgramBuilder program;
  program.DeclareBuffer("b_x", {"float", true, SlotKind::kParameter, 0});
  program.DeclareBuffer("b_y", {"float", false, SlotKind::kOutput, 1});
  program.DeclareBuffer("b_t", {"double", false, SlotKind::kArena, 64});
  return program;
}

TEST(ProgramBuilderTest, StepsAreWrittenOncePerContentAndListedInOrder) {
  ProgramBuilder program = ThreeBuffers();
  const std::string step = program.AddStep("sum.1", "void k_a(const float*, double*);\n", "  k_a(b_x, b_t);\n", {});
  // Buffers renamed in order of use and the function named by its content (kernel_naming.h), so
  // that the same step in another graph is the same object.
  EXPECT_EQ(step, R"(//@@txla kernel 879a29d6fd56564825f87cb63b708ce6 sum.1
void k_a(const float*, double*);
extern "C" void s_879a29d6fd56564825f87cb63b708ce6(const TxlaSupport* support, void* const* a) {
  const float* buf0 = (const float*)a[0];
  double* buf1 = (double*)a[1];
  k_a(buf0, buf1);
}
//@@txla kernel end
)");
  // The same code under another instruction's name is the same function.
  EXPECT_EQ(program.AddStep("sum.2", "void k_a(const float*, double*);\n", "  k_a(b_x, b_t);\n", {}), "");
  program.AddEntry("exp.3", StepKind::kParallel, "t_b", 4096, {"b_t", "b_y"}, {0});
  // Words: format 1, 2 functions, 3 slots (parameter 0, arena offset 64, output 1, in order of
  // first use); 3 steps, each: released outputs (count, indices), kind, function, extent, slots.
  EXPECT_EQ(program.Listing(), R"(// The graph's program (compiler/graph_program.h): what it runs, in order,
//   sum.1: step s_879a29d6fd56564825f87cb63b708ce6(b_x, b_t)
//   sum.2: step s_879a29d6fd56564825f87cb63b708ce6(b_x, b_t)
//   release output 0
//   exp.3: parallel t_b(b_t, b_y) on [0, 4096)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 2 3 0 0 2 64 1 1 3 0 0 0 0 2 0 1 0 0 0 0 2 0 1 1 0 2 1 4096 2 1 2
//@@txla functions s_879a29d6fd56564825f87cb63b708ce6 t_b
)");
}

TEST(ProgramBuilderTest, AStepNamingNoBufferIsRefusedByName) {
  ProgramBuilder program = ThreeBuffers();
  try {
    program.AddStep("neg.4", "", "  k(b_x, b_z);\n", {});
    FAIL() << "a step without a buffer was added";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "codegen: neg.4 names b_z, which has no buffer");
  }
}

}  // namespace
}  // namespace txla::compiler::emitter
