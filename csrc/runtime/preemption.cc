#include "runtime/preemption.h"

#include <csignal>

#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace txla::runtime {
namespace {

std::atomic<bool> noticed{false};  // set by the signal handler: nothing else is async-signal-safe

struct State {
  std::mutex mu;
  bool active = false;
  struct sigaction previous {};
  std::optional<int64_t> sync_step;
};

State& GetState() {
  static State state;
  return state;
}

void OnTerm(int) { noticed.store(true); }

}  // namespace

void ActivatePreemptionSyncManager() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.active) return;
  struct sigaction action {};
  action.sa_handler = &OnTerm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGTERM, &action, &s.previous) != 0)
    throw std::runtime_error("preemption sync manager: cannot install a SIGTERM handler");
  s.active = true;
}

void DeactivatePreemptionSyncManager() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.active) return;
  sigaction(SIGTERM, &s.previous, nullptr);
  s.active = false;
  s.sync_step.reset();
  noticed.store(false);
}

bool SyncPointReached(int64_t step) { return SyncPointReached(step, noticed.load()); }

bool PreemptionNoticed() { return noticed.load(); }

bool SyncPointReached(int64_t step, bool job_noticed) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.active)
    throw std::runtime_error(
        "_sync_point_reached: the preemption sync manager is not active "
        "(torch_xla._XLAC._activate_preemption_sync_manager(), or CheckpointManager(chkpt_on_preemption=True))");
  if (!job_noticed) return false;
  if (!s.sync_step) s.sync_step = step;
  return *s.sync_step == step;
}

}  // namespace txla::runtime
