// The graph's program (compiler/graph_program.h): its steps run in order on the buffers their
// slots name, released outputs go out before the step that follows them, and words that do not
// parse are refused when the library loads, not followed in a run.
#include "compiler/graph_program.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/support.h"

namespace txla::compiler {
namespace {

std::vector<std::string>* events = nullptr;
TxlaSupport recording;

void RecordReady(int64_t output) { events->push_back("ready " + std::to_string(output)); }

// A step function: out[0] = in[0] + 1, where out and in are its two buffers.
void AddOne(const TxlaSupport*, void* const* buffers) {
  events->push_back("step");
  static_cast<float*>(buffers[0])[0] = static_cast<const float*>(buffers[1])[0] + 1;
}

// A kernel's trampoline: out[i] = 2 * in[i] over [lo, hi).
void Double(void* p, int64_t lo, int64_t hi) {
  void* const* a = static_cast<void* const*>(p);
  for (int64_t i = lo; i < hi; ++i) static_cast<float*>(a[0])[i] = 2 * static_cast<const float*>(a[1])[i];
}

int64_t Kind(StepKind k) { return static_cast<int64_t>(k); }
int64_t Slot(SlotKind k) { return static_cast<int64_t>(k); }

TEST(GraphProgramTest, StepsRunInOrderOnTheirSlots) {
  std::vector<void*> functions = {reinterpret_cast<void*>(&AddOne), reinterpret_cast<void*>(&Double)};
  // Slots: parameter 0, arena offset 64, output 0, output 1. Steps: arena = param + 1 (a step
  // function); release output 1; output 0 = 2 * arena on the threads over 1000 elements; output
  // 1 = 2 * param on [0, 3) directly.
  std::vector<int64_t> words = {kProgramFormat, 2, 4,
                                Slot(SlotKind::kParameter), 0, Slot(SlotKind::kArena), 64,
                                Slot(SlotKind::kOutput), 0, Slot(SlotKind::kOutput), 1,
                                3,
                                0, Kind(StepKind::kStep), 0, 0, 2, 1, 0,
                                1, 1, Kind(StepKind::kParallel), 1, 1000, 2, 2, 1,
                                0, Kind(StepKind::kKernel), 1, 3, 2, 3, 0};
  GraphProgram program(words, functions, "test");
  EXPECT_EQ(program.EarlyOutputs(), std::vector<int64_t>{1});
  std::vector<float> param(1000, 1.5f), out0(1000), out1(3);
  std::vector<char> arena(64 + 4000);
  const void* params[] = {param.data()};
  void* outputs[] = {out0.data(), out1.data()};
  std::vector<std::string> seen;
  events = &seen;
  recording = *GetSupportTable();
  recording.output_ready = &RecordReady;
  program.Run(&recording, params, outputs, arena.data());
  events = nullptr;
  EXPECT_EQ(seen, (std::vector<std::string>{"step", "ready 1"}));
  EXPECT_FLOAT_EQ(out0[0], 5.0f);  // 2 * (1.5 + 1); the step wrote element 0 of the arena only
  EXPECT_FLOAT_EQ(out1[2], 3.0f);
}

TEST(GraphProgramTest, WordsThatDoNotParseAreRefused) {
  std::vector<void*> functions = {reinterpret_cast<void*>(&AddOne)};
  auto refuses = [&](std::vector<int64_t> words, const std::string& why) {
    try {
      GraphProgram program(words, functions, "lib.so");
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("the program of lib.so does not parse: " + why), std::string::npos)
          << e.what();
    }
  };
  refuses({kProgramFormat + 1, 0, 0, 0}, "format");
  refuses({kProgramFormat, 1, 1, 7, 0, 0}, "slot 0");
  refuses({kProgramFormat, 1, 1, Slot(SlotKind::kOutput), 0, 1, 0, Kind(StepKind::kStep), 0, 0, 1, 3}, "step 0 names slot 3");
  refuses({kProgramFormat, 1, 0, 1, 0, Kind(StepKind::kStep), 5, 0, 0}, "step 0 calls function 5");
  refuses({kProgramFormat, 1, 0, 1, 0, 9, 0, 0, 0}, "step 0 kind");
  refuses({kProgramFormat, 1, -4}, "implausible slot count");
  refuses({kProgramFormat, 2, 0, 0}, "it names another count of functions");
  refuses({kProgramFormat, 1, 1, Slot(SlotKind::kOutput)}, "it ends early");
  refuses({kProgramFormat, 1, 0, 0, 7}, "words follow its last step");
}

TEST(GraphProgramTest, ItsTextReadsBackFromASourceOrAGraphEntry) {
  ProgramText program{{kProgramFormat, 1, 0, 1, -3, 12}, {"t_abc", "s_def"}};
  std::string text = "// a listing\n" + FormatProgram(program) + "library 0123\n";
  EXPECT_NE(text.find("//@@txla program 1 1 0 1 -3 12\n//@@txla functions t_abc s_def\n"), std::string::npos) << text;
  std::optional<ProgramText> read = ParseProgram(text);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->words, program.words);
  EXPECT_EQ(read->functions, program.functions);
  EXPECT_FALSE(ParseProgram("library 0123\n"));
  EXPECT_FALSE(ParseProgram("//@@txla program 1 x\n//@@txla functions\n"));
}

}  // namespace
}  // namespace txla::compiler
