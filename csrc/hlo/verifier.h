// Checks a module's invariants: every instruction has the shape its operands imply, operands
// live in the same computation and come first, parameters are numbered 0..n-1 once each, every
// computation has a root, and called computations take as many parameters as they are given.
// Passes run it after themselves in tests; the compiler runs it before emitting code.
#pragma once

#include "hlo/instruction.h"

namespace txla::hlo {

// Throws std::invalid_argument describing the first broken invariant.
void Verify(const Module& module);

}  // namespace txla::hlo
