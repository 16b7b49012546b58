#include "runtime/element_type.h"

namespace txla::runtime {

size_t ByteWidth(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
      return 1;
    case ElementType::kS16:
    case ElementType::kF16:
    case ElementType::kBF16:
      return 2;
    case ElementType::kS32:
    case ElementType::kF32:
      return 4;
    case ElementType::kS64:
    case ElementType::kF64:
      return 8;
  }
  return 0;
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "pred";
    case ElementType::kS8: return "s8";
    case ElementType::kS16: return "s16";
    case ElementType::kS32: return "s32";
    case ElementType::kS64: return "s64";
    case ElementType::kU8: return "u8";
    case ElementType::kF16: return "f16";
    case ElementType::kBF16: return "bf16";
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
  }
  return "?";
}

}  // namespace txla::runtime
