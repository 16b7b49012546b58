#include "compiler/compile.h"

#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/native_library.h"
#include "compiler/native_executable.h"
#include "compiler/persistent_cache.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/fusion.h"
#include "debug/env.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "metrics/metrics.h"

namespace txla::compiler {
namespace {

void DumpAfter(const std::string& pass, const hlo::Module& module) {
  std::string path = debug::EnvString("TXLA_DUMP_PASSES");
  if (path.empty()) return;
  std::ofstream out(path, std::ios::app);
  out << "// after " << pass << "\n" << hlo::ToText(module) << "\n";
}

std::string Hex(size_t h) {
  std::ostringstream ss;
  ss << std::hex << h;
  return ss.str();
}

// TXLA_DISABLE_PASSES=name,name: a debugging switch to bisect miscompiles.
bool Enabled(const Pass& pass) {
  std::string disabled = "," + debug::EnvString("TXLA_DISABLE_PASSES") + ",";
  return disabled.find("," + pass.name() + ",") == std::string::npos;
}

}  // namespace

void RunPipeline(hlo::Module& module) {
  hlo::Verify(module);
  DumpAfter("lowering", module);
  CommonSubexpressionElimination cse;
  AlgebraicSimplifier simplifier;
  ConstantFolding folding;
  DeadCodeElimination dce;
  Fusion fusion;
  // Simplification and CSE feed each other: run both to a fixed point (bounded, in case a rule
  // ever undoes another).
  for (int round = 0; round < 8; ++round) {
    bool changed = Enabled(simplifier) && simplifier.Run(module);
    changed |= Enabled(folding) && folding.Run(module);
    changed |= Enabled(cse) && cse.Run(module);
    changed |= dce.Run(module);
    if (!changed) break;
  }
  DumpAfter(simplifier.name() + "+" + folding.name() + "+" + cse.name(), module);
  dce.Run(module);
  DumpAfter(dce.name(), module);
  if (Enabled(fusion)) fusion.Run(module);
  DumpAfter(fusion.name(), module);
  dce.Run(module);
  hlo::Verify(module);
}

std::shared_ptr<runtime::Executable> Compile(std::unique_ptr<hlo::Module> module,
                                             CompileStats* stats) {
  int before = static_cast<int>(module->entry()->instruction_count());
  RunPipeline(*module);
  BufferPlan plan = AssignBuffers(*module);
  std::string source;
  try {
    source = EmitCpp(*module, plan, debug::EnvBool("TXLA_PROFILE_KERNELS"));
  } catch (const std::invalid_argument& e) {
    throw Unsupported(e.what());
  }
  if (stats) {
    stats->hlo_instructions = before;
    stats->kernels = CountKernels(*module);
  }
  std::string base = WorkDirectory() + "/graph_" + Hex(std::hash<std::string>()(source));
  // Dumps for debugging; other processes may be writing the same names.
  WriteFileAtomically(base + ".cc", source);
  WriteFileAtomically(base + ".hlo.txt", hlo::ToText(*module));
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
  return std::make_shared<NativeExecutable>(NativeLibrary::Load(library), std::move(outputs),
                                            plan.arena_bytes, plan.output_aliases,
                                            plan.parameter_outputs, plan.donations);
}

}  // namespace txla::compiler
