// Python's signal handlers run while the main thread waits on the device.
//
// A thread that reads a pending value waits for its run with the GIL released; Python runs a
// signal's handler only when the main thread is back in the interpreter, so Ctrl-C, or a test
// runner's timeout (SIGALRM), waited for the whole run: a graph that ran for days could not be
// stopped. The wait now polls Python's signals on the main thread and leaves with the handler's
// exception (KeyboardInterrupt, the runner's timeout error) through PyTorch's own path for Python
// errors. The run goes on; the tensors it computes stay pending and can be read later.
#pragma once

namespace txla::python {

// Called at import, on the importing (main) thread.
void InstallWaitInterrupts();

}  // namespace txla::python
