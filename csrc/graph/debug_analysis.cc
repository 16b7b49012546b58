#include "graph/debug_analysis.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/content_hash.h"
#include "debug/config.h"
#include "debug/frames.h"
#include "graph/spmd_execution.h"
#include "runtime/device.h"
#include "ir/node.h"
#include "metrics/metrics.h"

namespace txla::graph::analysis {
namespace {

thread_local SyncKind current_kind = SyncKind::kBarrier;
thread_local const char* current_reader = nullptr;

const char* const kRule = "================================================================================";
const char* const kThinRule = "--------------------------------------------------------------------------------";
constexpr size_t kGraphsRemembered = 64;
constexpr size_t kDifferencesShown = 6;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Why this sync runs, in PyTorch/XLA's words where it has them, read off the library frames.
std::string Cause(const std::vector<debug::Frame>& frames) {
  if (current_kind == SyncKind::kRead) {
    for (const debug::Frame& f : frames)
      if (EndsWith(f.file, "torch/_tensor_str.py"))
        return "user code trying to access tensor value: printing a tensor (print, str, repr)";
    if (current_reader) return std::string("user code trying to access tensor value with ") + current_reader;
    return "user code trying to access tensor value (.cpu(), .tolist(), .numpy(), ...)";
  }
  // Library code that syncs on the user's behalf first: it calls torch_xla.sync itself.
  for (const debug::Frame& f : frames) {
    if (EndsWith(f.file, "torch_xla/distributed/parallel_loader.py"))
      return "torch_xla.sync in parallel loader at step end";
    if (EndsWith(f.file, "torch_xla/debug/profiler.py")) return "torch_xla.sync when exiting a profiler StepTrace region";
    if (EndsWith(f.file, "torch_xla/__init__.py") && f.function == "_compiled") {
      if (EndsWith(CurrentGraphName(), "_clear_pending"))
        return "torch_xla.compile clear the pending graph prior calling the target function";
      return "torch_xla.compile";
    }
    if (f.file.find("torch_xla/_dynamo") != std::string::npos || f.function.find("dynamo") != std::string::npos ||
        f.file.find("torch_xla/core/dynamo_bridge") != std::string::npos)
      return "torch_xla.sync when dynamo processing input graphs";
    if (EndsWith(f.file, "torch_xla/__init__.py") && f.function == "step") return "a torch_xla.step() block";
    if (EndsWith(f.file, "torch_xla/core/xla_model.py") && f.function == "optimizer_step")
      return "xm.optimizer_step(barrier=True)";
  }
  for (const debug::Frame& f : frames) {
    if (EndsWith(f.file, "torch_xla/__init__.py") && f.function == "sync") return "user torch_xla.sync";
    if (EndsWith(f.file, "torch_xla/core/xla_model.py") && f.function == "mark_step") return "user mark_step";
  }
  return "a barrier (torch_xla.sync of the given tensors)";
}

// One line per IR node: what must match for two graphs to be the same program.
std::string Describe(const ir::Node& node) {
  switch (node.kind()) {
    case ir::NodeKind::kDeviceData:
      return "input " + node.shape().ToString();
    case ir::NodeKind::kConstant:
      return "constant " + node.AttrString().substr(6) + " " + node.shape().ToString();
    case ir::NodeKind::kOp: {
      std::string s = node.OpName() + "(";
      for (size_t k = 0; k < node.operands().size(); ++k)
        s += (k ? ", " : "") + node.operands()[k].shape().ToString();
      s += ") -> ";
      for (size_t k = 0; k < node.shapes().size(); ++k) s += (k ? ", " : "") + node.shape(k).ToString();
      std::string attrs = node.AttrString();
      return attrs.empty() ? s : s + " " + attrs;
    }
  }
  return "";
}

struct GraphRecord {
  std::string hash;
  std::string cause_frame;
  std::vector<std::string> lines;
  std::vector<std::string> frames;  // the user frame that created each node, when known
};

struct State {
  std::mutex mu;
  std::vector<GraphRecord> compiled;  // newest last
  size_t steps = 0;
  // Mid-step reads of the current step, by cause and user frame; reported ones are not again.
  std::map<std::string, size_t> step_reads;
  std::set<std::string> reported_reads;
  std::set<std::string> reported_fallbacks;
};
State& GetState() {
  static State state;
  return state;
}

void Emit(const std::string& text) {
  const std::string& path = debug::GetConfig().pt_xla_debug_file;
  if (!path.empty()) {
    std::ofstream(path, std::ios::app) << text;
    return;
  }
  std::cerr << text << std::flush;
}

// The user's line that created the node, as the lazy kernel recorded it.
std::string NodeFrame(const ir::Node& node) { return node.user_frame() ? node.user_frame()->ToString() : ""; }

GraphRecord Record(const GraphCut& cut, const std::string& cause_frame) {
  GraphRecord r;
  r.hash = compiler::Hex(cut.hash);
  r.cause_frame = cause_frame;
  for (const ir::Node* n : cut.nodes) {
    r.lines.push_back(Describe(*n));
    r.frames.push_back(NodeFrame(*n));
  }
  return r;
}

// Lines of `a` not matched in `b` (multiset difference), with their indices in `a`, in order.
std::vector<size_t> OnlyIn(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::unordered_map<std::string, int> count;
  for (const std::string& s : b) ++count[s];
  std::vector<size_t> out;
  for (size_t k = 0; k < a.size(); ++k) {
    auto it = count.find(a[k]);
    if (it != count.end() && it->second > 0) --it->second;
    else out.push_back(k);
  }
  return out;
}

void ExplainRecompile(const GraphRecord& now, const std::vector<GraphRecord>& before, std::ostream& out,
                      const char* prefix) {
  out << prefix << "Why Not Cached:\n";
  if (before.empty()) {
    out << prefix << "  the first graph compiled in this process\n";
    return;
  }
  // The nearest: the fewest nodes that differ.
  const GraphRecord* nearest = nullptr;
  std::vector<size_t> here, there;  // indices of the nodes only in this graph, only in the nearest
  for (const GraphRecord& g : before) {
    std::vector<size_t> h = OnlyIn(now.lines, g.lines), t = OnlyIn(g.lines, now.lines);
    if (!nearest || h.size() + t.size() < here.size() + there.size())
      nearest = &g, here = std::move(h), there = std::move(t);
  }
  out << prefix << "  nearest cached graph: " << nearest->hash << " (" << nearest->lines.size() << " nodes; this one "
      << now.lines.size() << "), compiled for " << nearest->cause_frame << "\n";
  if (here.empty() && there.empty()) {
    out << prefix << "  same inputs, constants and ops: the roots (the tensors computed) are ordered or shared "
                     "differently, or a switch that changes generated code differs\n";
    return;
  }
  auto section = [&](const char* kind, const char* title) {
    std::vector<size_t> h, t;
    for (size_t k : here)
      if (now.lines[k].rfind(kind, 0) == 0) h.push_back(k);
    for (size_t k : there)
      if (nearest->lines[k].rfind(kind, 0) == 0) t.push_back(k);
    if (h.empty() && t.empty()) return;
    out << prefix << "  " << title << "\n";
    for (size_t n = 0; n < std::max(h.size(), t.size()) && n < kDifferencesShown; ++n) {
      out << prefix << "    " << (n < h.size() ? now.lines[h[n]].substr(std::string(kind).size()) : "(none)")
          << " here, " << (n < t.size() ? nearest->lines[t[n]].substr(std::string(kind).size()) : "(none)")
          << " there";
      if (n < h.size() && !now.frames[h[n]].empty()) out << "; created at " << now.frames[h[n]];
      out << "\n";
    }
  };
  section("input ", "input shapes or dtypes differ:");
  section("constant ", "baked-in constants differ (0 and 1 are constants in graphs; XLA_NO_SPECIAL_SCALARS=1 "
                       "passes them as inputs like other Python scalars):");
  auto ops = [](const std::vector<size_t>& indices, const std::vector<std::string>& lines) {
    std::vector<size_t> out;
    for (size_t k : indices)
      if (lines[k].rfind("input ", 0) != 0 && lines[k].rfind("constant ", 0) != 0) out.push_back(k);
    return out;
  };
  // Where each op of this graph was created is known; the cached graph's are not shown.
  auto list_ops = [&](const char* where, const std::vector<size_t>& indices, const GraphRecord& g, bool frames) {
    if (indices.empty()) return;
    out << prefix << "  ops only in " << where << " (" << indices.size() << "; the first in execution order):\n";
    for (size_t n = 0; n < indices.size() && n < kDifferencesShown; ++n) {
      out << prefix << "    " << g.lines[indices[n]];
      if (frames && !g.frames[indices[n]].empty()) out << "; created at " << g.frames[indices[n]];
      out << "\n";
    }
  };
  list_ops("this graph", ops(here, now.lines), now, true);
  list_ops("the cached graph", ops(there, nearest->lines), *nearest, false);
}

double Gigabytes(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

ScopedSyncKind::ScopedSyncKind(SyncKind kind, const char* reader)
    : previous_kind_(current_kind), previous_reader_(current_reader) {
  current_kind = kind;
  current_reader = reader;
}

ScopedSyncKind::~ScopedSyncKind() {
  current_kind = previous_kind_;
  current_reader = previous_reader_;
}

int Level() {
  // PT_XLA_DEBUG=1 without a level means every analysis, as in PyTorch/XLA (its level 100).
  const debug::Config& config = debug::GetConfig();
  if (config.pt_xla_debug_level > 0) return static_cast<int>(config.pt_xla_debug_level);
  return config.pt_xla_debug ? 100 : 0;
}

namespace {
std::mutex graph_name_mu;
std::string graph_name;  // torch_xla.compile(name=...)'s, while its function runs
}  // namespace

void SetCurrentGraphName(const std::string& name) {
  std::lock_guard<std::mutex> lock(graph_name_mu);
  graph_name = name;
}

std::string CurrentGraphName() {
  std::lock_guard<std::mutex> lock(graph_name_mu);
  return graph_name;
}

namespace {

// One analysis block: its cause, the graph's identity and the Python frames that ran it.
std::ostringstream Block(const char* prefix, const char* what, const std::string& cause, ir::hash_t hash,
                         size_t inputs, size_t outputs, int device, const std::vector<debug::Frame>& frames) {
  const std::string name = CurrentGraphName();
  std::ostringstream out;
  out << prefix << kRule << "\n" << prefix << what << " Cause\n" << prefix << "  " << cause << "\n"
      << prefix << "Graph Info:\n";
  if (!name.empty()) out << prefix << "  Graph Name: " << name << "\n";
  out << prefix << "  Graph Hash: " << compiler::Hex(hash) << "\n"
      << prefix << "  Number of Graph Inputs: " << inputs << "\n"
      << prefix << "  Number of Graph Outputs: " << outputs << "\n"
      << prefix << "  Device: xla:" << device << "\n"
      << prefix << "Python Frame Triggered Execution:\n";
  // The API the user called (the outermost of the innermost library frames: torch_xla.sync,
  // not the helper it calls), then from the user's innermost frame outwards.
  const size_t most = static_cast<size_t>(std::max<int64_t>(1, debug::GetConfig().pt_xla_debug_max_frame));
  auto user_start = std::find_if(frames.begin(), frames.end(), [](const debug::Frame& f) { return !f.library; });
  auto first = user_start == frames.begin() || user_start == frames.end() ? frames.begin() : user_start - 1;
  const auto end = first + static_cast<std::ptrdiff_t>(std::min<size_t>(most, frames.end() - first));
  for (auto f = first; f != end; ++f) out << prefix << "  " << f->ToString() << "\n";
  if (end != frames.end()) out << prefix << "  ..........\n";  // as PyTorch/XLA marks the frames left out
  if (frames.empty()) out << prefix << "  (no Python frame: called from C++)\n";
  return out;
}

void ReportCompile(const std::string& cause, const GraphCut& cut, size_t outputs, int device,
                   const std::vector<debug::Frame>& frames, const runtime::Executable::Footprint& footprint,
                   State& state) {
  debug::Frame user = debug::InnermostUserFrame(frames);
  GraphRecord record = Record(cut, user.ToString());
  std::ostringstream out =
      Block("Compilation Analysis: ", "Compilation", cause, cut.hash, cut.parameters.size(), outputs, device, frames);
  // After the frames' closing rule, where PyTorch/XLA's readers stop taking frame lines.
  out << "Compilation Analysis: " << kThinRule << "\n";
  ExplainRecompile(record, state.compiled, out, "Compilation Analysis: ");
  out << "Compilation Analysis: " << kRule << "\n\n";
  size_t input_bytes = 0, output_bytes = 0;
  for (const runtime::BufferPtr& p : cut.parameters) input_bytes += p ? p->size_bytes() : 0;
  for (const ir::Value& v : cut.roots)
    output_bytes += static_cast<size_t>(v.shape().numel()) * c10::elementSize(v.shape().dtype);
  char sizes[640];
  const char* unknown = footprint.known ? "" : " (not known for this executable)";
  std::snprintf(sizes, sizeof(sizes),
                "Post Compilation Analysis: Graph input size: %f GB\n"
                "Post Compilation Analysis: Graph output size: %f GB\n"
                "Post Compilation Analysis: Aliased Input size: %f GB%s\n"
                "Post Compilation Analysis: Intermediate tensor size: %f GB%s\n"
                "Post Compilation Analysis: Compiled program size: %f GB%s\n",
                Gigabytes(input_bytes), Gigabytes(output_bytes),
                Gigabytes(static_cast<size_t>(footprint.aliasable_input_bytes)), unknown,
                Gigabytes(static_cast<size_t>(footprint.intermediate_bytes)), unknown,
                Gigabytes(static_cast<size_t>(footprint.program_bytes)), unknown);
  out << "Post Compilation Analysis: " << kRule << "\n" << sizes;
  // Under SPMD: what the partitioner had to move, and for which op (resharding is where a
  // sharded program loses its time).
  if (runtime::SpmdEnabled()) {
    const std::string& report = LastPartitionReport();
    out << "Post Compilation Analysis: SPMD resharding in this graph:"
        << (report.empty() ? " none\n" : "\n");
    std::istringstream lines(report);
    for (std::string line; std::getline(lines, line);) out << "Post Compilation Analysis:   " << line << "\n";
  }
  out << "Post Compilation Analysis: " << kThinRule
      << "\nPost Compilation Analysis: " << kRule << "\n\n";
  Emit(out.str());
  state.compiled.push_back(std::move(record));
  if (state.compiled.size() > kGraphsRemembered) state.compiled.erase(state.compiled.begin());
}

void ReportExecution(const std::string& cause, ir::hash_t hash, size_t inputs, size_t outputs, int device,
                     const std::vector<debug::Frame>& frames) {
  std::ostringstream out = Block("Execution Analysis: ", "Execution", cause, hash, inputs, outputs, device, frames);
  out << "Execution Analysis: " << kThinRule << "\nExecution Analysis: " << kRule << "\n\n";
  Emit(out.str());
}

}  // namespace

void OnGraph(const GraphCut& cut, size_t outputs, int device, bool compiled,
             const std::vector<debug::Frame>& frames, const runtime::Executable::Footprint& footprint) {
  int level = Level();
  if (level == 0 || (!compiled && level < 2 && current_kind != SyncKind::kRead)) return;
  std::string cause = Cause(frames);
  debug::Frame user = debug::InnermostUserFrame(frames);
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  if (current_kind == SyncKind::kRead) ++state.step_reads[cause + " at " + user.ToString()];
  if (compiled) ReportCompile(cause, cut, outputs, device, frames, footprint, state);
  if (level >= 2) ReportExecution(cause, cut.hash, cut.parameters.size(), outputs, device, frames);
}

void OnDynamoCompile(const GraphCut& cut, int device, const runtime::Executable::Footprint& footprint) {
  if (Level() == 0) return;
  const std::vector<debug::Frame> frames = debug::CurrentFrameList();
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  ReportCompile("dynamo is compiling a FX graph to HLO", cut, cut.roots.size(), device, frames, footprint, state);
}

void OnDynamoExecute(ir::hash_t hash, size_t inputs, size_t outputs, int device) {
  if (Level() < 2) return;
  const std::vector<debug::Frame> frames = debug::CurrentFrameList();
  std::lock_guard<std::mutex> lock(GetState().mu);
  ReportExecution("dynamo is executing a compiled program", hash, inputs, outputs, device, frames);
}

void OnStepEnd() {
  if (Level() == 0) return;
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.mu);
  ++state.steps;
  std::ostringstream out;
  for (const auto& [where, count] : state.step_reads) {
    if (!state.reported_reads.insert(where).second) continue;
    out << "pt-xla-profiler: " << where << " ran a graph in the middle of step " << state.steps << " (" << count
        << " time(s) in that step): the read waits for the device and cuts the step's graph in two; read values "
           "after torch_xla.sync(), or less often\n";
  }
  state.step_reads.clear();
  std::string fallbacks;
  for (const std::string& name : metrics::CounterNames()) {
    if (name.rfind("aten::", 0) != 0 || metrics::GetCounter(name)->Value() == 0) continue;
    if (state.reported_fallbacks.insert(name).second) fallbacks += (fallbacks.empty() ? "" : ", ") + name;
  }
  if (!fallbacks.empty())
    out << "pt-xla-profiler: Op(s) not lowered: " << fallbacks << " (they ran on the CPU, with a transfer each "
        << "way)\n";
  if (out.tellp() > 0) Emit(out.str());
}

}  // namespace txla::graph::analysis
