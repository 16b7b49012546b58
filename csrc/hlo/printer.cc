#include "hlo/printer.h"

#include <sstream>

namespace txla::hlo {
namespace {

std::string IntList(const std::vector<int64_t>& v) {
  std::ostringstream ss;
  ss << "{";
  for (size_t i = 0; i < v.size(); ++i) ss << (i ? "," : "") << v[i];
  ss << "}";
  return ss.str();
}

template <typename T, typename F>
std::string Joined(const std::vector<T>& v, const char* sep, F f) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + f(v[i]);
  return out;
}

const char* FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
  }
  return "?";
}

}  // namespace

std::string WindowToText(const std::vector<WindowDim>& w) {
  auto field = [&](const char* name, auto get, int64_t dflt) -> std::string {
    bool all_default = true;
    for (const WindowDim& d : w) all_default &= get(d) == dflt;
    if (all_default && std::string(name) != "size") return "";
    return std::string(" ") + name + "=" +
           Joined(w, "x", [&](const WindowDim& d) { return std::to_string(get(d)); });
  };
  std::string out = "{";
  out += field("size", [](const WindowDim& d) { return d.size; }, 1).substr(1);
  out += field("stride", [](const WindowDim& d) { return d.stride; }, 1);
  bool padded = false;
  for (const WindowDim& d : w) padded |= d.pad_lo != 0 || d.pad_hi != 0;
  if (padded) {
    out += " pad=" + Joined(w, "x", [](const WindowDim& d) {
             return std::to_string(d.pad_lo) + "_" + std::to_string(d.pad_hi);
           });
  }
  out += field("lhs_dilate", [](const WindowDim& d) { return d.lhs_dilation; }, 1);
  out += field("rhs_dilate", [](const WindowDim& d) { return d.rhs_dilation; }, 1);
  return out + "}";
}

std::string DimLabels(const ConvDims& c, int64_t rank) {
  auto labels = [rank](int64_t a, char a_label, int64_t b, char b_label,
                       const std::vector<int64_t>& spatial) {
    std::string s(rank, '?');
    s[a] = a_label;
    s[b] = b_label;
    for (size_t k = 0; k < spatial.size(); ++k) s[spatial[k]] = static_cast<char>('0' + k);
    return s;
  };
  return labels(c.input_batch, 'b', c.input_feature, 'f', c.input_spatial) + "_" +
         labels(c.kernel_output_feature, 'o', c.kernel_input_feature, 'i', c.kernel_spatial) +
         "->" + labels(c.output_batch, 'b', c.output_feature, 'f', c.output_spatial);
}

std::string AttributesToText(const Instruction& i) {
  const Attributes& a = i.attrs();
  std::vector<std::string> parts;
  auto called = [&](const char* key) {
    for (const Computation* c : a.called) parts.push_back(std::string(key) + "=%" + c->name());
  };
  switch (i.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      parts.push_back("dimensions=" + IntList(a.dimensions));
      break;
    case Opcode::kReduce:
      parts.push_back("dimensions=" + IntList(a.dimensions));
      called("to_apply");
      break;
    case Opcode::kRngUniform:
      parts.push_back("stream=" + std::to_string(a.index));
      break;
    case Opcode::kIota:
      parts.push_back("iota_dimension=" + std::to_string(a.index));
      break;
    case Opcode::kGetTupleElement:
      parts.push_back("index=" + std::to_string(a.index));
      break;
    case Opcode::kSlice:
      parts.push_back("slice={" + Joined(a.slice, ", ", [](const SliceDim& s) {
                        return "[" + std::to_string(s.start) + ":" + std::to_string(s.limit) +
                               (s.stride != 1 ? ":" + std::to_string(s.stride) : "") + "]";
                      }) + "}");
      break;
    case Opcode::kPad:
      parts.push_back("padding=" + Joined(a.padding, "x", [](const PadDim& p) {
                        return std::to_string(p.lo) + "_" + std::to_string(p.hi) +
                               (p.interior ? "_" + std::to_string(p.interior) : "");
                      }));
      break;
    case Opcode::kCompare:
      parts.push_back(std::string("direction=") + ComparisonName(a.comparison));
      break;
    case Opcode::kDot:
      if (!a.dot.lhs_batch.empty()) parts.push_back("lhs_batch_dims=" + IntList(a.dot.lhs_batch));
      parts.push_back("lhs_contracting_dims=" + IntList(a.dot.lhs_contracting));
      if (!a.dot.rhs_batch.empty()) parts.push_back("rhs_batch_dims=" + IntList(a.dot.rhs_batch));
      parts.push_back("rhs_contracting_dims=" + IntList(a.dot.rhs_contracting));
      break;
    case Opcode::kConvolution:
      parts.push_back("window=" + WindowToText(a.window));
      parts.push_back("dim_labels=" + DimLabels(a.conv, i.shape().rank()));
      if (a.feature_group_count != 1)
        parts.push_back("feature_group_count=" + std::to_string(a.feature_group_count));
      break;
    case Opcode::kReduceWindow:
      parts.push_back("window=" + WindowToText(a.window));
      called("to_apply");
      break;
    case Opcode::kGather:
    case Opcode::kScatter:
      parts.push_back("dimensions=" + IntList(a.dimensions));
      parts.push_back(std::string("index_mode=") + (a.index == 0 ? "select" : "along"));
      if (i.opcode() == Opcode::kScatter) called("to_apply");
      break;
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
      if (i.opcode() != Opcode::kAllReduce) parts.push_back("dimensions=" + IntList(a.dimensions));
      parts.push_back("replica_groups={" + Joined(a.replica_groups, ",", [](const std::vector<int64_t>& g) {
                        return IntList(g);
                      }) + "}");
      if (i.opcode() != Opcode::kAllGather) called("to_apply");
      break;
    case Opcode::kCall:
      called("to_apply");
      break;
    case Opcode::kFusion:
      parts.push_back(std::string("kind=") + FusionKindName(a.fusion_kind));
      called("calls");
      break;
    case Opcode::kCustomCall:
      parts.push_back("custom_call_target=\"" + std::string(CustomCallTargetName(a.custom_call_target)) + "\"");
      if (!a.dimensions.empty()) parts.push_back("dimensions=" + IntList(a.dimensions));
      if (!a.replica_groups.empty())
        parts.push_back("replica_groups={" + Joined(a.replica_groups, ",", [](const std::vector<int64_t>& g) {
                          return IntList(g);
                        }) + "}");
      // Library calls with a window (pooling, convolution gradients) carry it as XLA's do.
      if (!a.window.empty()) parts.push_back("window=" + WindowToText(a.window));
      if (!a.conv.input_spatial.empty()) parts.push_back("dim_labels=" + DimLabels(a.conv, i.shape().rank()));
      if (a.feature_group_count != 1)
        parts.push_back("feature_group_count=" + std::to_string(a.feature_group_count));
      break;
    default:
      break;
  }
  if (a.precision != Precision::kDefault) {
    // One entry per multiplied operand, as XLA prints it.
    const std::string name = PrecisionName(a.precision);
    parts.push_back("operand_precision={" + name + "," + name + "}");
  }
  return Joined(parts, ", ", [](const std::string& s) { return s; });
}

std::string ToText(const Instruction& i) {
  std::ostringstream ss;
  if (i.parent() && i.parent()->root() == &i) ss << "ROOT ";
  ss << "%" << i.name() << " = " << i.shape().ToString() << " " << OpcodeName(i.opcode()) << "(";
  if (i.opcode() == Opcode::kParameter) {
    ss << i.attrs().parameter_number;
  } else if (i.opcode() == Opcode::kConstant) {
    ss << i.attrs().literal.ToString();
  } else {
    for (size_t k = 0; k < i.operands().size(); ++k)
      ss << (k ? ", " : "") << i.operand(k)->shape().ToString() << " %" << i.operand(k)->name();
  }
  ss << ")";
  std::string attrs = AttributesToText(i);
  if (!attrs.empty()) ss << ", " << attrs;
  if (i.attrs().sharding) ss << ", sharding=" << i.attrs().sharding->ToString();
  if (i.attrs().operand_sharding) ss << ", operand_sharding=" << i.attrs().operand_sharding->ToString();
  const Attributes::Metadata& m = i.attrs().metadata;
  if (!m.empty()) {
    ss << ", metadata={op_type=\"" << m.op_type << "\"";
    if (!m.source_file.empty()) ss << " source_file=\"" << m.source_file << "\" source_line=" << m.source_line;
    ss << "}";
  }
  return ss.str();
}

std::string ToText(const Computation& c, bool is_entry) {
  std::ostringstream ss;
  if (is_entry) ss << "ENTRY ";
  ss << "%" << c.name() << " (";
  auto params = c.parameters();
  for (size_t k = 0; k < params.size(); ++k)
    ss << (k ? ", " : "") << params[k]->name() << ": " << params[k]->shape().ToString(false);
  ss << ") -> " << (c.root() ? c.root()->shape().ToString(false) : "()") << " {\n";
  for (const Instruction* i : c.instructions()) ss << "  " << ToText(*i) << "\n";
  ss << "}\n";
  return ss.str();
}

std::string ToText(const Module& m) {
  std::string out = "HloModule " + m.name() + "\n";
  for (const Computation* c : m.computations())
    if (c != m.entry()) out += "\n" + ToText(*c);
  if (m.entry()) out += "\n" + ToText(*m.entry(), true);
  return out;
}

}  // namespace txla::hlo
