// An executable made of generated native code: the loaded library, its entry point, the result
// shapes and the scratch arena size.
#pragma once

#include <memory>
#include <vector>

#include "compiler/codegen/native_library.h"
#include "hlo/shape.h"
#include "runtime/executable.h"

namespace txla::compiler {

class NativeExecutable final : public runtime::Executable {
 public:
  NativeExecutable(std::unique_ptr<NativeLibrary> library, std::vector<hlo::Shape> outputs,
                   int64_t arena_bytes);
  std::vector<runtime::BufferPtr> Execute(const std::vector<runtime::BufferPtr>& parameters,
                                          int device) override;
  std::string kind() const override { return "native"; }

 private:
  using RunFn = void (*)(const void* support, const void* const* params, void* const* outputs,
                         char* arena);
  std::unique_ptr<NativeLibrary> library_;
  RunFn run_;
  std::vector<hlo::Shape> outputs_;
  int64_t arena_bytes_;
};

}  // namespace txla::compiler
