#include "compiler/passes/constant_folding.h"

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "runtime/scalar_ops.h"

namespace txla::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;

constexpr int64_t kMaxFoldedElements = 4096;  // larger results stay computed, not stored

// A value converted to `type` as the generated code's C cast would.
double CastTo(double v, ElementType type) {
  switch (type) {
    case ElementType::kF32: return static_cast<double>(static_cast<float>(v));
    case ElementType::kBF16: return txla_round_bf16(static_cast<float>(v));
    case ElementType::kF16: return txla_round_f16(static_cast<float>(v));
    case ElementType::kF64: return v;
    case ElementType::kPred: return v != 0 ? 1 : 0;
    case ElementType::kS8: return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case ElementType::kS16: return static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(v)));
    case ElementType::kS32: return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    case ElementType::kU8: return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    default: return static_cast<double>(static_cast<int64_t>(v));
  }
}

int64_t CastTo(int64_t v, ElementType type) {
  switch (type) {
    case ElementType::kPred: return v != 0;
    case ElementType::kS8: return static_cast<int8_t>(v);
    case ElementType::kS16: return static_cast<int16_t>(v);
    case ElementType::kS32: return static_cast<int32_t>(v);
    case ElementType::kU8: return static_cast<uint8_t>(v);
    default: return v;
  }
}

// `function` applied to `x` when it is defined for T (the scalar functions are overloaded per
// element type: txla_exp has no integer form), else nullopt.
template <typename T, typename F>
std::optional<T> Call(F function, const T* x, int arity) {
  if (arity == 1) {
    if constexpr (std::is_invocable_v<F, T>) return static_cast<T>(function(x[0]));
  } else {
    if constexpr (std::is_invocable_v<F, T, T>) return static_cast<T>(function(x[0], x[1]));
  }
  return std::nullopt;
}

template <typename T>
constexpr bool kIntegral = std::is_integral_v<T>;

// One element of an elementwise instruction, computed in the operands' type T with the same
// scalar functions the kernels use (runtime/scalar_ops.h); nullopt when it is not folded.
template <typename T>
std::optional<T> Evaluate(const Instruction& i, const T* x) {
  if constexpr (kIntegral<T>) {
    // Integer division by zero (or of the minimum by -1) is left to fail, or not, at run time.
    if ((i.opcode() == Opcode::kDivide || i.opcode() == Opcode::kRemainder) &&
        (x[1] == 0 || (x[1] == T(-1) && x[0] == std::numeric_limits<T>::min())))
      return std::nullopt;
  }
  switch (i.opcode()) {
    case Opcode::kDivide: return static_cast<T>(x[0] / x[1]);
    case Opcode::kConvert: return x[0];
    case Opcode::kSelect: return x[0] != 0 ? x[1] : x[2];
    case Opcode::kAnd:
      if constexpr (std::is_same_v<T, bool>) return x[0] && x[1];
      return std::nullopt;
    case Opcode::kOr:
      if constexpr (std::is_same_v<T, bool>) return x[0] || x[1];
      return std::nullopt;
    case Opcode::kNot:
      if constexpr (std::is_same_v<T, bool>) return !x[0];
      return std::nullopt;
    case Opcode::kCompare:
      switch (i.attrs().comparison) {
        case hlo::Comparison::kEq: return T(x[0] == x[1]);
        case hlo::Comparison::kNe: return T(x[0] != x[1]);
        case hlo::Comparison::kLt: return T(x[0] < x[1]);
        case hlo::Comparison::kLe: return T(x[0] <= x[1]);
        case hlo::Comparison::kGt: return T(x[0] > x[1]);
        case hlo::Comparison::kGe: return T(x[0] >= x[1]);
      }
      return std::nullopt;
#define TXLA_FOLD_CALL(name, function, arity) \
  case Opcode::k##name:                       \
    return Call([](auto... a) -> decltype(function(a...)) { return function(a...); }, x, arity);
      TXLA_SCALAR_FUNCTIONS(TXLA_FOLD_CALL)
#undef TXLA_FOLD_CALL
    default:
      return std::nullopt;
  }
}

// Row-major index of `out_index` in an operand broadcast / reshaped / transposed into i.
std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    idx[k] = dims[k] ? linear % dims[k] : 0;
    linear = dims[k] ? linear / dims[k] : 0;
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t k = 0; k < dims.size(); ++k) linear = linear * dims[k] + idx[k];
  return linear;
}

// The folded values: doubles for a floating result, exact int64 for integers and pred.
struct Values {
  std::vector<double> doubles;
  std::vector<int64_t> ints;
};

template <typename T>
T Read(const Literal& l, int64_t linear) {
  const int64_t at = l.size() == 1 ? 0 : linear;
  return l.is_floating() ? static_cast<T>(l.GetDouble(at)) : static_cast<T>(l.GetInt(at));
}

// A result computed in the operands' type T, stored as the result type as a C cast would. A
// float that does not fit the integer result is not folded (the machine's conversion decides).
template <typename T>
bool Store(T v, ElementType type, int64_t e, Values& out) {
  if (hlo::IsFloating(type)) {
    out.doubles[e] = CastTo(static_cast<double>(v), type);
    return true;
  }
  if constexpr (!kIntegral<T>) {
    if (!(std::fabs(v) < 9.2e18) || std::trunc(static_cast<double>(v)) !=
                                         static_cast<double>(CastTo(static_cast<int64_t>(v), type)))
      return false;
  }
  out.ints[e] = CastTo(static_cast<int64_t>(v), type);
  return true;
}

template <typename T>
bool FoldElementwise(const Instruction& i, Values& out) {
  const int64_t n = i.shape().element_count();
  T x[3] = {};  // elementwise instructions take at most three operands (select, clamp)
  const size_t arity = i.operands().size();
  if (arity > 3) return false;
  for (int64_t e = 0; e < n; ++e) {
    for (size_t k = 0; k < arity; ++k) x[k] = Read<T>(i.operand(k)->attrs().literal, e);
    std::optional<T> v = Evaluate<T>(i, x);
    if (!v || !Store(*v, i.shape().type, e, out)) return false;
  }
  return true;
}

// Computes elementwise instructions in their operands' type (the last operand's: a select's
// predicate is read as 0 or 1), as the generated code does.
bool FoldElementwise(const Instruction& i, Values& out) {
  switch (i.operands().back()->shape().type) {
    case ElementType::kPred: return FoldElementwise<bool>(i, out);
    case ElementType::kS8: return FoldElementwise<int8_t>(i, out);
    case ElementType::kS16: return FoldElementwise<int16_t>(i, out);
    case ElementType::kS32: return FoldElementwise<int32_t>(i, out);
    case ElementType::kS64: return FoldElementwise<int64_t>(i, out);
    case ElementType::kU8: return FoldElementwise<uint8_t>(i, out);
    case ElementType::kF32: return FoldElementwise<float>(i, out);
    case ElementType::kF64: return FoldElementwise<double>(i, out);
    default: return false;
  }
}

std::optional<Literal> Fold(const Instruction& i) {
  const hlo::Shape& shape = i.shape();
  if (shape.is_tuple || shape.element_count() > kMaxFoldedElements) return std::nullopt;
  for (const Instruction* op : i.operands())
    if (op->opcode() != Opcode::kConstant) return std::nullopt;
  if (i.operands().empty()) return std::nullopt;
  // A broadcast only makes a constant bigger: it stays (fused, it costs nothing).
  if (i.opcode() == Opcode::kBroadcast) return std::nullopt;
  const int64_t n = shape.element_count();
  const bool floating = hlo::IsFloating(shape.type);
  Values values;
  (floating ? values.doubles.resize(n) : values.ints.resize(n));
  switch (i.opcode()) {
    case Opcode::kReshape:
    case Opcode::kTranspose: {
      const Literal& in = i.operand(0)->attrs().literal;
      for (int64_t e = 0; e < n; ++e) {
        int64_t src = e;
        if (i.opcode() == Opcode::kTranspose) {
          std::vector<int64_t> out_idx = Unravel(e, shape.dims);
          std::vector<int64_t> in_idx(out_idx.size());
          for (size_t k = 0; k < out_idx.size(); ++k) in_idx[i.attrs().dimensions[k]] = out_idx[k];
          src = Ravel(in_idx, i.operand(0)->shape().dims);
        }
        if (floating) values.doubles[e] = Read<double>(in, src);
        else values.ints[e] = Read<int64_t>(in, src);
      }
      break;
    }
    default:
      if (!hlo::IsElementwise(i.opcode()) || !FoldElementwise(i, values)) return std::nullopt;
  }
  if (floating) return Literal::FromDoubles(shape, std::move(values.doubles));
  return Literal::FromInts(shape, std::move(values.ints));
}

}  // namespace

bool ConstantFolding::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    for (Instruction* i : c->instructions()) {
      if (i->opcode() == Opcode::kConstant || (i->users().empty() && i != c->root())) continue;
      std::optional<Literal> folded = Fold(*i);
      if (!folded) continue;
      Instruction* constant = c->AddConstant(std::move(*folded));
      i->ReplaceAllUsesWith(constant);
      if (c->root() == i) c->set_root(constant);
      changed = true;
    }
    if (changed) c->SortTopologically();
  }
  return changed;
}

}  // namespace txla::compiler
