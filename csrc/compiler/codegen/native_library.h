// Building generated C++ into a shared object with the system compiler, and loading it.
// The object file lives under a work directory; the handle is closed when the library dies.
#pragma once

#include <memory>
#include <string>

namespace txla::compiler {

class NativeLibrary {
 public:
  ~NativeLibrary();
  NativeLibrary(const NativeLibrary&) = delete;
  NativeLibrary& operator=(const NativeLibrary&) = delete;

  // Loads an existing shared object; throws std::runtime_error with dlerror's text.
  static std::unique_ptr<NativeLibrary> Load(const std::string& path);
  void* Symbol(const char* name) const;
  // The same, or nullptr when the library has no such symbol.
  void* FindSymbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  NativeLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// The compiler command line used for kernels (part of the disk-cache key).
std::string KernelCompilerCommand();
// The libraries a kernel library links, after its inputs on the link's command line.
std::string KernelLinkLibraries();
// Writes through a unique temporary name and a rename: readers see all of it or none of it.
bool WriteFileAtomically(const std::string& path, const std::string& data);
// A per-user scratch directory for generated sources and objects (created on first use).
std::string WorkDirectory();
// Arranges for the work directory's day-old files to be removed when this process exits (the first
// build calls it), at most once an hour among all the processes sharing the directory.
void CleanWorkDirectoryAtExit();

}  // namespace txla::compiler
