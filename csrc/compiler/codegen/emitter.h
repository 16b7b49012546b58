// The C++ emitter's internals, shared by the files that emit each kind of code: cpp_emitter.cc
// (each instruction's driver code made a step), emit_loops.cc, emit_reductions.cc,
// emit_expressions.cc, emit_library_calls.cc, emit_pool_kernels.cc and the convolution kernels
// (emit_direct_conv.cc, emit_small_image_conv.cc). The program it builds and the kernels it
// writes are kept by ProgramBuilder and KernelRegistry, which know nothing of HLO. Nothing outside
// compiler/codegen includes it; cpp_emitter.h is the interface.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/graph_program.h"
#include "compiler/codegen/expression_emitter.h"
#include "compiler/codegen/index_expr.h"
#include "compiler/codegen/kernel_registry.h"
#include "compiler/codegen/program_builder.h"
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

class Emitter {
 public:
  Emitter(const hlo::Module& module, const BufferPlan& plan, bool profile)
      : module_(module), plan_(plan), profile_(profile), expr_(plan) {}
  std::string Emit();

 private:
  // cpp_emitter.cc: each instruction's driver code made a step of the program (program_)
  std::string Buffer(const Instruction& i) { return BufferName(i); }
  void RecordBuffer(const Instruction& i);
  bool Materialized(const Instruction& i) { return IsMaterialized(plan_, i); }
  // Clears what the previous instruction's driver code left (out_, its tables and prototypes).
  void BeginStep();
  // What `chunk` (the driver code of `name`: kernel calls, library calls) becomes: a step
  // function named by its code, and the program's entry that calls it on its buffers after
  // releasing the outputs `ready`.
  void AddStep(const std::string& name, const std::string& chunk, const std::vector<int64_t>& ready);
  // The last kernel call emitted: an instruction whose driver code is just this call becomes a
  // program entry that calls the trampoline itself, with no step function of its own.
  struct KernelCall {
    std::string text, trampoline;
    std::vector<std::string> buffers;
    int64_t extent = 0;     // the range [0, extent) a ranged kernel is called on
    bool parallel = false;  // through support->parallel_for
  };
  // The program's entry for a call of a kernel's trampoline (no step function).
  void AddKernelStep(const std::string& name, const KernelCall& call, const std::vector<int64_t>& ready);

  // emit_loops.cc: loop kernels, their parallel split, the kernel functions they become
  void EmitKernel(const Instruction& i);
  // Loop kernels big enough to pay for a second thread split their outermost loop.
  static constexpr int64_t kParallelElements = 1 << 16;
  static constexpr int64_t kParallelRowReduceElements = 1 << 23;
  bool Parallelizable(const Instruction& root);
  void EmitLoop(const Instruction& root, const std::string& out);
  std::string LoopNest(const Instruction& root, const std::string& out,
                       const std::vector<std::pair<int64_t, int64_t>>& ranges, bool may_split);
  // The innermost loop's body; the statements that do not change along `inner_var` go to
  // `*invariant`, for the caller to place before that loop.
  std::string LoopBody(const Instruction& root, const std::string& out, const Index& idx, const std::string& offset,
                       const std::string& indent, const std::string& inner_var, std::string* invariant);
  bool Flat(const Instruction& root);
  std::set<const Instruction*> FlatKernelsOfManyLengths();
  void EmitFlatLoop(const Instruction& root, const std::string& out);
  static constexpr int64_t kTile = 8;  // one vector of floats; measured best for 512x512
  // What the last LoopNest emitted: tiles indexed as tile * kTile + offset (or would have, in a
  // first pass that may split), and tiles walked down columns (since EmitLoop began).
  bool nest_has_tile_indices_ = false, nest_walked_down_columns_ = false;
  // loop_reads.cc: what a loop kernel reads, for the shape of its loops
  bool KernelTransposesLastDimension(const Instruction& root);
  bool ReadsOnlyThroughTransposedRows(const Instruction& root);
  // The first of `root`'s dimensions [k, rank), k >= first_candidate, that a loop nest over its
  // shape runs as one loop (rank: none).
  size_t MergedInnerDimensions(const Instruction& root, size_t first_candidate);
  bool ReadsMergeable(const Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k, size_t root_rank);
  using MergeableReads = std::set<std::pair<const Instruction*, std::vector<int64_t>>>;
  bool ReadsMergeable(const Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k, size_t root_rank,
                      MergeableReads* seen);
  bool TransposesLastDimension(const Instruction& root);
  // emit_loops.cc again: kernels are hidden (not static) functions, each between split markers: a large source can then
  // be built as several translation units in parallel. A kernel (its signature and body; what
  // follows it in its unit, its trampoline; what a step that calls it declares besides its
  // prototype) is named by its content (kernel_naming.h) and emitted
  // once however many instructions run it. Returns the kernel-level names the call site uses.
  using KernelNames = std::map<std::string, std::string>;
  KernelNames AddKernel(const std::string& name, const std::string& signature, const std::string& body,
                        const std::string& after = "", const std::string& prototype_extra = "");
  std::string SourceComment(const std::string& name);
  // A kernel function over `buffers` (outputs first, in the call's order) with `body`, its
  // trampoline, and its call in the driver code of the instruction (call_). kOutermost: direct,
  // or with parallel_extent > 0 through support->parallel_for, the kernel then taking a range
  // [lo, hi) of its outermost loop. kFlat:
  // the kernel always takes [lo, hi) of its parallel_extent elements (its length is the call's,
  // not the kernel's), on the threads from kParallelElements.
  struct KernelBuffer {
    std::string type, buffer;
    bool output;
  };
  enum class CallForm { kOutermost, kFlat };
  void EmitKernelCall(const std::string& name, const std::vector<KernelBuffer>& buffers, const std::string& body,
                      int64_t parallel_extent, CallForm form = CallForm::kOutermost);

  // emit_reductions.cc: kernels that accumulate (reductions, cumulative sums, scatter)
  // The reductions a reduction kernel computes in one set of loops: its own, then its siblings'
  // (kernel_merging.h), each with its accumulator's name suffix and its output buffer.
  struct Reduction {
    const Instruction* reduce;
    std::string suffix, out;
  };
  std::vector<Reduction> KernelReductions(const Instruction& reduce, const std::string& out);
  std::vector<std::string> EmitOperands(const std::vector<Reduction>& all, size_t operand, const Index& idx);
  void EmitReduce(const Instruction& reduce, const std::string& out);
  static std::string ReductionIdentity(const Instruction& reduce, const std::string& init);
  static constexpr int64_t kPartials = 16;  // measured: 16 doubles beat 8 on an exp-sum row
  static_assert((kPartials & (kPartials - 1)) == 0, "partials fold in halves");
  // A row whose elements load narrow types is computed this many elements at a time into a
  // stage array before its partials take them (see EmitReduce).
  static constexpr int64_t kStageElements = 64;
  static_assert(kStageElements % kPartials == 0, "a stage is whole blocks of partials");
  bool LoadsNarrowElements(const Instruction& i, std::set<const Instruction*>* seen);
  static std::string AccumulatorType(const Instruction& reduce);
  // The type sums and products of `t` accumulate in: double for f32, else t itself.
  static std::string WideType(ElementType t) { return t == ElementType::kF32 ? "double" : CType(t); }
  static constexpr int64_t kMaxAccumulatorRow = 1 << 15;
  static constexpr int64_t kRowBlock = 16;
  static size_t RowReduceLeading(const Instruction& reduce);
  void EmitRowReduce(const std::vector<Reduction>& reductions, size_t leading);
  void EmitScatter(const Instruction& i);
  // `lines`: the scan's geometry from its custom-call row, {before d, d's length, after d}.
  void EmitCumulative(const Instruction& i, const std::vector<int64_t>& lines);

  // emit_library_calls.cc: GEMM, convolution, pooling and collective calls
  std::string Geometry(const std::string& name, const std::vector<int64_t>& fields);
  std::string Operand(const Instruction& i, size_t k);
  void EmitLibraryCall(const Instruction& i);
  // emit_pool_kernels.cc: max pooling's small windows as loop kernels (false: the library's)
  bool EmitPoolIndices(const Instruction& i);
  bool EmitPoolBackwardFromInput(const Instruction& i);
  // emit_direct_conv.cc: a forward convolution of few input channels as a loop kernel
  bool EmitDirectConv(const Instruction& i);
  // ... and the input gradient of a stride-1 convolution of few input channels, 16 images a vector
  bool EmitDirectConvInputGradient(const Instruction& i);
  // ... and its filter gradient, the groups of 16 images' parts added in order by its step
  bool EmitDirectConvFilterGradient(const Instruction& i);
  // emit_small_image_conv.cc: a convolution of images of a few pixels (or its input gradient),
  // only its valid taps, 16 images a vector
  bool EmitSmallImageConv(const Instruction& i, bool input_gradient);
  // ... and its filter gradient, 16 input channels a vector
  bool EmitSmallImageConvFilterGradient(const Instruction& i);
  void EmitCollective(const Instruction& i);
  // A float32 convolution (or gradient call) of one group in NCHW/OIHW of this rank without base
  // dilation: what the loop-kernel convolutions (emit_direct_conv.cc, emit_small_image_conv.cc) take.
  static bool IsFloatSingleGroupConv2d(const Instruction& i, int64_t rank);
  // A float32 convolution (or gradient call) of one group at stride 1 without dilation or
  // padding, in NCHW/OIHW of this rank: what emit_direct_conv.cc's loop kernels take.
  static bool IsPlainUnitStrideConv2d(const Instruction& i, int64_t rank);
  std::pair<const Instruction*, bool> GemmOperand(const Instruction& i);
  void EmitDot(const Instruction& dot);

  // State: the graph, the text being built, the kernel being emitted.
  const hlo::Module& module_;
  const BufferPlan& plan_;
  bool profile_;
  KernelCall call_;
  std::ostringstream out_;        // the driver code of the instruction being emitted
  KernelRegistry kernels_;        // kernels and step functions, each between markers
  std::ostringstream step_tables_;  // geometry tables of the instruction being emitted
  std::string step_prototypes_;     // prototypes of the kernels it calls
  ProgramBuilder program_;  // the buffers, the steps and the program they make
  bool parallel_ = false;       // the kernel being emitted splits its outermost loop
  int64_t parallel_extent_ = 0;
  std::set<const Instruction*> flat_kernels_;  // the loop kernels emitted flat (FlatKernelsOfManyLengths)
  bool probing_flat_ = false;                  // emitting only a flat candidate, to compare it
  // The kernel's expressions and what they leave (its body, buffers, tables); its context:
  // fused parameters and the producers it also writes (kernel_merging.h) -> their fused roots.
  ExpressionEmitter expr_;
  std::vector<const Instruction*> extra_outputs_;
  // The fused roots of the sibling reductions the kernel being emitted also computes, in the
  // order of extra_outputs_.
  std::vector<const Instruction*> sibling_reductions_;
};

}  // namespace txla::compiler::emitter
