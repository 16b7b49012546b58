#include "aten/memory_bound.h"

#include "aten/cpu_fallback.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <sys/sysinfo.h>

#include <cmath>
#include <string>

namespace txla::aten {
namespace {

// Memory and swap together: more than that, no allocation succeeds.
double MachineBytes() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return INFINITY;
  return (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
}

// Functionalization records eager's views as `<view>_copy` ops: `aten::expand_copy` is a view
// when `aten::expand`'s result aliases its input.
bool IsViewCopy(const c10::FunctionSchema& schema) {
  const std::string& name = schema.name();
  const std::string suffix = "_copy";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  auto view = c10::Dispatcher::singleton().findSchema(
      {name.substr(0, name.size() - suffix.size()), schema.overload_name()});
  return view && IsViewOp(view->schema());
}

}  // namespace

void CheckResultsFitInMemory(const c10::FunctionSchema& schema, const std::vector<ir::Shape>& results) {
  static const double machine = MachineBytes();
  for (const ir::Shape& shape : results) {
    if (shape.dtype == c10::ScalarType::Undefined) continue;
    double bytes = static_cast<double>(c10::elementSize(shape.dtype));
    for (int64_t size : shape.sizes) bytes *= static_cast<double>(size);
    if (bytes <= machine || IsViewCopy(schema)) continue;
    TORCH_CHECK_WITH(OutOfMemoryError, false, "Out of memory allocating ",
                     static_cast<unsigned long long>(bytes), " bytes: the result of ", schema.name(),
                     ", ", shape.ToString(), ", is larger than this machine's memory and swap (",
                     static_cast<unsigned long long>(machine), " bytes)");
  }
}

}  // namespace txla::aten
