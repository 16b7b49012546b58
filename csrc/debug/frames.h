// Python stack frames for IR debugging (XLA_IR_DEBUG=1): the Python layer installs a provider,
// and every recorded node keeps the frames that created it, shown in IR dumps.
#pragma once

#include <string>

namespace txla::debug {

using FramesProvider = std::string (*)();
void SetFramesProvider(FramesProvider provider);
bool IrDebugEnabled();
std::string CurrentFrames();

}  // namespace txla::debug
