// Loop and reduction kernels of known graphs, emitted source compared in full.
#include <gtest/gtest.h>

#include <string>

#include "compiler/golden_source.h"

namespace txla::compiler {
namespace {

// An elementwise fusion: one loop nest over the output (b is read by column only, so the two
// dimensions stay two loops), called through its trampoline straight from the program.
TEST(LoopKernelsTest, AnElementwiseFusionIsOneLoopNest) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
ENTRY %main {
  %x = f32[4,8] parameter(0)
  %b = f32[8] parameter(1)
  %bb = f32[4,8] broadcast(%b), dimensions={1}
  %s = f32[4,8] add(%x, %bb)
  %e = f32[4,8] exponential(%s)
  ROOT %t = (f32[4,8]) tuple(%e)
}
)"), R"golden(//@@txla kernel H fusion.13
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1, const float* __restrict__ buf2) {
  {
    for (int64_t i0 = 0; i0 < 4; ++i0)
    for (int64_t i1 = 0; i1 < 8; ++i1)
    {
      const float v0 = buf1[i1];
      const float v1 = v0;
      const float v2 = buf2[(i0*8 + i1)];
      const float v3 = (float)txla_add(v2, v1);
      const float v4 = (float)txla_exp(v3);
      buf0[(i0*8 + i1)] = v4;
    }
  }
}
extern "C" void t_H(void* p, int64_t lo, int64_t hi) { void* const* a = (void* const*)p; k_H((float*)a[0], (const float*)a[1], (const float*)a[2]); }
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   fusion.13: kernel t_H(b_fusion_13, b_b, b_x) on [0, 0)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 3 1 0 0 1 0 0 1 0 1 0 0 3 0 1 2
//@@txla functions t_H
)golden");
}

// A row reduction: 16 partial sums in double along the row (they vectorize), folded in halves,
// then rounded to float once.
TEST(LoopKernelsTest, ARowSumAccumulatesInDoublePartials) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[6,64] parameter(0)
  %zero = f32[] constant(0)
  %r = f32[6] reduce(%x, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[6]) tuple(%r)
}
)"), R"golden(//@@txla kernel H fusion.12
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1) {
  {
    for (int64_t o0 = 0; o0 < 6; ++o0)
    {
      double acc = 0.00000000000000000e+00f;
      double part[16];
      for (int j = 0; j < 16; ++j) part[j] = 0;
      {
      for (int64_t b = 0; b < 64; b += 16)
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

}  // namespace
}  // namespace txla::compiler
