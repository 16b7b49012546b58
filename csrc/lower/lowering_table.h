// What the lowering rules share: each op family's rules live in a file of their own (lower_*.cc),
// and each op row names its rule there with TXLA_LOWER.
#pragma once

#include <vector>

#include "ir/op_names.h"
#include "ir/op_rows.h"
#include "lower/lowering_context.h"

namespace txla::lower {

namespace op = ir::op;

// The names every rule file uses.
using hlo::Comparison;
using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using Outs = std::vector<Instruction*>;
using RK = LoweringContext::ReduceKind;

// Every op row's lowering rule (ir/op_rows.h): a function per row, named after the row, which
// lower_graph.cc's table takes by row. A row without a rule does not link, a second rule for it
// neither, and a rule for an op the table lacks does not compile.
namespace rules {
#define TXLA_DECLARE_LOWERING(id, ...) std::vector<hlo::Instruction*> id(LoweringContext& ctx, const ir::Node& node);
TXLA_OP_ROWS(TXLA_DECLARE_LOWERING)
#undef TXLA_DECLARE_LOWERING
}  // namespace rules

// The rule of an op row (lower_graph.cc's table).
LowerFn RuleFor(const ir::OpInfo& op);

// In a family's file (lower_*.cc, after its rules): row `id` lowers through the rule that
// follows, a function (or a template's instance) of (LoweringContext&, const ir::Node&).
#define TXLA_LOWER(id, ...)                                                              \
  std::vector<hlo::Instruction*> rules::id(LoweringContext& ctx, const ir::Node& node) { \
    return __VA_ARGS__(ctx, node);                                                       \
  }

// Adaptive average pooling of the last `spatial` dimensions to `out_dims` (any sizes), and its
// adjoint back to `in_dims` (lower_resample.cc).
hlo::Instruction* AdaptiveAverage(LoweringContext& c, hlo::Instruction* x, const std::vector<int64_t>& out_dims,
                                  int64_t spatial);
hlo::Instruction* AdaptiveAverageAdjoint(LoweringContext& c, hlo::Instruction* g, const std::vector<int64_t>& in_dims,
                                         int64_t spatial);

// Stable ascending (or descending) sort positions of x along `dim`, a library call (NaN sorts
// above every number, as in ATen); the sorted values are x gathered at them (lower_sorted.cc).
hlo::Instruction* SortPositions(LoweringContext& c, hlo::Instruction* x, int64_t dim, bool descending);

// _safe_softmax of x along `dim` (lower_ops.cc): softmax, but 0 across a row whose every entry is
// -inf. Also the row maxima and the sums of exp(x - max) it divides by (keeping `dim`).
struct SoftmaxParts {
  hlo::Instruction* result;
  hlo::Instruction* max;
  hlo::Instruction* sum;
};
SoftmaxParts SafeSoftmaxAlong(LoweringContext& c, hlo::Instruction* x, int64_t dim, hlo::ElementType type);

inline hlo::ElementType OutType(const ir::Node& n, size_t i = 0) { return ToHlo(n.shape(i).dtype); }

}  // namespace txla::lower
