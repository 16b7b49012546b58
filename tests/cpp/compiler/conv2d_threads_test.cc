#include <gtest/gtest.h>

#include <dirent.h>

#include <thread>
#include <vector>

#include "compiler/library/conv2d.h"
#include "compiler/library/conv2d_onednn.h"

namespace txla::compiler::library {
namespace {

int ThreadsOfThisProcess() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') ++count;
    closedir(dir);
  }
  return count;
}

// Library calls run on this project's threads only (compiler/library/parallel.h): a oneDNN
// primitive takes its thread count from the OpenMP setting of the thread that creates it, and a
// filter gradient created on a thread that still had OpenMP's default ran each of its parts with
// an OpenMP team of its own, whose threads spin in their barriers (the MNIST CNN's 1->10 filter
// gradient: 4.7-11 ms on two threads against 0.37 on one). A thread that has made no oneDNN
// call before must start none.
TEST(Conv2dThreadsTest, AConvolutionsFirstCallOnAThreadStartsNoThreadsOfItsOwn) {
  if (!OneDnnAvailable()) GTEST_SKIP() << "built without oneDNN";
  // A geometry no other test plans (plans are shared by geometry), 11 output channels: the
  // filter gradient splits its images and sums the parts.
  const std::vector<int64_t> geometry = {64, 1, 27, 27, 11, 5, 5, 23, 23, 1, 1, 0, 0, 1, 1, 1, 0};
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry.data());
  std::vector<float> x(g.batch * g.in_channels * g.in_h * g.in_w, 0.5f);
  std::vector<float> dy(g.batch * g.out_channels * g.out_h * g.out_w, 0.25f);
  std::vector<float> dw(g.out_channels * g.in_channels * g.kernel_h * g.kernel_w);
  // Warm the thread pool on another geometry first, so the count below sees only new threads.
  {
    std::vector<int64_t> other = geometry;
    other[0] = 32;
    Conv2dBackwardFilter(dy.data(), x.data(), dw.data(), other.data());
  }
  int during = 0;
  const int before = ThreadsOfThisProcess();
  std::thread caller([&] {
    Conv2dBackwardFilter(dy.data(), x.data(), dw.data(), geometry.data());
    during = ThreadsOfThisProcess();  // an OpenMP team's threads outlive its parallel region
  });
  caller.join();
  EXPECT_EQ(during, before + 1) << "threads started by the library call";
  // And the gradient is right: every term is 0.5 * 0.25 over 64 images of 23x23 outputs.
  for (float v : dw) EXPECT_FLOAT_EQ(v, 0.125f * 64 * 23 * 23);
}

}  // namespace
}  // namespace txla::compiler::library
