// Environment switches (XLA_IR_DEBUG, XLA_SAVE_TENSORS_FILE, XLA_NO_SPECIAL_SCALARS, ...).
// Read at call time, so tests can set them with os.environ before the first use.
#pragma once

#include <cstdint>
#include <string>

namespace txla::debug {

std::string EnvString(const char* name, const std::string& default_value = "");
int64_t EnvInt(const char* name, int64_t default_value);
bool EnvBool(const char* name, bool default_value = false);  // "1", "true", "yes" are true

}  // namespace txla::debug
