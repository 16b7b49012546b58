#include "hlo/custom_call.h"

#include <stdexcept>
#include <string>

namespace txla::hlo {
namespace {

constexpr std::string_view kNames[] = {
    "",
#define TXLA_CUSTOM_CALL_NAME(e, name, routine, geometry) name,
    TXLA_CUSTOM_CALL_TARGETS(TXLA_CUSTOM_CALL_NAME)
#undef TXLA_CUSTOM_CALL_NAME
};

}  // namespace

std::string_view CustomCallTargetName(CustomCallTarget target) { return kNames[static_cast<int>(target)]; }

CustomCallTarget ParseCustomCallTarget(std::string_view name) {
  for (size_t k = 1; k < std::size(kNames); ++k)
    if (kNames[k] == name) return static_cast<CustomCallTarget>(k);
  throw std::invalid_argument("unknown custom_call_target \"" + std::string(name) + "\"");
}

}  // namespace txla::hlo
