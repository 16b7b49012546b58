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
  const std::string& path() const { return path_; }

 private:
  NativeLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// The compiler command line used for kernels (part of the disk-cache key).
std::string KernelCompilerCommand();
// Compiles `source_path` into `object_path`; throws std::runtime_error with the compiler's output
// on failure. Writes to a temporary name and renames, so concurrent builds never see a partial
// object.
// Builds `source` (named `source_path` in error messages) into the shared object `object_path`,
// as `units` translation units built in parallel (0: one per core when the source is large).
void BuildSharedObject(const std::string& source, const std::string& source_path,
                       const std::string& object_path, int units = 0);
// Writes through a unique temporary name and a rename: readers see all of it or none of it.
bool WriteFileAtomically(const std::string& path, const std::string& data);
// A per-user scratch directory for generated sources and objects (created on first use).
std::string WorkDirectory();

}  // namespace txla::compiler
