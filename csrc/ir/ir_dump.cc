#include "ir/ir_dump.h"

#include <sstream>
#include <unordered_map>


namespace txla::ir {
namespace {

std::string ShapesString(const Node& node) {
  if (node.shapes().size() == 1) return node.shape().ToString();
  std::string out = "(";
  for (size_t i = 0; i < node.shapes().size(); ++i) {
    out += (i ? ", " : "") + node.shapes()[i].ToString();
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
