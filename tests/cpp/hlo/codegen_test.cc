// Generated code for known graphs: a change to what the emitter writes shows up here.
#include <gtest/gtest.h>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_objects.h"
#include "compiler/codegen/native_library.h"
#include "compiler/compile.h"
#include "compiler/graph_program.h"
#include "hlo/parser.h"
#include "metrics/metrics.h"

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
  EXPECT_NE(code.find("acc[o1] = txla_add(acc[o1], v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = 0; o < 512; ++o) buf0[o] = (float)acc[o];"), std::string::npos) << code;
  // 128 rows (65k elements) stay on one thread (a thread's narrow slice of each row was slower);
  // large enough to split (8M elements): each thread owns a slice [lo, hi) of the row,
  // accumulates and stores it.
  code = Emit(kSumOverBatch);
  EXPECT_EQ(code.find("support->parallel_for"), std::string::npos) << code;
  text = kSumOverBatch;
  text.replace(text.find("f32[128,512]"), 12, "f32[16384,512]");
  code = Emit(text);
  // The single kept dimension splits in blocks of 16 (a constant inner trip count vectorizes).
  EXPECT_NE(code.find("acc[(b*16 + j)] = txla_add(acc[(b*16 + j)], v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t r0 = 0; r0 < 16384; ++r0)\n    for (int64_t b = lo; b < hi; ++b)\n"
                      "    for (int64_t j = 0; j < 16; ++j)"),
            std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = lo * 16; o < hi * 16; ++o) acc[o] = "), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t o = lo * 16; o < hi * 16; ++o) buf0[o] = (float)acc[o];"),
            std::string::npos) << code;
  // The program calls its trampoline on the threads, over 32 blocks of the row.
  EXPECT_NE(code.find("parallel t_" + ParseSource(code).kernels.at(0).hash + "("), std::string::npos) << code;
  EXPECT_NE(code.find(") on [0, 32)\n"), std::string::npos) << code;
}

TEST(CodegenTest, TrailingDimensionReductionKeepsPartialAccumulators) {
  std::string text = kSumOverBatch;
  text.replace(text.find("f32[512] reduce"), 15, "f32[128] reduce");
  text.replace(text.find("dimensions={0}"), 14, "dimensions={1}");
  text.replace(text.find("(f32[512]) tuple"), 16, "(f32[128]) tuple");
  std::string code = Emit(text);
  // 16 double partial sums, each taking every 16th element (the loop vectorizes, each block
  // unrolled whole so the partials stay in registers), folded in halves into the total.
  EXPECT_NE(code.find("double acc = "), std::string::npos) << code;
  EXPECT_NE(code.find("double part[16];"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int64_t b = 0; b < 512; b += 16)\n#pragma GCC unroll 16\n      for (int64_t r1 = b; r1 < b + 16; ++r1)"),
            std::string::npos) << code;
  EXPECT_NE(code.find("part[r1 - b] = txla_add(part[r1 - b], v"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int j = 0; j < 8; ++j) part[j] = txla_add(part[j], part[j + 8]);\n"
                      "      for (int j = 0; j < 4; ++j) part[j] = txla_add(part[j], part[j + 4]);\n"
                      "      for (int j = 0; j < 2; ++j) part[j] = txla_add(part[j], part[j + 2]);\n"
                      "      for (int j = 0; j < 1; ++j) part[j] = txla_add(part[j], part[j + 1]);\n"
                      "      acc = txla_add(acc, part[0]);"),
            std::string::npos)
      << code;
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

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(CodegenTest, SourceParsesIntoPreludeKernelsAndRun) {
  std::string code = Emit(kTwoSums);
  SourceParts parts = ParseSource(code);
  ASSERT_TRUE(parts.valid);
  ASSERT_EQ(parts.kernels.size(), 2u);
  std::string joined = parts.prelude;
  for (const SourceKernel& k : parts.kernels) {
    EXPECT_EQ(k.hash.size(), 32u) << k.hash;
    EXPECT_NE(k.text.find("k_" + k.hash + "("), std::string::npos) << k.text;  // named by its hash
    joined += k.text;
  }
  EXPECT_NE(parts.kernels[0].hash, parts.kernels[1].hash);
  joined += parts.run;
  EXPECT_EQ(joined, code);
  EXPECT_EQ(parts.run.find("//@@txla program ") != std::string::npos, true);
  EXPECT_FALSE(ParseSource("no markers").valid);
}

// Two instructions whose loop nests differ only in the buffers they touch run one kernel.
const char* kTwoSquares = R"(HloModule m
ENTRY %main {
  %p = f32[64,32] parameter(0)
  %q = f32[64,32] parameter(1)
  %a = f32[64,32] multiply(%p, %p)
  %b = f32[64,32] multiply(%q, %q)
  ROOT %t = (f32[64,32], f32[64,32]) tuple(%a, %b)
}
)";

TEST(CodegenTest, IdenticalKernelsAreEmittedOnce) {
  std::string code = Emit(kTwoSquares);
  SourceParts parts = ParseSource(code);
  ASSERT_TRUE(parts.valid);
  ASSERT_EQ(parts.kernels.size(), 1u) << code;
  // Both instructions call it, on their own buffers: two entries of the program, no step code.
  EXPECT_EQ(Count(parts.run, "kernel t_" + parts.kernels[0].hash + "("), 2u) << parts.run;
  EXPECT_NE(parts.run.find("(b_fusion_9, b_q)"), std::string::npos) << parts.run;
  EXPECT_NE(parts.run.find("(b_fusion_13, b_p)"), std::string::npos) << parts.run;
  // Value and buffer names are the kernel's own, not the instruction's.
  EXPECT_NE(parts.kernels[0].text.find("buf0[i0] = v"), std::string::npos) << code;
  // The same kernel in another graph has the same name.
  std::string other = kTwoSquares;
  other.replace(other.find("%b = f32[64,32] multiply(%q, %q)"), 32, "%b = f32[64,32] add(%q, %q)");
  SourceParts other_parts = ParseSource(Emit(other));
  ASSERT_EQ(other_parts.kernels.size(), 2u);
  EXPECT_TRUE(other_parts.kernels[0].hash == parts.kernels[0].hash ||
              other_parts.kernels[1].hash == parts.kernels[0].hash);
}

TEST(CodegenTest, OneBodyAtManyLengthsIsOneFlatKernel) {
  // An optimizer-like update of three parameters of different shapes (one large enough for the
  // threads) and a one-off kernel of another body.
  const char* updates = R"(HloModule m
ENTRY %main {
  %lr = f32[] parameter(0)
  %w1 = f32[8,16,3,3] parameter(1)
  %g1 = f32[8,16,3,3] parameter(2)
  %w2 = f32[37] parameter(3)
  %g2 = f32[37] parameter(4)
  %w3 = f32[300,300] parameter(5)
  %g3 = f32[300,300] parameter(6)
  %b1 = f32[8,16,3,3] broadcast(%lr), dimensions={}
  %m1 = f32[8,16,3,3] multiply(%g1, %b1)
  %u1 = f32[8,16,3,3] subtract(%w1, %m1)
  %b2 = f32[37] broadcast(%lr), dimensions={}
  %m2 = f32[37] multiply(%g2, %b2)
  %u2 = f32[37] subtract(%w2, %m2)
  %b3 = f32[300,300] broadcast(%lr), dimensions={}
  %m3 = f32[300,300] multiply(%g3, %b3)
  %u3 = f32[300,300] subtract(%w3, %m3)
  %e = f32[37] exponential(%g2)
  ROOT %t = (f32[8,16,3,3], f32[37], f32[300,300], f32[37]) tuple(%u1, %u2, %u3, %e)
}
)";
  metrics::Counter* flat = metrics::GetCounter("KernelsFlat");
  int64_t before = flat->Value();
  std::string code = Emit(updates);
  SourceParts parts = ParseSource(code);
  ASSERT_TRUE(parts.valid);
  ASSERT_EQ(parts.kernels.size(), 2u) << code;
  EXPECT_EQ(flat->Value() - before, 3);
  const char* flat_loop = "for (int64_t i0 = lo; i0 < hi; ++i0)\n";
  const SourceKernel& update =
      parts.kernels[0].text.find(flat_loop) != std::string::npos ? parts.kernels[0] : parts.kernels[1];
  // One loop over [lo, hi) of the elements, read at its own offset; the length is the call's.
  EXPECT_NE(update.text.find("for (int64_t i0 = lo; i0 < hi; ++i0)\n"), std::string::npos) << update.text;
  EXPECT_EQ(update.text.find("1152"), std::string::npos) << update.text;
  EXPECT_EQ(Count(parts.run, "kernel t_" + update.hash + "("), 2u) << parts.run;
  EXPECT_NE(parts.run.find(") on [0, 1152)"), std::string::npos) << parts.run;
  EXPECT_NE(parts.run.find(") on [0, 37)"), std::string::npos) << parts.run;
  // 90000 elements: on the threads, which split the elements.
  EXPECT_NE(parts.run.find("parallel t_" + update.hash + "("), std::string::npos) << parts.run;
  EXPECT_NE(parts.run.find(") on [0, 90000)"), std::string::npos) << parts.run;
  // The exponential runs at one length only: a loop of constant length (cheaper to compile).
  EXPECT_NE(code.find("for (int64_t i0 = 0; i0 < 37; ++i0)"), std::string::npos) << code;
  EXPECT_NO_THROW(BuildSharedObject(code, "flat kernels", WorkDirectory() + "/codegen_test_flat.so", 2));
}

TEST(CodegenTest, LaterBuildsLinkKernelsCompiledBefore) {
  ForgetKernelObjects();
  std::string dir = WorkDirectory();
  metrics::Counter* reused = metrics::GetCounter("KernelsReused");
  metrics::Counter* compiled = metrics::GetCounter("KernelsCompiled");
  int64_t reused_before = reused->Value(), compiled_before = compiled->Value();
  // Split in two: the kernels go into objects of their own, kept for later graphs.
  ASSERT_NO_THROW(BuildSharedObject(Emit(kTwoSquares), "squares", dir + "/codegen_test_squares.so", 2));
  EXPECT_EQ(compiled->Value() - compiled_before, 1);
  std::string other = kTwoSquares;
  other.replace(other.find("%b = f32[64,32] multiply(%q, %q)"), 32, "%b = f32[64,32] add(%q, %q)");
  std::string other_code = Emit(other);
  ASSERT_NO_THROW(BuildSharedObject(other_code, "square and sum", dir + "/codegen_test_square_add.so"));
  EXPECT_EQ(reused->Value() - reused_before, 1);
  EXPECT_EQ(compiled->Value() - compiled_before, 2);
  auto library = NativeLibrary::Load(dir + "/codegen_test_square_add.so");
  // The library defines every function the program names, and the runtime's txla_bind.
  std::optional<ProgramText> program = ParseProgram(other_code);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->functions.size(), 2u);
  for (const std::string& name : program->functions) EXPECT_NE(library->FindSymbol(name.c_str()), nullptr) << name;
  EXPECT_NE(library->FindSymbol("txla_bind"), nullptr);
  ForgetKernelObjects();
}

TEST(CodegenTest, LargeLoopsSplitTheirOuterLoopAcrossThreads) {
  auto add = [](const std::string& dims) {
    return "HloModule m\n\nENTRY %main {\n  %p = f32[" + dims + "] parameter(0)\n  %q = f32[" + dims +
           "] parameter(1)\n  %a = f32[" + dims + "] add(%p, %q)\n  ROOT %t = (f32[" + dims + "]) tuple(%a)\n}\n";
  };
  std::string big = Emit(add("512,512"));
  EXPECT_NE(big.find("parallel t_"), std::string::npos) << big;
  // It builds, as one unit and split in two.
  std::string dir = WorkDirectory();
  EXPECT_NO_THROW(BuildSharedObject(big, "parallel test", dir + "/codegen_test_parallel.so"));
  EXPECT_NO_THROW(BuildSharedObject(big, "parallel test, split", dir + "/codegen_test_parallel_split.so", 2));
  EXPECT_NE(big.find("for (int64_t i0 = lo; i0 < hi; ++i0)"), std::string::npos) << big;
  std::string small = Emit(add("8,8"));
  EXPECT_EQ(small.find("parallel_for(&"), std::string::npos) << small;
}

TEST(CodegenTest, TrailingReducedDimensionsRunAsOneLoopWithPartialSums) {
  // Batch norm's per-channel sum over (N, H, W): H and W are one loop of 256, long enough for
  // the partial accumulators (16x16 alone were two loops of 16, summed one by one).
  std::string text = kSumOverBatch;
  text.replace(text.find("f32[128,512] parameter(0)"), 25, "f32[8,16,16,16] parameter(0)");
  text.replace(text.find("f32[512] reduce"), 15, "f32[16] reduce");
  text.replace(text.find("dimensions={0}"), 14, "dimensions={0,2,3}");
  text.replace(text.find("(f32[512]) tuple"), 16, "(f32[16]) tuple");
  metrics::Counter* merged = metrics::GetCounter("KernelReducedLoopsMerged");
  int64_t before = merged->Value();
  std::string code = Emit(text);
  EXPECT_EQ(merged->Value() - before, 1);
  EXPECT_NE(code.find("for (int64_t r0 = 0; r0 < 8; ++r0)\n      {\n      for (int64_t b = 0; b < 256; b += 16)\n"
                      "#pragma GCC unroll 16\n      for (int64_t r2 = b; r2 < b + 16; ++r2) {"),
            std::string::npos) << code;
  EXPECT_NE(code.find("buf1[(o1*256 + r0*4096 + r2)]"), std::string::npos) << code;
  // A kept dimension between reduced ones stays a loop of its own: only trailing ones merge.
  text.replace(text.find("dimensions={0,2,3}"), 18, "dimensions={0,1,3}");
  before = merged->Value();
  code = Emit(text);
  EXPECT_EQ(merged->Value() - before, 0) << code;
}

TEST(CodegenTest, DimensionsReadOnlyInRowMajorOrderRunAsOneLoop) {
  // A 3x3 convolution weight's update with a per-channel scale: the kernel's width and height
  // run as one loop of 9 (the scale is constant along them), the channels cannot join them.
  const char* scaled = R"(HloModule m
ENTRY %main {
  %w = f32[8,16,3,3] parameter(0)
  %g = f32[8,16,3,3] parameter(1)
  %s = f32[16] parameter(2)
  %bs = f32[8,16,3,3] broadcast(%s), dimensions={1}
  %m = f32[8,16,3,3] multiply(%g, %bs)
  %a = f32[8,16,3,3] subtract(%w, %m)
  ROOT %t = (f32[8,16,3,3]) tuple(%a)
}
)";
  metrics::Counter* merged = metrics::GetCounter("KernelLoopsMerged");
  metrics::Counter* hoisted = metrics::GetCounter("KernelLoopInvariantsHoisted");
  int64_t before = merged->Value(), hoisted_before = hoisted->Value();
  std::string code = Emit(scaled);
  EXPECT_EQ(merged->Value() - before, 1);
  // The channel's scale is read once per channel, before the loop of 9 (loop_invariants.h).
  EXPECT_NE(code.find("for (int64_t i0 = 0; i0 < 8; ++i0)\n    for (int64_t i1 = 0; i1 < 16; ++i1)\n    {\n"
                      "      const float v0 = buf1[i1];\n      const float v1 = v0;\n"
                      "    for (int64_t i2 = 0; i2 < 9; ++i2)\n    {"),
            std::string::npos) << code;
  EXPECT_EQ(hoisted->Value() - hoisted_before, 1);
  EXPECT_NE(code.find("buf0[(i0*144 + i1*9 + i2)] = v"), std::string::npos) << code;
  // Without the scale, the whole update is one loop.
  std::string plain = scaled;
  plain.replace(plain.find("%m = f32[8,16,3,3] multiply(%g, %bs)"), 36, "%m = f32[8,16,3,3] multiply(%g, %g)");
  code = Emit(plain);
  EXPECT_NE(code.find("for (int64_t i0 = 0; i0 < 1152; ++i0)\n    {"), std::string::npos) << code;
  // A read through a transpose keeps its dimensions' loops.
  std::string transposed = scaled;
  transposed.replace(transposed.find("%m = f32[8,16,3,3] multiply(%g, %bs)"), 36,
                     "%gt = f32[8,16,3,3] transpose(%g), dimensions={0,1,3,2}\n  %m = f32[8,16,3,3] multiply(%gt, %bs)");
  before = merged->Value();
  code = Emit(transposed);
  EXPECT_EQ(merged->Value() - before, 0) << code;
  EXPECT_NE(code.find("for (int64_t i3 = 0; i3 < 3; ++i3)"), std::string::npos) << code;
  // Split across threads: the split dimension stays, the rest merge; the result builds.
  std::string big = plain;
  for (size_t at = big.find("8,16,3,3"); at != std::string::npos; at = big.find("8,16,3,3")) big.replace(at, 8, "512,64,3,3");
  big.replace(big.find("f32[16]"), 7, "f32[64]");
  code = Emit(big);
  EXPECT_NE(code.find("for (int64_t i0 = lo; i0 < hi; ++i0)\n    for (int64_t i1 = 0; i1 < 576; ++i1)\n    {"),
            std::string::npos) << code;
  EXPECT_NE(code.find("buf0[(i0*576 + i1)] = v"), std::string::npos) << code;
  EXPECT_NO_THROW(BuildSharedObject(code, "merged loops", WorkDirectory() + "/codegen_test_merged.so", 2));
}

TEST(CodegenTest, ARowIndexReadFromDataIsCheckedBeforeTheLoopAlongTheRow) {
  // An embedding's rows plus positions: the token is read and bounds-checked once per row, so
  // the loop along the row has no call in it and vectorizes.
  const char* embedding = R"(HloModule m
ENTRY %main {
  %table = f32[50,24] parameter(0)
  %tokens = s64[27] parameter(1)
  %pos = f32[27,24] parameter(2)
  %rows = f32[27,24] gather(%table, %tokens), dimensions={0}, index_mode=select
  %sum = f32[27,24] add(%rows, %pos)
  ROOT %t = (f32[27,24]) tuple(%sum)
}
)";
  std::string code = Emit(embedding);
  size_t check = code.find("index_error(");
  size_t inner = code.find("for (int64_t i1 = 0; i1 < 24; ++i1)");
  ASSERT_NE(check, std::string::npos) << code;
  ASSERT_NE(inner, std::string::npos) << code;
  EXPECT_LT(check, inner) << code;
}

}  // namespace
}  // namespace txla::compiler
