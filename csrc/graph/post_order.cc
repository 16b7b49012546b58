#include "graph/post_order.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <tuple>

#include "metrics/metrics.h"

namespace txla::graph {
namespace {
// Each walk uses a fresh epoch, so visit marks never need clearing.
std::atomic<uint64_t> walk_epoch{1};
}

GraphCut CutGraph(const std::vector<ir::Value>& values, std::vector<size_t>* root_index,
                  hlo::Precision precision) {
  if (root_index) root_index->clear();
  GraphCut cut;
  cut.convolution_precision = precision;
  uint64_t epoch = walk_epoch.fetch_add(1);
  // Roots, deduplicated by (node, output) in the order of their first appearance. Sorted rather
  // than hashed: a barrier reads a thousand values, and a map allocated an entry for each.
  const size_t n = values.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  auto key = [&](size_t i) {
    return std::make_tuple(reinterpret_cast<uintptr_t>(values[i].node.get()), values[i].index, i);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> first(n);  // per value, the first value of equal (node, output)
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order[k], prev = k > 0 ? order[k - 1] : i;
    const bool same = k > 0 && values[prev].node == values[i].node && values[prev].index == values[i].index;
    first[i] = same ? first[prev] : i;
  }
  std::vector<size_t> root_of(n);
  cut.roots.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (first[i] == i) {
      root_of[i] = cut.roots.size();
      cut.roots.push_back(values[i]);
    }
    if (root_index) root_index->push_back(root_of[first[i]]);
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
        node->cut_index = static_cast<uint32_t>(cut.nodes.size());
        cut.nodes.push_back(node);
        stack.pop_back();
      }
    }
  }

  // One parameter per device-data node, even where two nodes hold one buffer (two tensors that
  // share a computed value): the compiled program is valid for any inputs, aliased or not, so
  // aliasing is not part of the graph. It used to be, and a value shared by two tensors in one
  // step (ResNet-18's residual bias gradients, copied into two momentum buffers) made the next
  // step's graph differ from every later one: a third compilation. Donation checks at run time
  // that nothing else holds a donated buffer, a second parameter included.
  {
    TXLA_TIMED("UnwrapXlaData");  // the graph's input buffers, taken from its nodes (PyTorch/XLA's name)
    for (const ir::Node* node : cut.nodes)
      if (node->kind() == ir::NodeKind::kDeviceData) cut.parameters.push_back(node->data());
  }
  // Node hashes describe ops, attributes and shapes but not identity: two inputs of one shape
  // hash alike, so (x + y) * x and (x + y) * y did too, and the second ran the first's program.
  // The wiring (each operand's and each root's position in the post-order) completes the key.
  ir::hash_t h = ir::Mix(ir::Mix(0x67726170ULL, cut.roots.size()), static_cast<uint64_t>(precision));
  for (const ir::Value& root : cut.roots) h = ir::Mix(ir::Mix(h, root.hash()), root.node->cut_index);
  for (const ir::Node* node : cut.nodes)
    for (const ir::Value& operand : node->operands()) h = ir::Mix(ir::Mix(h, operand.node->cut_index), operand.index);
  cut.hash = h;
  return cut;
}

}  // namespace txla::graph
