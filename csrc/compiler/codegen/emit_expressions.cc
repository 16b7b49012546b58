// The scalar C++ expression of an instruction at a loop index, and the literal and type
// spellings the other emitters share.
#include "compiler/codegen/expression_emitter.h"

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
std::string ExpressionEmitter::Load(const Instruction& buffer, const std::string& index) {
  if (buffer.shape().type == ElementType::kPred)
    return "(((const unsigned char*)" + BufferName(buffer) + ")[" + index + "] != 0)";
  return Call16BitFloat(buffer.shape().type, "", "_to_float", BufferName(buffer) + "[" + index + "]");
}

// The value of `i` at multi-index `idx`, as an expression (values are memoized per index).
std::string ExpressionEmitter::Value(const Instruction& i, const Index& idx) {
  auto pit = fusion_params.find(&i);
  if (pit != fusion_params.end()) return Value(*pit->second, idx);
  auto fused = inlined.find(&i);
  if (fused != inlined.end()) return Value(*fused->second, idx);
  if (i.opcode() == Opcode::kConstant && i.shape().IsScalar())
    return Literal(i.attrs().literal, 0, i.shape().type);
  std::string key = i.name() + "@";
  for (const IndexExpr& e : idx) key += e.str() + ",";
  auto mit = memo_.find(key);
  if (mit != memo_.end()) return mit->second;
  std::string expr;
  // An unfused instruction is its own kernel's root: it is computed here, not read back from
  // the buffer it is about to write.
  if (Materialized(i) && &i != current_output) {
    // Loads become statements of their own: a load inside `p ? a[i] : b[i]` is conditional,
    // which forces a branch (it may not be executed speculatively) where a select would do.
    if (std::find(used.begin(), used.end(), &i) == used.end()) used.push_back(&i);
    expr = Load(i, Linear(idx, i.shape().dims));
  } else {
    expr = Compute(i, idx);
    // Excess precision, as XLA allows it by default: within a kernel a 16-bit float value
    // stays a float (eager's composite ops compute in float too); it is rounded where it is
    // stored and where a convert asks for the type.
    if (i.opcode() == Opcode::kConvert) expr = Rounded(i.shape().type, expr);
  }
  std::string var = NewVar();
  body << "      const " << CType(i.shape().type) << " " << var << " = " << expr << ";\n";
  memo_[key] = var;
  return var;
}

std::string ExpressionEmitter::Compute(const Instruction& i, const Index& idx) {
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
        tables << "  static const " << t << " " << table << "[] = {";
        for (int64_t k = 0; k < i.attrs().literal.size(); ++k)
          tables << (k ? ", " : "") << Literal(i.attrs().literal, k, i.shape().type);
        tables << "};\n";
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
      auto param = fusion_params.find(src);
      if (param != fusion_params.end()) src = param->second;
      if (Materialized(*src) && src != current_output && !inlined.count(src)) {
        if (std::find(used.begin(), used.end(), src) == used.end()) used.push_back(src);
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
      std::string checked = NewVar();
      body << "      const int64_t " << checked << " = " << CheckedIndex(j, size, i.name()) << ";\n";
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
      if (may_split && split_dim < 0 && parts.size() > 1 && parts.size() <= kMaxSplitParts &&
          idx[dim].IsVar(&var) && var[0] == 'i') {
        split_dim = std::stoll(var.substr(1));
        for (size_t k = 0; k + 1 < parts.size(); ++k) split_points.push_back(parts[k].first);
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

std::string Combiner(const Instruction& reduce, const std::string& acc, const std::string& v) {
  const Instruction* r = reduce.attrs().called.at(0)->root();
  switch (r->opcode()) {
    case Opcode::kAdd: return "txla_add(" + acc + ", " + v + ")";
    case Opcode::kMultiply: return "txla_mul(" + acc + ", " + v + ")";
    case Opcode::kMaximum: return "txla_max(" + acc + ", " + v + ")";
    case Opcode::kMinimum: return "txla_min(" + acc + ", " + v + ")";
    case Opcode::kAnd: return acc + " && " + v;
    case Opcode::kOr: return acc + " || " + v;
    default:
      throw std::invalid_argument("codegen: reduce with a " + std::string(hlo::OpcodeName(r->opcode())) +
                                  " combiner is not supported yet");
  }
}

WindowRead ReadWindowPosition(const std::vector<hlo::WindowDim>& window, const Index& idx,
                                     const std::vector<int64_t>& pos, const std::vector<int64_t>& in_dims) {
  WindowRead r;
  for (size_t k = 0; k < idx.size(); ++k) {
    const hlo::WindowDim& w = window[k];
    IndexExpr e = idx[k] * w.stride + (pos[k] * w.rhs_dilation - w.pad_lo);
    r.never |= e.OutsideRange(0, in_dims[k] - 1);
    if (e.lo() < 0) r.inside += (r.inside.empty() ? "" : " && ") + e.str() + " >= 0";
    if (e.hi() >= in_dims[k]) r.inside += (r.inside.empty() ? "" : " && ") + e.str() + " < " + std::to_string(in_dims[k]);
    r.at.push_back(e.Clamp(0, in_dims[k] - 1));
  }
  return r;
}

// The next window position, last dimension fastest.
void NextWindowPosition(const std::vector<hlo::WindowDim>& window, std::vector<int64_t>* pos) {
  for (size_t k = pos->size(); k-- > 0;) {
    if (++(*pos)[k] < window[k].size) return;
    (*pos)[k] = 0;
  }
}

std::string ExpressionEmitter::ReduceWindow(const Instruction& i, const Index& idx) {
  const auto& window = i.attrs().window;
  const auto& in_dims = i.operand(0)->shape().dims;
  std::string acc = NewVar();
  std::string init = Value(*i.operand(1), {});
  body << "      " << CType(i.shape().type) << " " << acc << " = " << init << ";\n";
  // Small windows are unrolled: straight-line code, vectorizable. Positions in the padding
  // are read clamped and masked out; the index ranges drop the masks where they cannot fail.
  int64_t positions = 1;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (window[k].lhs_dilation != 1) throw std::invalid_argument("codegen: reduce-window with base dilation");
    positions *= window[k].size;
  }
  auto saved = memo_;  // values computed inside the window are local to it
  if (positions <= 16) {
    std::vector<int64_t> pos(idx.size(), 0);
    for (int64_t p = 0; p < positions; ++p, NextWindowPosition(window, &pos)) {
      WindowRead read = ReadWindowPosition(window, idx, pos, in_dims);
      if (read.never) continue;  // padding for every output: holds the init value
      std::string v = Value(*i.operand(0), read.at);
      std::string combined = Combiner(i, acc, v);
      if (!read.inside.empty()) combined = "(" + read.inside + ") ? " + combined + " : " + acc;
      body << "      " << acc << " = " << combined << ";\n";
    }
    memo_ = std::move(saved);
    return acc;
  }
  Index in_idx(idx.size());
  int braces = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const hlo::WindowDim& w = window[k];
    if (w.size == 1 && w.pad_lo == 0 && w.stride == 1) {
      in_idx[k] = idx[k];
      continue;
    }
    std::string wv = acc + "_w" + std::to_string(k), iv = acc + "_x" + std::to_string(k);
    body << "      for (int64_t " << wv << " = 0; " << wv << " < " << w.size << "; ++" << wv << ") {\n"
          << "      const int64_t " << iv << " = " << idx[k].str() << " * " << w.stride << " - " << w.pad_lo
          << " + " << wv << " * " << w.rhs_dilation << ";\n"
          << "      if (" << iv << " < 0 || " << iv << " >= " << in_dims[k] << ") continue;\n";
    in_idx[k] = IndexExpr::Opaque(iv, 0, in_dims[k] - 1);  // past the bounds check
    ++braces;
  }
  std::string v = Value(*i.operand(0), in_idx);
  memo_ = std::move(saved);
  body << "      " << acc << " = " << Combiner(i, acc, v) << ";\n";
  for (int b = 0; b < braces; ++b) body << "      }\n";
  return acc;
}

// An index read from data: one outside [0, size) is reported (the run fails with eager's
// error once it returns) and replaced by 0, so it never reads or writes outside the buffer.
std::string CheckedIndex(const std::string& j, int64_t size, const std::string& site) {
  return "((unsigned long long)(" + j + ") >= " + std::to_string(size) + "ULL ? txla_support->index_error(" + j +
         ", " + std::to_string(size) + ", \"" + site + "\") : (" + j + "))";
}


void ExpressionEmitter::BeginKernel(const Instruction* output) {
  used.clear();
  next_var_ = 0;
  tables.str("");
  declared_tables_.clear();
  current_output = output;
}

void ExpressionEmitter::BeginBody() {
  body.str("");
  memo_.clear();
}

bool ExpressionEmitter::Materialized(const Instruction& i) const { return IsMaterialized(plan_, i); }

bool IsMaterialized(const BufferPlan& plan, const Instruction& i) {
  auto it = plan.slots.find(&i);
  return it != plan.slots.end() && (it->second.kind == BufferSlot::Kind::kParameter ||
                                    it->second.kind == BufferSlot::Kind::kOutput ||
                                    it->second.kind == BufferSlot::Kind::kTemp ||
                                    it->second.kind == BufferSlot::Kind::kAlias);
}

}  // namespace txla::compiler::emitter
