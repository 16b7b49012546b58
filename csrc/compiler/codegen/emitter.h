// The C++ emitter's shared vocabulary: element types as C++ source, literals, offsets of
// multi-indices, and the facts about instructions every emitter asks. The emitters are one class
// per concept: StepWriter (step_writer.h: the step being written, the graph's kernels and
// program), ExpressionEmitter (values at a loop index), LoopEmitter (loop kernels),
// ReductionEmitter (kernels that accumulate) and LibraryCallEmitter (support-table calls);
// cpp_emitter.cc drives them instruction by instruction. Nothing outside compiler/codegen
// includes this; cpp_emitter.h is the interface.
#pragma once

#include <string>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/expression_emitter.h"
#include "compiler/codegen/index_expr.h"
#include "hlo/instruction.h"

namespace txla::compiler::emitter {

// The loop-kernel convolutions that vectorize over images take 16 float32 images a vector
// (one AVX-512 register; GCC splits it on narrower CPUs).
constexpr int64_t kImagesPerVector = 16;
// Their vector type in generated source: txla_v16, 16 floats.
constexpr const char* kVector16Typedef = "  typedef float txla_v16 __attribute__((vector_size(64)));\n";
// Generated source copying 16 images' `count` floats each of `source`, from image n0, into
// `copy`[k][image] (emit_direct_conv.cc).
std::string ImagesLastCopy(const std::string& copy, const std::string& source, int64_t count);

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using Index = std::vector<IndexExpr>;

const char* CType(ElementType t);
using hlo::Is16BitFloat;
// The type of a buffer's elements in memory: a 16-bit float is its bit pattern.
std::string StorageType(ElementType t);
// A call of runtime/scalar_ops.h's `txla_<prefix><bf16|f16><suffix>` on `value` for a 16-bit
// float type; `value` itself for any other type.
std::string Call16BitFloat(ElementType t, const char* prefix, const char* suffix, const std::string& value);
// `value` (of CType(t)) as the bits a buffer of `t` stores.
std::string Stored(ElementType t, const std::string& value);
// A float rounded to the 16-bit float type `t` (other types unchanged).
std::string Rounded(ElementType t, const std::string& value);
// Element k of a literal as C++ source; integers come from the literal's exact int64 values.
std::string Literal(const hlo::Literal& literal, int64_t k, ElementType t);
// The row-major offset of a multi-index, as source.
IndexExpr LinearExpr(const Index& idx, const std::vector<int64_t>& dims);
std::string Linear(const Index& idx, const std::vector<int64_t>& dims);
// The multi-index into `dims` of a row-major offset (LinearExpr's inverse): quotients and
// remainders, simplified by the offset's range.
Index DelinearizeExpr(const IndexExpr& offset, const std::vector<int64_t>& dims);

// A 2-D convolution in NCHW/OIHW without base dilation, padded alike on both sides: what the
// library's convolutions take.
bool IsCanonicalConv2d(const hlo::Attributes& a, int64_t rank);

// A view is read in its base's buffer and a merged producer is written by its consumer's loop:
// neither has code of its own.
inline bool HasCodeOfItsOwn(const BufferPlan& plan, const Instruction& i) {
  return !plan.IsView(&i) && plan.merged.writer.count(&i) == 0;
}

}  // namespace txla::compiler::emitter
