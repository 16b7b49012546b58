// The scalar C++ expression of an instruction at a loop index, and the literal and type
// spellings the other emitters share.
#include "compiler/codegen/emitter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/element_type.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler::emitter {

const char* CType(ElementType t) {
  switch (t) {
    case ElementType::kPred: return "bool";
    case ElementType::kS8: return "int8_t";
    case ElementType::kS16: return "int16_t";
    case ElementType::kS32: return "int32_t";
    case ElementType::kS64: return "int64_t";
    case ElementType::kU8: return "uint8_t";
    case ElementType::kBF16:
    case ElementType::kF16:  // computed in float (runtime/scalar_ops.h), stored as 16 bits
    case ElementType::kF32: return "float";
    case ElementType::kF64: return "double";
    default:
      throw std::invalid_argument(std::string("codegen: element type ") +
                                  runtime::ElementTypeName(t) + " is not supported yet");
  }
}

using hlo::Is16BitFloat;

// The type of a buffer's elements in memory: a 16-bit float is its bit pattern.
std::string StorageType(ElementType t) { return Is16BitFloat(t) ? "unsigned short" : CType(t); }

// A call of runtime/scalar_ops.h's `txla_<prefix><bf16|f16><suffix>` on `value` for a 16-bit
// float type; `value` itself for any other type.
std::string Call16BitFloat(ElementType t, const char* prefix, const char* suffix, const std::string& value) {
  if (!Is16BitFloat(t)) return value;
  return std::string("txla_") + prefix + (t == ElementType::kBF16 ? "bf16" : "f16") + suffix + "(" + value + ")";
}

// An integer divisor, replaced by 1 where it is 0 after the run records eager's ZeroDivisionError
// (support_abi.h, division_error): the division itself never traps.
std::string CheckedDivisor(const Instruction& i, const std::string& divisor) {
  return "(" + divisor + " == 0 ? (" + CType(i.shape().type) + ")txla_support->division_error(\"" + i.name() +
         "\") : " + divisor + ")";
}

// `value` (of CType(t)) as the bits a buffer of `t` stores.
std::string Stored(ElementType t, const std::string& value) { return Call16BitFloat(t, "", "_from_float", value); }

// A float rounded to the 16-bit float type `t` (other types unchanged).
std::string Rounded(ElementType t, const std::string& value) { return Call16BitFloat(t, "round_", "", value); }

// Element k of a literal as C++ source; integers come from the literal's exact int64 values.
std::string Literal(const hlo::Literal& literal, int64_t k, ElementType t) {
  std::ostringstream ss;
  if (!hlo::IsFloating(t)) {
    int64_t v = literal.GetInt(k);
    if (t == ElementType::kPred) return v != 0 ? "true" : "false";
    if (v == INT64_MIN) return std::string("(") + CType(t) + ")(-9223372036854775807LL - 1)";
    ss << "(" << CType(t) << ")" << v << "LL";
    return ss.str();
  }
  double v = literal.GetDouble(k);
  // A 16-bit float's literal is the value that type holds (its computations are in float).
  if (t == ElementType::kBF16) v = txla_round_bf16(static_cast<float>(v));
  if (t == ElementType::kF16) v = txla_round_f16(static_cast<float>(v));
  const char* suffix = CType(t) == std::string("float") ? "f" : "";
  if (std::isnan(v)) return std::string("(") + CType(t) + ")__builtin_nan(\"\")";
  if (std::isinf(v)) return std::string(v > 0 ? "" : "-") + "(" + CType(t) + ")__builtin_inf()";
  ss.precision(17);
  ss << std::scientific << v << suffix;
  return ss.str();
}

// The row-major offset of a multi-index, as source.
IndexExpr LinearExpr(const Index& idx, const std::vector<int64_t>& dims) {
  if (dims.empty()) return 0;
  IndexExpr out = idx[0];
  for (size_t k = 1; k < dims.size(); ++k) out = out * dims[k] + idx[k];
  return out;
}
std::string Linear(const Index& idx, const std::vector<int64_t>& dims) { return LinearExpr(idx, dims).str(); }

Index DelinearizeExpr(const IndexExpr& offset, const std::vector<int64_t>& dims) {
  Index out(dims.size());
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    out[k] = offset.Div(stride).Mod(dims[k]);
    stride *= dims[k];
  }
  return out;
}

// An element of a buffer. A predicate is read as a byte compared with 0: the compiler does not
// vectorize arithmetic on a loaded bool (a 1-bit type to it), and selects on masks do.
std::string Emitter::Load(const Instruction& buffer, const std::string& index) {
  if (buffer.shape().type == ElementType::kPred)
    return "(((const unsigned char*)" + Buffer(buffer) + ")[" + index + "] != 0)";
  return Call16BitFloat(buffer.shape().type, "", "_to_float", Buffer(buffer) + "[" + index + "]");
}

// The value of `i` at multi-index `idx`, as an expression (values are memoized per index).
std::string Emitter::Value(const Instruction& i, const Index& idx) {
  auto pit = fusion_params_.find(&i);
  if (pit != fusion_params_.end()) return Value(*pit->second, idx);
  auto inlined = inlined_.find(&i);
  if (inlined != inlined_.end()) return Value(*inlined->second, idx);
  if (i.opcode() == Opcode::kConstant && i.shape().IsScalar())
    return Literal(i.attrs().literal, 0, i.shape().type);
  std::string key = i.name() + "@";
  for (const IndexExpr& e : idx) key += e.str() + ",";
  auto mit = memo_.find(key);
  if (mit != memo_.end()) return mit->second;
  std::string expr;
  // An unfused instruction is its own kernel's root: it is computed here, not read back from
  // the buffer it is about to write.
  if (Materialized(i) && &i != current_output_) {
    // Loads become statements of their own: a load inside `p ? a[i] : b[i]` is conditional,
    // which forces a branch (it may not be executed speculatively) where a select would do.
    if (std::find(used_.begin(), used_.end(), &i) == used_.end()) used_.push_back(&i);
    expr = Load(i, Linear(idx, i.shape().dims));
  } else {
    expr = Compute(i, idx);
    // Excess precision, as XLA allows it by default: within a kernel a 16-bit float value
    // stays a float (eager's composite ops compute in float too); it is rounded where it is
    // stored and where a convert asks for the type.
    if (i.opcode() == Opcode::kConvert) expr = Rounded(i.shape().type, expr);
  }
  std::string var = "v" + std::to_string(next_var_++);
  body_ << "      const " << CType(i.shape().type) << " " << var << " = " << expr << ";\n";
  memo_[key] = var;
  return var;
}

std::string Emitter::Compute(const Instruction& i, const Index& idx) {
  auto op = [&](size_t k) { return Value(*i.operand(k), idx); };
  std::string t = CType(i.shape().type);
  if ((i.opcode() == Opcode::kDivide || i.opcode() == Opcode::kRemainder) && hlo::IsInteger(i.shape().type)) {
    const char* function = i.opcode() == Opcode::kDivide ? "txla_idiv" : "txla_fmod";
    return "(" + t + ")" + function + "(" + op(0) + ", " + CheckedDivisor(i, op(1)) + ")";
  }
  switch (i.opcode()) {
    case Opcode::kConstant: {
      // A small array constant: a static table at the top of the kernel, declared once however
      // many places read it.
      std::string table = "c_" + Sanitize(i.name());
      if (declared_tables_.insert(table).second) {
        tables_ << "  static const " << t << " " << table << "[] = {";
        for (int64_t k = 0; k < i.attrs().literal.size(); ++k)
          tables_ << (k ? ", " : "") << Literal(i.attrs().literal, k, i.shape().type);
        tables_ << "};\n";
      }
      return table + "[" + Linear(idx, i.shape().dims) + "]";
    }
    case Opcode::kIota:
      return "(" + t + ")" + idx.at(i.attrs().index).str();
    case Opcode::kBroadcast: {
      Index sub;
      for (int64_t d : i.attrs().dimensions) sub.push_back(idx[d]);
      return Value(*i.operand(0), sub);
    }
    case Opcode::kTranspose: {
      Index sub(idx.size());
      for (size_t k = 0; k < idx.size(); ++k) sub[i.attrs().dimensions[k]] = idx[k];
      return Value(*i.operand(0), sub);
    }
    case Opcode::kReshape: {
      // Row-major: a reshape of a buffer reads it at the output's own linear index.
      const Instruction* src = i.operand(0);
      auto param = fusion_params_.find(src);
      if (param != fusion_params_.end()) src = param->second;
      if (Materialized(*src) && src != current_output_ && !inlined_.count(src)) {
        if (std::find(used_.begin(), used_.end(), src) == used_.end()) used_.push_back(src);
        return Load(*src, Linear(idx, i.shape().dims));
      }
      return Value(*i.operand(0), DelinearizeExpr(LinearExpr(idx, i.shape().dims), i.operand(0)->shape().dims));
    }
    case Opcode::kSlice: {
      Index sub;
      for (size_t k = 0; k < idx.size(); ++k) {
        const hlo::SliceDim& s = i.attrs().slice[k];
        sub.push_back(idx[k] * s.stride + s.start);
      }
      return Value(*i.operand(0), sub);
    }
    case Opcode::kReduceWindow:
      return ReduceWindow(i, idx);
    case Opcode::kGather: {
      int64_t d = i.attrs().dimensions.at(0);
      std::string j = i.attrs().index == 0 ? Value(*i.operand(1), {idx[d]}) : Value(*i.operand(1), idx);
      Index sub = idx;
      int64_t size = i.operand(0)->shape().dims[d];
      // A statement of its own: an index read once per row (an embedding's token) is then
      // checked before the loop along the row, which vectorizes (loop_invariants.h).
      std::string checked = "v" + std::to_string(next_var_++);
      body_ << "      const int64_t " << checked << " = " << CheckedIndex(j, size, i.name()) << ";\n";
      sub[d] = IndexExpr::Opaque(checked, 0, size - 1);
      return Value(*i.operand(0), sub);
    }
    case Opcode::kRngUniform:
      return "txla_uniform(" + op(0) + ", " + op(1) + ", " + Value(*i.operand(2), {}) + ", " +
             std::to_string(i.attrs().index) + "LL, " + Linear(idx, i.shape().dims) + ")";
    case Opcode::kReverse: {
      Index sub = idx;
      for (int64_t d : i.attrs().dimensions)
        sub[d] = IndexExpr(i.shape().dims[d] - 1) - idx[d];
      return Value(*i.operand(0), sub);
    }
    case Opcode::kPad: {
      // Reads clamp into the operand (never out of bounds); the select picks the padding.
      // Conditions the index ranges already decide are left out.
      const auto& in_dims = i.operand(0)->shape().dims;
      Index sub;
      std::string inside;
      auto require = [&](const std::string& condition) { inside += (inside.empty() ? "" : " && ") + condition; };
      for (size_t k = 0; k < idx.size(); ++k) {
        const hlo::PadDim& p = i.attrs().padding[k];
        if (in_dims[k] == 0) return Value(*i.operand(1), {});
        IndexExpr shifted = idx[k] - p.lo;
        if (p.interior != 0) {  // operand elements sit every (interior + 1) positions
          int64_t step = p.interior + 1;
          if (shifted.lo() < 0) require(shifted.str() + " >= 0");
          require(shifted.str() + " % " + std::to_string(step) + " == 0");
          shifted = shifted.Div(step);
        }
        if (shifted.OutsideRange(0, in_dims[k] - 1)) return Value(*i.operand(1), {});
        if (shifted.lo() < 0) require(shifted.str() + " >= 0");
        if (shifted.hi() >= in_dims[k]) require(shifted.str() + " < " + std::to_string(in_dims[k]));
        sub.push_back(shifted.Clamp(0, in_dims[k] - 1));
      }
      std::string value = Value(*i.operand(0), sub);
      if (inside.empty()) return value;
      return "((" + inside + ") ? " + value + " : " + Value(*i.operand(1), {}) + ")";
    }
    case Opcode::kConcatenate: {
      // Every part the index can reach is read at a clamped index; nested selects pick the
      // part the index is in.
      int64_t dim = i.attrs().dimensions.at(0);
      int64_t offset = 0;
      std::vector<std::pair<int64_t, std::string>> parts;  // (end, value)
      for (const Instruction* part : i.operands()) {
        int64_t size = part->shape().dims[dim];
        IndexExpr local = idx[dim] - offset;
        offset += size;
        if (size == 0 || local.OutsideRange(0, size - 1)) continue;
        Index sub = idx;
        sub[dim] = local.Clamp(0, size - 1);
        parts.emplace_back(offset, Value(*part, sub));
      }
      if (parts.empty()) throw std::invalid_argument("codegen: " + i.name() + " reads no part");
      std::string var;
      if (may_split_ && split_dim_ < 0 && parts.size() > 1 && parts.size() <= kMaxSplitParts &&
          idx[dim].IsVar(&var) && var[0] == 'i') {
        split_dim_ = std::stoll(var.substr(1));
        for (size_t k = 0; k + 1 < parts.size(); ++k) split_points_.push_back(parts[k].first);
      }
      std::string expr = parts.back().second;
      for (size_t k = parts.size() - 1; k-- > 0;)
        expr = "(" + idx[dim].str() + " < " + std::to_string(parts[k].first) + " ? " + parts[k].second + " : " + expr + ")";
      return expr;
    }
    case Opcode::kConvert:
      // To and from predicates as selects and compares: GCC does not vectorize conversions
      // of its 1-bit bool.
      if (i.operand(0)->shape().type == ElementType::kPred) return "(" + op(0) + " ? (" + t + ")1 : (" + t + ")0)";
      if (i.shape().type == ElementType::kPred) return "(" + op(0) + " != 0)";
      return "(" + t + ")(" + op(0) + ")";
    case Opcode::kBitcastConvert:
      if (Is16BitFloat(i.shape().type) || Is16BitFloat(i.operand(0)->shape().type))
        throw std::invalid_argument("codegen: bitcast-convert to or from " +
                                    std::string(runtime::ElementTypeName(i.shape().type)) + "/" +
                                    runtime::ElementTypeName(i.operand(0)->shape().type) + " is not supported yet");
      return "__builtin_bit_cast(" + t + ", " + op(0) + ")";
    case Opcode::kSelect:
      return "(" + op(0) + " ? " + op(1) + " : " + op(2) + ")";
    case Opcode::kClamp:
      return "txla_min(txla_max(" + op(1) + ", " + op(0) + "), " + op(2) + ")";
    case Opcode::kCompare: {
      static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      return "(" + op(0) + " " + kOps[static_cast<int>(i.attrs().comparison)] + " " + op(1) + ")";
    }
    case Opcode::kDivide: return "(" + op(0) + " / " + op(1) + ")";
    case Opcode::kAnd:
      return i.shape().type == ElementType::kPred ? "(" + op(0) + " && " + op(1) + ")" : "(" + op(0) + " & " + op(1) + ")";
    case Opcode::kOr:
      return i.shape().type == ElementType::kPred ? "(" + op(0) + " || " + op(1) + ")" : "(" + op(0) + " | " + op(1) + ")";
    case Opcode::kXor: return "(" + op(0) + " ^ " + op(1) + ")";
    case Opcode::kNot:
      return i.shape().type == ElementType::kPred ? "(!" + op(0) + ")" : "(~" + op(0) + ")";
    case Opcode::kLgamma: return "txla_lgamma(" + op(0) + ")";
    // The ops whose scalar semantics are runtime/scalar_ops.h's functions, cast back to the
    // result type (small integers promote through C's arithmetic).
#define TXLA_SCALAR_CALL(name, function, arity) \
case Opcode::k##name: return "(" + t + ")" #function "(" + op(0) + (arity == 2 ? ", " + op(1) : "") + ")";
    TXLA_SCALAR_FUNCTIONS(TXLA_SCALAR_CALL)
#undef TXLA_SCALAR_CALL
    default:
      throw std::invalid_argument("codegen: " + std::string(hlo::OpcodeName(i.opcode())) +
                                  " inside a loop kernel is not supported yet");
  }
}

}  // namespace txla::compiler::emitter
