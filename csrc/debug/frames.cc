#include "debug/frames.h"

#include "debug/config.h"

namespace txla::debug {
namespace {
FramesProvider provider = nullptr;
FrameListProvider list_provider = nullptr;
}  // namespace

void SetFramesProvider(FramesProvider p) { provider = p; }

bool IrDebugEnabled() {
  return GetConfig().ir_debug && provider != nullptr;
}

std::string CurrentFrames() { return provider ? provider() : std::string(); }

std::string Frame::ToString() const {
  if (file.empty()) return "<no Python frame>";
  return function + " (" + file + ":" + std::to_string(line) + ")";
}

void SetFrameListProvider(FrameListProvider p) { list_provider = p; }

std::vector<Frame> CurrentFrameList(size_t max_frames) {
  return list_provider ? list_provider(max_frames) : std::vector<Frame>();
}

Frame InnermostUserFrame(const std::vector<Frame>& frames) {
  for (const Frame& f : frames)
    if (!f.library) return f;
  return Frame();
}

}  // namespace txla::debug
