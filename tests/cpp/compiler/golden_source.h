// Generated source of a known graph for golden tests: everything after the shared prelude (the
// kernels and the program), with each kernel's content hash written as H (hashes follow the
// text, and would make every change to a kernel show up twice).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/cpp_emitter.h"
#include "compiler/compile.h"
#include "hlo/parser.h"

namespace txla::compiler {

inline std::string EmitAfterPrelude(const std::string& text) {
  auto module = hlo::ParseModule(text);
  RunPipeline(*module);
  SourceParts parts = ParseSource(EmitCpp(*module, AssignBuffers(*module)));
  EXPECT_TRUE(parts.valid);
  std::string rest;
  for (const SourceKernel& k : parts.kernels) rest += k.text;
  rest += parts.run;
  for (const SourceKernel& k : parts.kernels)
    for (size_t at = rest.find(k.hash); at != std::string::npos; at = rest.find(k.hash, at))
      rest.replace(at, k.hash.size(), "H");
  return rest;
}

}  // namespace txla::compiler
