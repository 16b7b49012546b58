// libFuzzer target: the HLO text parser reads files we do not fully control (the persistent
// cache, dumps edited by hand). Any input must end in a parsed module or an exception, never a
// crash, hang or sanitizer report; what parses must verify or be rejected, and print.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto module = txla::hlo::ParseModule(text);
    txla::hlo::Verify(*module);
    // A verified module prints and parses back.
    txla::hlo::ParseModule(txla::hlo::ToText(*module));
  } catch (const std::exception&) {
    // Rejected with an error: what the callers expect of bad input.
  }
  return 0;
}
