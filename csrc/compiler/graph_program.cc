#include "compiler/graph_program.h"

#include <sstream>
#include <stdexcept>

#include "compiler/codegen/cpp_emitter.h"

namespace txla::compiler {

namespace {
const char kProgramLine[] = "//@@txla program";
const char kFunctionsLine[] = "//@@txla functions";
}  // namespace

std::string FormatProgram(const ProgramText& program) {
  std::string out = kProgramLine;
  for (int64_t w : program.words) out += " " + std::to_string(w);
  // The space after the prefix stays when there are no functions: ParseProgram looks for it.
  out += std::string("\n") + kFunctionsLine + " ";
  for (size_t k = 0; k < program.functions.size(); ++k) out += (k ? " " : "") + program.functions[k];
  return out + "\n";
}

std::optional<ProgramText> ParseProgram(const std::string& text) {
  // The rest of the line that begins with `prefix` and a space; nullopt without such a line.
  auto line = [&](const std::string& prefix) -> std::optional<std::string> {
    size_t at = text.find(prefix + " ");
    if (at == std::string::npos) return std::nullopt;
    at += prefix.size();
    return text.substr(at, text.find('\n', at) - at);
  };
  std::optional<std::string> words = line(kProgramLine), functions = line(kFunctionsLine);
  if (!words || !functions) return std::nullopt;
  ProgramText program;
  std::istringstream word_stream(*words), name_stream(*functions);
  for (int64_t w; word_stream >> w;) program.words.push_back(w);
  if (!word_stream.eof()) return std::nullopt;  // stopped at something not a number
  for (std::string name; name_stream >> name;) program.functions.push_back(name);
  return program;
}

GraphProgram::GraphProgram(const std::vector<int64_t>& program, const std::vector<void*>& functions,
                           const std::string& library) {
  auto bad = [&](const std::string& what) {
    return std::runtime_error("the program of " + library + " does not parse: " + what);
  };
  // Every count is bounded by what a graph could hold, so corrupt words fail here, not in a run.
  constexpr int64_t kMaxEntries = int64_t{1} << 24;
  auto count = [&](int64_t n, const char* what) {
    if (n < 0 || n > kMaxEntries) throw bad(std::string("implausible ") + what + " count");
    return n;
  };
  size_t at = 0;
  auto next = [&]() {
    if (at >= program.size()) throw bad("it ends early");
    return program[at++];
  };
  int64_t format = next();
  if (format != kProgramFormat) throw bad("format " + std::to_string(format));
  int64_t functions_count = count(next(), "function");
  if (functions_count != static_cast<int64_t>(functions.size())) throw bad("it names another count of functions");
  int64_t slots = count(next(), "slot");
  for (int64_t s = 0; s < slots; ++s) {
    int64_t kind = next(), value = next();
    if (kind < 0 || kind > static_cast<int64_t>(SlotKind::kArena) || value < 0) throw bad("slot " + std::to_string(s));
    slots_.push_back({static_cast<SlotKind>(kind), value});
  }
  int64_t steps = count(next(), "step");
  for (int64_t k = 0; k < steps; ++k) {
    Step step{};
    step.readies = count(next(), "ready output");
    step.first_ready = static_cast<int64_t>(ready_.size());
    for (int64_t r = 0; r < step.readies; ++r) ready_.push_back(next());
    int64_t kind = next();
    if (kind < 0 || kind > static_cast<int64_t>(StepKind::kParallel)) throw bad("step " + std::to_string(k) + " kind");
    step.kind = static_cast<StepKind>(kind);
    int64_t fn = next();
    if (fn < 0 || fn >= functions_count) throw bad("step " + std::to_string(k) + " calls function " + std::to_string(fn));
    step.fn = functions[fn];
    step.extent = next();
    step.args = count(next(), "argument");
    step.first_arg = static_cast<int64_t>(arg_slots_.size());
    for (int64_t a = 0; a < step.args; ++a) {
      int64_t slot = next();
      if (slot < 0 || slot >= slots) throw bad("step " + std::to_string(k) + " names slot " + std::to_string(slot));
      arg_slots_.push_back(slot);
    }
    steps_.push_back(step);
  }
  if (at != program.size()) throw bad("words follow its last step");
}

void GraphProgram::Run(const TxlaSupport* support, const void* const* params, void* const* outputs,
                       char* arena) const {
  std::vector<void*> addresses(slots_.size());
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    switch (slot.kind) {
      case SlotKind::kParameter: addresses[s] = const_cast<void*>(params[slot.value]); break;
      case SlotKind::kOutput: addresses[s] = outputs[slot.value]; break;
      case SlotKind::kArena: addresses[s] = arena + slot.value; break;
    }
  }
  std::vector<void*> args(arg_slots_.size());
  for (size_t a = 0; a < arg_slots_.size(); ++a) args[a] = addresses[arg_slots_[a]];
  for (const Step& step : steps_) {
    for (int64_t r = 0; r < step.readies; ++r) support->output_ready(ready_[step.first_ready + r]);
    void** buffers = args.data() + step.first_arg;
    switch (step.kind) {
      case StepKind::kStep: reinterpret_cast<StepFn>(step.fn)(support, buffers); break;
      case StepKind::kKernel: reinterpret_cast<TrampolineFn>(step.fn)(buffers, 0, step.extent); break;
      case StepKind::kParallel:
        support->parallel_for(reinterpret_cast<TrampolineFn>(step.fn), buffers, step.extent);
        break;
    }
  }
}

std::vector<int64_t> GraphProgram::EarlyOutputs() const { return ready_; }

}  // namespace txla::compiler
