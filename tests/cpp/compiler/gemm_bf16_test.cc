#include "compiler/library/gemm_bf16.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "runtime/host_activity.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::library {
namespace {

std::vector<uint16_t> RandomBf16(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> out(count);
  for (uint16_t& v : out) v = txla_bf16_from_float(normal(gen));
  return out;
}

// One product, bit for bit, whether or not a host thread is tracing (which takes a core from
// library calls, runtime/host_activity.h): the parts it is cut into, whose shapes decide the
// order of the sums, must not depend on how many threads run them.
TEST(GemmBf16Test, AProductIsTheSameWhileTheHostTraces) {
  for (auto [m, n, k] : {std::array<int64_t, 3>{128, 512, 512}, {512, 128, 512}, {64, 1024, 300}}) {
    std::vector<uint16_t> a = RandomBf16(m * k, 1), b = RandomBf16(k * n, 2);
    std::vector<float> quiet(m * n), busy(m * n);
    GemmBatchedBf16(1, false, false, m, n, k, a.data(), k, 0, b.data(), n, 0, quiet.data(), n, 0);
    std::atomic<bool> stop{false};
    std::thread tracer([&] {
      while (!stop) runtime::NoteHostActivity();
    });
    for (int repeat = 0; repeat < 3; ++repeat) {
      GemmBatchedBf16(1, false, false, m, n, k, a.data(), k, 0, b.data(), n, 0, busy.data(), n, 0);
      EXPECT_EQ(std::memcmp(quiet.data(), busy.data(), quiet.size() * sizeof(float)), 0) << m << "x" << n << "x" << k;
    }
    stop = true;
    tracer.join();
  }
  // A batch of products likewise.
  const int64_t batch = 12, m = 64, n = 64, k = 512;
  std::vector<uint16_t> a = RandomBf16(batch * m * k, 3), b = RandomBf16(batch * k * n, 4);
  std::vector<float> quiet(batch * m * n), busy(batch * m * n);
  GemmBatchedBf16(batch, false, true, m, n, k, a.data(), k, m * k, b.data(), k, k * n, quiet.data(), n, m * n);
  std::atomic<bool> stop{false};
  std::thread tracer([&] {
    while (!stop) runtime::NoteHostActivity();
  });
  GemmBatchedBf16(batch, false, true, m, n, k, a.data(), k, m * k, b.data(), k, k * n, busy.data(), n, m * n);
  stop = true;
  tracer.join();
  EXPECT_EQ(std::memcmp(quiet.data(), busy.data(), quiet.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace txla::compiler::library
