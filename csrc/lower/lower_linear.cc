// linear and its gradients as matrix products over every leading dimension of the input at once
// (aten/linear_autograd.cc records them): [N, in] by the [out, in] weight, N the product of the
// leading sizes, the one GEMM eager's linear runs.
#include "lower/lowering.h"

#include "lower/lowering_context.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

hlo::DotDims Contracting(int64_t lhs, int64_t rhs) {
  hlo::DotDims d;
  d.lhs_contracting = {lhs};
  d.rhs_contracting = {rhs};
  return d;
}

// x [..., k] as the matrix [N, k].
Instruction* Rows(LoweringContext& c, Instruction* x) {
  const std::vector<int64_t>& dims = x->shape().dims;
  int64_t n = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) n *= dims[d];
  return c.Reshape(x, {n, dims.back()});
}

// A sum in float for half and bfloat16 (ATen accumulates them so), rounded back.
Instruction* SumRows(LoweringContext& c, Instruction* x) {
  const ElementType t = x->shape().type;
  const ElementType acc = hlo::Is16BitFloat(t) ? ElementType::kF32 : t;
  return c.Convert(c.Reduce(c.Convert(x, acc), {0}, RK::kSum), t);
}

// txla::linear(input, weight, bias?)
Outs Linear(LoweringContext& c, const ir::Node& n) {
  Instruction* weight = c.Operand(n, 1);
  Instruction* y = c.Dot(Rows(c, c.Operand(n, 0)), weight, Contracting(1, 1));  // [N, out]
  if (!c.IsNone(n, 2)) y = c.Elementwise(Opcode::kAdd, {y, c.Operand(n, 2)}, OutType(n));
  return {c.Reshape(y, n.shape().sizes)};
}

// txla::linear_backward(grad_output, input, weight, output_mask)
Outs LinearBackward(LoweringContext& c, const ir::Node& n) {
  Instruction* grad = Rows(c, c.Operand(n, 0));  // [N, out]
  const auto mask = c.ConstArg(n, 3).toBoolList();
  Outs out(3, nullptr);
  if (mask[0]) out[0] = c.Reshape(c.Dot(grad, c.Operand(n, 2), Contracting(1, 0)), n.shape(0).sizes);
  if (mask[1]) out[1] = c.Dot(grad, Rows(c, c.Operand(n, 1)), Contracting(0, 0));  // [out, in]
  if (mask[2]) out[2] = SumRows(c, grad);
  return out;
}

}  // namespace

TXLA_LOWER(txla_linear, Linear)
TXLA_LOWER(txla_linear_backward, LinearBackward)

}  // namespace txla::lower
