// Python stack frames, for debugging. The Python layer installs the providers (this layer has no
// Python): XLA_IR_DEBUG=1 keeps the formatted stack that created each IR node, shown in IR dumps;
// the compilation and execution analyses (PT_XLA_DEBUG) name the user's frames that caused a
// graph to compile or run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace txla::debug {

using FramesProvider = std::string (*)();
void SetFramesProvider(FramesProvider provider);
bool IrDebugEnabled();
std::string CurrentFrames();

struct Frame {
  std::string function, file;
  int64_t line = 0;
  bool library = false;  // torch's, torch_xla's or the Python standard library's own code
  std::string ToString() const;  // "function (file:line)"
};
using FrameListProvider = std::vector<Frame> (*)(size_t max_frames);
void SetFrameListProvider(FrameListProvider provider);
// The calling Python thread's frames, innermost first (empty without a provider).
std::vector<Frame> CurrentFrameList(size_t max_frames = 32);
// The innermost frame of user code in `frames` (a default Frame when there is none).
Frame InnermostUserFrame(const std::vector<Frame>& frames);

}  // namespace txla::debug
