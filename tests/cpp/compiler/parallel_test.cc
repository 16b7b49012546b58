#include "compiler/library/parallel.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace txla::compiler::library {
namespace {

cpu_set_t Affinity() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return set;
}

// The pool's worker leaves the CPU of the thread that woke it this way: it must land on another
// CPU and keep every CPU it was allowed (nothing stays pinned).
TEST(ParallelTest, AThreadMovedOffItsCpuRunsElsewhereAndKeepsItsAffinity) {
  std::thread([] {
    cpu_set_t allowed = Affinity();
    if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: nowhere to move";
    int before = sched_getcpu();
    ASSERT_TRUE(MoveThisThreadOffCpu(before));
    EXPECT_NE(sched_getcpu(), before);
    cpu_set_t after = Affinity();
    EXPECT_TRUE(CPU_EQUAL(&after, &allowed));
  }).join();
}

TEST(ParallelTest, AThreadAllowedOneCpuStaysThere) {
  std::thread([] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    int before = sched_getcpu();
    EXPECT_FALSE(MoveThisThreadOffCpu(before));
    EXPECT_EQ(sched_getcpu(), before);
    cpu_set_t after = Affinity();
    EXPECT_TRUE(CPU_EQUAL(&after, &one));
  }).join();
}

}  // namespace
}  // namespace txla::compiler::library
