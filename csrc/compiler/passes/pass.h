// A compiler pass: a named function over a module that reports whether it changed anything.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace txla::compiler {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual bool Run(hlo::Module& module) = 0;
};

// Whether TXLA_DISABLE_PASSES (a debugging switch to bisect miscompiles) leaves the pass `name`
// on: checked by the pipeline, and by later stages that act on a pass's result.
bool PassEnabled(const std::string& name);

}  // namespace txla::compiler
