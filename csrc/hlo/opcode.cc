#include "hlo/opcode.h"

#include <stdexcept>
#include <string>

namespace txla::hlo {
namespace {

struct OpcodeInfo {
  Opcode op;
  std::string_view name;
  OpcodeKind kind;
};

constexpr OpcodeInfo kOpcodes[] = {
#define TXLA_HLO_INFO(e, name, kind) {Opcode::e, name, OpcodeKind::kind},
    TXLA_HLO_OPCODES(TXLA_HLO_INFO)
#undef TXLA_HLO_INFO
};

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<int>(op)].name; }

OpcodeKind KindOf(Opcode op) { return kOpcodes[static_cast<int>(op)].kind; }

bool IsElementwise(Opcode op) {
  return KindOf(op) != OpcodeKind::kOther || op == Opcode::kSelect || op == Opcode::kClamp ||
         op == Opcode::kConvert;
}

Opcode ParseOpcode(std::string_view name) {
  for (const OpcodeInfo& info : kOpcodes)
    if (info.name == name) return info.op;
  throw std::invalid_argument("unknown HLO opcode '" + std::string(name) + "'");
}

}  // namespace txla::hlo
