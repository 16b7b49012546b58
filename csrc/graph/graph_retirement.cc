#include "graph/graph_retirement.h"

#include <mutex>
#include <utility>

#include "graph/executor_internal.h"

namespace txla::graph {
namespace {

// Drops the buffer of every device-data node of `cut` that nothing outside the retired graph can
// reach. A node is held from outside when it has more references than the retired graph's own
// (operand slots of the cut's nodes, the cut's roots, the old transposes only `deferred` holds):
// a tensor still pending on it, a tensor's cached data node. What such a node reaches stays
// intact; so does any node whose cut_index a later walk has overwritten (counted as held).
void ReleaseUnreachableData(const GraphCut& cut, const std::vector<DeferredView>& deferred) {
  const size_t n = cut.nodes.size();
  auto index_of = [&](const ir::NodePtr& node) -> size_t {
    const size_t i = node ? node->cut_index : n;
    return i < n && cut.nodes[i] == node.get() ? i : n;
  };
  std::vector<long> refs(n, 0);
  std::vector<const ir::NodePtr*> handle(n, nullptr);
  auto count = [&](const ir::NodePtr& node) {
    const size_t i = index_of(node);
    if (i == n) return;
    ++refs[i];
    handle[i] = &node;
  };
  for (const ir::Node* node : cut.nodes)
    for (const ir::Value& operand : node->operands()) count(operand.node);
  for (const ir::Value& root : cut.roots) count(root.node);
  for (const DeferredView& view : deferred)
    if (view.transpose && view.transpose.use_count() == 1)
      for (const ir::Value& operand : view.transpose->operands()) count(operand.node);
  // The post-order lists operands before their users: walking it backwards settles each node's
  // users before the node itself.
  std::vector<bool> held(n);
  for (size_t i = n; i-- > 0;) {
    held[i] = held[i] || !handle[i] || handle[i]->use_count() != refs[i];
    if (!held[i]) continue;
    for (const ir::Value& operand : cut.nodes[i]->operands()) {
      const size_t j = index_of(operand.node);
      if (j < n) held[j] = true;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!held[i] && cut.nodes[i]->kind() == ir::NodeKind::kDeviceData) (*handle[i])->ReleaseData();
}

}  // namespace

void RetireGraph(GraphCut* cut, std::vector<ir::Value>* values, std::vector<DeferredView>* deferred,
                 RetiredGraph* retired) {
  values->clear();
  {
    std::lock_guard<std::mutex> lock(GraphWalkMutex());
    ReleaseUnreachableData(*cut, *deferred);
  }
  retired->roots = std::move(cut->roots);
  for (DeferredView& view : *deferred)
    if (view.transpose) retired->transposes.push_back(std::move(view.transpose));
  deferred->clear();
  *cut = GraphCut();
}

}  // namespace txla::graph
