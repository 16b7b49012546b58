#include "compiler/native_executable.h"

#include <memory>

#include "compiler/support.h"
#include "metrics/metrics.h"

namespace txla::compiler {

NativeExecutable::NativeExecutable(std::unique_ptr<NativeLibrary> library,
                                   std::vector<hlo::Shape> outputs, int64_t arena_bytes)
    : library_(std::move(library)),
      run_(reinterpret_cast<RunFn>(library_->Symbol("txla_run"))),
      outputs_(std::move(outputs)),
      arena_bytes_(arena_bytes) {}

std::vector<runtime::BufferPtr> NativeExecutable::Execute(
    const std::vector<runtime::BufferPtr>& parameters, int device) {
  std::vector<const void*> params;
  params.reserve(parameters.size());
  for (const auto& p : parameters) params.push_back(p->data());
  std::vector<runtime::BufferPtr> results;
  std::vector<void*> outs;
  for (const hlo::Shape& s : outputs_) {
    results.push_back(std::make_shared<runtime::Buffer>(s.type, s.dims, device));
    outs.push_back(results.back()->data());
  }
  size_t arena_bytes = static_cast<size_t>(std::max<int64_t>(arena_bytes_, 64));
  char* arena = static_cast<char*>(runtime::AllocateBlock(arena_bytes));
  {
    TXLA_TIMED("NativeRunTime");
    run_(GetSupportTable(), params.data(), outs.data(), arena);
  }
  runtime::FreeBlock(arena, arena_bytes);
  return results;
}

}  // namespace txla::compiler
