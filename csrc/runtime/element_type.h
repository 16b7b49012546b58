// Element types of device buffers, named as XLA prints them (f32, s64, pred).
// The runtime and compiler use these; the torch-aware layers map c10::ScalarType onto them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace txla::runtime {

enum class ElementType : uint8_t { kPred, kS8, kS16, kS32, kS64, kU8, kF16, kBF16, kF32, kF64 };

size_t ByteWidth(ElementType type);
const char* ElementTypeName(ElementType type);  // "f32", "s64", "pred", ...

}  // namespace txla::runtime
