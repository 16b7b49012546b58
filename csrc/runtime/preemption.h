// Preemption notices (PyTorch/XLA's preemption sync manager): a SIGTERM, as a cloud scheduler
// sends before taking a machine back, becomes a step at which the training loop checkpoints
// instead of the process dying mid-step.
//
// The sync point is the first step asked about after the notice. In a job, the processes agree
// on it: each asks with whether any process has noticed (the Python layer all-reduces the flag
// over the job's group), so a notice to one process checkpoints every process at the same step.
#pragma once

#include <cstdint>

namespace txla::runtime {

// Takes SIGTERM over (the process no longer dies of it) until deactivated. Idempotent.
void ActivatePreemptionSyncManager();
// Gives SIGTERM back its previous handler and forgets any notice.
void DeactivatePreemptionSyncManager();
// Whether `step` is the step to checkpoint at for a notice received. Throws if not activated.
bool SyncPointReached(int64_t step);
// Whether this process has received a notice since activation.
bool PreemptionNoticed();
// As SyncPointReached, with the notice decided by the job: `noticed` is whether any process has.
bool SyncPointReached(int64_t step, bool noticed);

}  // namespace txla::runtime
