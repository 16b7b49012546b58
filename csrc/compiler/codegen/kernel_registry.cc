#include "compiler/codegen/kernel_registry.h"

#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_naming.h"
#include "metrics/metrics.h"

namespace txla::compiler::emitter {

KernelRegistry::Added KernelRegistry::Add(const std::string& name, const std::string& comment,
                                          const std::string& signature, const std::string& body,
                                          const std::string& after, const std::string& prototype_extra) {
  NamedKernel kernel = NameByContent({signature, body, after, prototype_extra});
  if (hashes_.insert(kernel.hash).second) {
    text_ << kKernelBegin << kernel.hash << " " << name << "\n"
          << comment << kernel.pieces[0] << " {\n"
          << kernel.pieces[1] << "}\n"
          << kernel.pieces[2] << kKernelEnd;
  } else {
    TXLA_COUNTER("KernelsSharedInGraph", 1);
  }
  // Each step is a unit's text of its own: the step that calls the kernel declares it.
  return {std::move(kernel.names), kernel.pieces[0] + ";\n" + kernel.pieces[3]};
}

}  // namespace txla::compiler::emitter
