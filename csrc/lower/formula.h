// Elementwise formulas in one element type, for lowering rules: b(kExp, x), b.add(x, y), b.k(0.5),
// b.cmp(kLt, x, y), b.sel(p, x, y), b.any(p, q). Operands are broadcast and converted to the type.
#pragma once

#include "lower/lowering_table.h"

namespace txla::lower {

struct Builder {
  LoweringContext& c;
  ElementType t;
  Instruction* operator()(Opcode op, Instruction* x) { return c.Elementwise(op, {x}, t); }
  Instruction* operator()(Opcode op, Instruction* x, Instruction* y) { return c.Elementwise(op, {x, y}, t); }
  Instruction* k(double v) { return c.Constant(v, t); }
  Instruction* cmp(Comparison d, Instruction* x, Instruction* y) {
    return c.Elementwise(Opcode::kCompare, {x, y}, t, d);
  }
  Instruction* sel(Instruction* p, Instruction* x, Instruction* y) {
    return c.Elementwise(Opcode::kSelect, {p, x, y}, t);
  }
  Instruction* add(Instruction* x, Instruction* y) { return (*this)(Opcode::kAdd, x, y); }
  Instruction* sub(Instruction* x, Instruction* y) { return (*this)(Opcode::kSubtract, x, y); }
  Instruction* mul(Instruction* x, Instruction* y) { return (*this)(Opcode::kMultiply, x, y); }
  Instruction* div(Instruction* x, Instruction* y) { return (*this)(Opcode::kDivide, x, y); }
  // Logical and / or of predicates.
  Instruction* all(Instruction* p, Instruction* q) { return c.Elementwise(Opcode::kAnd, {p, q}, ElementType::kPred); }
  Instruction* any(Instruction* p, Instruction* q) { return c.Elementwise(Opcode::kOr, {p, q}, ElementType::kPred); }
};

// A builder in the node's (first) output type.
inline Builder For(LoweringContext& c, const ir::Node& n) { return {c, OutType(n)}; }

}  // namespace txla::lower
