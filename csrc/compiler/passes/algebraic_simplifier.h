// Algebraic simplification: local rewrites that remove work without changing values.
//
//   add(x, 0) -> x            add(0, x) -> x           subtract(x, 0) -> x
//   multiply(x, 1) -> x       multiply(1, x) -> x      divide(x, 1) -> x
//   convert(x: T) to T -> x   reshape(x) to x's shape -> x
//   reshape(reshape(x)) -> reshape(x)
//   transpose(x, identity) -> x
//   transpose(transpose(x, p), q) -> transpose(x, p o q)
//   transpose(dot(a, b)) -> dot(b, a)         (2-D: (ab)^T = b^T a^T, contracting dims swapped)
//   custom-call "Sharding"(x) -> x            (outside SPMD the partitioner, which consumes it,
//                                              never runs)
//
// "0" and "1" are scalar constants or broadcasts of them. Floating-point identities that are not
// exact (x * 0 -> 0 is wrong for NaN and infinity) are not applied.
#pragma once

#include "compiler/passes/pass.h"

namespace txla::compiler {

class AlgebraicSimplifier final : public Pass {
 public:
  std::string name() const override { return "algebraic-simplifier"; }
  bool Run(hlo::Module& module) override;
};

}  // namespace txla::compiler
