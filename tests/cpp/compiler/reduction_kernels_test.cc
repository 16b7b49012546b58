// Kernels that accumulate (compiler/codegen/reduction_emitter.h) of known graphs, emitted source
// compared in full.
#include <gtest/gtest.h>

#include <string>

#include "compiler/golden_source.h"

namespace txla::compiler {
namespace {

// A module summing `input` over `dims` into `output` (f32).
std::string Sum(const std::string& input, const std::string& output, const std::string& dims) {
  return "HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
         "  ROOT %s = f32[] add(%a, %b)\n}\nENTRY %main {\n  %x = " + input + " parameter(0)\n  %zero = f32[] constant(0)\n"
         "  %r = " + output + " reduce(%x, %zero), dimensions={" + dims + "}, to_apply=%add\n  ROOT %t = (" + output +
         ") tuple(%r)\n}\n";
}

// A row reduction: 16 partial sums in double along the row (they vectorize), folded in halves,
// then rounded to float once.
TEST(ReductionKernelsTest, ARowSumAccumulatesInDoublePartials) {
  EXPECT_EQ(EmitAfterPrelude(Sum("f32[6,64]", "f32[6]", "1")), R"golden(//@@txla kernel H fusion.12
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1) {
  {
    for (int64_t o0 = 0; o0 < 6; ++o0)
    {
      double acc = 0.00000000000000000e+00f;
      double part[16];
      for (int j = 0; j < 16; ++j) part[j] = 0;
      {
      for (int64_t b = 0; b < 64; b += 16)
#pragma GCC unroll 16
      for (int64_t r1 = b; r1 < b + 16; ++r1) {
      const float v0 = buf1[(o0*64 + r1)];
        part[r1 - b] = txla_add(part[r1 - b], v0);
      }
      }
      for (int j = 0; j < 8; ++j) part[j] = txla_add(part[j], part[j + 8]);
      for (int j = 0; j < 4; ++j) part[j] = txla_add(part[j], part[j + 4]);
      for (int j = 0; j < 2; ++j) part[j] = txla_add(part[j], part[j + 2]);
      for (int j = 0; j < 1; ++j) part[j] = txla_add(part[j], part[j + 1]);
      acc = txla_add(acc, part[0]);
      buf0[o0] = (float)acc;
    }
  }
}
extern "C" void t_H(void* p, int64_t lo, int64_t hi) { void* const* a = (void* const*)p; k_H((float*)a[0], (const float*)a[1]); }
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   fusion.12: kernel t_H(b_fusion_12, b_x) on [0, 0)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 2 1 0 0 0 1 0 1 0 0 2 0 1
//@@txla functions t_H
)golden");
}

// A sum over the leading (batch) dimension: a row of accumulators, the inner loop walking
// each input row contiguously.
TEST(ReductionKernelsTest, ASumOverTheBatchAccumulatesWholeRows) {
  EXPECT_EQ(EmitAfterPrelude(Sum("f32[5,24]", "f32[24]", "0")), R"golden(//@@txla kernel H fusion.12
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1) {
  {
    double acc[24];
    for (int64_t o = 0; o < 24; ++o) acc[o] = 0.00000000000000000e+00f;
    for (int64_t r0 = 0; r0 < 5; ++r0)
    for (int64_t o1 = 0; o1 < 24; ++o1)
    {
      const float v0 = buf1[(o1 + r0*24)];
      acc[o1] = txla_add(acc[o1], v0);
    }
    for (int64_t o = 0; o < 24; ++o) buf0[o] = (float)acc[o];
  }
}
extern "C" void t_H(void* p, int64_t lo, int64_t hi) { void* const* a = (void* const*)p; k_H((float*)a[0], (const float*)a[1]); }
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   fusion.12: kernel t_H(b_fusion_12, b_x) on [0, 0)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 2 1 0 0 0 1 0 1 0 0 2 0 1
//@@txla functions t_H
)golden");
}

// A cumulative sum is a kernel of its own: lines along the scanned dimension, f32 in a double.
TEST(ReductionKernelsTest, ACumulativeSumRunsItsLines) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
ENTRY %main {
  %x = f32[3,5,2] parameter(0)
  %c = f32[3,5,2] custom-call(%x), custom_call_target="txla.cumsum", dimensions={1}
  ROOT %t = (f32[3,5,2]) tuple(%c)
}
)"), R"golden(//@@txla kernel H c
TXLA_KERNEL void k_H(float* __restrict__ out, const float* __restrict__ x) {
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 2; ++i) {
      double acc = 0;
      for (int64_t k = 0; k < 5; ++k) {
        const int64_t at = (o * 5 + k) * 2 + i;
        acc = acc + x[at]; out[at] = (float)acc;
      }
    }
}
//@@txla kernel end
//@@txla kernel H c
TXLA_KERNEL void k_H(float* __restrict__ out, const float* __restrict__ x);
extern "C" void s_H(const TxlaSupport* support, void* const* a) {
  float* buf0 = (float*)a[0];
  const float* buf1 = (const float*)a[1];
  k_H(buf0, buf1);
}
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   c: step s_H(b_c, b_x)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 2 1 0 0 0 1 0 0 0 0 2 0 1
//@@txla functions s_H
)golden");
}

}  // namespace
}  // namespace txla::compiler
