// Shardings in XLA's HLO syntax: read, written back, validated, carried by instructions.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/sharding.h"

namespace txla::hlo {
namespace {

TEST(ShardingTest, EveryKindRoundTripsThroughText) {
  for (const char* text : {"{replicated}", "{manual}", "{maximal device=3}", "{devices=[2,1]0,1}",
                           "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}", "{devices=[1,4]3,2,1,0}"}) {
    EXPECT_EQ(Sharding::Parse(text).ToString(), text);
  }
  const Sharding partial = Sharding::Parse("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  EXPECT_EQ(partial.kind, Sharding::Kind::kTiled);
  EXPECT_EQ(partial.TilesPerDimension(2), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Sharding::Replicated().TilesPerDimension(3), (std::vector<int64_t>{1, 1, 1}));
}

// XLA's iota device lists: an iota reshaped, then transposed, read row-major.
TEST(ShardingTest, IotaDeviceListsExpandAsXlaDefinesThem) {
  EXPECT_EQ(Sharding::Parse("{devices=[2,2]<=[4]}").ToString(), "{devices=[2,2]0,1,2,3}");
  EXPECT_EQ(Sharding::Parse("{devices=[2,2]<=[2,2]T(1,0)}").ToString(), "{devices=[2,2]0,2,1,3}");
  EXPECT_EQ(Sharding::Parse("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}").ToString(),
            "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  EXPECT_EQ(Sharding::Parse("{devices=[4,2]<=[2,4]T(1,0)}").ToString(), "{devices=[4,2]0,4,1,5,2,6,3,7}");
}

void ExpectRefused(const std::string& text, const std::string& why) {
  try {
    Sharding::Parse(text);
    FAIL() << text << " was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(ShardingTest, BadShardingsAreRefusedSayingWhy) {
  ExpectRefused("{devices=[2,2]0,1,2}", "the devices must be each of 0..3 once, 3 given");
  ExpectRefused("{devices=[2]0,0}", "the devices must be each of 0..1 once");
  ExpectRefused("{devices=[2]0,1 last_tile_dim_replicate}", "needs a dimension besides the replicas'");
  ExpectRefused("{devices=[2,2]<=[2,2]T(0,0)}", "not a permutation");
  ExpectRefused("{devices=[2,2]<=[4] last_tile_dims={manual}}", "subgroup shardings");
  ExpectRefused("{{replicated}, {replicated}}", "tuple shardings are not supported yet");
  ExpectRefused("{sharded}", "expected replicated, maximal, manual or devices=");
  EXPECT_THROW(Sharding::Parse("{devices=[2,1]0,1,2}").TilesPerDimension(2), std::invalid_argument);
  EXPECT_THROW(Sharding::Parse("{devices=[2,1]0,1}").TilesPerDimension(3), std::invalid_argument);
}

TEST(ShardingTest, InstructionsCarryTheirShardingThroughText) {
  const std::string text = R"(HloModule m

ENTRY %main (p0: f32[8,4]) -> (f32[8,4]) {
  %p0 = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  %e = f32[8,4]{1,0} exponential(f32[8,4]{1,0} %p0), sharding={replicated}
  ROOT %t = (f32[8,4]{1,0}) tuple(f32[8,4]{1,0} %e)
}
)";
  auto module = ParseModule(text);
  const Computation& entry = *module->entry();
  const Instruction* p0 = entry.instructions().at(0);
  ASSERT_TRUE(p0->attrs().sharding.has_value());
  EXPECT_EQ(p0->attrs().sharding->tile_dims, (std::vector<int64_t>{2, 1, 2}));
  const std::string printed = ToText(*module);
  EXPECT_NE(printed.find("parameter(0), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("exponential(f32[8,4]{1,0} %p0), sharding={replicated}"), std::string::npos) << printed;
  EXPECT_EQ(ToText(*ParseModule(printed)), printed);
}

}  // namespace
}  // namespace txla::hlo
