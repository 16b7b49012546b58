#include "debug/frames.h"

#include "debug/env.h"

namespace txla::debug {
namespace {
FramesProvider provider = nullptr;
}

void SetFramesProvider(FramesProvider p) { provider = p; }

bool IrDebugEnabled() {
  static const bool enabled = EnvBool("XLA_IR_DEBUG");
  return enabled && provider != nullptr;
}

std::string CurrentFrames() { return provider ? provider() : std::string(); }

}  // namespace txla::debug
