#include "hlo/parser.h"

#include <cctype>
#include <cstring>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <unordered_map>

namespace txla::hlo {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::unique_ptr<Module> ParseModule() {
    Expect("HloModule");
    auto module = std::make_unique<Module>(Name());
    SkipLine();  // entry_computation_layout and other module attributes are not needed
    while (SkipSpace(), pos_ < text_.size()) ParseComputation(*module);
    if (!module->entry()) {
      auto comps = module->computations();
      if (comps.empty()) Fail("no computations");
      Fail("no ENTRY computation");
    }
    return module;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) {
    int line = 1;
    for (size_t k = 0; k < pos_ && k < text_.size(); ++k) line += text_[k] == '\n';
    throw std::invalid_argument("line " + std::to_string(line) + ": " + why);
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else if (text_.compare(pos_, 2, "//") == 0) {
        SkipLine();
      } else {
        break;
      }
    }
  }

  void SkipLine() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }

  bool Peek(std::string_view s) {
    SkipSpace();
    return text_.compare(pos_, s.size(), s) == 0;
  }

  bool Accept(std::string_view s) {
    if (!Peek(s)) return false;
    pos_ += s.size();
    return true;
  }

  void Expect(std::string_view s) {
    if (!Accept(s)) Fail("expected '" + std::string(s) + "'");
  }

  static bool NameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  }

  std::string Name() {
    SkipSpace();
    Accept("%");
    size_t start = pos_;
    while (pos_ < text_.size() && NameChar(text_[pos_])) ++pos_;
    if (start == pos_) Fail("expected a name");
    return std::string(text_.substr(start, pos_ - start));
  }

  int64_t Int() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) Fail("expected an integer");
    return std::stoll(std::string(text_.substr(start, pos_ - start)));
  }

  double Number() {
    SkipSpace();
    for (auto [word, value] : {std::pair<const char*, double>{"-inf", -INFINITY}, {"inf", INFINITY},
                               {"nan", NAN}, {"-nan", NAN}, {"true", 1}, {"false", 0}}) {
      if (Accept(word)) return value;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   std::strchr("+-.eE", text_[pos_])))
      ++pos_;
    if (start == pos_) Fail("expected a number");
    return std::stod(std::string(text_.substr(start, pos_ - start)));
  }

  std::vector<int64_t> IntList() {  // {1,2,3}
    Expect("{");
    std::vector<int64_t> out;
    while (!Accept("}")) {
      out.push_back(Int());
      Accept(",");
    }
    return out;
  }

  std::vector<int64_t> Xs() {  // 3x3x1
    std::vector<int64_t> out{Int()};
    while (Accept("x")) out.push_back(Int());
    return out;
  }

  Shape ParseShape() {
    if (Accept("(")) {
      std::vector<Shape> elements;
      while (!Accept(")")) {
        elements.push_back(ParseShape());
        Accept(",");
      }
      return Shape::Tuple(elements);
    }
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    ElementType type;
    try {
      type = ParseElementType(text_.substr(start, pos_ - start));
    } catch (const std::invalid_argument& e) {
      Fail(e.what());
    }
    Expect("[");
    std::vector<int64_t> dims;
    // Sizes are checked before anything multiplies them: at most 2^40 elements in all.
    constexpr int64_t kMaxElements = int64_t{1} << 40;
    int64_t elements = 1;
    while (!Accept("]")) {
      dims.push_back(Int());
      if (dims.back() < 0 || dims.back() > kMaxElements) Fail("a dimension size must be in [0, 2^40]");
      if (dims.back() != 0 && elements > kMaxElements / dims.back()) Fail("a shape holds at most 2^40 elements");
      elements *= dims.back();
      Accept(",");
    }
    // A layout follows "]" directly (the "{" of a computation body after its signature's result
    // shape is preceded by a space). Layouts are always the default here.
    if (pos_ < text_.size() && text_[pos_] == '{') IntList();
    return Shape::Array(type, dims);
  }

  // Integers are read as integers: through a double, s64 values past 2^53 changed.
  Literal ParseLiteral(const Shape& shape) {
    const bool floating = IsFloating(shape.type);
    std::vector<double> values;
    std::vector<int64_t> ints;
    std::function<void()> element = [&]() {
      if (Accept("{")) {
        while (!Accept("}")) {
          element();
          Accept(",");
        }
      } else if (floating) {
        values.push_back(Number());
      } else if (Accept("true")) {
        ints.push_back(1);
      } else if (Accept("false")) {
        ints.push_back(0);
      } else {
        ints.push_back(Int());
      }
    };
    element();
    try {
      return floating ? Literal::FromDoubles(shape, values) : Literal::FromInts(shape, ints);
    } catch (const std::invalid_argument& e) {
      Fail(e.what());
    }
  }

  void ParseComputation(Module& module) {
    bool entry = Accept("ENTRY");
    std::string name = Name();
    if (Accept("(")) {  // the signature repeats the parameters: skip it
      int depth = 1;
      while (pos_ < text_.size() && depth > 0) {
        depth += text_[pos_] == '(';
        depth -= text_[pos_] == ')';
        ++pos_;
      }
      Expect("->");
      ParseShape();
    }
    Computation* c = module.AddComputation(name, entry);
    Expect("{");
    std::unordered_map<std::string, Instruction*> by_name;
    Instruction* root = nullptr;
    Instruction* last = nullptr;
    while (!Accept("}")) {
      bool is_root = Accept("ROOT");
      last = ParseInstruction(module, *c, by_name);
      if (is_root) root = last;
    }
    c->set_root(root ? root : last);  // without ROOT, the last instruction is the result
  }

  Instruction* ParseInstruction(Module& module, Computation& c,
                                std::unordered_map<std::string, Instruction*>& by_name) {
    std::string name = Name();
    Expect("=");
    Shape shape = ParseShape();
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && NameChar(text_[pos_])) ++pos_;
    Opcode opcode;
    try {
      opcode = ParseOpcode(text_.substr(start, pos_ - start));
    } catch (const std::invalid_argument& e) {
      Fail(e.what());
    }
    Attributes attrs;
    std::vector<Instruction*> operands;
    Expect("(");
    if (opcode == Opcode::kParameter) {
      attrs.parameter_number = Int();
      Expect(")");
    } else if (opcode == Opcode::kConstant) {
      attrs.literal = ParseLiteral(shape);
      Expect(")");
    } else {
      while (!Accept(")")) {
        if (!Peek("%")) ParseShape();  // optional operand shape
        std::string operand = Name();
        auto it = by_name.find(operand);
        if (it == by_name.end()) Fail("unknown operand %" + operand);
        operands.push_back(it->second);
        Accept(",");
      }
    }
    while (Accept(",")) ParseAttribute(module, attrs);
    Instruction* i;
    try {
      i = c.Add(opcode, shape, operands, std::move(attrs));
    } catch (const std::invalid_argument& e) {
      Fail(e.what());
    }
    i->set_name(name);
    if (!by_name.emplace(name, i).second) Fail("duplicate name %" + name);
    return i;
  }

  std::vector<WindowDim> ParseWindow() {
    Expect("{");
    std::vector<WindowDim> w;
    while (!Accept("}")) {
      std::string key = Name();
      Expect("=");
      if (key == "pad") {
        std::vector<std::pair<int64_t, int64_t>> pads;
        do {
          int64_t lo = Int();
          Expect("_");
          pads.emplace_back(lo, Int());
        } while (Accept("x"));
        w.resize(std::max(w.size(), pads.size()));
        for (size_t k = 0; k < pads.size(); ++k) std::tie(w[k].pad_lo, w[k].pad_hi) = pads[k];
        continue;
      }
      std::vector<int64_t> values = Xs();
      w.resize(std::max(w.size(), values.size()));
      for (size_t k = 0; k < values.size(); ++k) {
        if (key == "size") w[k].size = values[k];
        else if (key == "stride") w[k].stride = values[k];
        else if (key == "lhs_dilate") w[k].lhs_dilation = values[k];
        else if (key == "rhs_dilate") w[k].rhs_dilation = values[k];
        else Fail("unknown window field '" + key + "'");
      }
    }
    return w;
  }

  ConvDims ParseDimLabels() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '-' || text_[pos_] == '>'))
      ++pos_;
    std::string labels(text_.substr(start, pos_ - start));
    size_t underscore = labels.find('_'), arrow = labels.find("->");
    if (underscore == std::string::npos || arrow == std::string::npos) Fail("bad dim_labels");
    std::string in = labels.substr(0, underscore);
    std::string kernel = labels.substr(underscore + 1, arrow - underscore - 1);
    std::string out = labels.substr(arrow + 2);
    ConvDims c;
    auto read = [&](const std::string& s, char a, int64_t* a_dim, char b, int64_t* b_dim,
                    std::vector<int64_t>* spatial) {
      spatial->assign(s.size() - 2, -1);
      for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == a) *a_dim = k;
        else if (s[k] == b) *b_dim = k;
        else if (std::isdigit(static_cast<unsigned char>(s[k])) && size_t(s[k] - '0') < spatial->size())
          (*spatial)[s[k] - '0'] = k;
        else Fail("bad dim_labels '" + labels + "'");
      }
    };
    read(in, 'b', &c.input_batch, 'f', &c.input_feature, &c.input_spatial);
    read(kernel, 'o', &c.kernel_output_feature, 'i', &c.kernel_input_feature, &c.kernel_spatial);
    read(out, 'b', &c.output_batch, 'f', &c.output_feature, &c.output_spatial);
    return c;
  }

  void ParseAttribute(Module& module, Attributes& a) {
    std::string key = Name();
    Expect("=");
    auto computation = [&]() {
      std::string name = Name();
      Computation* c = module.Find(name);
      if (!c) Fail("computation %" + name + " is not defined (define callees first)");
      a.called.push_back(c);
    };
    if (key == "dimensions") {
      a.dimensions = IntList();
    } else if (key == "replica_groups") {  // {{0,1},{2,3}}
      Expect("{");
      while (!Accept("}")) {
        a.replica_groups.push_back(IntList());
        Accept(",");
      }
    } else if (key == "iota_dimension" || key == "index") {
      a.index = Int();
    } else if (key == "slice") {
      Expect("{");
      while (!Accept("}")) {
        Expect("[");
        SliceDim s;
        s.start = Int();
        Expect(":");
        s.limit = Int();
        if (Accept(":")) s.stride = Int();
        Expect("]");
        a.slice.push_back(s);
        Accept(",");
      }
    } else if (key == "padding") {
      do {
        PadDim p;
        p.lo = Int();
        Expect("_");
        p.hi = Int();
        if (Accept("_")) p.interior = Int();
        a.padding.push_back(p);
      } while (Accept("x"));
    } else if (key == "direction") {
      std::string d = Name();
      static const std::pair<const char*, Comparison> kDirs[] = {
          {"EQ", Comparison::kEq}, {"NE", Comparison::kNe}, {"LT", Comparison::kLt},
          {"LE", Comparison::kLe}, {"GT", Comparison::kGt}, {"GE", Comparison::kGe}};
      bool found = false;
      for (auto [name, dir] : kDirs)
        if (d == name) a.comparison = dir, found = true;
      if (!found) Fail("unknown direction " + d);
    } else if (key == "lhs_batch_dims") {
      a.dot.lhs_batch = IntList();
    } else if (key == "lhs_contracting_dims") {
      a.dot.lhs_contracting = IntList();
    } else if (key == "rhs_batch_dims") {
      a.dot.rhs_batch = IntList();
    } else if (key == "rhs_contracting_dims") {
      a.dot.rhs_contracting = IntList();
    } else if (key == "window") {
      a.window = ParseWindow();
    } else if (key == "dim_labels") {
      a.conv = ParseDimLabels();
    } else if (key == "feature_group_count") {
      a.feature_group_count = Int();
    } else if (key == "to_apply" || key == "calls") {
      computation();
    } else if (key == "kind") {
      std::string k = Name();
      a.fusion_kind = k == "kInput" ? FusionKind::kInput
                      : k == "kOutput" ? FusionKind::kOutput : FusionKind::kLoop;
    } else if (key == "index_mode") {
      std::string m = Name();
      if (m != "select" && m != "along") Fail("unknown index_mode " + m);
      a.index = m == "select" ? 0 : 1;
    } else if (key == "stream") {
      a.index = Int();
    } else if (key == "operand_precision") {  // {highest,highest}: the operands' highest wins
      Expect("{");
      a.precision = Precision::kDefault;
      do {
        std::string name = Name();
        Precision p;
        if (!PrecisionFromName(name, &p)) Fail("unknown operand precision " + name);
        if (static_cast<int>(p) > static_cast<int>(a.precision)) a.precision = p;
      } while (Accept(","));
      Expect("}");
    } else if (key == "sharding") {
      a.sharding = Sharding::Parse(Braced());
    } else if (key == "operand_sharding") {
      a.operand_sharding = Sharding::Parse(Braced());
    } else if (key == "custom_call_target") {
      a.custom_call_target = ParseCustomCallTarget(Quoted());
    } else if (key == "metadata") {  // {op_type="..." op_name="..." source_file="..." source_line=12}
      Expect("{");
      while (!Accept("}")) {
        std::string field = Name();
        Expect("=");
        if (field == "source_line") {
          a.metadata.source_line = Int();
        } else {
          std::string value = Quoted();
          if (field == "op_type") a.metadata.op_type = value;
          else if (field == "source_file") a.metadata.source_file = value;
        }
        Accept(",");
      }
    } else {
      Fail("unknown attribute '" + key + "'");
    }
  }

  // {...} with the braces nested inside it, as text.
  std::string Braced() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '{') Fail("expected '{'");
    size_t start = pos_;
    int depth = 0;
    do {
      if (text_[pos_] == '{') ++depth;
      if (text_[pos_] == '}') --depth;
      ++pos_;
    } while (depth > 0 && pos_ < text_.size());
    if (depth != 0) Fail("unbalanced braces");
    return std::string(text_.substr(start, pos_ - start));
  }

  // "text" (no escapes: XLA's names and paths have none we read).
  std::string Quoted() {
    Expect("\"");
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') ++pos_;
    std::string value(text_.substr(start, pos_ - start));
    Expect("\"");
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<Module> ParseModule(std::string_view text) { return Parser(text).ParseModule(); }

}  // namespace txla::hlo
