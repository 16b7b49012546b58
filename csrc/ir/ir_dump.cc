#include "ir/ir_dump.h"

#include <sstream>
#include <string>
#include <unordered_map>

namespace txla::ir {
namespace {

// With its layout, as PyTorch/XLA prints IR shapes (f32[2,3]{1,0}): values are row-major.
std::string ShapeWithLayout(const Shape& shape) {
  std::string out = shape.ToString();
  if (shape.sizes.empty()) return out;
  out += "{";
  for (size_t d = shape.sizes.size(); d-- > 0;) out += std::to_string(d) + (d ? "," : "");
  return out + "}";
}

std::string ShapesString(const Node& node) {
  if (node.shapes().size() == 1) return ShapeWithLayout(node.shape());
  std::string out = "(";
  for (size_t i = 0; i < node.shapes().size(); ++i) {
    out += (i ? ", " : "") + ShapeWithLayout(node.shapes()[i]);
  }
  return out + ")";
}

std::unordered_map<const Node*, size_t> Numbering(const graph::GraphCut& cut) {
  std::unordered_map<const Node*, size_t> ids;
  for (const Node* node : cut.nodes) ids.emplace(node, ids.size());
  return ids;
}

}  // namespace

std::string GraphToText(const graph::GraphCut& cut) {
  auto ids = Numbering(cut);
  std::unordered_map<const Node*, std::vector<size_t>> roots;
  for (size_t i = 0; i < cut.roots.size(); ++i) roots[cut.roots[i].node.get()].push_back(i);
  std::ostringstream ss;
  ss << "IR {\n";
  for (const Node* node : cut.nodes) {
    ss << "  %" << ids[node] << " = " << ShapesString(*node) << " " << node->OpName() << "(";
    for (size_t i = 0; i < node->operands().size(); ++i) {
      const Value& v = node->operands()[i];
      ss << (i ? ", " : "") << "%" << ids[v.node.get()];
      if (v.node->shapes().size() > 1) ss << "." << v.index;
    }
    ss << ")";
    std::string attrs = node->AttrString();
    if (!attrs.empty()) ss << ", " << attrs;
    auto it = roots.find(node);
    if (it != roots.end()) {
      for (size_t r : it->second) ss << ", ROOT=" << r;
    }
    ss << "\n";
    if (!node->frames().empty()) ss << node->frames();
  }
  ss << "}\n";
  return ss.str();
}

std::string GraphToDot(const graph::GraphCut& cut) {
  auto ids = Numbering(cut);
  std::ostringstream ss;
  ss << "digraph G {\n";
  for (const Node* node : cut.nodes) {
    ss << "  node" << ids[node] << " [label=\"" << node->OpName() << "\\n"
       << ShapesString(*node) << "\"]\n";
    for (const Value& v : node->operands())
      ss << "  node" << ids[v.node.get()] << " -> node" << ids[node] << "\n";
  }
  ss << "}\n";
  return ss.str();
}

}  // namespace txla::ir
