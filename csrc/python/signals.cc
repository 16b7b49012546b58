#include "python/signals.h"

#include <Python.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>

#include <thread>

#include "runtime/execution_queue.h"

namespace txla::python {
namespace {

std::thread::id main_thread;

void RaisePendingSignals() {
  // Only the main thread runs Python's signal handlers; other waiters need not take the GIL.
  if (std::this_thread::get_id() != main_thread || !Py_IsInitialized() || _Py_IsFinalizing()) return;
  pybind11::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return;
  python_error error;
  error.persist();  // takes the handler's exception; PyTorch's bindings raise it again
  throw error;
}

}  // namespace

void InstallWaitInterrupts() {
  main_thread = std::this_thread::get_id();
  runtime::SetWaitInterruptCheck(&RaisePendingSignals);
}

}  // namespace txla::python
