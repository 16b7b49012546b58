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

void* NativeLibrary::FindSymbol(const char* name) const { return dlsym(handle_, name); }

std::string KernelCompilerCommand() {
  // -O1 with the loop and SLP vectorizers, -march=native: measured on an EPYC Milan (AVX2) over
  // ResNet-18's and GPT's kernels, -O2 took ~25% more of the compiler's time (1.54-1.69 s of CPU
  // against 1.21-1.27 for ResNet's first graph) and its kernels ran no faster: -ftree-vectorize
  // uses the dynamic cost model, which vectorizes loops with remainders that -O2's very-cheap
  // model leaves scalar (the fused kernels ran 0-20% faster; -O2 with the dynamic model ran as
  // fast as this and compiled slowest). Scalar helpers are `static inline`, which -O1 inlines;
  // -fstrict-aliasing (an -O2 default) is kept.
  // No -ffast-math, so NaN and infinity behave as in eager PyTorch. -fno-math-errno lets sqrt
  // and friends vectorize. -fno-trapping-math: the kernels never read the floating-point
  // exception flags, and without it GCC sinks exp's polynomial into the arm of its overflow/NaN
  // selects that uses it, where AVX2's if-conversion may not speculate it: exp, logistic and erf
  // loops stayed scalar on AVX2 (GPT's GELU backward 7x slower on an EPYC Milan); AVX-512's
  // masked selects did not mind.
  // -fno-tree-pre: partial redundancy elimination splits `acc + (mask ? 0 : x)` (ReLU's backward
  // summed into a gradient) into control flow that if-conversion cannot undo, so the loop stayed
  // scalar (kept should the level rise: -O1 does not run it).
  // -pipe: the assembly goes to the assembler through a pipe, not a temporary file (a unit's
  // fixed cost fell from ~20 to ~15 ms on the Zen 4 VM).
  std::string cxx = debug::GetConfig().cxx;
  return cxx + " -std=c++17 -O1 -ftree-vectorize -fstrict-aliasing -fno-tree-pre -march=native -mprefer-vector-width=512 -fno-math-errno -fno-trapping-math -fPIC -shared -pipe -w";
}

std::string KernelLinkLibraries() {
  // Kernels use no C++ library (no includes, no exceptions): the default libstdc++ made the
  // linker read its symbol table for every graph (a link took ~23 ms instead of ~11). libgcc
  // for the compiler's helper routines, libm for what builtins call; the C library is always
  // in the host process.
  return " -nodefaultlibs -lgcc -lm";
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

void CleanWorkDirectoryAtExit() {
  // Sources, dumps and libraries of earlier runs: kept a day for debugging, then removed. Only
  // day-old files go, so it never races a build. A day of a test suite's graphs is ~100,000 files
  // in this directory, which every process of the user shares: walking them took 0.4 s of a core.
  // On a thread beside the steps (as this was) that slowed the first ~300 ms of every process on 2
  // cores (MLP steps 1.7-2.5 ms instead of 1.45), even at idle priority; so it runs when the
  // process is done, and only once an hour among all of them.
  struct AtExit {
    std::string dir = WorkDirectory();
    ~AtExit() {
      if (TouchIfOlderThan(dir + "/.last_cleaned", 3600))
        RemoveFilesOlderThan(dir, {"graph_", "cached_", "probe_"}, 24 * 3600);
    }
  };
  static AtExit clean;
}

}  // namespace txla::compiler
