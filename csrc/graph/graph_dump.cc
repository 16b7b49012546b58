#include "graph/graph_dump.h"

#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/content_hash.h"
#include "debug/config.h"
#include "debug/frames.h"
#include "hlo/printer.h"
#include "ir/ir_dump.h"
#include "graph/spmd_execution.h"
#include "lower/lowering.h"
#include "runtime/device.h"

namespace txla::graph {
namespace {

std::string Hlo(const GraphCut& cut) {
  std::string missing = lower::FirstUnloweredOp(cut);
  if (!missing.empty()) return "(no HLO: " + missing + " has no lowering; this graph runs on the interpreter)\n";
  try {
    std::unique_ptr<hlo::Module> module = lower::LowerGraph(cut);
    if (runtime::SpmdEnabled()) AnnotateParameterShardings(*module, cut);  // shardings show in dumps
    return hlo::ToText(*module);
  } catch (const std::exception& e) {
    return std::string("(no HLO: lowering failed: ") + e.what() + ")\n";
  }
}

}  // namespace

void DumpGraphIfRequested(const GraphCut& cut, const std::vector<debug::Frame>& frames) {
  const debug::Config& config = debug::GetConfig();
  if (config.save_tensors_file.empty()) return;
  std::ostringstream entry;
  entry << "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n";
  for (const debug::Frame& f : frames) entry << "  " << f.ToString() << "\n";
  if (frames.empty()) entry << "  (no Python frame: called from C++)\n";
  entry << "\nRoot Hashes: (";
  for (size_t k = 0; k < cut.roots.size(); ++k) entry << (k ? ", " : "") << compiler::Hex(cut.roots[k].hash());
  entry << ")\nTensors: ";
  for (size_t k = 0; k < cut.roots.size(); ++k) entry << (k ? ", " : "") << cut.roots[k].shape().ToString();
  entry << "\nGraph Hash: " << compiler::Hex(cut.hash) << "\n\n## BEGIN_GRAPH\n";
  const std::string& format = config.save_tensors_fmt;
  entry << (format == "dot" ? ir::GraphToDot(cut) : format == "hlo" ? Hlo(cut) : ir::GraphToText(cut));
  entry << "\n## END_GRAPH\n\n";
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::ofstream(config.save_tensors_file, std::ios::app) << entry.str();
}

}  // namespace txla::graph
