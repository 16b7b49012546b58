#include "compiler/codegen/index_expr.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace txla::compiler {

struct IndexExpr::Atom {
  enum class Kind { kVar, kOpaque, kDiv, kMod, kClamp };
  Kind kind;
  std::string code;  // the variable's name or the opaque value's source
  IndexExpr arg;     // what is divided, reduced or clamped
  int64_t a = 0, b = 0;  // divisor or modulus; clamp bounds [a, b]
  int64_t lo = 0, hi = 0;
  std::string text;  // canonical source; atoms are ordered and compared by it
};

namespace {

using Atom = IndexExpr::Atom;
using Kind = Atom::Kind;

int64_t FloorDiv(int64_t x, int64_t d) { return x / d - ((x % d != 0) && ((x < 0) != (d < 0))); }

}  // namespace

IndexExpr IndexExpr::FromAtom(std::shared_ptr<const Atom> atom) {
  IndexExpr e;
  e.terms_.emplace_back(1, std::move(atom));
  return e;
}

IndexExpr IndexExpr::Var(const std::string& name, int64_t begin, int64_t end) {
  auto atom = std::make_shared<Atom>();
  atom->kind = Kind::kVar;
  atom->code = atom->text = name;
  atom->lo = begin;
  atom->hi = std::max<int64_t>(end - 1, begin);
  return FromAtom(std::move(atom));
}

bool IndexExpr::IsVar(std::string* name) const {
  const Atom* atom = nullptr;
  if (!SingleAtom(&atom) || atom->kind != Kind::kVar) return false;
  *name = atom->code;
  return true;
}

IndexExpr IndexExpr::Opaque(const std::string& code, int64_t lo, int64_t hi) {
  auto atom = std::make_shared<Atom>();
  atom->kind = Kind::kOpaque;
  atom->code = code;
  atom->text = "(" + code + ")";
  atom->lo = lo;
  atom->hi = hi;
  return FromAtom(std::move(atom));
}

int64_t IndexExpr::lo() const {
  int64_t v = constant_;
  for (const Term& t : terms_) v += t.first > 0 ? t.first * t.second->lo : t.first * t.second->hi;
  return v;
}

int64_t IndexExpr::hi() const {
  int64_t v = constant_;
  for (const Term& t : terms_) v += t.first > 0 ? t.first * t.second->hi : t.first * t.second->lo;
  return v;
}

bool IndexExpr::SingleAtom(const Atom** atom) const {
  if (constant_ != 0 || terms_.size() != 1 || terms_[0].first != 1) return false;
  *atom = terms_[0].second.get();
  return true;
}

void IndexExpr::AddTerm(int64_t coefficient, const std::shared_ptr<const Atom>& atom) {
  if (coefficient != 0) terms_.emplace_back(coefficient, atom);
}

void IndexExpr::Normalize() {
  std::stable_sort(terms_.begin(), terms_.end(),
                   [](const Term& x, const Term& y) { return x.second->text < y.second->text; });
  std::vector<Term> merged;
  for (const Term& t : terms_) {
    if (!merged.empty() && merged.back().second->text == t.second->text) merged.back().first += t.first;
    else merged.push_back(t);
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(), [](const Term& t) { return t.first == 0; }),
               merged.end());
  terms_ = std::move(merged);
  // k*a*(y / a) + k*(y % a) == k*y for y >= 0: a reshape that undoes another leaves the index
  // it started from. With y itself a quotient x / b, its own quotient y / a is x / (a*b) (Div
  // folds nested divisions): k*a*(x / (a*b)) + k*((x / b) % a) == k*(x / b), which combines
  // with k*b*... in turn (dimensions merged into one loop of three or more: codegen).
  for (size_t m = 0; m < terms_.size(); ++m) {
    const Atom& mod = *terms_[m].second;
    if (mod.kind != Kind::kMod || mod.arg.lo() < 0) continue;
    int64_t k = terms_[m].first;
    const Atom* quotient = nullptr;
    bool nested = mod.arg.SingleAtom(&quotient) && quotient->kind == Kind::kDiv && quotient->arg.lo() >= 0;
    const IndexExpr& x = nested ? quotient->arg : mod.arg;
    int64_t divisor = nested ? mod.a * quotient->a : mod.a;
    for (size_t d = 0; d < terms_.size(); ++d) {
      const Atom& div = *terms_[d].second;
      if (div.kind != Kind::kDiv || div.a != divisor || terms_[d].first != k * mod.a || div.arg.str() != x.str())
        continue;
      IndexExpr y = mod.arg;
      IndexExpr rest;
      rest.constant_ = constant_;
      for (size_t t = 0; t < terms_.size(); ++t)
        if (t != m && t != d) rest.terms_.push_back(terms_[t]);
      *this = rest + y * k;  // normalizes again
      return;
    }
  }
}

IndexExpr IndexExpr::operator+(const IndexExpr& other) const {
  IndexExpr e = *this;
  e.constant_ += other.constant_;
  e.terms_.insert(e.terms_.end(), other.terms_.begin(), other.terms_.end());
  e.Normalize();
  return e;
}

IndexExpr IndexExpr::operator-(const IndexExpr& other) const { return *this + other * -1; }

IndexExpr IndexExpr::operator*(int64_t factor) const {
  if (factor == 0) return 0;
  IndexExpr e = *this;
  e.constant_ *= factor;
  for (Term& t : e.terms_) t.first *= factor;
  return e;
}

namespace {

// Divisors g of d (largest first, excluding 1) by which a sum may split as g*Q + R.
std::vector<int64_t> SplitCandidates(const std::vector<int64_t>& coefficients, int64_t d) {
  std::vector<int64_t> gs = {d};
  for (int64_t c : coefficients) gs.push_back(std::gcd(c < 0 ? -c : c, d));
  std::sort(gs.rbegin(), gs.rend());
  gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
  gs.erase(std::remove(gs.begin(), gs.end(), int64_t{1}), gs.end());
  return gs;
}

}  // namespace

IndexExpr IndexExpr::Div(int64_t d) const {
  if (d <= 0) throw std::invalid_argument("IndexExpr: division by " + std::to_string(d));
  if (d == 1) return *this;
  if (IsConstant()) return constant_ / d;
  if (lo() >= 0) {
    // One quotient over the whole range: a concatenation's later operand, read at i - 128
    // with 128 <= i < 256, divides i by 128 into exactly 1.
    if (lo() / d == hi() / d) return lo() / d;
    const Atom* atom = nullptr;
    if (SingleAtom(&atom) && atom->kind == Kind::kDiv && atom->arg.lo() >= 0) return atom->arg.Div(atom->a * d);
    // x == g*Q + R with 0 <= R and g | d: x / d == Q + R / d when g == d, else Q / (d / g)
    // when R < g.
    std::vector<int64_t> coefficients;
    for (const Term& t : terms_) coefficients.push_back(t.first);
    for (int64_t g : SplitCandidates(coefficients, d)) {
      IndexExpr q(FloorDiv(constant_, g)), r(constant_ - g * FloorDiv(constant_, g));
      for (const Term& t : terms_) {
        if (t.first % g == 0) q.AddTerm(t.first / g, t.second);
        else r.AddTerm(t.first, t.second);
      }
      if (r.lo() < 0) continue;
      q.Normalize();
      if (g == d) {  // (d*Q + R) / d == Q + R / d for R >= 0
        if (q.IsConstant() && q.constant() == 0) continue;  // nothing to take out
        return q + r.Div(d);
      }
      if (r.hi() >= g) continue;
      return q.Div(d / g);
    }
  }
  auto atom = std::make_shared<Atom>();
  atom->kind = Kind::kDiv;
  atom->arg = *this;
  atom->a = d;
  atom->lo = lo() / d;  // truncation is monotonic in the dividend
  atom->hi = hi() / d;
  atom->text = "(" + str() + " / " + std::to_string(d) + ")";
  return FromAtom(std::move(atom));
}

IndexExpr IndexExpr::Mod(int64_t d) const {
  if (d <= 0) throw std::invalid_argument("IndexExpr: remainder by " + std::to_string(d));
  if (d == 1) return 0;
  if (IsConstant()) return constant_ % d;
  IndexExpr x = *this;
  if (lo() >= 0) {
    if (lo() / d == hi() / d) return *this - d * (lo() / d);  // one quotient: an offset
    // Multiples of d do not change a non-negative remainder (when what is left stays >= 0).
    IndexExpr r(constant_ - d * FloorDiv(constant_, d));
    for (const Term& t : terms_)
      if (t.first % d != 0) r.AddTerm(t.first, t.second);
    r.Normalize();
    if (r.lo() >= 0) {
      if (r.lo() / d == r.hi() / d) return r - d * (r.lo() / d);
      x = r;
      // x == g*Q + R with 0 <= R < g and g | d: x % d == g*(Q % (d / g)) + R.
      std::vector<int64_t> coefficients;
      for (const Term& t : x.terms_) coefficients.push_back(t.first);
      for (int64_t g : SplitCandidates(coefficients, d)) {
        if (g == d) continue;
        IndexExpr q(FloorDiv(x.constant_, g)), rest(x.constant_ - g * FloorDiv(x.constant_, g));
        for (const Term& t : x.terms_) {
          if (t.first % g == 0) q.AddTerm(t.first / g, t.second);
          else rest.AddTerm(t.first, t.second);
        }
        if (rest.lo() < 0 || rest.hi() >= g) continue;
        q.Normalize();
        rest.Normalize();
        return q.Mod(d / g) * g + rest;
      }
    }
  }
  auto atom = std::make_shared<Atom>();
  atom->kind = Kind::kMod;
  atom->arg = x;
  atom->a = d;
  if (x.lo() >= 0) {
    atom->lo = 0;
    atom->hi = std::min(d - 1, x.hi());
  } else if (x.hi() <= 0) {
    atom->lo = std::max(-(d - 1), x.lo());
    atom->hi = 0;
  } else {
    atom->lo = -(d - 1);
    atom->hi = d - 1;
  }
  atom->text = "(" + x.str() + " % " + std::to_string(d) + ")";
  return FromAtom(std::move(atom));
}

IndexExpr IndexExpr::Clamp(int64_t lo, int64_t hi) const {
  if (WithinRange(lo, hi)) return *this;
  if (this->hi() <= lo) return lo;
  if (this->lo() >= hi) return hi;
  auto atom = std::make_shared<Atom>();
  atom->kind = Kind::kClamp;
  atom->arg = *this;
  atom->a = lo;
  atom->b = hi;
  atom->lo = std::max(lo, this->lo());
  atom->hi = std::min(hi, this->hi());
  // A function call, not a conditional: the operand is printed once however deep clamps nest.
  atom->text = "txla_iclamp(" + str() + ", " + std::to_string(lo) + ", " + std::to_string(hi) + ")";
  return FromAtom(std::move(atom));
}

std::string IndexExpr::str() const {
  if (terms_.empty()) return std::to_string(constant_);
  std::string s;
  for (const Term& t : terms_) {
    int64_t c = t.first;
    if (s.empty()) s = c < 0 ? "-" : "";
    else s += c < 0 ? " - " : " + ";
    s += t.second->text;
    if (c != 1 && c != -1) s += "*" + std::to_string(c < 0 ? -c : c);
  }
  if (constant_ != 0) s += (constant_ < 0 ? " - " : " + ") + std::to_string(constant_ < 0 ? -constant_ : constant_);
  return terms_.size() == 1 && constant_ == 0 && terms_[0].first == 1 ? s : "(" + s + ")";
}

int64_t IndexExpr::Evaluate(const std::map<std::string, int64_t>& values) const {
  int64_t v = constant_;
  for (const Term& t : terms_) {
    const Atom& a = *t.second;
    int64_t x = 0;
    switch (a.kind) {
      case Kind::kVar:
      case Kind::kOpaque: x = values.at(a.code); break;
      case Kind::kDiv: x = a.arg.Evaluate(values) / a.a; break;
      case Kind::kMod: x = a.arg.Evaluate(values) % a.a; break;
      case Kind::kClamp: x = std::min(std::max(a.arg.Evaluate(values), a.a), a.b); break;
    }
    v += t.first * x;
  }
  return v;
}

}  // namespace txla::compiler
