// Loop kernels (compiler/codegen/loop_emitter.h) of known graphs, emitted source compared in full.
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

// Two updates of the same form on parameters of two lengths (an optimizer's step over two
// weights): one flat kernel serves both, each call giving its length.
TEST(LoopKernelsTest, UpdatesOfTwoLengthsShareOneFlatKernel) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
ENTRY %main {
  %a = f32[4,8] parameter(0)
  %ga = f32[4,8] parameter(1)
  %b = f32[6] parameter(2)
  %gb = f32[6] parameter(3)
  %sa = f32[4,8] subtract(%a, %ga)
  %sb = f32[6] subtract(%b, %gb)
  ROOT %t = (f32[4,8], f32[6]) tuple(%sa, %sb)
}
)"), R"golden(//@@txla kernel H fusion.12
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1, const float* __restrict__ buf2, int64_t lo, int64_t hi) {
  for (int64_t i0 = lo; i0 < hi; ++i0)
    {
      const float v0 = buf1[i0];
      const float v1 = buf2[i0];
      const float v2 = (float)txla_sub(v1, v0);
      buf0[i0] = v2;
    }
}
extern "C" void t_H(void* p, int64_t lo, int64_t hi) { void* const* a = (void* const*)p; k_H((float*)a[0], (const float*)a[1], (const float*)a[2], lo, hi); }
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   fusion.12: kernel t_H(b_fusion_12, b_gb, b_b) on [0, 6)
//   fusion.17: kernel t_H(b_fusion_17, b_ga, b_a) on [0, 32)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 6 1 1 0 3 0 2 1 0 0 1 0 0 2 0 1 0 6 3 0 1 2 0 1 0 32 3 3 4 5
//@@txla functions t_H
)golden");
}

// An elementwise kernel of 2^16 elements or more splits its outermost loop over the threads:
// the program calls its trampoline through parallel_for on [0, rows).
TEST(LoopKernelsTest, ALargeKernelIsCalledOnTheThreads) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
ENTRY %main {
  %x = f32[512,128] parameter(0)
  %e = f32[512,128] exponential(%x)
  ROOT %t = (f32[512,128]) tuple(%e)
}
)"), R"golden(//@@txla kernel H fusion.7
TXLA_KERNEL void k_H(float* __restrict__ buf0, const float* __restrict__ buf1, int64_t lo, int64_t hi) {
  {
    for (int64_t i0 = lo; i0 < hi; ++i0)
    for (int64_t i1 = 0; i1 < 128; ++i1)
    {
      const float v0 = buf1[(i0*128 + i1)];
      const float v1 = (float)txla_exp(v0);
      buf0[(i0*128 + i1)] = v1;
    }
  }
}
extern "C" void t_H(void* p, int64_t lo, int64_t hi) { void* const* a = (void* const*)p; k_H((float*)a[0], (const float*)a[1], lo, hi); }
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   fusion.7: parallel t_H(b_fusion_7, b_x) on [0, 512)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 2 1 0 0 0 1 0 2 0 512 2 0 1
//@@txla functions t_H
)golden");
}

}  // namespace
}  // namespace txla::compiler
