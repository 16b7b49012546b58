#include "debug/env.h"

#include <cstdlib>
#include <cstring>

namespace txla::debug {

std::string EnvString(const char* name, const std::string& default_value) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : default_value;
}

int64_t EnvInt(const char* name, int64_t default_value) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return default_value;
  char* end = nullptr;
  long long parsed = std::strtoll(value, &end, 10);
  return (end && *end == '\0') ? parsed : default_value;
}

bool EnvBool(const char* name, bool default_value) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return default_value;
  return std::strcmp(value, "1") == 0 || strcasecmp(value, "true") == 0 ||
         strcasecmp(value, "yes") == 0;
}

}  // namespace txla::debug
