#include "graph/deferred_views.h"

#include <map>
#include <set>
#include <utility>

#include "metrics/metrics.h"

namespace txla::graph {
namespace {

// Functionalization's transposing view ops, as they reach the lazy IR.
bool IsTranspose(const ir::Value& value) {
  const ir::Node& node = *value.node;
  if (node.kind() != ir::NodeKind::kOp || node.operands().size() != 1) return false;
  const std::string name = node.OpName();
  return name == "aten::t_copy" || name == "aten::transpose_copy.int" || name == "aten::permute_copy";
}

// Applying the op again gives back its operand.
bool IsInvolution(const ir::Value& value) {
  const std::string name = value.node->OpName();
  return name == "aten::t_copy" || name == "aten::transpose_copy.int";
}

}  // namespace

std::vector<DeferredView> TakeDeferredViews(std::vector<LazyTensorPtr>* pending) {
  std::map<std::pair<const ir::Node*, uint32_t>, LazyTensor*> by_value;
  for (const LazyTensorPtr& t : *pending)
    by_value.emplace(std::make_pair(t->pending().node.get(), t->pending().index), t.get());
  struct Rebase {
    LazyTensor* source;  // null: stays as it is
    ir::NodePtr transpose;
  };
  std::map<LazyTensor*, Rebase> deferred;
  std::set<LazyTensor*> sources;  // computed: a deferred tensor is rebased on each
  for (const LazyTensorPtr& t : *pending) {
    const ir::Value& value = t->pending();
    if (!IsTranspose(value) || deferred.count(t.get()) || sources.count(t.get())) continue;
    const ir::Value& operand = value.node->operands()[0];
    if (operand.node->kind() == ir::NodeKind::kDeviceData) {
      deferred.emplace(t.get(), Rebase{nullptr, nullptr});
      continue;
    }
    auto found = by_value.find({operand.node.get(), operand.index});
    if (found == by_value.end()) continue;
    LazyTensor* base = found->second;
    if (base == t.get() || deferred.count(base) || IsTranspose(base->pending())) continue;
    if (IsInvolution(value) && !sources.count(base)) {
      deferred.emplace(base, Rebase{t.get(), value.node});
      sources.insert(t.get());
    } else {
      deferred.emplace(t.get(), Rebase{base, value.node});
      sources.insert(base);
    }
  }
  std::map<LazyTensor*, LazyTensorPtr> owners;
  for (const LazyTensorPtr& t : *pending) owners.emplace(t.get(), t);
  std::vector<DeferredView> views;
  std::vector<LazyTensorPtr> computed;
  for (LazyTensorPtr& t : *pending) {
    auto it = deferred.find(t.get());
    if (it == deferred.end()) {
      computed.push_back(std::move(t));
      continue;
    }
    const Rebase& r = it->second;
    views.push_back({t, r.source ? owners.at(r.source) : nullptr, r.transpose});
  }
  *pending = std::move(computed);
  if (!views.empty()) TXLA_COUNTER("DeferredTransposedViews", static_cast<int64_t>(views.size()));
  return views;
}

void RebaseDeferredViews(const std::vector<DeferredView>& views) {
  for (const DeferredView& view : views) {
    if (!view.source) continue;  // already a transpose of device data
    const ir::Node& node = *view.transpose;
    view.tensor->SetIrValue(ir::Value{
        ir::Node::Op(node.op(), {view.source->GetIrValue()}, node.args(), {view.tensor->shape()}), 0});
  }
}

}  // namespace txla::graph
