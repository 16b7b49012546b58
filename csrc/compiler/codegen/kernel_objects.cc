#include "compiler/codegen/kernel_objects.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/native_library.h"
#include "debug/config.h"
#include "metrics/metrics.h"
#include "metrics/trace.h"

namespace txla::compiler {
namespace {

// Runs a shell command; its output (stdout and stderr) on failure.
bool RunCommand(const std::string& cmd, const std::string& log, std::string* output) {
  int status = std::system((cmd + " > '" + log + "' 2>&1").c_str());
  if (status != 0 && output) {
    if (FILE* f = std::fopen(log.c_str(), "r")) {
      std::array<char, 4096> buf;
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0 && output->size() < 16384)
        output->append(buf.data(), n);
      std::fclose(f);
    }
  }
  std::remove(log.c_str());
  return status == 0;
}

// New kernels above this size build as one translation unit per core: the C++ compiler's time
// grows with the source, and one invocation uses one core. A unit costs ~15 ms of its own (the
// compiler's start and the prelude), 16 KB of kernels ~100 ms: at 48 KB, a graph of 45 KB of
// kernels (ResNet-18's forward through torch.compile) was one unit of ~300 ms.
constexpr size_t kSplitBytes = 16 * 1024;
// A whole source up to this size may build in one invocation (below).
constexpr size_t kWholeBytes = 48 * 1024;
// A graph with fewer kernels than this, none of them compiled before, builds in one invocation
// (no link step, nothing remembered): tiny graphs are cheap to build whole.
constexpr size_t kKernelsWorthKeeping = 8;

// The kernel objects this process built, by kernel content hash. No other process can use them:
// they go when the process exits (a test suite's processes left 34,000 of them a day, which made
// the work directory's daily cleaning a walk over 140,000 files).
struct KernelObjects {
  std::mutex mu;
  std::map<std::string, std::string> object_of;
  std::vector<std::string> files;  // every object built, remembered or forgotten since
  ~KernelObjects() {
    std::lock_guard<std::mutex> lock(mu);
    for (const std::string& f : files) std::remove(f.c_str());
  }
};
KernelObjects& Objects() {
  static KernelObjects objects;
  return objects;
}

std::string UniqueName(const std::string& prefix) {
  static std::atomic<uint64_t> counter{0};
  return prefix + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

// One compiler invocation per unit, all at once, each with KernelCompilerCommand() and its own
// extra flags (and, building a library, `libraries` after the source); `ok[k]` says whether unit
// k built.
void CompileUnits(const std::vector<std::string>& sources, const std::vector<std::string>& outputs,
                  const std::vector<std::string>& flags, std::vector<char>* ok, std::string* log,
                  const std::string& libraries = "") {
  std::vector<std::string> logs(sources.size());
  ok->assign(sources.size(), 0);
  std::vector<std::thread> builds;
  for (size_t k = 0; k < sources.size(); ++k) {
    builds.emplace_back([&, k] {
      // Where a cold compile goes, unit by unit, in a profiler capture.
      metrics::TraceSpan span("compile", "C++ compiler");
      if (span.recording())
        span.Arg("unit", outputs[k] + " (" + std::to_string(sources[k].size()) + " bytes," + flags[k] + ")");
      std::string unit_path = outputs[k] + ".cc";
      std::ofstream(unit_path) << sources[k];
      (*ok)[k] = RunCommand(KernelCompilerCommand() + flags[k] + " -o '" + outputs[k] + "' '" + unit_path + "'" + libraries,
                            outputs[k] + ".log", &logs[k]);
      std::remove(unit_path.c_str());
    });
  }
  for (std::thread& t : builds) t.join();
  for (const std::string& l : logs) *log += l;
}

// Contiguous runs of kernels of about equal size, at most `units` of them: each unit's source,
// and (in `unit_of`) the unit each kernel went to.
std::vector<std::string> GroupKernels(const std::string& prelude, const std::vector<const SourceKernel*>& kernels,
                                      size_t units, std::vector<size_t>* unit_of) {
  size_t total = 0;
  for (const SourceKernel* k : kernels) total += k->text.size();
  std::vector<std::string> out(std::max<size_t>(1, std::min(units, kernels.size())), prelude);
  size_t filled = 0;
  unit_of->clear();
  for (const SourceKernel* k : kernels) {
    size_t unit = std::min(out.size() - 1, (filled + k->text.size() / 2) * out.size() / std::max<size_t>(total, 1));
    out[unit] += k->text;
    unit_of->push_back(unit);
    filled += k->text.size();
  }
  return out;
}

// The whole source in one invocation, straight to a shared object.
bool BuildWhole(const std::string& source, const std::string& tmp, std::string* log) {
  std::vector<char> ok;
  CompileUnits({source}, {tmp}, {""}, &ok, log, KernelLinkLibraries());
  return ok[0] != 0;
}

// Kernel and step objects (reused and new), linked: the graph's program is data
// (graph_program.h), which no compiler reads.
bool BuildFromKernelObjects(const SourceParts& parts, int units, const std::string& tmp, bool reuse,
                            std::set<std::string>* reused, std::string* log) {
  std::vector<const SourceKernel*> fresh;
  {
    KernelObjects& objects = Objects();
    std::lock_guard<std::mutex> lock(objects.mu);
    std::set<std::string> seen;
    for (const SourceKernel& k : parts.kernels) {
      if (!seen.insert(k.hash).second) continue;
      auto it = reuse ? objects.object_of.find(k.hash) : objects.object_of.end();
      if (it != objects.object_of.end()) reused->insert(it->second);
      else fresh.push_back(&k);
    }
  }
  TXLA_COUNTER("KernelsReused", static_cast<int64_t>(parts.kernels.size() - fresh.size()));
  TXLA_COUNTER("KernelsCompiled", static_cast<int64_t>(fresh.size()));
  size_t fresh_bytes = 0;
  for (const SourceKernel* k : fresh) fresh_bytes += k->text.size();
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t kernel_units = fresh.empty() ? 0 : units > 0 ? units : fresh_bytes > kSplitBytes ? cores : 1;
  std::vector<size_t> unit_of;
  std::vector<std::string> sources = GroupKernels(parts.prelude, fresh, kernel_units, &unit_of);
  if (fresh.empty()) sources.clear();
  std::vector<std::string> outputs;
  std::string base = WorkDirectory() + "/" + UniqueName("graph_kernels_");
  for (size_t k = 0; k < sources.size(); ++k) outputs.push_back(base + "_" + std::to_string(k) + ".o");
  std::vector<std::string> flags(sources.size(), " -c");
  std::vector<char> ok;
  CompileUnits(sources, outputs, flags, &ok, log);
  bool all = std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
  // Identical kernels in two objects (two graphs compiled at once) are the same code: the
  // linker may keep either.
  std::string link = debug::GetConfig().cxx + " -shared -Wl,--allow-multiple-definition -o '" + tmp + "'";
  for (const std::string& o : outputs) link += " '" + o + "'";
  for (const std::string& o : *reused) link += " '" + o + "'";
  link += KernelLinkLibraries();
  bool linked = false;
  if (all) {
    metrics::TraceSpan span("compile", "link");
    linked = RunCommand(link, tmp + ".log", log);
  }
  if (!linked) {
    for (const std::string& o : outputs) std::remove(o.c_str());
    return false;
  }
  KernelObjects& objects = Objects();
  std::lock_guard<std::mutex> lock(objects.mu);
  for (size_t k = 0; k < fresh.size(); ++k) objects.object_of.emplace(fresh[k]->hash, outputs[unit_of[k]]);
  objects.files.insert(objects.files.end(), outputs.begin(), outputs.end());
  return true;
}

}  // namespace

void BuildSharedObject(const std::string& source, const std::string& source_path,
                       const std::string& object_path, int units) {
  CleanWorkDirectoryAtExit();
  // Everything this build writes has a name of its own (pid, counter): processes sharing the
  // work directory may build the same graph at the same time.
  std::string tmp = object_path + ".tmp." + UniqueName("");
  std::string log;
  SourceParts parts = ParseSource(source);
  bool any_known = false;
  if (parts.valid) {
    KernelObjects& objects = Objects();
    std::lock_guard<std::mutex> lock(objects.mu);
    for (const SourceKernel& k : parts.kernels) any_known |= objects.object_of.count(k.hash) > 0;
  }
  bool ok;
  if (!parts.valid || (units <= 1 && !any_known && parts.kernels.size() < kKernelsWorthKeeping &&
                       source.size() <= kWholeBytes)) {
    ok = BuildWhole(source, tmp, &log);
  } else {
    std::set<std::string> reused;
    ok = BuildFromKernelObjects(parts, units, tmp, /*reuse=*/true, &reused, &log);
    if (!ok && !reused.empty()) {
      // A kept object may be gone (another process cleans the work directory of day-old
      // files): forget them all and build every kernel of this graph.
      ForgetKernelObjects();
      TXLA_COUNTER("KernelObjectsLost", 1);
      log.clear();
      reused.clear();
      ok = BuildFromKernelObjects(parts, units, tmp, /*reuse=*/false, &reused, &log);
    }
  }
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("building " + source_path + " failed:\n" + log);
  }
  if (std::rename(tmp.c_str(), object_path.c_str()) != 0)
    throw std::runtime_error("could not move the built kernel to " + object_path);
}

void ForgetKernelObjects() {
  KernelObjects& objects = Objects();
  std::lock_guard<std::mutex> lock(objects.mu);
  objects.object_of.clear();
}

}  // namespace txla::compiler
