// Test helpers for passes that place instructions: the entry's order as text, and lookups by name.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace txla::compiler::testing {

// The entry computation's instruction names in order, space-separated ("x y e a b t").
inline std::string Order(const hlo::Module& module) {
  std::string names;
  for (const hlo::Instruction* i : module.entry()->instructions()) names += (names.empty() ? "" : " ") + i->name();
  return names;
}

// The entry instruction named `name` (without the %), or nullptr.
inline hlo::Instruction* Named(const hlo::Module& module, const std::string& name) {
  for (hlo::Instruction* i : module.entry()->instructions())
    if (i->name() == name) return i;
  return nullptr;
}

}  // namespace txla::compiler::testing
