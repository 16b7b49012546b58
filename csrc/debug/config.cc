#include "debug/config.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "debug/env.h"

namespace txla::debug {
namespace {

template <typename T> T Read(const char* variable, const T& default_value);
template <> bool Read(const char* variable, const bool& default_value) {
  return EnvBool(variable, default_value);
}
template <> int64_t Read(const char* variable, const int64_t& default_value) {
  return EnvInt(variable, default_value);
}
template <> std::string Read(const char* variable, const std::string& default_value) {
  return EnvString(variable, default_value);
}

std::string Show(bool v) { return v ? "1" : "0"; }
std::string Show(int64_t v) { return std::to_string(v); }
std::string Show(const std::string& v) { return v; }

// An XLA boolean flag in XLA_FLAGS' syntax: "--name", "--name=true" / "=1" (on), "--name=false".
bool XlaFlagEnabled(const std::string& flags, const std::string& name) {
  bool enabled = false;
  const std::string key = "--" + name;
  for (size_t at = flags.find(key); at != std::string::npos; at = flags.find(key, at + key.size())) {
    const size_t end = at + key.size();
    if (end == flags.size() || flags[end] == ' ') {
      enabled = true;
    } else if (flags[end] == '=') {
      const std::string value = flags.substr(end + 1, flags.find(' ', end) - end - 1);
      enabled = value == "true" || value == "1";
    }
  }
  return enabled;
}

std::unique_ptr<Config> ReadEnvironment() {
  auto config = std::make_unique<Config>();
#define TXLA_CONFIG_READ(type, field, variable, default_value, codegen, doc) \
  config->field = Read<type>(variable, default_value);
  TXLA_CONFIG_SWITCHES(TXLA_CONFIG_READ)
#undef TXLA_CONFIG_READ
  config->allow_excess_precision = XlaFlagEnabled(config->xla_flags, "xla_allow_excess_precision");
#define TXLA_CONFIG_KEY(type, field, variable, default_value, codegen, doc) \
  if (codegen) config->codegen_key += std::string(variable) + "=" + Show(config->field) + "|";
  TXLA_CONFIG_SWITCHES(TXLA_CONFIG_KEY)
#undef TXLA_CONFIG_KEY
  return config;
}

// Every configuration ever read stays alive, so a reference taken before a reload never dangles
// (reloads are rare: tests and debugging sessions).
std::mutex generations_mutex;
std::vector<std::unique_ptr<Config>>& Generations() {
  static std::vector<std::unique_ptr<Config>> generations;
  return generations;
}
std::atomic<const Config*> current{nullptr};

}  // namespace

const Config& ReloadConfig() {
  std::lock_guard<std::mutex> lock(generations_mutex);
  Generations().push_back(ReadEnvironment());
  current.store(Generations().back().get(), std::memory_order_release);
  return *Generations().back();
}

const Config& GetConfig() {
  const Config* config = current.load(std::memory_order_acquire);
  // Two first callers may both read the environment: the same values, either one wins.
  return config != nullptr ? *config : ReloadConfig();
}

std::vector<SwitchDescription> DescribeConfig() {
  const Config& config = GetConfig();
  std::vector<SwitchDescription> out;
#define TXLA_CONFIG_DESCRIBE(type, field, variable, default_value, codegen, doc) \
  out.push_back({variable, #type, Show(config.field), doc, codegen});
  TXLA_CONFIG_SWITCHES(TXLA_CONFIG_DESCRIBE)
#undef TXLA_CONFIG_DESCRIBE
  return out;
}

}  // namespace txla::debug
