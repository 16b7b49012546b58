#include "compiler/passes/constant_folding.h"

#include <cmath>
#include <optional>

namespace txla::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;

constexpr int64_t kMaxFoldedElements = 4096;  // larger results stay computed, not stored

// A value converted to `type` as the generated code's C cast would (and float rounding for f32).
double CastTo(double v, ElementType type) {
  switch (type) {
    case ElementType::kF32: return static_cast<double>(static_cast<float>(v));
    case ElementType::kF64: return v;
    case ElementType::kPred: return v != 0 ? 1 : 0;
    case ElementType::kS8: return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case ElementType::kS16: return static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(v)));
    case ElementType::kS32: return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    case ElementType::kU8: return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    default: return static_cast<double>(static_cast<int64_t>(v));
  }
}

// One element of the result, or nullopt when the op is not folded.
std::optional<double> Evaluate(const Instruction& i, const std::vector<double>& x) {
  ElementType t = i.shape().type;
  bool floating = hlo::IsFloating(t);
  switch (i.opcode()) {
    case Opcode::kAdd: return x[0] + x[1];
    case Opcode::kSubtract: return x[0] - x[1];
    case Opcode::kMultiply: return x[0] * x[1];
    case Opcode::kDivide:
      if (!floating) return std::nullopt;  // integer division by zero must not happen here
      return x[0] / x[1];
    case Opcode::kMaximum: return std::isnan(x[0]) || std::isnan(x[1]) ? NAN : std::max(x[0], x[1]);
    case Opcode::kMinimum: return std::isnan(x[0]) || std::isnan(x[1]) ? NAN : std::min(x[0], x[1]);
    case Opcode::kNegate: return -x[0];
    case Opcode::kAbs: return std::fabs(x[0]);
    case Opcode::kSqrt:
      if (!floating) return std::nullopt;
      return std::sqrt(x[0]);
    case Opcode::kConvert: return x[0];
    case Opcode::kSelect: return x[0] != 0 ? x[1] : x[2];
    case Opcode::kAnd:
      if (t != ElementType::kPred) return std::nullopt;
      return double(x[0] != 0 && x[1] != 0);
    case Opcode::kOr:
      if (t != ElementType::kPred) return std::nullopt;
      return double(x[0] != 0 || x[1] != 0);
    case Opcode::kNot:
      if (t != ElementType::kPred) return std::nullopt;
      return double(x[0] == 0);
    case Opcode::kCompare:
      switch (i.attrs().comparison) {
        case hlo::Comparison::kEq: return double(x[0] == x[1]);
        case hlo::Comparison::kNe: return double(x[0] != x[1]);
        case hlo::Comparison::kLt: return double(x[0] < x[1]);
        case hlo::Comparison::kLe: return double(x[0] <= x[1]);
        case hlo::Comparison::kGt: return double(x[0] > x[1]);
        case hlo::Comparison::kGe: return double(x[0] >= x[1]);
      }
      return std::nullopt;
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

double Element(const Instruction& constant, int64_t linear) {
  const Literal& l = constant.attrs().literal;
  return l.size() == 1 ? l.GetDouble(0) : l.GetDouble(linear);
}

std::optional<Literal> Fold(const Instruction& i) {
  const hlo::Shape& shape = i.shape();
  if (shape.is_tuple || shape.element_count() > kMaxFoldedElements) return std::nullopt;
  for (const Instruction* op : i.operands())
    if (op->opcode() != Opcode::kConstant) return std::nullopt;
  if (i.operands().empty()) return std::nullopt;
  // A broadcast only makes a constant bigger: it stays (fused, it costs nothing).
  if (i.opcode() == Opcode::kBroadcast) return std::nullopt;
  int64_t n = shape.element_count();
  std::vector<double> values(n);
  switch (i.opcode()) {
    case Opcode::kReshape:
    case Opcode::kTranspose: {
      const Instruction& in = *i.operand(0);
      for (int64_t e = 0; e < n; ++e) {
        std::vector<int64_t> out_idx = Unravel(e, shape.dims);
        int64_t src;
        if (i.opcode() == Opcode::kReshape) {
          src = e;
        } else {
          std::vector<int64_t> in_idx(out_idx.size());
          for (size_t k = 0; k < out_idx.size(); ++k) in_idx[i.attrs().dimensions[k]] = out_idx[k];
          src = Ravel(in_idx, in.shape().dims);
        }
        values[e] = Element(in, src);
      }
      break;
    }
    default: {
      if (!hlo::IsElementwise(i.opcode())) return std::nullopt;
      for (int64_t e = 0; e < n; ++e) {
        std::vector<double> x;
        for (const Instruction* op : i.operands())
          x.push_back(Element(*op, op->shape().IsScalar() ? 0 : e));
        // Operands are computed in their own type, as the generated code does.
        std::optional<double> v = Evaluate(i, x);
        if (!v) return std::nullopt;
        values[e] = CastTo(*v, shape.type);
      }
    }
  }
  if (hlo::IsFloating(shape.type)) return Literal::FromDoubles(shape, values);
  std::vector<int64_t> ints(values.begin(), values.end());
  return Literal::FromInts(shape, ints);
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
