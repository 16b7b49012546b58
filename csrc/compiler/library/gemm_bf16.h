// bf16 x bf16 -> f32 GEMM (mixed precision: 16-bit operands, f32 accumulation and result), the
// product torch.autocast asks for. Through oneDNN's matmul where the CPU has bf16 instructions
// (AMX tiles, AVX512-BF16); elsewhere the operands are widened and the f32 GEMM runs, with the
// same result up to the order of the f32 accumulation.
#pragma once

#include <cstdint>

namespace txla::compiler::library {

// `batch` products C_i = A_i' B_i' (beta 0), as GemmBatched; a and b are bf16 bit patterns.
void GemmBatchedBf16(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a,
                     int64_t lda, int64_t stride_a, const uint16_t* b, int64_t ldb, int64_t stride_b, float* c,
                     int64_t ldc, int64_t stride_c);

}  // namespace txla::compiler::library
