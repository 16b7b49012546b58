#include "ir/shape.h"

#include <c10/util/Exception.h>

#include "debug/config.h"

#include <sstream>

namespace txla::ir {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

hash_t Shape::Hash() const {
  hash_t h = Mix(0x5348415045ULL, static_cast<uint64_t>(dtype));
  h = Mix(h, sizes.size());
  for (int64_t s : sizes) h = Mix(h, static_cast<uint64_t>(s));
  return h;
}

std::string Shape::ToString() const {
  // A multi-output op's unrequested output (output_mask false) is an undefined tensor.
  if (dtype == c10::ScalarType::Undefined) return "undefined";
  std::ostringstream ss;
  ss << runtime::ElementTypeName(ToElementType(dtype)) << "[";
  for (size_t i = 0; i < sizes.size(); ++i) ss << (i ? "," : "") << sizes[i];
  ss << "]";
  return ss.str();
}

bool IsSupportedDtype(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Bool:
    case c10::ScalarType::Char:
    case c10::ScalarType::Short:
    case c10::ScalarType::Int:
    case c10::ScalarType::Long:
    case c10::ScalarType::Byte:
    case c10::ScalarType::Half:
    case c10::ScalarType::BFloat16:
    case c10::ScalarType::Float:
    case c10::ScalarType::Double:
      return true;
    default:
      return false;
  }
}

runtime::ElementType ToElementType(c10::ScalarType dtype) {
  using runtime::ElementType;
  const debug::Config& config = debug::GetConfig();
  if (dtype == c10::ScalarType::Float && (config.use_bf16 || config.downcast_bf16)) return ElementType::kBF16;
  if (dtype == c10::ScalarType::Double && config.use_bf16) return ElementType::kBF16;
  if (dtype == c10::ScalarType::Double && config.downcast_bf16) return ElementType::kF32;
  if (dtype == c10::ScalarType::Long && config.use_32bit_long) return ElementType::kS32;
  switch (dtype) {
    case c10::ScalarType::Bool: return ElementType::kPred;
    case c10::ScalarType::Char: return ElementType::kS8;
    case c10::ScalarType::Short: return ElementType::kS16;
    case c10::ScalarType::Int: return ElementType::kS32;
    case c10::ScalarType::Long: return ElementType::kS64;
    case c10::ScalarType::Byte: return ElementType::kU8;
    case c10::ScalarType::Half: return ElementType::kF16;
    case c10::ScalarType::BFloat16: return ElementType::kBF16;
    case c10::ScalarType::Float: return ElementType::kF32;
    case c10::ScalarType::Double: return ElementType::kF64;
    default:
      TORCH_CHECK_TYPE(false, "unsupported dtype on the xla device: ", c10::toString(dtype),
                       " (supported: bool, uint8, int8, int16, int32, int64, float16, bfloat16, "
                       "float32, float64)");
  }
}

c10::ScalarType StorageScalarType(c10::ScalarType dtype) { return ToScalarType(ToElementType(dtype)); }

c10::ScalarType ToScalarType(runtime::ElementType type) {
  using runtime::ElementType;
  switch (type) {
    case ElementType::kPred: return c10::ScalarType::Bool;
    case ElementType::kS8: return c10::ScalarType::Char;
    case ElementType::kS16: return c10::ScalarType::Short;
    case ElementType::kS32: return c10::ScalarType::Int;
    case ElementType::kS64: return c10::ScalarType::Long;
    case ElementType::kU8: return c10::ScalarType::Byte;
    case ElementType::kF16: return c10::ScalarType::Half;
    case ElementType::kBF16: return c10::ScalarType::BFloat16;
    case ElementType::kF32: return c10::ScalarType::Float;
    case ElementType::kF64: return c10::ScalarType::Double;
  }
  return c10::ScalarType::Undefined;
}

}  // namespace txla::ir
