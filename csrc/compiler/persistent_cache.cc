#include "compiler/persistent_cache.h"

#include "compiler/compile.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "compiler/background_thread.h"
#include "compiler/codegen/native_library.h"
#include "compiler/content_hash.h"
#include "compiler/private_directory.h"
#include "debug/config.h"
#include "debug/env.h"
#include "metrics/metrics.h"

#ifndef TXLA_VERSION
#define TXLA_VERSION "dev"
#endif

namespace txla::compiler {
namespace {

constexpr char kMagic[] = "TXLA-CACHE-ENTRY 1";

struct CacheState {
  std::mutex mu;
  std::string directory;
  bool readonly = false;
  bool enabled = false;
  // Keys this process already missed: looked up again (graph entry, then compile), they are not
  // counted twice.
  std::set<std::string> missed;
};

CacheState& State() {
  static CacheState* state = [] {
    auto* s = new CacheState();
    std::string dir = debug::GetConfig().persistent_cache_path;
    if (!dir.empty()) {
      try {
        EnsurePrivateDirectory(dir);
        s->directory = dir;
        s->readonly = debug::GetConfig().persistent_cache_read_only;
        s->enabled = true;
      } catch (const std::exception& e) {
        // Set from the environment: training goes on without the cache, and says why.
        metrics::GetCounter("PersistentCacheRefused")->Add(1);
        std::fprintf(stderr, "torch_xla: persistent cache disabled: %s\n", e.what());
      }
    }
    return s;
  }();
  return *state;
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  *ok = static_cast<bool>(in);
  if (!*ok) return "";
  std::string data(static_cast<size_t>(in.tellg()), '\0');  // one read into its final place
  in.seekg(0);
  *ok = static_cast<bool>(in.read(data.data(), static_cast<std::streamsize>(data.size())));
  return *ok ? data : "";
}

// What the kernels' machine code depends on besides their source.
// A checksum of the shared object this code was loaded from.
std::string BuildId() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&BuildId), &info) || !info.dli_fname) return TXLA_VERSION;
  bool ok = false;
  std::string image = ReadFile(info.dli_fname, &ok);
  return std::string(TXLA_VERSION) + "-" + (ok ? Hex(Fnv1aWords(image)) : "unreadable");
}

const std::string& Environment() {
  static const std::string env = [] {
    std::string out = std::string("version=") + TXLA_VERSION + "\ncommand=" + KernelCompilerCommand() + "\n";
    std::string cxx = debug::GetConfig().cxx;
    // The compiler binary, identified without running it.
    std::string resolved = cxx;
    if (cxx.find('/') == std::string::npos) {
      std::string path = debug::EnvString("PATH", "/usr/bin:/bin");
      std::stringstream dirs(path);
      std::string dir;
      while (std::getline(dirs, dir, ':')) {
        struct stat st;
        if (stat((dir + "/" + cxx).c_str(), &st) == 0) {
          resolved = dir + "/" + cxx;
          break;
        }
      }
    }
    char real[4096];
    if (realpath(resolved.c_str(), real)) resolved = real;
    struct stat st {};
    stat(resolved.c_str(), &st);
    out += "compiler=" + resolved + " " + std::to_string(st.st_size) + " " +
           std::to_string(static_cast<long long>(st.st_mtime)) + "\n";
    // This build of the compiler itself: a changed lowering, pass or emitter must never be served
    // kernels an older build made for the same graph.
    out += "build=" + BuildId() + "\n";
    // The CPU (-march=native): model and feature flags.
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) out += line + "\n";
      if (line.empty()) break;  // the first processor is enough
    }
    return out;
  }();
  return env;
}

void Count(const char* name) { metrics::GetCounter(name)->Add(1); }

}  // namespace

void InitializePersistentCache(const std::string& directory, bool readonly) {
  CacheState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  EnsurePrivateDirectory(directory);  // throws: the caller asked for this directory
  s.directory = directory;
  s.readonly = readonly;
  s.enabled = true;
}

void PrefetchPersistentCacheKeys() {
  if (!PersistentCacheEnabled()) return;
  static BackgroundThread prefetch([] { Environment(); });
}

bool PersistentCacheEnabled() {
  CacheState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.enabled;
}

std::string PersistentCacheKey(const std::string& source) {
  uint64_t a = Fnv1a(Environment(), Fnv1a(source));
  uint64_t b = Fnv1a(source, Fnv1a(Environment(), 0x9e3779b97f4a7c15ull));
  return Hex(a) + Hex(b);
}

namespace {

std::string Directory(bool for_write) {
  CacheState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (for_write && s.readonly) return "";
  return s.directory;
}

// The payload of entry `name` if it is whole and is the entry for `name`; a present but bad
// entry counts PersistentCacheError.
std::optional<std::string> ReadEntry(const std::string& name) {
  bool ok = false;
  std::string entry = ReadFile(Directory(false) + "/" + name, &ok);
  if (!ok) return std::nullopt;
  // Header: magic, name, payload size, payload checksum; one per line.
  std::istringstream header(entry);
  std::string magic, entry_name;
  size_t size = 0;
  std::string checksum;
  std::getline(header, magic);
  std::getline(header, entry_name);
  header >> size >> checksum;
  header.get();  // the newline ending the header
  std::streamoff offset = header ? static_cast<std::streamoff>(header.tellg()) : -1;
  bool valid = magic == kMagic && entry_name == name && offset > 0 &&
               entry.size() - static_cast<size_t>(offset) == size;
  std::string payload = valid ? entry.substr(static_cast<size_t>(offset)) : "";
  if (!valid || Hex(Fnv1a(payload)) != checksum) {
    Count("PersistentCacheError");
    return std::nullopt;
  }
  return payload;
}

void WriteEntry(const std::string& name, const std::string& payload) {
  std::string directory = Directory(true);
  if (directory.empty()) return;
  std::string entry = std::string(kMagic) + "\n" + name + "\n" + std::to_string(payload.size()) + " " +
                      Hex(Fnv1a(payload)) + "\n" + payload;
  if (!WriteFileAtomically(directory + "/" + name, entry)) {
    Count("PersistentCacheWriteError");
    return;
  }
  // The cap (XLA_PERSISTENT_CACHE_MAX_MB, default 2048) evicts the least recently written kernels.
  const uint64_t cap = static_cast<uint64_t>(std::max<int64_t>(debug::GetConfig().persistent_cache_max_mb, 1)) << 20;
  if (int64_t evicted = CapDirectorySize(directory, ".txla", cap))
    metrics::GetCounter("PersistentCacheEvicted")->Add(evicted);
}

}  // namespace

std::optional<std::string> PersistentCacheLookup(const std::string& key) {
  {
    CacheState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.missed.count(key)) return std::nullopt;
  }
  std::optional<std::string> payload = ReadEntry(key + ".txla");
  std::string local = WorkDirectory() + "/cached_" + key + ".so";
  if (!payload || !WriteFileAtomically(local, *payload)) {
    Count("PersistentCacheMiss");
    CacheState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    s.missed.insert(key);
    return std::nullopt;
  }
  Count("PersistentCacheHit");
  return local;
}

void PersistentCacheStore(const std::string& key, const std::string& library_path) {
  {
    CacheState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    s.missed.erase(key);
  }
  bool ok = false;
  std::string payload = ReadFile(library_path, &ok);
  if (ok) WriteEntry(key + ".txla", payload);
}

std::string PersistentCacheGraphKey(uint64_t graph_hash) {
  // What turns a graph into code besides the graph: the environment and the compiler switches.
  return PersistentCacheKey("graph " + Hex(graph_hash) + " " + debug::GetConfig().CodegenKey());
}

std::optional<std::string> PersistentCacheGetGraph(const std::string& graph_key) {
  return ReadEntry(graph_key + ".graph");
}

void PersistentCachePutGraph(const std::string& graph_key, const std::string& description) {
  WriteEntry(graph_key + ".graph", description);
}

}  // namespace txla::compiler
