// Whether a host thread is busy tracing the next step rather than waiting on a device.
//
// On a machine with few cores, a pipelined step traces step k+1 on the host while step k's
// kernels run on every core: three busy threads on two cores slow both. Library calls and large
// kernels ask here before splitting work, and leave the host a core while it traces; when the
// host waits (reading a value, for room in a full queue) or sits idle they take every core.
//
// Tracing is noticed as it happens (each recorded IR node), not inferred from which threads
// submitted graphs: torch.compile's backward graph is submitted from autograd's device thread,
// which then idles in the engine, and counting it busy left every later kernel on one core
// (ResNet-18 through 'openxla' at 0.6x of its lazy speed).
#pragma once

#include <chrono>

namespace txla::runtime {

// How long after its last recorded node a thread still counts as tracing. Python between two
// recorded ops takes microseconds to tens of microseconds, but a trace has longer pauses: the
// hand-over to autograd's device thread and back (0.3-0.7 ms in the GPT decoder's step), a
// collection of Python's garbage. Counted as idle, a pause let the run take both cores, which
// preempted the host and lengthened the pause. Measured against a 200 us window (alternating
// processes, 2-core Zen 5): the GPT decoder's step 9.25 -> 8.44 ms with this one, the CNN's
// 3.10 -> 2.81 ms, others level; 5 ms was slower again. A thread that stops tracing without
// waiting on a device (autograd's, once the backward pass is recorded) keeps a core this long.
constexpr std::chrono::microseconds kHostTraceWindow{2000};

// The calling thread is recording IR now (called for every node recorded).
void NoteHostActivity();

// A host thread blocked on a value is about to be woken by it (an early output, released while
// its run goes on): it will trace the next step, so the run's next parallel regions leave it a
// core now. Otherwise both cores stay busy with kernel threads and the woken thread waits for a
// time slice, often until the run ends, and the release gains nothing.
void NoteHostWaking();

// Around a barrier (a graph cut and handed to the device): the trace has ended (the calling
// thread's, or autograd's thread's before it), and the nodes the barrier itself records (views
// of updated parameters taken again, after the hand-over) are not tracing. Counted as tracing,
// they kept the step's first kernels, which start as the barrier returns, off a core (the MLP's
// first GEMM ran on one thread every other step).
class HostBarrierScope {
 public:
  HostBarrierScope();
  ~HostBarrierScope();
  HostBarrierScope(const HostBarrierScope&) = delete;
  HostBarrierScope& operator=(const HostBarrierScope&) = delete;
};

// Around a host thread's blocking wait on a device: tracing has stopped (as at a barrier).
class HostWaitScope {
 public:
  HostWaitScope();
  ~HostWaitScope();
  HostWaitScope(const HostWaitScope&) = delete;
  HostWaitScope& operator=(const HostWaitScope&) = delete;
};

// Whether some host thread is blocked in a HostWaitScope now: the device's work is what it
// waits for, and the cores are the device's. (A host thread between two ops, or in Python after
// a barrier, is neither waiting nor, by OtherHostThreadBusy, tracing: it needs its core too.)
bool SomeHostThreadWaiting();

// Whether some thread other than the caller recorded IR within the last kHostTraceWindow and
// has not started waiting on a device since.
bool OtherHostThreadBusy();

// Called whenever a host thread stops tracing (a wait, a barrier): a thread that left work to
// the tracing host can take it up again. One listener (the library's thread pool).
void SetTraceEndedListener(void (*listener)());

}  // namespace txla::runtime
