// Whether a host thread is busy (tracing the next step) rather than waiting on a device.
//
// On a machine with few cores, a pipelined step traces step k+1 on the host while step k's
// kernels run on every core: three busy threads on two cores slow both. Library calls and large
// kernels ask here before splitting work, and leave the host a core while it traces; when the
// host waits (reading a value, or for room in a full queue) they take every core.
#pragma once

namespace txla::runtime {

// Marks the calling thread as a host thread (one that submits graphs); idempotent.
void NoteHostThread();

// Around a host thread's blocking wait on a device (no effect on other threads).
class HostWaitScope {
 public:
  HostWaitScope();
  ~HostWaitScope();
  HostWaitScope(const HostWaitScope&) = delete;
  HostWaitScope& operator=(const HostWaitScope&) = delete;

 private:
  bool counted_;
};

// Whether some host thread other than the caller is running (not waiting on a device).
bool OtherHostThreadBusy();

}  // namespace txla::runtime
