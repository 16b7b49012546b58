// Parses HLO text in XLA's syntax (what printer.h writes) into a Module, so tests and debugging
// sessions can write HLO by hand. Operand shapes and layouts in operand lists are optional;
// computations must be defined before they are called. Errors name the line.
#pragma once

#include <memory>
#include <string_view>

#include "hlo/instruction.h"

namespace txla::hlo {

// Throws std::invalid_argument("line N: ...") on malformed input. Does not verify shapes: run
// Verify on the result.
std::unique_ptr<Module> ParseModule(std::string_view text);

}  // namespace txla::hlo
