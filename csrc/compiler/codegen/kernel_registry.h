// The functions of one generated unit: each kernel named by its content (kernel_naming.h) and
// written once, between markers, however many instructions call it; the step functions the
// program builder makes go beside them. Knows nothing of HLO: the emitter hands it text.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>

namespace txla::compiler::emitter {

class KernelRegistry {
 public:
  struct Added {
    std::map<std::string, std::string> names;  // each kernel-level identifier given -> its final name
    std::string prototypes;                    // what a step calling the kernel declares
  };
  // A kernel function `signature` { `body` }, then `after` (its trampoline, say), declared to its
  // callers with `prototype_extra` too; `comment` lines go before it. `name` (an instruction's)
  // only labels the marker line.
  Added Add(const std::string& name, const std::string& comment, const std::string& signature,
            const std::string& body, const std::string& after = "", const std::string& prototype_extra = "");
  // Text already between markers (a step function).
  void AddText(const std::string& text) { text_ << text; }
  // The content hashes of the kernels added, one per distinct kernel.
  const std::set<std::string>& hashes() const { return hashes_; }
  std::string Text() const { return text_.str(); }

 private:
  std::set<std::string> hashes_;
  std::ostringstream text_;
};

}  // namespace txla::compiler::emitter
