#include "graph/post_order.h"

#include <atomic>
#include <unordered_map>

namespace txla::graph {
namespace {
// Each walk uses a fresh epoch, so visit marks never need clearing.
std::atomic<uint64_t> walk_epoch{1};
}

GraphCut CutGraph(const std::vector<ir::Value>& values, std::vector<size_t>* root_index) {
  GraphCut cut;
  uint64_t epoch = walk_epoch.fetch_add(1);
  // Roots, deduplicated by (node, output).
  std::unordered_map<const ir::Node*, std::vector<std::pair<uint32_t, size_t>>> seen_roots;
  for (const ir::Value& v : values) {
    auto& outs = seen_roots[v.node.get()];
    size_t index = cut.roots.size();
    bool found = false;
    for (auto& [output, idx] : outs) {
      if (output == v.index) {
        index = idx;
        found = true;
      }
    }
    if (!found) {
      outs.emplace_back(v.index, index);
      cut.roots.push_back(v);
    }
    if (root_index) root_index->push_back(index);
  }

  // Iterative DFS: a node is emitted after all its operands.
  std::vector<std::pair<const ir::Node*, size_t>> stack;
  for (const ir::Value& root : cut.roots) {
    if (root.node->visit_epoch == epoch) continue;
    stack.emplace_back(root.node.get(), 0);
    root.node->visit_epoch = epoch;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands().size()) {
        const ir::Node* operand = node->operands()[next++].node.get();
        if (operand->visit_epoch != epoch) {
          operand->visit_epoch = epoch;
          stack.emplace_back(operand, 0);
        }
      } else {
        cut.nodes.push_back(node);
        stack.pop_back();
      }
    }
  }

  std::unordered_map<const runtime::Buffer*, size_t> param_index;
  ir::hash_t h = ir::Mix(0x67726170ULL, cut.roots.size());
  for (const ir::Value& root : cut.roots) h = ir::Mix(h, root.hash());
  for (const ir::Node* node : cut.nodes) {
    if (node->kind() != ir::NodeKind::kDeviceData) continue;
    auto [it, inserted] = param_index.emplace(node->data().get(), cut.parameters.size());
    if (inserted) cut.parameters.push_back(node->data());
    cut.parameter_sequence.push_back(it->second);
    h = ir::Mix(h, it->second);
  }
  cut.hash = h;
  return cut;
}

}  // namespace txla::graph
