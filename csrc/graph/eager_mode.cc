#include "graph/eager_mode.h"

#include <atomic>

#include "debug/config.h"
#include "graph/graph_executor.h"
#include "metrics/metrics.h"

namespace txla::graph {
namespace {

std::atomic<bool>& Enabled() {
  static std::atomic<bool> enabled{debug::GetConfig().use_eager_debug_mode};
  return enabled;
}

thread_local int suspended = 0;

}  // namespace

void SetEagerMode(bool enabled) { Enabled().store(enabled); }
bool EagerModeEnabled() { return Enabled().load(); }
bool RunsEagerly() { return suspended == 0 && EagerModeEnabled(); }

SuspendEagerMode::SuspendEagerMode() { ++suspended; }
SuspendEagerMode::~SuspendEagerMode() { --suspended; }

void RunEagerly(const std::vector<LazyTensorPtr>& results) {
  std::vector<LazyTensorPtr> pending;
  for (const LazyTensorPtr& t : results)
    if (t && t->pending()) pending.push_back(t);
  if (pending.empty()) return;
  metrics::EagerOpScope eager;
  SyncTensors(pending, /*for_read=*/false);
}

}  // namespace txla::graph
