// Lowering: lazy IR (ATen-level ops) -> HLO primitives.
//
// A LoweringContext builds the entry computation of an HLO module for one cut graph: each graph
// parameter becomes an HLO parameter, each lazy-IR op node is lowered by the rule the lowering
// table holds for its op, and the roots become the entry's result tuple. The helpers here do what
// every rule needs: numpy-style broadcasting, dtype conversion, scalar constants, reductions.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "graph/post_order.h"
#include "hlo/instruction.h"
#include "ir/node.h"

namespace txla::lower {

hlo::ElementType ToHlo(c10::ScalarType dtype);
hlo::Shape ToHlo(const ir::Shape& shape);

class LoweringContext {
 public:
  LoweringContext(hlo::Module* module, hlo::Computation* entry)
      : module_(module), entry_(entry) {}

  hlo::Module* module() const { return module_; }
  // What convolutions are lowered with (GraphCut::convolution_precision).
  hlo::Precision convolution_precision() const { return convolution_precision_; }
  void set_convolution_precision(hlo::Precision p) { convolution_precision_ = p; }
  hlo::Computation* computation() const { return entry_; }

  // The lowered value of an IR value (its node must have been lowered already).
  hlo::Instruction* Get(const ir::Value& value) const;
  void Set(const ir::Node* node, std::vector<hlo::Instruction*> outputs);

  // The node's argument `i` as an HLO value: a tensor operand, or a Scalar (constant or
  // parameter), converted to `type`. `shape_for_scalar` unused for tensors.
  hlo::Instruction* Operand(const ir::Node& node, size_t arg) const;
  hlo::Instruction* ScalarArg(const ir::Node& node, size_t arg, hlo::ElementType type);
  // Argument `arg` as `type`: a tensor operand converted, or a Scalar argument.
  hlo::Instruction* TensorOrScalar(const ir::Node& node, size_t arg, hlo::ElementType type);
  // A constant 1-D s64 array (gather/scatter index tables computed at lowering time).
  hlo::Instruction* IndexConstant(std::vector<int64_t> values);
  const c10::IValue& ConstArg(const ir::Node& node, size_t arg) const;
  bool IsNone(const ir::Node& node, size_t arg) const;

  // Builders.
  hlo::Instruction* Add(hlo::Opcode op, hlo::Shape shape, std::vector<hlo::Instruction*> operands,
                        hlo::Attributes attrs = {});
  hlo::Instruction* Constant(double value, hlo::ElementType type);
  // Each element's index along `dimension`, as `shape`'s type.
  hlo::Instruction* Iota(hlo::Shape shape, int64_t dimension);
  hlo::Instruction* Convert(hlo::Instruction* x, hlo::ElementType type);
  // numpy broadcasting of x to `dims` (trailing alignment; size-1 dims stretch).
  hlo::Instruction* BroadcastTo(hlo::Instruction* x, const std::vector<int64_t>& dims);
  hlo::Instruction* Reshape(hlo::Instruction* x, const std::vector<int64_t>& dims);
  hlo::Instruction* Transpose(hlo::Instruction* x, const std::vector<int64_t>& perm);
  // Elements [start, limit) of dimension `dim`, every `stride`-th.
  hlo::Instruction* Slice(hlo::Instruction* x, int64_t dim, int64_t start, int64_t limit, int64_t stride = 1);
  // Elementwise op on operands broadcast to their common shape and converted to `type`;
  // compare ops produce pred.
  hlo::Instruction* Elementwise(hlo::Opcode op, std::vector<hlo::Instruction*> operands,
                                hlo::ElementType type,
                                hlo::Comparison comparison = hlo::Comparison::kEq);
  enum class ReduceKind { kSum, kMax, kMin, kProd, kAnd, kOr };
  // Reduces `dims` of x (kept as size-1 dims when keepdim).
  hlo::Instruction* Reduce(hlo::Instruction* x, std::vector<int64_t> dims, ReduceKind kind,
                           bool keepdim = false);
  // Reduces a window around each position (pooling); the padding holds the reduction's identity.
  hlo::Instruction* ReduceWindow(hlo::Instruction* x, std::vector<hlo::WindowDim> window,
                                 ReduceKind kind);
  static double ReduceInit(ReduceKind kind, hlo::ElementType type);
  hlo::Instruction* Dot(hlo::Instruction* lhs, hlo::Instruction* rhs, hlo::DotDims dims);
  // Rows `index` (1-D, s64, in range) of dimension `dim` of x, and the adjoint: `updates` added
  // into rows `index` of `self` (repeated rows accumulate).
  hlo::Instruction* TakeRows(hlo::Instruction* x, hlo::Instruction* index, int64_t dim);
  // x read along dimension `dim` at `index` (s64, shaped like the result; torch.gather).
  hlo::Instruction* TakeAlong(hlo::Instruction* x, hlo::Instruction* index, int64_t dim);
  hlo::Instruction* AddRows(hlo::Instruction* self, hlo::Instruction* index, hlo::Instruction* updates,
                            int64_t dim);
  // TakeAlong's adjoint: each of `updates` added into `self` along `dim` at its own entry of
  // `index` (s64, shaped like the updates; repeated positions accumulate).
  hlo::Instruction* AddAlong(hlo::Instruction* self, hlo::Instruction* index, hlo::Instruction* updates,
                             int64_t dim);

  // Scalar combiners for reduce, reduce-window and scatter; Assign keeps the new value.
  hlo::Computation* ReducerComputation(ReduceKind kind, hlo::ElementType type);
  hlo::Computation* AssignComputation(hlo::ElementType type);

 private:

  hlo::Module* module_;
  hlo::Computation* entry_;
  hlo::Precision convolution_precision_ = hlo::Precision::kHighest;
  std::unordered_map<const ir::Node*, std::vector<hlo::Instruction*>> values_;
  std::unordered_map<std::string, hlo::Computation*> reducers_;
};

// A rule lowers one node; it returns one HLO value per node output (nullptr for an undefined
// output such as a masked-off gradient).
using LowerFn = std::vector<hlo::Instruction*> (*)(LoweringContext& ctx, const ir::Node& node);

// The type ATen computes a binary op of tensor argument `tensor_arg` and argument `other_arg`
// in: tensors promote as result_type; a Python number (or a wrapped one) lifts an integer tensor
// to the default float type only when it is a float (isin, searchsorted, bucketize).
hlo::ElementType PromotedWithNumber(LoweringContext& c, const ir::Node& n, size_t tensor_arg, size_t other_arg);

// Dimension wrapping as ATen does it (negative counts from the end).
int64_t WrapDim(int64_t dim, int64_t rank);
std::vector<int64_t> IntList(const c10::IValue& v);

}  // namespace txla::lower
