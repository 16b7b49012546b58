#include "compiler/codegen/native_library.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

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
  std::string cxx = debug::EnvString("TXLA_CXX", "c++");
  return cxx + " -std=c++17 -O2 -march=native -fno-math-errno -fPIC -shared -w";
}

void BuildSharedObject(const std::string& source_path, const std::string& object_path) {
  std::string tmp = object_path + ".tmp." + std::to_string(getpid());
  std::string log = tmp + ".log";
  std::string cmd = KernelCompilerCommand() + " -o '" + tmp + "' '" + source_path + "' > '" + log + "' 2>&1";
  int status = std::system(cmd.c_str());
  if (status != 0) {
    std::string output;
    if (FILE* f = std::fopen(log.c_str(), "r")) {
      std::array<char, 4096> buf;
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0 && output.size() < 16384)
        output.append(buf.data(), n);
      std::fclose(f);
    }
    std::remove(log.c_str());
    std::remove(tmp.c_str());
    throw std::runtime_error("building " + source_path + " failed:\n" + output);
  }
  std::remove(log.c_str());
  if (std::rename(tmp.c_str(), object_path.c_str()) != 0)
    throw std::runtime_error("could not move the built kernel to " + object_path);
}

std::string WorkDirectory() {
  static const std::string dir = [] {
    std::string base = debug::EnvString("TMPDIR", "/tmp");
    std::string d = base + "/torch_xla_cpp_" + std::to_string(getuid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

}  // namespace txla::compiler
