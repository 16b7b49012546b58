#include "compiler/donor_matching.h"

#include <gtest/gtest.h>

namespace txla::compiler {
namespace {

bool Any(int64_t, int64_t) { return true; }

TEST(DonorMatchingTest, AnOutputWithASecondChoiceLeavesTheOnlyDonorOfAnotherToIt) {
  // Output 0 may take parameter 1 or 0; output 1 only parameter 1. Taking candidates in order
  // gave output 0 parameter 1 and output 1 nothing.
  std::vector<int64_t> donors = MatchDonors({{0, 1}, {0, 0}, {1, 1}}, 2, Any);
  EXPECT_EQ(donors, (std::vector<int64_t>{0, 1}));
  // The same when the constrained output comes first, and through a longer chain of moves.
  EXPECT_EQ(MatchDonors({{1, 1}, {0, 1}, {0, 0}}, 2, Any), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(MatchDonors({{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 0}}, 3, Any), (std::vector<int64_t>{1, 2, 0}));
}

TEST(DonorMatchingTest, EachDonorServesOneOutputAndUnusableOnesNone) {
  // Two outputs that can only take parameter 0: one gets it.
  std::vector<int64_t> donors = MatchDonors({{0, 0}, {1, 0}}, 3, Any);
  EXPECT_EQ(donors[2], -1);
  EXPECT_EQ((donors[0] == 0) + (donors[1] == 0), 1);
  // A parameter something else still holds (rejected at run time) is nobody's donor.
  auto held = [](int64_t, int64_t param) { return param != 1; };
  EXPECT_EQ(MatchDonors({{0, 1}, {1, 1}, {1, 2}}, 2, held), (std::vector<int64_t>{-1, 2}));
  // Outputs the plan does not have are ignored; no candidates, no donors.
  EXPECT_EQ(MatchDonors({{5, 0}}, 2, Any), (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(MatchDonors({}, 0, Any), std::vector<int64_t>{});
}

}  // namespace
}  // namespace txla::compiler
