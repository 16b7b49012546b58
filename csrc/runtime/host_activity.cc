#include "runtime/host_activity.h"

#include <atomic>

namespace txla::runtime {
namespace {

std::atomic<int> host_threads{0};
std::atomic<int> host_threads_waiting{0};
thread_local bool is_host_thread = false;
thread_local int waits = 0;  // nested scopes count once

}  // namespace

void NoteHostThread() {
  if (is_host_thread) return;
  is_host_thread = true;
  host_threads.fetch_add(1, std::memory_order_relaxed);
}

HostWaitScope::HostWaitScope() : counted_(is_host_thread) {
  if (counted_ && waits++ == 0) host_threads_waiting.fetch_add(1, std::memory_order_relaxed);
}

HostWaitScope::~HostWaitScope() {
  if (counted_ && --waits == 0) host_threads_waiting.fetch_sub(1, std::memory_order_relaxed);
}

bool OtherHostThreadBusy() {
  int busy = host_threads.load(std::memory_order_relaxed) - host_threads_waiting.load(std::memory_order_relaxed);
  if (is_host_thread && waits == 0) --busy;  // the caller itself is running this work
  return busy > 0;
}

}  // namespace txla::runtime
