// The SPMD passes: sharding propagation and the partitioner, HLO text in and out, and the
// partitioned program run on four in-process devices against the global program on one.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "compiler/compile.h"
#include "compiler/spmd/all_reduce_combiner.h"
#include "compiler/spmd/auto_sharding.h"
#include "compiler/spmd/sharding_propagation.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "compiler/spmd/tile_map.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "runtime/collectives.h"
#include "runtime/shards.h"

namespace txla::compiler::spmd {
namespace {

constexpr int64_t kDevices = 4;

std::string Line(const std::string& text, const std::string& name) {
  size_t at = text.find("%" + name + " = ", text.find("ENTRY"));
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

std::unique_ptr<hlo::Module> Propagated(const std::string& text) {
  auto module = hlo::ParseModule(text);
  ShardingPropagation(kDevices).Run(*module);
  return module;
}

TEST(TileMapTest, PartialReplicationRoundTripsThroughCoordinates) {
  auto s = hlo::Sharding::Parse("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  TileMap m = TileMap::Of(s, 2, kDevices);
  EXPECT_EQ(m.tiles, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(m.coords[2], (std::vector<int64_t>{0, 0}));  // device 2 replicates device 0's tile
  EXPECT_EQ(m.coords[1], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(m.ToSharding()->ToString(), s.ToString());
  EXPECT_TRUE(TileMap::Of(hlo::Sharding::Parse("{replicated}"), 3, kDevices).replicated());
  EXPECT_EQ(LocalDims({5, 8}, {2, 1}), (std::vector<int64_t>{3, 8}));
  EXPECT_THROW(TileMap::Of(hlo::Sharding::Parse("{devices=[2,2]0,1,2,3}"), 2, 2), std::invalid_argument);
}

const char* kMlp = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %x = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %w1 = f32[12,16] parameter(1), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  %w2 = f32[4,12] parameter(2), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}
  %h = f32[8,12] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %r = f32[8,12] tanh(%h)
  %y = f32[8,4] dot(%r, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %zero = f32[] constant(0)
  %s = f32[8] reduce(%y, %zero), dimensions={1}, to_apply=%add
  %t = f32[] reduce(%s, %zero), dimensions={0}, to_apply=%add
  ROOT %out = (f32[8,4], f32[]) tuple(%y, %t)
}
)";

TEST(ShardingPropagationTest, MegatronMlpKeepsTilesThroughDotsAndReductions) {
  auto module = Propagated(kMlp);
  std::string text = hlo::ToText(*module);
  // Column-parallel fc1: batch over 'data', features over 'model' (2x2, no replication).
  EXPECT_NE(Line(text, "h").find("sharding={devices=[2,2]0,1,2,3}"), std::string::npos) << text;
  EXPECT_NE(Line(text, "r").find("sharding={devices=[2,2]0,1,2,3}"), std::string::npos) << text;
  // Row-parallel fc2: the contracting dimension is tiled, the result is batch-tiled and
  // replicated over 'model' once summed.
  EXPECT_NE(Line(text, "y").find("sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"), std::string::npos)
      << text;
  EXPECT_NE(Line(text, "t").find("sharding={replicated}"), std::string::npos) << text;
}

TEST(SpmdPartitionerTest, MegatronMlpRunsOnTilesWithOneAllReducePerContraction) {
  auto module = Propagated(kMlp);
  SpmdPartitioner partitioner(kDevices);
  partitioner.Run(*module);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(Line(text, "x").find("f32[4,16]"), std::string::npos) << text;
  EXPECT_NE(Line(text, "w1").find("f32[6,16]"), std::string::npos) << text;
  EXPECT_NE(Line(text, "h").find("f32[4,6]"), std::string::npos) << text;
  EXPECT_NE(Line(text, "y").find("f32[4,4]"), std::string::npos) << text;
  EXPECT_EQ(text.find("txla.spmd_all_gather"), std::string::npos) << text;
  // fc2's partial sums over 'model' ({0,2} hold batch tile 0), then the batch sum over 'data'.
  EXPECT_NE(text.find("all-reduce(f32[4,4]{1,0} %y), replica_groups={{0,1},{2,3}}"), std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce(f32[] %t), replica_groups={{0,2},{1,3}}"), std::string::npos) << text;
  std::vector<std::string> kinds;
  for (const auto& r : partitioner.inserted()) kinds.push_back(r.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"all-reduce", "all-reduce"}));
}

TEST(SpmdPartitionerTest, AnOpWithoutALocalRuleGathersItsOperandsAndCutsItsResult) {
  auto module = Propagated(R"(HloModule m
ENTRY %main {
  %p = f32[6,4] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %s = f32[3,4] slice(%p), slice={[0:6:2], [0:4]}
  %c = f32[3,4] custom-call(%s), custom_call_target="Sharding", sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  ROOT %out = (f32[3,4]) tuple(%c)
})");
  SpmdPartitioner partitioner(kDevices);
  partitioner.Run(*module);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(text.find("f32[6,4]{1,0} custom-call(f32[2,4]{1,0} %p), custom_call_target=\"txla.spmd_all_gather\""),
            std::string::npos) << text;
  EXPECT_NE(text.find("f32[2,4]{1,0} custom-call(f32[3,4]{1,0} %s), custom_call_target=\"txla.spmd_shard\""),
            std::string::npos) << text;
  EXPECT_EQ(text.find("\"Sharding\""), std::string::npos) << text;
}

const char* kRowTimesColumn = R"(HloModule m
ENTRY %main {
  %a = f32[1,128] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %b = f32[128,1] parameter(1), sharding={replicated}
  %c = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (f32[1,1]) tuple(%c)
})";

TEST(SpmdPartitionerTest, AWholeOperandFollowsASplitContractionAndPartialSumsAreAllReduced) {
  auto module = Propagated(kRowTimesColumn);
  SpmdPartitioner partitioner(kDevices);
  partitioner.Run(*module);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(text.find("f32[32,1]{1,0} custom-call(f32[128,1]{1,0} %b), custom_call_target=\"txla.spmd_shard\""),
            std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce(f32[1,1]{1,0} %c), replica_groups={{0,1,2,3}}"), std::string::npos) << text;
  EXPECT_EQ(text.find("txla.spmd_all_gather"), std::string::npos) << text;
}

// Runs `text` whole on one device and partitioned on four; the outputs must agree exactly.
void ExpectPartitionedRunMatches(const std::string& text, const std::vector<std::vector<int64_t>>& param_dims) {
  auto global = hlo::ParseModule(text);
  std::vector<hlo::Sharding> param_shardings, out_shardings;
  for (hlo::Instruction* p : global->entry()->parameters()) param_shardings.push_back(*p->attrs().sharding);
  auto partitioned = Propagated(text);
  for (hlo::Instruction* o : partitioned->entry()->root()->operands()) out_shardings.push_back(*o->attrs().sharding);
  SpmdPartitioner(kDevices).Run(*partitioned);
  AllReduceCombiner().Run(*partitioned);
  for (hlo::Instruction* p : global->entry()->parameters()) p->mutable_attrs().sharding.reset();
  auto whole = Compile(std::move(global));
  auto local = Compile(std::move(partitioned));

  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<runtime::BufferPtr> params;
  for (const auto& dims : param_dims) {
    auto b = std::make_shared<runtime::Buffer>(runtime::ElementType::kF32, dims, 0);
    float* f = static_cast<float*>(b->data());
    for (int64_t k = 0; k < b->element_count(); ++k) f[k] = normal(rng);
    params.push_back(b);
  }
  // Held twice, so the whole run cannot donate an input's memory to its outputs.
  const std::vector<runtime::BufferPtr> held = params;
  std::vector<runtime::BufferPtr> expected = whole->Execute(params, 0);

  std::vector<std::vector<runtime::BufferPtr>> results(kDevices);
  runtime::SetCollectiveBackend(runtime::MakeInProcessBackend({0, 1, 2, 3}));
  std::vector<std::thread> threads;
  for (int d = 0; d < kDevices; ++d)
    threads.emplace_back([&, d] {
      std::vector<runtime::BufferPtr> mine;
      for (size_t k = 0; k < params.size(); ++k) {
        TileMap m = TileMap::Of(param_shardings[k], static_cast<int64_t>(param_dims[k].size()), kDevices);
        auto local_dims = LocalDims(param_dims[k], m.tiles);
        auto piece = std::make_shared<runtime::Buffer>(runtime::ElementType::kF32, local_dims, d);
        std::memset(piece->data(), 0, piece->size_bytes());
        auto at = ShardOffsets(m, param_dims[k])[d];
        runtime::CopyBlock(4, params[k]->data(), param_dims[k], at, piece->data(), local_dims,
                           std::vector<int64_t>(at.size(), 0), runtime::ValidExtent(param_dims[k], local_dims, at));
        mine.push_back(piece);
      }
      results[d] = local->Execute(mine, d);
    });
  for (auto& t : threads) t.join();
  runtime::SetCollectiveBackend(nullptr);

  for (size_t o = 0; o < expected.size(); ++o) {
    const auto& full = expected[o]->dims();
    TileMap m = TileMap::Of(out_shardings[o], static_cast<int64_t>(full.size()), kDevices);
    for (int d = 0; d < kDevices; ++d) {
      auto at = ShardOffsets(m, full)[d];
      const auto& local_dims = results[d][o]->dims();
      std::vector<float> whole_piece(results[d][o]->element_count(), 0.0f);
      runtime::CopyBlock(4, expected[o]->data(), full, at, whole_piece.data(), local_dims,
                         std::vector<int64_t>(at.size(), 0), runtime::ValidExtent(full, local_dims, at));
      const float* got = static_cast<const float*>(results[d][o]->data());
      auto extent = runtime::ValidExtent(full, local_dims, at);
      for (int64_t k = 0; k < results[d][o]->element_count(); ++k) {
        // Compare inside the valid region only (padding is unspecified).
        int64_t rem = k;
        bool inside = true;
        for (int64_t dim = static_cast<int64_t>(local_dims.size()) - 1; dim >= 0; --dim) {
          inside &= rem % local_dims[dim] < extent[dim];
          rem /= local_dims[dim];
        }
        if (inside) EXPECT_NEAR(got[k], whole_piece[k], 1e-5f * (1 + std::abs(whole_piece[k]))) << "output " << o << " device " << d << " element " << k;
      }
    }
  }
}

TEST(SpmdPartitionerTest, PartitionedMlpComputesWhatTheWholeProgramDoes) {
  ExpectPartitionedRunMatches(kMlp, {{8, 16}, {12, 16}, {4, 12}});
}

TEST(SpmdPartitionerTest, PartitionedRowTimesColumnComputesWhatTheWholeProgramDoes) {
  ExpectPartitionedRunMatches(kRowTimesColumn, {{1, 128}, {128, 1}});
}

// A data-parallel convolution layer: the batch stays split through the convolution and its input
// gradient; the filter gradient sums over the batch (one all-reduce), with nothing gathered.
const char* kDataParallelConv = R"(HloModule m
ENTRY %main {
  %x = f32[4,2,6,6] parameter(0), sharding={devices=[4,1,1,1]0,1,2,3}
  %w = f32[3,2,3,3] parameter(1), sharding={replicated}
  %y = f32[4,3,6,6] convolution(%x, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
  %dx = f32[4,2,6,6] custom-call(%y, %w), custom_call_target="txla.conv2d_backward_input", window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
  %dw = f32[3,2,3,3] custom-call(%y, %x), custom_call_target="txla.conv2d_backward_filter", window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
  ROOT %out = (f32[4,3,6,6], f32[4,2,6,6], f32[3,2,3,3]) tuple(%y, %dx, %dw)
})";

TEST(SpmdPartitionerTest, DataParallelConvolutionKeepsTheBatchSplitAndSumsTheFilterGradient) {
  auto module = Propagated(kDataParallelConv);
  SpmdPartitioner partitioner(kDevices);
  partitioner.Run(*module);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(Line(text, "y").find("f32[1,3,6,6]"), std::string::npos) << text;
  EXPECT_NE(Line(text, "dx").find("f32[1,2,6,6]"), std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce(f32[3,2,3,3]{3,2,1,0} %dw), replica_groups={{0,1,2,3}}"), std::string::npos) << text;
  EXPECT_EQ(text.find("txla.spmd_all_gather"), std::string::npos) << text;
}

TEST(SpmdPartitionerTest, PartitionedConvolutionComputesWhatTheWholeProgramDoes) {
  ExpectPartitionedRunMatches(kDataParallelConv, {{4, 2, 6, 6}, {3, 2, 3, 3}});
}

// The rules see whole shapes: a tiled vector broadcast along a new dimension stays tiled (its
// operand's local shape must not read as a size-1 dimension being stretched).
const char* kTiledBroadcast = R"(HloModule m
ENTRY %main {
  %p = f32[8] parameter(0), sharding={devices=[4]0,1,2,3}
  %b = f32[8,3] broadcast(%p), dimensions={0}
  %r = f32[24] reshape(%b)
  %e = f32[8,3] exponential(%b)
  ROOT %out = (f32[8,3], f32[24]) tuple(%e, %r)
})";

TEST(SpmdPartitionerTest, ATiledOperandBroadcastStaysTiled) {
  auto module = Propagated(kTiledBroadcast);
  SpmdPartitioner(kDevices).Run(*module);
  std::string text = hlo::ToText(*module);
  EXPECT_NE(Line(text, "b").find("f32[2,3]"), std::string::npos) << text;
  EXPECT_NE(Line(text, "e").find("f32[2,3]"), std::string::npos) << text;
  ExpectPartitionedRunMatches(kTiledBroadcast, {{8}});
}

TEST(SpmdPartitionerTest, AWholeBroadcastMeetingATiledValueIsBroadcastAtTheTileInstead) {
  const char* text = R"(HloModule m
ENTRY %main {
  %p = f32[8,6] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %b = f32[6] parameter(1), sharding={replicated}
  %half = f32[] constant(0.5)
  %h = f32[8,6] broadcast(%half), dimensions={}
  %bb = f32[8,6] broadcast(%b), dimensions={1}
  %s = f32[8,6] add(%h, %bb)
  %m = f32[8,6] multiply(%p, %s)
  ROOT %out = (f32[8,6]) tuple(%m)
})";
  auto module = Propagated(text);
  SpmdPartitioner(kDevices).Run(*module);
  std::string printed = hlo::ToText(*module);
  EXPECT_EQ(printed.find("txla.spmd_shard"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f32[2,6]{1,0} add("), std::string::npos) << printed;
  ExpectPartitionedRunMatches(text, {{8, 6}, {6}});
}

// Max pooling of a batch-split activation: the window never crosses the batch.
const char* kBatchPool = R"(HloModule m
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] maximum(%x, %y)
}
ENTRY %main {
  %p = f32[4,2,6,6] parameter(0), sharding={devices=[4,1,1,1]0,1,2,3}
  %ninf = f32[] constant(-inf)
  %m = f32[4,2,3,3] reduce-window(%p, %ninf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=%max
  %i = s32[4,2,3,3] iota(), iota_dimension=1
  %c = f32[4,2,3,3] convert(%i)
  %a = f32[4,2,3,3] add(%m, %c)
  ROOT %out = (f32[4,2,3,3]) tuple(%a)
})";

TEST(SpmdPartitionerTest, PoolingWindowsAndIotasStayOnTheBatchTiles) {
  auto module = Propagated(kBatchPool);
  SpmdPartitioner(kDevices).Run(*module);
  std::string printed = hlo::ToText(*module);
  EXPECT_NE(Line(printed, "m").find("f32[1,2,3,3]"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("txla.spmd_"), std::string::npos) << printed;
  ExpectPartitionedRunMatches(kBatchPool, {{4, 2, 6, 6}});
}

// Data-parallel gradients: three partial sums over the batch, met in one all-reduce.
const char* kThreeGradients = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %p = f32[8,4] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %q = f32[8,3] parameter(1), sharding={devices=[4,1]0,1,2,3}
  %g1 = f32[4,4] dot(%p, %p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %g2 = f32[4,3] dot(%p, %q), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %zero = f32[] constant(0)
  %g3 = f32[3] reduce(%q, %zero), dimensions={0}, to_apply=%add
  %e = f32[4,4] exponential(%g1)
  ROOT %out = (f32[4,4], f32[4,3], f32[3]) tuple(%e, %g2, %g3)
})";

TEST(AllReduceCombinerTest, IndependentPartialSumsMeetOnce) {
  auto module = Propagated(kThreeGradients);
  SpmdPartitioner(kDevices).Run(*module);
  EXPECT_TRUE(AllReduceCombiner().Run(*module));
  std::string printed = hlo::ToText(*module);
  size_t count = 0;
  for (size_t at = printed.find("all-reduce("); at != std::string::npos; at = printed.find("all-reduce(", at + 1)) ++count;
  EXPECT_EQ(count, 1u) << printed;
  EXPECT_NE(printed.find("f32[31]{0} all-reduce("), std::string::npos) << printed;  // 16 + 12 + 3
  ExpectPartitionedRunMatches(kThreeGradients, {{8, 4}, {8, 3}});
}

// fc1 with its bias added bias-first: the sum takes the product's finer 2x2 tiles, and the
// (model-split) bias is broadcast at them, so nothing is gathered.
const char* kBiasFirst = R"(HloModule m
ENTRY %main {
  %x = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %w1 = f32[12,16] parameter(1), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  %b1 = f32[12] parameter(2), sharding={devices=[2,2]0,2,1,3 last_tile_dim_replicate}
  %h = f32[8,12] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %bb = f32[8,12] broadcast(%b1), dimensions={1}
  %a = f32[8,12] add(%bb, %h)
  ROOT %out = (f32[8,12]) tuple(%a)
})";

TEST(SpmdPartitionerTest, ABiasAddedFirstFollowsTheProductsTiles) {
  auto module = Propagated(kBiasFirst);
  SpmdPartitioner(kDevices).Run(*module);
  std::string printed = hlo::ToText(*module);
  EXPECT_EQ(printed.find("txla.spmd_"), std::string::npos) << printed;
  EXPECT_NE(Line(printed, "a").find("f32[4,6]"), std::string::npos) << printed;
  ExpectPartitionedRunMatches(kBiasFirst, {{8, 16}, {12, 16}, {12}});
}

TEST(SpmdPartitionerTest, UnevenTilesArePaddedAndGatheredBackWhole) {
  ExpectPartitionedRunMatches(R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %p = f32[7,3] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %q = f32[7,3] parameter(1), sharding={replicated}
  %e = f32[7,3] exponential(%p)
  %m = f32[7,3] multiply(%e, %q)
  %zero = f32[] constant(0)
  %s = f32[3] reduce(%m, %zero), dimensions={0}, to_apply=%add
  ROOT %out = (f32[7,3], f32[3]) tuple(%m, %s)
})", {{7, 3}, {7, 3}});
}

// A split parameter wanted whole as the graph's result (DTensor's redistribute to Replicate):
// the all-gather is the result itself, and keeps the tiles it gathers.
TEST(SpmdPartitionerTest, ASplitParameterGatheredAsTheResult) {
  ExpectPartitionedRunMatches(R"(HloModule m
ENTRY %main {
  %p = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %r = f32[8,16] custom-call(%p), custom_call_target="Sharding", sharding={replicated}
  ROOT %out = (f32[8,16]) tuple(%r)
})", {{8, 16}});
}

// Both operands' free dimensions split over the same devices (an MLP's hidden activations times
// the next layer's row-split weight): the result cannot be tiled in both dimensions, so the
// smaller operand is gathered whole in its free dimension, as an uneven (padded) split here.
TEST(SpmdPartitionerTest, FreeDimensionsSplitOverTheSameDevicesGatherTheSmallerOperand) {
  const char* text = R"(HloModule m
ENTRY %main {
  %a = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %b = f32[16,1] parameter(1), sharding={devices=[1,4]0,1,2,3}
  %d = f32[8,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (f32[8,1]) tuple(%d)
})";
  auto module = Propagated(text);
  EXPECT_EQ(module->entry()->root()->operand(0)->attrs().sharding->ToString(), "{devices=[4,1]0,1,2,3}");
  ExpectPartitionedRunMatches(text, {{8, 16}, {16, 1}});
}

// `text` propagated and partitioned over the four devices: the result's text, and the
// resharding the partitioner inserted.
struct Partitioned {
  std::string text;
  std::vector<SpmdPartitioner::Reshard> inserted;
  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const auto& r : inserted) out.push_back(r.kind);
    return out;
  }
};

Partitioned Partition(const char* text) {
  auto module = Propagated(text);
  SpmdPartitioner partitioner(kDevices);
  partitioner.Run(*module);
  return {hlo::ToText(*module), partitioner.inserted()};
}

// Rows split over the devices asked for as columns: each device receives from every other only
// the part of its new piece that one holds (an all-to-all), never the whole value.
TEST(SpmdPartitionerTest, RowTilesWantedAsColumnTilesAreExchangedAllToAll) {
  const char* text = R"(HloModule m
ENTRY %main {
  %p = f32[8,12] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %c = f32[8,12] custom-call(%p), custom_call_target="Sharding", sharding={devices=[1,4]0,1,2,3}
  ROOT %out = (f32[8,12]) tuple(%c)
})";
  const Partitioned p = Partition(text);
  const std::string& printed = p.text;
  EXPECT_NE(printed.find("f32[8,3]{1,0} custom-call(f32[2,12]{1,0} %p), custom_call_target=\"txla.spmd_exchange\", "
                         "dimensions={8,12}, sharding={devices=[1,4]0,1,2,3}, operand_sharding={devices=[4,1]0,1,2,3}"),
            std::string::npos) << printed;
  EXPECT_EQ(printed.find("txla.spmd_all_gather"), std::string::npos) << printed;
  EXPECT_EQ(p.kinds(), (std::vector<std::string>{"all-to-all"}));
  // Of its [8,3] piece a device holds [2,3] already: 18 floats come from the three others.
  EXPECT_EQ(p.inserted[0].bytes, 18 * 4);
  EXPECT_EQ(hlo::ToText(*hlo::ParseModule(printed)), printed);  // the attributes read back
  ExpectPartitionedRunMatches(text, {{8, 12}});
}

TEST(SpmdPartitionerTest, UnevenTilesExchangeOnlyTheValuesInsideTheWhole) {
  ExpectPartitionedRunMatches(R"(HloModule m
ENTRY %main {
  %p = f32[7,10] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %e = f32[7,10] exponential(%p)
  %c = f32[7,10] custom-call(%e), custom_call_target="Sharding", sharding={devices=[2,2]0,1,2,3}
  %t = f32[7,10] custom-call(%c), custom_call_target="Sharding", sharding={devices=[1,4]3,2,1,0}
  ROOT %out = (f32[7,10], f32[7,10]) tuple(%c, %t)
})", {{7, 10}});
}

// The same tiles on other devices: each device's new piece is another's old one.
TEST(SpmdPartitionerTest, TilesMovedBetweenDevicesAreACollectivePermute) {
  const char* text = R"(HloModule m
ENTRY %main {
  %p = f32[8,12] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %c = f32[8,12] custom-call(%p), custom_call_target="Sharding", sharding={devices=[4,1]1,0,3,2}
  ROOT %out = (f32[8,12]) tuple(%c)
})";
  const Partitioned p = Partition(text);
  EXPECT_EQ(p.kinds(), (std::vector<std::string>{"collective-permute"}));
  EXPECT_EQ(p.inserted[0].bytes, 2 * 12 * 4);
  ExpectPartitionedRunMatches(text, {{8, 12}});
}

// A contraction split over the devices whose result is wanted split: the partial sums are
// reduce-scattered (each device receives its piece from each device) rather than all-reduced
// whole and then cut.
const char* kScatteredContraction = R"(HloModule m
ENTRY %main {
  %a = f32[8,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %b = f32[16,12] parameter(1), sharding={devices=[4,1]0,1,2,3}
  %d = f32[8,12] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]0,1,2,3}
  ROOT %out = (f32[8,12]) tuple(%d)
})";

TEST(SpmdPartitionerTest, PartialSumsWantedSplitAreReduceScattered) {
  const Partitioned p = Partition(kScatteredContraction);
  const std::string& printed = p.text;
  EXPECT_NE(printed.find("custom_call_target=\"txla.spmd_reduce_scatter\", dimensions={8,12}, "
                         "replica_groups={{0,1,2,3}}"),
            std::string::npos) << printed;
  EXPECT_EQ(printed.find("all-reduce"), std::string::npos) << printed;
  EXPECT_EQ(p.kinds(), (std::vector<std::string>{"reduce-scatter"}));
  EXPECT_EQ(p.inserted[0].bytes, 4 * 2 * 12 * 4);  // its [2,12] piece from each of 4
  ExpectPartitionedRunMatches(kScatteredContraction, {{8, 16}, {16, 12}});
}

// On a 2x2 mesh the contraction is split over one axis and the result over the other's devices
// within each group: a reduce-scatter within each group of two, on uneven pieces.
TEST(SpmdPartitionerTest, PartialSumsOfAGroupAreReduceScatteredWithinIt) {
  const char* text = R"(HloModule m
ENTRY %main {
  %a = f32[6,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %b = f32[16,5] parameter(1), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  %d = f32[6,5] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]0,1,2,3}
  ROOT %out = (f32[6,5]) tuple(%d)
})";
  const Partitioned p = Partition(text);
  const std::string& printed = p.text;
  EXPECT_NE(printed.find("replica_groups={{0,1},{2,3}}, sharding={devices=[2,2]0,1,2,3}"), std::string::npos)
      << printed;
  EXPECT_EQ(p.kinds(), (std::vector<std::string>{"reduce-scatter"}));
  ExpectPartitionedRunMatches(text, {{6, 16}, {16, 5}});
}

// A manual region: what its values compute stays manual (each device's own piece), the
// boundaries become the identity on each device's buffer, and leaving the region the pieces are
// the tiles of the layout given.
TEST(SpmdPartitionerTest, AManualRegionWorksOnEachDevicesPieceAndLeavesInTheGivenLayout) {
  auto module = Propagated(R"(HloModule m
ENTRY %main {
  %x = f32[8,8] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %piece = f32[8,2] custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %one = f32[] constant(1)
  %ones = f32[8,2] broadcast(%one), dimensions={}
  %y = f32[8,2] add(%piece, %ones)
  %whole = f32[8,8] custom-call(%y), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,4]0,1,2,3}
  ROOT %out = (f32[8,8], f32[8,2]) tuple(%whole, %y)
})");
  EXPECT_EQ(Line(hlo::ToText(*module), "y").find("sharding={manual}") != std::string::npos, true)
      << hlo::ToText(*module);
  SpmdPartitioner(kDevices).Run(*module);
  const std::string printed = hlo::ToText(*module);
  EXPECT_EQ(printed.find("SPMD"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("txla.spmd_"), std::string::npos) << printed;  // nothing gathered or cut
  EXPECT_EQ(module->entry()->root()->shape().tuple_shapes.at(0).dims, (std::vector<int64_t>{8, 2})) << printed;
}

// Leaving a manual region with pieces of the wrong shape for the layout is refused.
TEST(SpmdPartitionerTest, AManualPieceOfTheWrongShapeIsRefused) {
  auto module = Propagated(R"(HloModule m
ENTRY %main {
  %x = f32[8,8] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %piece = f32[8,2] custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %whole = f32[8,8] custom-call(%piece), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]0,1,2,3}
  ROOT %out = (f32[8,8]) tuple(%whole)
})");
  EXPECT_THROW(SpmdPartitioner(kDevices).Run(*module), std::invalid_argument);
}

// Auto-sharding splits a large batch over the devices (the dot's work divides; only the small
// column sums are all-reduced), keeps a small weight whole, and the program it chose computes
// what the whole program does.
TEST(AutoShardingTest, ALargeBatchIsSplitAndTheProgramComputesTheSame) {
  const char* text = R"(HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main {
  %x = f32[64,32] parameter(0)
  %w = f32[32,8] parameter(1)
  %d = f32[64,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = f32[] constant(0)
  %s = f32[8] reduce(%d, %zero), dimensions={0}, to_apply=%add
  ROOT %out = (f32[8]) tuple(%s)
})";
  auto module = hlo::ParseModule(text);
  AutoSharding search(kDevices, {});
  auto whole = hlo::ParseModule(text);
  for (hlo::Instruction* p : whole->entry()->parameters()) p->mutable_attrs().sharding = hlo::Sharding::Replicated();
  EXPECT_TRUE(search.Run(*module));
  const auto params = module->entry()->parameters();
  EXPECT_EQ(params[0]->attrs().sharding->ToString(), "{devices=[4,1]0,1,2,3}");
  EXPECT_EQ(params[1]->attrs().sharding->ToString(), "{replicated}");  // 1 KB: not worth splitting
  EXPECT_LT(search.Cost(*module), search.Cost(*whole));
  ExpectPartitionedRunMatches(hlo::ToText(*module), {{64, 32}, {32, 8}});
}

// A parameter the user sharded keeps its layout.
TEST(AutoShardingTest, AUsersShardingIsKept) {
  auto module = hlo::ParseModule(R"(HloModule m
ENTRY %main {
  %x = f32[64,32] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %e = f32[64,32] exponential(%x)
  ROOT %out = (f32[64,32]) tuple(%e)
})");
  EXPECT_FALSE(AutoSharding(kDevices, {2, 2}).Run(*module));
  EXPECT_EQ(module->entry()->parameters()[0]->attrs().sharding->ToString(), "{devices=[1,4]0,1,2,3}");
}

}  // namespace
}  // namespace txla::compiler::spmd
