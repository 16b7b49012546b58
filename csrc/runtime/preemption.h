// Preemption notices (PyTorch/XLA's preemption sync manager): a SIGTERM, as a cloud scheduler
// sends before taking a machine back, becomes a step at which the training loop checkpoints
// instead of the process dying mid-step.
//
// The sync point is the first step asked about after the notice; each process decides it for
// itself (a job whose processes all receive the notice checkpoints at its processes' next step).
#pragma once

#include <cstdint>

namespace txla::runtime {

// Takes SIGTERM over (the process no longer dies of it) until deactivated. Idempotent.
void ActivatePreemptionSyncManager();
// Gives SIGTERM back its previous handler and forgets any notice.
void DeactivatePreemptionSyncManager();
// Whether `step` is the step to checkpoint at for a notice received. Throws if not activated.
bool SyncPointReached(int64_t step);

}  // namespace txla::runtime
