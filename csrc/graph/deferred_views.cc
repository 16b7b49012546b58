#include "graph/deferred_views.h"

#include <limits>
#include <map>
#include <utility>

#include "ir/op_table.h"
#include "metrics/metrics.h"

namespace txla::graph {
namespace {

// The op of a node with one operand, or null.
const ir::OpInfo* UnaryOp(const ir::Value& value) {
  const ir::Node& node = *value.node;
  if (node.kind() != ir::NodeKind::kOp || node.operands().size() != 1) return nullptr;
  return node.op();
}

// Applying the op again gives back its operand.
bool IsInvolution(const ir::Value& value) {
  const ir::OpInfo* op = UnaryOp(value);
  return op && op->Has(ir::kInvolution);
}

}  // namespace

// Functionalization's transposing view ops, as they reach the lazy IR.
bool IsTransposingView(const ir::Value& value) {
  const ir::OpInfo* op = UnaryOp(value);
  return op && op->Has(ir::kTransposingView);
}

std::vector<DeferredView> TakeDeferredViews(std::vector<LazyTensorPtr>* pending) {
  std::vector<LazyTensorPtr>& tensors = *pending;
  std::map<std::pair<const ir::Node*, uint32_t>, size_t> by_value;
  for (size_t i = 0; i < tensors.size(); ++i)
    by_value.emplace(std::make_pair(tensors[i]->pending().node.get(), tensors[i]->pending().index), i);
  // Per tensor: deferred (rebased on `source`, or left as it is when there is none), or a source
  // some deferred tensor is rebased on (so computed).
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  struct Plan {
    bool deferred = false, source_of_another = false;
    size_t source = kNone;
    ir::NodePtr transpose;
  };
  std::vector<Plan> plan(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ir::Value& value = tensors[i]->pending();
    if (!IsTransposingView(value) || plan[i].deferred || plan[i].source_of_another) continue;
    const ir::Value& operand = value.node->operands()[0];
    if (operand.node->kind() == ir::NodeKind::kDeviceData) {
      plan[i].deferred = true;
      continue;
    }
    auto found = by_value.find({operand.node.get(), operand.index});
    if (found == by_value.end()) continue;
    const size_t base = found->second;
    if (base == i || plan[base].deferred || IsTransposingView(tensors[base]->pending())) continue;
    // Of the base and its transpose, which stays pending: the base when the transpose is its
    // own inverse (and nothing else is rebased on the base), else the transpose.
    const bool defer_base = IsInvolution(value) && !plan[base].source_of_another;
    const size_t deferred = defer_base ? base : i, source = defer_base ? i : base;
    plan[deferred].deferred = true;
    plan[deferred].source = source;
    plan[deferred].transpose = value.node;
    plan[source].source_of_another = true;
  }
  std::vector<DeferredView> views;
  std::vector<LazyTensorPtr> computed;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!plan[i].deferred) {
      computed.push_back(tensors[i]);
      continue;
    }
    views.push_back({tensors[i], plan[i].source == kNone ? nullptr : tensors[plan[i].source], plan[i].transpose});
  }
  tensors = std::move(computed);
  if (!views.empty()) TXLA_COUNTER("DeferredTransposedViews", static_cast<int64_t>(views.size()));
  return views;
}

void RebaseDeferredViews(const std::vector<DeferredView>& views) {
  for (const DeferredView& view : views) {
    if (!view.source) continue;  // already a transpose of device data
    const ir::Node& node = *view.transpose;
    view.tensor->SetIrValue(
        ir::Value{ir::Node::Op(node.op(), {view.source->GetIrValue()}, node.args(), {view.tensor->shape()}), 0});
  }
}

}  // namespace txla::graph
