#include "debug/frames.h"

#include "debug/config.h"

namespace txla::debug {
namespace {
FramesProvider provider = nullptr;
}

void SetFramesProvider(FramesProvider p) { provider = p; }

bool IrDebugEnabled() {
  return GetConfig().ir_debug && provider != nullptr;
}

std::string CurrentFrames() { return provider ? provider() : std::string(); }

}  // namespace txla::debug
