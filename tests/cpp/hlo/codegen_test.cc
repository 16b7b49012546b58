// Generated code for known graphs: a change to what the emitter writes shows up here.
#include <gtest/gtest.h>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/native_library.h"
#include "compiler/compile.h"
#include "hlo/parser.h"

namespace txla::compiler {
namespace {

std::string Emit(const std::string& text) {
  auto module = hlo::ParseModule(text);
  RunPipeline(*module);
  return EmitCpp(*module, AssignBuffers(*module));
}

const char* kSumOverBatch = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %p = f32[128,512] parameter(0)
  %zero = f32[] constant(0)
  %r = f32[512] reduce(%p, %zero), dimensions={0}, to_apply=%add
  ROOT %t = (f32[512]) tuple(%r)
}
)";

TEST(CodegenTest, LeadingDimensionReductionAccumulatesRows) {
  std::string text = kSumOverBatch;
  text.replace(text.find("f32[128,512]"), 12, "f32[64,512]");
  std::string code = Emit(text);
  // Rows are accumulated with a contiguous inner loop over the kept dimension, into a row of
  // double accumulators (an f32 running sum over 64 rows loses digits), then stored.
  EXPECT_NE(code.find("for (int64_t r0 = 0; r0 < 64; ++r0)\n    for (int64_t o1 = 0; o1 < 512; ++o1)"),
            std::string::npos) << code;
  EXPECT_NE(code.find("double acc[512];"), std::string::npos) << code;
  EXPECT_NE(code.find("acc[o1] = acc[o1] + v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = 0; o < 512; ++o) b_fusion_11[o] = (float)acc[o];"), std::string::npos) << code;
  // Large enough to split: each thread owns a slice [lo, hi) of the row, accumulates and stores it.
  code = Emit(kSumOverBatch);
  // The single kept dimension splits in blocks of 16 (a constant inner trip count vectorizes).
  EXPECT_NE(code.find("acc[(b*16 + j)] = acc[(b*16 + j)] + v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t r0 = 0; r0 < 128; ++r0)\n    for (int64_t b = lo; b < hi; ++b)\n"
                      "    for (int64_t j = 0; j < 16; ++j)"),
            std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = lo * 16; o < hi * 16; ++o) acc[o] = "), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = lo * 16; o < hi * 16; ++o) b_fusion_11[o] = (float)acc[o];"),
            std::string::npos) << code;
  EXPECT_NE(code.find("support->parallel_for(&t_fusion_11, &c, 32)"), std::string::npos) << code;
}

TEST(CodegenTest, TrailingDimensionReductionKeepsPartialAccumulators) {
  std::string text = kSumOverBatch;
  text.replace(text.find("f32[512] reduce"), 15, "f32[128] reduce");
  text.replace(text.find("dimensions={0}"), 14, "dimensions={1}");
  text.replace(text.find("(f32[512]) tuple"), 16, "(f32[128]) tuple");
  std::string code = Emit(text);
  // 16 double partial sums, each taking every 16th element (the loop vectorizes), then the total.
  EXPECT_NE(code.find("double acc = "), std::string::npos) << code;
  EXPECT_NE(code.find("double part[16];"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t b = 0; b < 512; b += 16)\n      for (int64_t r1 = b; r1 < b + 16; ++r1)"),
            std::string::npos) << code;
  EXPECT_NE(code.find("part[r1 - b] = part[r1 - b] + v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int j = 0; j < 16; ++j) acc = acc + part[j];"), std::string::npos) << code;
  EXPECT_EQ(code.find("for (int64_t r1 = 512;"), std::string::npos) << code;  // no tail
  // A row that is not a multiple of 16 finishes its tail in the total.
  text.replace(text.find("f32[128,512]"), 12, "f32[128,500]");
  code = Emit(text);
  EXPECT_NE(code.find("for (int64_t b = 0; b < 496; b += 16)"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t r1 = 496; r1 < 500; ++r1) {"), std::string::npos) << code;
}

TEST(CodegenTest, GeneratedCodeIncludesNoHeaders) {
  EXPECT_EQ(Emit(kSumOverBatch).find("\n#include"), std::string::npos);
}

// Two independent reductions: two kernels, which a two-way split puts in different units.
const char* kTwoSums = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %p = f32[128,512] parameter(0)
  %zero = f32[] constant(0)
  %r0 = f32[512] reduce(%p, %zero), dimensions={0}, to_apply=%add
  %r1 = f32[128] reduce(%p, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[512], f32[128]) tuple(%r0, %r1)
}
)";

TEST(CodegenTest, SourceSplitsIntoUnitsThatShareThePreludeAndKeepEveryKernel) {
  std::string code = Emit(kTwoSums);
  auto units = SplitSource(code, 2);
  ASSERT_EQ(units.size(), 2u);
  size_t prelude = code.find(kKernelsBegin);
  for (const std::string& u : units) {
    EXPECT_EQ(u.substr(0, prelude), code.substr(0, prelude));
    EXPECT_EQ(u.find("txla_run") != std::string::npos, &u == &units.back());
  }
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(units[0], kKernelEnd) + count(units[1], kKernelEnd), count(code, kKernelEnd));
  EXPECT_EQ(count(units[0], kKernelEnd), 1u);
  EXPECT_EQ(SplitSource(code, 1), std::vector<std::string>{code});
}

TEST(CodegenTest, LargeLoopsSplitTheirOuterLoopAcrossThreads) {
  auto add = [](const std::string& dims) {
    return "HloModule m\n\nENTRY %main {\n  %p = f32[" + dims + "] parameter(0)\n  %q = f32[" + dims +
           "] parameter(1)\n  %a = f32[" + dims + "] add(%p, %q)\n  ROOT %t = (f32[" + dims + "]) tuple(%a)\n}\n";
  };
  std::string big = Emit(add("512,512"));
  EXPECT_NE(big.find("support->parallel_for("), std::string::npos) << big;
  // It builds, as one unit and split in two.
  std::string dir = WorkDirectory();
  EXPECT_NO_THROW(BuildSharedObject(big, "parallel test", dir + "/codegen_test_parallel.so"));
  EXPECT_NO_THROW(BuildSharedObject(big, "parallel test, split", dir + "/codegen_test_parallel_split.so", 2));
  EXPECT_NE(big.find("for (int64_t i0 = lo; i0 < hi; ++i0)"), std::string::npos) << big;
  std::string small = Emit(add("8,8"));
  EXPECT_EQ(small.find("parallel_for(&"), std::string::npos) << small;
}

}  // namespace
}  // namespace txla::compiler
