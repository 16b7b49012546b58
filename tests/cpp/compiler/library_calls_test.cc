// Library routines are rows (hlo/custom_call.h, compiler/codegen/support_abi.h): every slot is
// bound, every routine a target names has slots, and a call is emitted as its row says.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/support_abi.h"
#include "compiler/compile.h"
#include "compiler/support.h"
#include "compiler/golden_source.h"
#include "hlo/custom_call.h"
#include "hlo/parser.h"

namespace txla::compiler {
namespace {

TEST(LibraryCallsTest, EverySupportSlotIsBound) {
  const TxlaSupport* support = GetSupportTable();
#define TXLA_EXPECT_BOUND(ret, name, params, host) EXPECT_NE(support->name, nullptr) << #name;
  TXLA_SUPPORT_ABI(TXLA_EXPECT_BOUND)
#undef TXLA_EXPECT_BOUND
}

TEST(LibraryCallsTest, EveryRoutineATargetNamesHasAFloatSlot) {
  std::set<std::string> slots;
#define TXLA_SLOT(ret, name, params, host) slots.insert(#name);
  TXLA_SUPPORT_ABI(TXLA_SLOT)
#undef TXLA_SLOT
  std::set<std::string> routines;
#define TXLA_ROUTINE(e, name, routine, geometry) routines.insert(#routine);
  TXLA_CUSTOM_CALL_TARGETS(TXLA_ROUTINE)
#undef TXLA_ROUTINE
  routines.erase("loop");
  // Untyped: the SPMD resharding moves bytes, and the partitioner's annotations never run.
  EXPECT_TRUE(slots.count("reshard"));
  routines.erase("reshard");
  routines.erase("partitioner");
  for (const std::string& routine : routines) {
    EXPECT_TRUE(slots.count(routine + "_f32")) << routine;
    EXPECT_TRUE(slots.count(routine + "_f64")) << routine;
  }
}

TEST(LibraryCallsTest, TargetNamesRoundTripAndStrangersAreRefused) {
#define TXLA_ROUND_TRIP(e, name, routine, geometry)                                  \
  EXPECT_EQ(hlo::ParseCustomCallTarget(name), hlo::CustomCallTarget::e) << name; \
  EXPECT_EQ(hlo::CustomCallTargetName(hlo::CustomCallTarget::e), name);
  TXLA_CUSTOM_CALL_TARGETS(TXLA_ROUND_TRIP)
#undef TXLA_ROUND_TRIP
  try {
    hlo::ParseCustomCallTarget("txla.fft");
    FAIL() << "an unknown target parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown custom_call_target \"txla.fft\"");
  }
}

const char* kSortRows = R"(HloModule m
ENTRY %main {
  %p = TYPE[3,5,2] parameter(0)
  %s = s64[3,5,2] custom-call(%p), custom_call_target="txla.sort_indices", dimensions={1}, index=1
  ROOT %t = (s64[3,5,2]) tuple(%s)
}
)";

std::string SortRows(const std::string& type) {
  std::string text = kSortRows;
  text.replace(text.find("TYPE"), 4, type);
  return EmitAfterPrelude(text);
}

// The slot of the operand's type, the geometry (3 lines before, 5 long, 2 after; descending)
// as a table in the step.
TEST(LibraryCallsTest, ASortIsOneCallWithItsGeometry) {
  const std::string expected = R"(//@@txla kernel H s
extern "C" void s_H(const TxlaSupport* support, void* const* a) {
  const TYPE* buf0 = (const TYPE*)a[0];
  int64_t* buf1 = (int64_t*)a[1];
  static const int64_t tab0[] = {3LL, 5LL, 2LL, 1LL};
  support->sort_indices_SLOT(buf0, buf1, tab0);
}
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   s: step s_H(b_p, b_s)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 2 0 0 1 0 1 0 0 0 0 2 0 1
//@@txla functions s_H
)";
  for (auto [type, c_type] : {std::pair<std::string, std::string>{"f32", "float"}, {"s32", "int32_t"}}) {
    std::string want = expected;
    for (auto [from, to] : {std::pair<std::string, std::string>{"TYPE", c_type}, {"SLOT", type}})
      for (size_t at = want.find(from); at != std::string::npos; at = want.find(from, at)) want.replace(at, from.size(), to);
    EXPECT_EQ(SortRows(type), want);
  }
}

// A routine without a slot for the element type is refused by name when the graph is emitted
// (the caller runs the graph on the interpreter), not by the C++ compiler later.
TEST(LibraryCallsTest, ATypeWithoutASlotIsRefusedWhenEmitted) {
  try {
    SortRows("s16");
    FAIL() << "a sort of s16 was emitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "codegen: s (sort_indices) on s16 is not supported yet");
  }
}

// A dot is one GEMM call from its step, its transposes and leading dimensions as arguments; a
// transposed operand is read in place (a virtual transpose), not copied.
TEST(LibraryCallsTest, ADotIsOneGemmCall) {
  EXPECT_EQ(EmitAfterPrelude(R"(HloModule m
ENTRY %main {
  %x = f32[4,6] parameter(0)
  %w = f32[3,6] parameter(1)
  %wt = f32[6,3] transpose(%w), dimensions={1,0}
  %y = f32[4,3] dot(%x, %wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[4,3]) tuple(%y)
}
)"), R"golden(//@@txla kernel H y
extern "C" void s_H(const TxlaSupport* support, void* const* a) {
  const float* buf0 = (const float*)a[0];
  const float* buf1 = (const float*)a[1];
  float* buf2 = (float*)a[2];
  support->gemm_f32(1, 0, 1, 4, 3, 6, buf0, 6, 24, buf1, 6, 18, buf2, 3, 12);
}
//@@txla kernel end
//@@txla run
// The graph's program (compiler/graph_program.h): what it runs, in order,
//   y: step s_H(b_x, b_w, b_y)
// and the same as the runtime reads it (no compiler does):
//@@txla program 1 1 3 0 0 0 1 1 0 1 0 0 0 0 3 0 1 2
//@@txla functions s_H
)golden");
}

}  // namespace
}  // namespace txla::compiler
