#include "aten/foreach_args.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>

namespace txla::aten {
namespace {

bool IsList(ArgClass c) { return c == ArgClass::kTensorList || c == ArgClass::kScalarList; }

// Whether the element's schema takes the foreach op's arguments (list entries for lists) and
// defaults for the rest: a row naming the wrong element fails at its first call, loudly.
void CheckElementSchema(const ir::OpInfo& foreach) {
  static std::vector<std::atomic<bool>> checked(ir::OpTable().size());
  if (checked.at(foreach.index).load(std::memory_order_acquire)) return;
  const auto& outer = foreach.schema().arguments();
  const auto& inner = foreach.element->schema().arguments();
  bool fits = inner.size() >= outer.size();
  for (size_t j = 0; fits && j < outer.size(); ++j) {
    c10::TypePtr type = outer[j].type();
    if (auto list = type->cast<c10::ListType>()) type = list->getElementType();
    fits = *type == *inner[j].type() || (type->kind() == c10::TypeKind::TensorType &&
                                         inner[j].type()->kind() == c10::TypeKind::TensorType);
  }
  for (size_t j = outer.size(); fits && j < inner.size(); ++j) fits = inner[j].default_value().has_value();
  TORCH_INTERNAL_ASSERT(fits, foreach.name, " does not apply ", foreach.element->name, " position by position");
  checked.at(foreach.index).store(true, std::memory_order_release);
}

}  // namespace

size_t ForeachLength(const ir::OpInfo& foreach, c10::ArrayRef<c10::IValue> args,
                     const std::vector<ArgClass>& classes) {
  CheckElementSchema(foreach);
  size_t n = 0;
  bool first = true;
  for (size_t j = 0; j < args.size(); ++j) {
    if (!IsList(classes[j])) continue;
    const size_t size = args[j].toListRef().size();
    if (first) {
      TORCH_CHECK(size > 0, "Tensor list must have at least one tensor.");
      n = size;
      first = false;
    } else if (classes[j] == ArgClass::kScalarList) {
      TORCH_CHECK(size == n, "Tensor list must have same number of elements as scalar list.");
    } else {
      TORCH_CHECK(size == n, "Tensor lists must have the same number of tensors, got ", n, " and ", size);
    }
  }
  return n;
}

void ElementArguments(const ir::OpInfo& foreach, c10::ArrayRef<c10::IValue> args,
                      const std::vector<ArgClass>& classes, size_t position, std::vector<c10::IValue>* out) {
  const auto& inner = foreach.element->schema().arguments();
  out->clear();
  out->reserve(inner.size());
  for (size_t j = 0; j < args.size(); ++j)
    out->push_back(IsList(classes[j]) ? args[j].toListRef()[position] : args[j]);
  for (size_t j = args.size(); j < inner.size(); ++j) out->push_back(*inner[j].default_value());
}

}  // namespace txla::aten
