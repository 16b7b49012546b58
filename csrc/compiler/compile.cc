#include "compiler/compile.h"

#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "compiler/background_thread.h"
#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_objects.h"
#include "compiler/codegen/native_library.h"
#include "compiler/content_hash.h"
#include "compiler/native_executable.h"
#include "compiler/persistent_cache.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/early_outputs.h"
#include "compiler/passes/float_normalization.h"
#include "compiler/passes/fusion.h"
#include "compiler/passes/sibling_reductions.h"
#include "compiler/passes/update_order.h"
#include "debug/config.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "metrics/metrics.h"

namespace txla::compiler {
namespace {

void DumpAfter(const std::string& pass, const hlo::Module& module) {
  std::string path = debug::GetConfig().dump_passes;
  if (path.empty()) return;
  std::ofstream out(path, std::ios::app);
  out << "// after " << pass << "\n" << hlo::ToText(module) << "\n";
}

bool Enabled(const Pass& pass) { return PassEnabled(pass.name()); }

// A pass's run, as its own span on a profiler capture (where a recompile's time goes).
bool Run(Pass& pass, hlo::Module& module) {
  metrics::TraceSpan span("compile", pass.name());
  return pass.Run(module);
}

}  // namespace

bool PassEnabled(const std::string& name) {
  std::string disabled = "," + debug::GetConfig().disable_passes + ",";
  return disabled.find("," + name + ",") == std::string::npos;
}

void RunPipeline(hlo::Module& module) {
  hlo::Verify(module);
  DumpAfter("lowering", module);
  FloatNormalization normalization;
  if (Run(normalization, module)) DumpAfter(normalization.name(), module);
  CommonSubexpressionElimination cse;
  AlgebraicSimplifier simplifier;
  ConstantFolding folding;
  DeadCodeElimination dce;
  Fusion fusion;
  // Simplification and CSE feed each other: run both to a fixed point (bounded, in case a rule
  // ever undoes another).
  for (int round = 0; round < 8; ++round) {
    bool changed = Enabled(simplifier) && Run(simplifier, module);
    changed |= Enabled(folding) && Run(folding, module);
    changed |= Enabled(cse) && Run(cse, module);
    changed |= Run(dce, module);
    if (!changed) break;
  }
  DumpAfter(simplifier.name() + "+" + folding.name() + "+" + cse.name(), module);
  Run(dce, module);
  DumpAfter(dce.name(), module);
  if (Enabled(fusion)) Run(fusion, module);
  DumpAfter(fusion.name(), module);
  Run(dce, module);
  SiblingReductions siblings;
  if (Enabled(siblings) && Run(siblings, module)) DumpAfter(siblings.name(), module);
  // After the sibling pass: pairs it placed among the loss's producers move with them.
  EarlyOutputs early;
  if (Enabled(early) && Run(early, module)) DumpAfter(early.name(), module);
  UpdateOrder updates;
  if (Enabled(updates) && Run(updates, module)) DumpAfter(updates.name(), module);
  hlo::Verify(module);
}

namespace {

// A graph entry of the persistent cache, one item per line:
//   library <key>
//   arena <bytes>
//   outputs <type> <dims,...> ; <type> <dims,...> ; ...
//   aliases / parameter_outputs / donations <a>:<b> <a>:<b> ...
//   the program's two lines (graph_program.h's ProgramText)
struct GraphEntry {
  std::string library_key;
  ProgramText program;
  int64_t arena_bytes = 0;
  std::vector<hlo::Shape> outputs;
  std::vector<std::pair<int64_t, int64_t>> aliases, parameter_outputs, donations;
};

std::string Pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::string out;
  for (auto [a, b] : pairs) out += " " + std::to_string(a) + ":" + std::to_string(b);
  return out;
}

std::string Describe(const GraphEntry& e) {
  std::ostringstream ss;
  ss << "library " << e.library_key << "\narena " << e.arena_bytes << "\noutputs";
  for (const hlo::Shape& s : e.outputs) {
    ss << " " << static_cast<int>(s.type) << " ";
    for (size_t k = 0; k < s.dims.size(); ++k) ss << (k ? "," : "") << s.dims[k];
    ss << " ;";
  }
  ss << "\naliases" << Pairs(e.aliases) << "\nparameter_outputs" << Pairs(e.parameter_outputs)
     << "\ndonations" << Pairs(e.donations) << "\n" << FormatProgram(e.program);
  return ss.str();
}

std::optional<GraphEntry> Parse(const std::string& text) {
  GraphEntry e;
  std::istringstream in(text);
  std::string line, word;
  auto pairs = [](std::istringstream& s, std::vector<std::pair<int64_t, int64_t>>* out) {
    std::string p;
    while (s >> p) {
      size_t colon = p.find(':');
      if (colon == std::string::npos) return false;
      out->emplace_back(std::stoll(p.substr(0, colon)), std::stoll(p.substr(colon + 1)));
    }
    return true;
  };
  try {
    while (std::getline(in, line)) {
      std::istringstream s(line);
      s >> word;
      if (word == "library") {
        s >> e.library_key;
      } else if (word == "arena") {
        s >> e.arena_bytes;
      } else if (word == "outputs") {
        std::string type, dims, sep;
        while (s >> type) {
          if (type == ";") continue;
          std::vector<int64_t> d;
          if (!(s >> dims)) return std::nullopt;
          if (dims == ";") {
            e.outputs.push_back(hlo::Shape::Array(static_cast<hlo::ElementType>(std::stoi(type)), {}));
            continue;
          }
          std::istringstream ds(dims);
          std::string n;
          while (std::getline(ds, n, ',')) d.push_back(std::stoll(n));
          e.outputs.push_back(hlo::Shape::Array(static_cast<hlo::ElementType>(std::stoi(type)), d));
        }
      } else if (word == "aliases") {
        if (!pairs(s, &e.aliases)) return std::nullopt;
      } else if (word == "parameter_outputs") {
        if (!pairs(s, &e.parameter_outputs)) return std::nullopt;
      } else if (word == "donations") {
        if (!pairs(s, &e.donations)) return std::nullopt;
      }
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::optional<ProgramText> program = ParseProgram(text);
  if (e.library_key.empty() || !program) return std::nullopt;
  e.program = std::move(*program);
  return e;
}

}  // namespace

std::shared_ptr<runtime::Executable> LoadCachedGraph(uint64_t graph_hash) {
  if (!PersistentCacheEnabled()) return nullptr;
  metrics::TraceSpan span("compile", "LoadCachedGraph");
  std::optional<std::string> text;
  {
    metrics::TraceSpan key_span("compile", "PersistentCacheGetGraph");
    text = PersistentCacheGetGraph(PersistentCacheGraphKey(graph_hash));
  }
  if (!text) return nullptr;
  std::optional<GraphEntry> e = Parse(*text);
  if (!e) {
    metrics::GetCounter("PersistentCacheError")->Add(1);
    return nullptr;
  }
  std::optional<std::string> library = PersistentCacheLookup(e->library_key);
  if (!library) return nullptr;
  metrics::GetCounter("PersistentCacheGraphHit")->Add(1);  // nothing lowered, emitted or built
  metrics::TraceSpan load_span("compile", "dlopen");
  return std::make_shared<NativeExecutable>(NativeLibrary::Load(*library), e->program, e->outputs, e->arena_bytes,
                                            e->aliases, e->parameter_outputs, e->donations);
}

std::shared_ptr<runtime::Executable> Compile(std::unique_ptr<hlo::Module> module,
                                             CompileStats* stats, uint64_t graph_hash) {
  int before = static_cast<int>(module->entry()->instruction_count());
  {
    metrics::TraceSpan span("compile", "RunPipeline");
    RunPipeline(*module);
  }
  BufferPlan plan = AssignBuffers(*module);
  std::string source;
  {
    metrics::TraceSpan span("compile", "EmitCpp");
    try {
      source = EmitCpp(*module, plan, debug::GetConfig().profile_kernels);
    } catch (const std::invalid_argument& e) {
      throw Unsupported(e.what());
    }
  }
  if (stats) {
    stats->hlo_instructions = before;
    stats->kernels = CountKernels(*module);
  }
  std::string base = WorkDirectory() + "/graph_" + Hex(Fnv1a(source));
  // Dumps for debugging (other processes may be writing the same names), written while the C++
  // compiler runs: printing and writing a ResNet-18 graph's took 19 ms of its first step.
  BackgroundThread dumps([&] {
    WriteFileAtomically(base + ".cc", source);
    WriteFileAtomically(base + ".hlo.txt", hlo::ToText(*module));
  });
  std::string library = base + ".so";
  std::string cache_key;
  std::optional<std::string> cached;
  if (PersistentCacheEnabled()) {
    cache_key = PersistentCacheKey(source);
    cached = PersistentCacheLookup(cache_key);
  }
  if (cached) {
    library = *cached;
  } else {
    static metrics::Metric* cpp_time = metrics::GetMetric("CppCompileTime");
    metrics::ScopedTimer timer(cpp_time);
    try {
      BuildSharedObject(source, base + ".cc", library);
    } catch (const std::runtime_error& e) {
      throw BuildError(std::string(e.what()) + "\nHLO: " + base + ".hlo.txt\nsource: " + base + ".cc");
    }
    if (!cache_key.empty()) PersistentCacheStore(cache_key, library);
  }
  std::vector<hlo::Shape> outputs = module->entry()->root()->shape().tuple_shapes;
  std::optional<ProgramText> program = ParseProgram(source);
  if (!program) throw BuildError("the source has no program\nsource: " + base + ".cc");
  if (!cache_key.empty() && graph_hash != 0) {
    GraphEntry entry{cache_key, *program, plan.arena_bytes, outputs, plan.output_aliases, plan.parameter_outputs,
                     plan.donations};
    PersistentCachePutGraph(PersistentCacheGraphKey(graph_hash), Describe(entry));
  }
  auto executable = std::make_shared<NativeExecutable>(NativeLibrary::Load(library), *program, std::move(outputs),
                                                       plan.arena_bytes, plan.output_aliases,
                                                       plan.parameter_outputs, plan.donations);
  executable->set_dump_path(base + ".{hlo.txt,cc}");
  return executable;
}

}  // namespace txla::compiler
