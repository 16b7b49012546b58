// Update order (passes/update_order.h): an in-place update runs after its parameter's other
// readers, so buffer assignment may give it the parameter's buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/compile.h"
#include "hlo/parser.h"

namespace txla::compiler {
namespace {

// s = a + b; a' = a * 2; b' = b + 1, lowered with the updates first (as `s = a + b; a *= 2;
// b += 1` traces once its barrier orders the outputs): outputs s, a', b'.
const char* kUpdatesBeforeTheSum = R"(HloModule m
ENTRY %main {
  %a = f32[4,3] parameter(0)
  %b = f32[4,3] parameter(1)
  %two = f32[] constant(2)
  %twos = f32[4,3] broadcast(%two), dimensions={}
  %u = f32[4,3] multiply(%a, %twos)
  %one = f32[] constant(1)
  %ones = f32[4,3] broadcast(%one), dimensions={}
  %w = f32[4,3] add(%b, %ones)
  %s = f32[4,3] add(%a, %b)
  ROOT %t = (f32[4,3], f32[4,3], f32[4,3]) tuple(%s, %u, %w)
}
)";

std::vector<std::pair<int64_t, int64_t>> Donations(const char* text) {
  auto module = hlo::ParseModule(text);
  RunPipeline(*module);
  std::vector<std::pair<int64_t, int64_t>> donations = AssignBuffers(*module).donations;
  std::sort(donations.begin(), donations.end());
  return donations;
}

TEST(UpdateOrderTest, EachUpdateTakesOverItsParameterAndTheSumNeither) {
  // (output, parameter): a' over a, b' over b. The sum, which reads both, runs first now.
  EXPECT_EQ(Donations(kUpdatesBeforeTheSum), (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {2, 1}}));
}

TEST(UpdateOrderTest, AnUpdateAlreadyLastStaysWhereItIs) {
  // The sum runs first, as written: nothing moves. The update takes a over, the sum b (its
  // last reader).
  EXPECT_EQ(Donations(R"(HloModule m
ENTRY %main {
  %a = f32[4,3] parameter(0)
  %b = f32[4,3] parameter(1)
  %s = f32[4,3] add(%a, %b)
  %two = f32[] constant(2)
  %twos = f32[4,3] broadcast(%two), dimensions={}
  %u = f32[4,3] multiply(%a, %twos)
  ROOT %t = (f32[4,3], f32[4,3]) tuple(%s, %u)
}
)"), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
}

}  // namespace
}  // namespace txla::compiler
