// The runtime side of generated code's support table: library routines (GEMM via OpenBLAS)
// the kernels call through function pointers.
#pragma once

#include "compiler/codegen/cpp_emitter.h"

namespace txla::compiler {

const TxlaSupport* GetSupportTable();

}  // namespace txla::compiler
