// Collectives on the in-process transport: replicas are threads, as under threaded DataParallel.
#include "runtime/collectives.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <thread>

#include "compiler/compile.h"
#include "hlo/parser.h"
#include "runtime/buffer.h"

namespace txla::runtime {
namespace {

// Runs body(replica) on one thread per replica; returns each thread's exception text ("" if none).
std::vector<std::string> OnReplicas(int replicas, const std::function<void(int)>& body) {
  std::vector<std::string> errors(replicas);
  std::vector<std::thread> threads;
  for (int r = 0; r < replicas; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

class CollectivesTest : public ::testing::Test {
 protected:
  void TearDown() override { SetCollectiveBackend(nullptr); }
};

TEST_F(CollectivesTest, AllReduceAndAllGatherFollowTheGroups) {
  // Devices 0..3 are replicas 0..3; groups {1,0} and {3,2}: gathers in the group's order.
  SetCollectiveBackend(MakeInProcessBackend({0, 1, 2, 3}));
  const ReplicaGroups groups = {{1, 0}, {3, 2}};
  std::vector<std::vector<float>> sums(4), gathers(4), shards(4);
  auto errors = OnReplicas(4, [&](int r) {
    ScopedExecutingDevice executing(r);
    std::vector<float> x = {float(r), float(10 * r)};
    auto sum = EncodeCollective(CollectiveOp::kAllReduce, ReduceKind::kSum, ElementType::kF32, 2, groups);
    sums[r] = x;
    RunCollective(sum.data(), sums[r].data(), sums[r].data());
    auto gather = EncodeCollective(CollectiveOp::kAllGather, ReduceKind::kSum, ElementType::kF32, 2, groups);
    gathers[r].resize(4);
    RunCollective(gather.data(), x.data(), gathers[r].data());
    auto scatter = EncodeCollective(CollectiveOp::kReduceScatter, ReduceKind::kMax, ElementType::kF32, 2, groups);
    shards[r].resize(1);
    RunCollective(scatter.data(), x.data(), shards[r].data());
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(errors[r], "");
    const int a = r < 2 ? 1 : 3, b = r < 2 ? 0 : 2;  // the group, in its order
    EXPECT_EQ(sums[r], (std::vector<float>{float(a + b), float(10 * (a + b))}));
    EXPECT_EQ(gathers[r], (std::vector<float>{float(a), float(10 * a), float(b), float(10 * b)}));
    // Position in the group picks the shard of max(x_a, x_b) = x_a.
    EXPECT_EQ(shards[r], std::vector<float>{r == a ? float(a) : float(10 * a)});
  }
}

TEST_F(CollectivesTest, ReplicasThatDisagreeFailTogether) {
  SetCollectiveBackend(MakeInProcessBackend({0, 1}));
  auto errors = OnReplicas(2, [&](int r) {
    ScopedExecutingDevice executing(r);
    std::vector<float> x(r + 1, 1.0f);  // different sizes: different programs
    auto spec = EncodeCollective(CollectiveOp::kAllReduce, ReduceKind::kSum, ElementType::kF32, r + 1, {});
    RunCollective(spec.data(), x.data(), x.data());
  });
  for (const std::string& e : errors) EXPECT_NE(e.find("replicas reached different collectives"), std::string::npos) << e;
}

TEST_F(CollectivesTest, AbortWakesReplicasWaitingForOneThatFailed) {
  auto backend = MakeInProcessBackend({0, 1});
  SetCollectiveBackend(backend);
  std::thread waiting_for_peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    backend->Abort("replica 1 failed");
  });
  ScopedExecutingDevice executing(0);
  float x = 1;
  auto spec = EncodeCollective(CollectiveOp::kAllReduce, ReduceKind::kSum, ElementType::kF32, 1, {});
  EXPECT_THROW(RunCollective(spec.data(), &x, &x), std::runtime_error);
  waiting_for_peer.join();
}

TEST_F(CollectivesTest, GroupsAreChecked) {
  EXPECT_THROW(GroupOf(0, 2, {{0, 2}}), std::invalid_argument);  // no replica 2
  EXPECT_THROW(GroupOf(0, 2, {{1}}), std::invalid_argument);     // 0 in no group
  EXPECT_THROW(GroupOf(0, 2, {{0}, {0, 1}}), std::invalid_argument);
  EXPECT_EQ(GroupOf(1, 3, {}), (std::vector<int64_t>{0, 1, 2}));
  // The default transport is one replica: a collective over two fails, over one is the identity.
  float x = 3;
  auto two = EncodeCollective(CollectiveOp::kAllReduce, ReduceKind::kSum, ElementType::kF32, 1, {{0, 1}});
  EXPECT_THROW(RunCollective(two.data(), &x, &x), std::invalid_argument);
  auto one = EncodeCollective(CollectiveOp::kAllReduce, ReduceKind::kSum, ElementType::kF32, 1, {});
  RunCollective(one.data(), &x, &x);
  EXPECT_EQ(x, 3);
}

// The whole path: HLO with collectives compiled to native code, run by two devices at once.
TEST_F(CollectivesTest, CompiledGraphsMeetInTheirCollectives) {
  const char* text = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}
ENTRY %main {
  %p = f32[2,3] parameter(0)
  %two = f32[] constant(2)
  %b = f32[2,3] broadcast(%two), dimensions={}
  %d = f32[2,3] multiply(%p, %b)
  %sum = f32[2,3] all-reduce(%d), replica_groups={}, to_apply=%add
  %flat = f32[6] reshape(%sum)
  %tok = f32[1] slice(%flat), slice={[0:1]}
  %big = f32[2,3] all-reduce(%p, %tok), replica_groups={{0,1}}, to_apply=%max
  %all = f32[4,3] all-gather(%p), dimensions={0}, replica_groups={{0,1}}
  ROOT %t = (f32[2,3], f32[2,3], f32[4,3]) tuple(%sum, %big, %all)
}
)";
  SetCollectiveBackend(MakeInProcessBackend({0, 1}));
  auto executable = compiler::Compile(hlo::ParseModule(text));
  ASSERT_EQ(executable->kind(), "native");
  std::vector<std::vector<BufferPtr>> outputs(2);
  auto errors = OnReplicas(2, [&](int r) {
    auto p = std::make_shared<Buffer>(ElementType::kF32, std::vector<int64_t>{2, 3}, r);
    for (int k = 0; k < 6; ++k) static_cast<float*>(p->data())[k] = float(k + 10 * r);
    outputs[r] = executable->Execute({p}, r);
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "");
    const float* sum = static_cast<const float*>(outputs[r][0]->data());
    const float* big = static_cast<const float*>(outputs[r][1]->data());
    const float* all = static_cast<const float*>(outputs[r][2]->data());
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(sum[k], 2 * (k + k + 10));
      EXPECT_EQ(big[k], k + 10);
      EXPECT_EQ(all[k], k);
      EXPECT_EQ(all[6 + k], k + 10);
    }
  }
}

}  // namespace
}  // namespace txla::runtime
