// One-time work started on a thread of its own at import, off the first step's path.
#pragma once

#include <thread>
#include <utility>

namespace txla::compiler {

// Runs `task` on a new thread, joined when destroyed. Kept in a function-local static, it is
// joined at exit rather than detached: a thread still inside a library or initializing a static
// while the process tears its statics down would be undefined behaviour.
class BackgroundThread {
 public:
  template <typename Task>
  explicit BackgroundThread(Task&& task) : thread_(std::forward<Task>(task)) {}
  ~BackgroundThread() {
    if (thread_.joinable()) thread_.join();
  }
  BackgroundThread(const BackgroundThread&) = delete;
  BackgroundThread& operator=(const BackgroundThread&) = delete;

 private:
  std::thread thread_;
};

}  // namespace txla::compiler
