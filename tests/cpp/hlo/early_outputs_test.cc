// Early outputs (passes/early_outputs.h): the pass puts a scalar result's producers first, the
// graph's program releases it before the next kernel runs, and an output's readiness follows
// its run's unless it was released before.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_objects.h"
#include "compiler/codegen/native_library.h"
#include "compiler/compile.h"
#include "compiler/graph_program.h"
#include "compiler/passes/early_outputs.h"
#include "compiler/support.h"
#include "hlo/parser.h"
#include "entry_order.h"
#include "runtime/execution_queue.h"

namespace txla::compiler {
namespace {

// A product and its exponential, then the sum of another input: the sum comes last, as a
// traced training step computes its loss after the graph's other values were recorded.
const char* kLossLast = R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[64,64] parameter(0)
  %y = f32[64,64] parameter(1)
  %d = f32[64,64] dot(%y, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %e = f32[64,64] exponential(%d)
  %zero = f32[] constant(0)
  %s = f32[] reduce(%x, %zero), dimensions={0,1}, to_apply=%add
  ROOT %t = (f32[64,64], f32[]) tuple(%e, %s)
}
)";

using testing::Named;
using testing::Order;

TEST(EarlyOutputsTest, MoveToFrontKeepsEachSidesOrderAndRefusesAnOpenGroup) {
  auto module = hlo::ParseModule(kLossLast);
  hlo::Computation* entry = module->entry();
  entry->MoveToFront({Named(*module, "x"), Named(*module, "zero"), Named(*module, "s")});
  EXPECT_EQ(Order(*module), "x zero s y d e t");
  // %e without %d: %d would run after its user.
  EXPECT_THROW(entry->MoveToFront({Named(*module, "y"), Named(*module, "e")}), std::logic_error);
  EXPECT_EQ(Order(*module), "x zero s y d e t");
}

TEST(EarlyOutputsTest, TheScalarResultsProducersRunFirst) {
  auto module = hlo::ParseModule(kLossLast);
  ASSERT_EQ(EarlyResults(*module).size(), 1u);
  EXPECT_EQ(EarlyResults(*module)[0]->name(), "s");
  EXPECT_TRUE(EarlyOutputs().Run(*module));
  EXPECT_EQ(Order(*module), "x zero s y d e t");
  EXPECT_FALSE(EarlyOutputs().Run(*module));  // already first
}

TEST(EarlyOutputsTest, ParametersConstantsAndTensorsAreNotReleased) {
  auto module = hlo::ParseModule(R"(HloModule m
ENTRY %main {
  %p = f32[] parameter(0)
  %c = f32[] constant(2)
  %v = f32[3] parameter(1)
  %n = f32[3] negate(%v)
  ROOT %t = (f32[], f32[], f32[3]) tuple(%p, %c, %n)
}
)");
  EXPECT_TRUE(EarlyResults(*module).empty());
  EXPECT_FALSE(EarlyOutputs().Run(*module));
}

// What the generated code called, in order: the product and the release of an output.
std::vector<std::string>* calls = nullptr;
TxlaSupport recording;
void RecordGemm(int64_t batch, int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
                int64_t stride_c) {
  calls->push_back("gemm");
  GetSupportTable()->gemm_f32(batch, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c);
}
void RecordReady(int64_t output) { calls->push_back("ready " + std::to_string(output)); }

TEST(EarlyOutputsTest, TheRunReleasesTheScalarBeforeTheNextKernel) {
  auto module = hlo::ParseModule(kLossLast);
  RunPipeline(*module);
  std::string code = EmitCpp(*module, AssignBuffers(*module));
  // Output 1 (the sum) is released before the product's step.
  size_t release = code.find("//   release output 1\n"), product = code.find(": step s_");
  EXPECT_NE(release, std::string::npos) << code;
  EXPECT_LT(release, product) << code;
  std::string path = WorkDirectory() + "/early_outputs_test.so";
  ASSERT_NO_THROW(BuildSharedObject(code, "early outputs", path));
  auto library = NativeLibrary::Load(path);
  auto bind = reinterpret_cast<void (*)(const TxlaSupport*)>(library->Symbol("txla_bind"));
  std::optional<ProgramText> text = ParseProgram(code);
  ASSERT_TRUE(text);
  std::vector<void*> functions;
  for (const std::string& name : text->functions) functions.push_back(library->Symbol(name.c_str()));
  GraphProgram program(text->words, functions, path);
  EXPECT_EQ(program.EarlyOutputs(), std::vector<int64_t>{1});
  std::vector<float> x(64 * 64, 0.5f), y(64 * 64, 0.01f), e(64 * 64), s(1);
  const void* params[] = {x.data(), y.data()};
  void* outputs[] = {e.data(), s.data()};
  std::vector<char> arena(1 << 20);
  std::vector<std::string> seen;
  calls = &seen;
  recording = *GetSupportTable();
  recording.gemm_f32 = &RecordGemm;
  recording.output_ready = &RecordReady;
  bind(&recording);
  program.Run(&recording, params, outputs, arena.data());
  calls = nullptr;
  EXPECT_EQ(seen, (std::vector<std::string>{"ready 1", "gemm"}));
  EXPECT_FLOAT_EQ(s[0], 0.5f * 64 * 64);
  EXPECT_FLOAT_EQ(e[0], std::exp(0.01f * 0.01f * 64));
}

TEST(EarlyOutputsTest, AScalarTheLastKernelWritesIsReleasedWithTheRest) {
  // Without the pass the sum stays last: no kernel follows it, nothing is released early.
  auto module = hlo::ParseModule(kLossLast);
  std::string code = EmitCpp(*module, AssignBuffers(*module));
  EXPECT_EQ(code.find("release output"), std::string::npos) << code;
}

TEST(EarlyOutputsTest, AReleasedOutputStaysReadyWhenItsRunFails) {
  auto run = std::make_shared<runtime::Readiness>();
  auto released = std::make_shared<runtime::Readiness>();
  auto pending = std::make_shared<runtime::Readiness>();
  run->AddFollower(released);
  run->AddFollower(pending);
  released->MarkReady();
  run->MarkFailed("index 9 is out of bounds");
  EXPECT_NO_THROW(released->Wait());
  EXPECT_THROW(pending->Wait(), runtime::ExecutionFailed);
  // A follower added once the run ended takes its outcome at once.
  auto late = std::make_shared<runtime::Readiness>();
  run->AddFollower(late);
  EXPECT_TRUE(late->IsReady());
  EXPECT_THROW(late->Wait(), runtime::ExecutionFailed);
  auto ok = std::make_shared<runtime::Readiness>(), follower = std::make_shared<runtime::Readiness>();
  ok->AddFollower(follower);
  ok->MarkReady();
  EXPECT_NO_THROW(follower->Wait());
}

}  // namespace
}  // namespace txla::compiler
