// The kernel registry (compiler/codegen/kernel_registry.h) on known kernels: the unit's text and
// what a calling step declares, compared in full.
#include <gtest/gtest.h>

#include <string>

#include "compiler/codegen/kernel_registry.h"
#include "metrics/metrics.h"

namespace txla::compiler::emitter {
namespace {

const char* kSignature = "TXLA_KERNEL void k_fusion_3(float* __restrict__ out, const float* __restrict__ x)";
const char* kBody = "  for (int64_t i = 0; i < 8; ++i) out[i] = x[i] * 2.0f;\n";

TEST(KernelRegistryTest, AKernelIsWrittenOnceAndEveryCallerDeclaresIt) {
  KernelRegistry kernels;
  const int64_t shared_before = metrics::GetCounter("KernelsSharedInGraph")->Value();
  KernelRegistry::Added first = kernels.Add("fusion.3", "// computes aten::mul at train.py:7\n", kSignature, kBody);
  // The same code under another instruction's names: the same kernel, not written again.
  std::string other = kSignature;
  other.replace(other.find("k_fusion_3"), 10, "k_fusion_9");
  KernelRegistry::Added second = kernels.Add("fusion.9", "", other, kBody);
  EXPECT_EQ(kernels.hashes().size(), 1u);
  EXPECT_EQ(metrics::GetCounter("KernelsSharedInGraph")->Value() - shared_before, 1);
  EXPECT_EQ(first.names.at("k_fusion_3"), second.names.at("k_fusion_9"));
  EXPECT_EQ(first.prototypes, second.prototypes);
  EXPECT_EQ(first.prototypes,
            "TXLA_KERNEL void k_fc100e41c1a2d3740173fd5010913126(float* __restrict__ out, const float* __restrict__ x);\n");
  // Written once, named by its content, after the first caller's comment lines.
  EXPECT_EQ(kernels.Text(), R"(//@@txla kernel fc100e41c1a2d3740173fd5010913126 fusion.3
// computes aten::mul at train.py:7
TXLA_KERNEL void k_fc100e41c1a2d3740173fd5010913126(float* __restrict__ out, const float* __restrict__ x) {
  for (int64_t i = 0; i < 8; ++i) out[i] = x[i] * 2.0f;
}
//@@txla kernel end
)");
}

}  // namespace
}  // namespace txla::compiler::emitter
