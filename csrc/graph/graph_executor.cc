#include "graph/graph_executor.h"

#include <mutex>

#include "debug/env.h"
#include "graph/compile_cache.h"
#include "graph/interpreter.h"
#include "graph/post_order.h"
#include "ir/ir_dump.h"
#include "metrics/metrics.h"
#include "tensor/bridge.h"
#include "tensor/registry.h"

namespace txla::graph {
namespace {

CompileCache& Cache() {
  static CompileCache* cache =
      new CompileCache(static_cast<size_t>(debug::EnvInt("XLA_COMPILATION_CACHE_SIZE", 1024)));
  return *cache;
}

// One sync at a time: the cache and the tensors' state change together.
std::mutex& SyncMutex() {
  static std::mutex mu;
  return mu;
}

std::shared_ptr<runtime::Executable> GetOrCompile(const GraphCut& cut) {
  if (auto cached = Cache().Get(cut.hash)) {
    TXLA_COUNTER("CachedCompile", 1);
    return cached;
  }
  TXLA_COUNTER("UncachedCompile", 1);
  std::shared_ptr<runtime::Executable> executable;
  {
    TXLA_TIMED("CompileTime");
    executable = BuildInterpreterProgram(cut);
  }
  Cache().Put(cut.hash, executable);
  return executable;
}

}  // namespace

void SyncTensors(const std::vector<LazyTensorPtr>& tensors) {
  std::lock_guard<std::mutex> lock(SyncMutex());
  std::vector<LazyTensorPtr> pending;
  std::vector<ir::Value> values;
  for (const LazyTensorPtr& t : tensors) {
    if (t && t->pending()) {
      pending.push_back(t);
      values.push_back(t->pending());
    }
  }
  if (pending.empty()) return;
  int device = pending.front()->device();
  std::vector<size_t> root_index;
  GraphCut cut = CutGraph(values, &root_index);
  ir::DumpGraphIfRequested(cut, values);
  std::shared_ptr<runtime::Executable> executable = GetOrCompile(cut);
  std::vector<runtime::BufferPtr> results;
  {
    TXLA_TIMED("ExecuteTime");
    results = executable->Execute(cut.parameters, device);
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    // A tensor updated in place while the graph ran keeps its newer pending value.
    if (pending[i]->pending().node == values[i].node &&
        pending[i]->pending().index == values[i].index)
      pending[i]->SetData(results[root_index[i]]);
  }
}

void MarkStep(int device) {
  TXLA_COUNTER("MarkStep", 1);
  SyncTensors(registry::PendingTensors(device));
}

at::Tensor ToHost(const LazyTensorPtr& tensor) {
  if (tensor->pending()) SyncTensors({tensor});
  return TransferFromDevice(tensor->data());
}

size_t CompileCacheSize() { return Cache().size(); }

}  // namespace txla::graph
