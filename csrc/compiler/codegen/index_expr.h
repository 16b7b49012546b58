// Symbolic integer index expressions for generated loop kernels, simplified by what is known of
// each variable's range (as tinygrad's symbolic shapes and Halide's simplifier do).
//
// A fused kernel reads its inputs through reshapes, transposes, pads and concatenations; spelled
// naively, every read linearizes the output index and takes it apart again with / and %, so that
// `(i0*512 + i1) / 512 % 64` is computed per element and the loop does not vectorize. Knowing
// 0 <= i1 < 512 it is `i0 % 64`, and a reshape that undoes another collapses to the original
// index. An expression is an affine sum of atoms (loop variables, runtime values of a known range,
// and floor divisions, remainders and clamps of sums); arithmetic keeps it in that normal form, so
// equal expressions print equally (the emitter memoizes values by the printed index).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace txla::compiler {

class IndexExpr {
 public:
  IndexExpr(int64_t constant = 0) : constant_(constant) {}  // NOLINT: constants convert implicitly
  // A loop variable: 0 <= name < extent.
  static IndexExpr Var(const std::string& name, int64_t extent) { return Var(name, 0, extent); }
  // A loop variable over part of its range: begin <= name < end.
  static IndexExpr Var(const std::string& name, int64_t begin, int64_t end);
  // A value computed at run time (a checked index read from data), known to lie in [lo, hi].
  static IndexExpr Opaque(const std::string& code, int64_t lo, int64_t hi);

  IndexExpr operator+(const IndexExpr& other) const;
  IndexExpr operator-(const IndexExpr& other) const;
  IndexExpr operator*(int64_t factor) const;
  // C's / and % (truncating); simplified where the dividend is known to be non-negative.
  IndexExpr Div(int64_t divisor) const;
  IndexExpr Mod(int64_t divisor) const;
  // The value limited to [lo, hi].
  IndexExpr Clamp(int64_t lo, int64_t hi) const;

  // Bounds on the value over every assignment of the variables in their ranges.
  int64_t lo() const;
  int64_t hi() const;
  bool IsConstant() const { return terms_.empty(); }
  // Whether the expression is exactly one variable (and its name).
  bool IsVar(std::string* name) const;
  int64_t constant() const { return constant_; }
  // Whether the value provably lies in [lo, hi] / provably outside it.
  bool WithinRange(int64_t lo, int64_t hi) const { return this->lo() >= lo && this->hi() <= hi; }
  bool OutsideRange(int64_t lo, int64_t hi) const { return this->hi() < lo || this->lo() > hi; }

  // C++ source for the value (canonical: equal expressions print equally).
  std::string str() const;
  // The value for an assignment of the variables (and opaque values, by their code); for tests.
  int64_t Evaluate(const std::map<std::string, int64_t>& values) const;

  struct Atom;

 private:
  using Term = std::pair<int64_t, std::shared_ptr<const Atom>>;  // coefficient, atom
  static IndexExpr FromAtom(std::shared_ptr<const Atom> atom);
  void AddTerm(int64_t coefficient, const std::shared_ptr<const Atom>& atom);
  void Normalize();
  bool SingleAtom(const Atom** atom) const;

  int64_t constant_ = 0;
  std::vector<Term> terms_;  // sorted by the atom's text, no zero coefficients
};

}  // namespace txla::compiler
