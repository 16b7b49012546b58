// Parsing environment variables. The device's own switches are declared in debug/config.h and
// read through GetConfig(); these are for that, and for the system's (PATH, TMPDIR).
#pragma once

#include <cstdint>
#include <string>

namespace txla::debug {

std::string EnvString(const char* name, const std::string& default_value = "");
int64_t EnvInt(const char* name, int64_t default_value);
bool EnvBool(const char* name, bool default_value = false);  // "1", "true", "yes" are true

}  // namespace txla::debug
