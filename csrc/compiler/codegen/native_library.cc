#include "compiler/codegen/native_library.h"

#include "compiler/private_directory.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compiler/codegen/cpp_emitter.h"
#include "debug/config.h"
#include "debug/env.h"

namespace txla::compiler {

NativeLibrary::~NativeLibrary() {
  if (handle_) dlclose(handle_);
}

std::unique_ptr<NativeLibrary> NativeLibrary::Load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
  return std::unique_ptr<NativeLibrary>(new NativeLibrary(handle, path));
}

void* NativeLibrary::Symbol(const char* name) const {
  void* sym = dlsym(handle_, name);
  if (!sym) throw std::runtime_error("symbol " + std::string(name) + " missing in " + path_);
  return sym;
}

std::string KernelCompilerCommand() {
  // -O2 with -march=native vectorizes the inner loops for this CPU; no -ffast-math, so NaN and
  // infinity behave as in eager PyTorch. -fno-math-errno lets sqrt and friends vectorize.
  // -fno-trapping-math: the kernels never read the floating-point exception flags, and without
  // it GCC sinks exp's polynomial into the arm of its overflow/NaN selects that uses it, where
  // AVX2's if-conversion may not speculate it: exp, logistic and erf loops stayed scalar on AVX2
  // (GPT's GELU backward 7x slower on an EPYC Milan); AVX-512's masked selects did not mind.
  // -fno-tree-pre: partial redundancy elimination splits `acc + (mask ? 0 : x)` (ReLU's backward
  // summed into a gradient) into control flow that if-conversion cannot undo, so the loop stayed
  // scalar; without it, generated kernels ran ~15% faster on ResNet-18 and GPT (AVX-512 EPYC).
  std::string cxx = debug::GetConfig().cxx;
  return cxx + " -std=c++17 -O2 -fno-tree-pre -march=native -mprefer-vector-width=512 -fno-math-errno -fno-trapping-math -fPIC -shared -w";
}

bool WriteFileAtomically(const std::string& path, const std::string& data) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(data.data(), static_cast<std::streamsize>(data.size())) || !out.flush()) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string WorkDirectory() {
  static const std::string dir = [] {
    std::string base = debug::EnvString("TMPDIR", "/tmp");
    std::string d = base + "/torch_xla_cpp_" + std::to_string(getuid());
    EnsurePrivateDirectory(d);  // we dlopen what is built there
    return d;
  }();
  return dir;
}

void CleanWorkDirectoryOnce() {
  // Sources, dumps and libraries of earlier runs: kept a day for debugging, then removed. Done
  // by the first build of a process, not at its first use: a day of graphs is thousands of files,
  // whose listing (60 ms for 17,000) a process served by the disk cache should not wait for.
  static std::once_flag once;
  std::call_once(once, [] { RemoveFilesOlderThan(WorkDirectory(), {"graph_", "cached_", "probe_"}, 24 * 3600); });
}

}  // namespace txla::compiler
