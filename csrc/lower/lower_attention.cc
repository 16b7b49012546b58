// Scaled dot-product attention as one node each way (the fused ops that
// scaled_dot_product_attention takes on the device, aten/attention_autograd.cc). Without a mask
// the forward is one library call over blocks of keys (OnePassAttention); otherwise both ways
// are computed as PyTorch's math path computes them: q and k each scaled by sqrt(scale), the
// mask added to the scores, a softmax that is 0 across a fully masked row (_safe_softmax), half
// and bfloat16 inputs computed in float. The backward finds the probabilities again from q and k
// (not from the saved logsumexp: exp(s - lse) rounds apart from the forward's softmax) and takes
// the math path's gradients through them.
#include <cmath>
#include <limits>
#include <optional>

#include "lower/lowering.h"

#include "lower/lowering_context.h"
#include "lower/lowering_table.h"
#include "metrics/metrics.h"

namespace txla::lower {
namespace {

// Argument positions of the forward node; the backward's are one further (grad_out first), with
// out and logsumexp between value and dropout_p.
struct AttentionArgs {
  size_t q, k, v, is_causal, mask, scale;
};
constexpr AttentionArgs kForwardArgs{0, 1, 2, 4, 5, 6};
constexpr AttentionArgs kBackwardArgs{1, 2, 3, 7, 8, 9};

struct Scores {
  ElementType acc;            // what the math runs in: float for half and bfloat16
  Instruction* q_scaled;      // q * sqrt(scale) (negated for a negative scale), [B, H, L, E]
  Instruction* k_scaled;      // k * sqrt(|scale|), [B, H, S, E]
  double q_factor, k_factor;  // those two factors
  SoftmaxParts probs;         // over the masked scores, along S
};

// The product of two [B, H, ., .] operands over their dimension `lhs_contracting` and
// `rhs_contracting` (2 or 3), [B, H, lhs's other, rhs's other]: as a batch of B*H matrix products
// (the form the library's GEMM takes).
Instruction* BatchedMatMul(LoweringContext& c, Instruction* lhs, Instruction* rhs, int64_t lhs_contracting,
                           int64_t rhs_contracting) {
  const std::vector<int64_t>& l = lhs->shape().dims;
  const std::vector<int64_t>& r = rhs->shape().dims;
  const int64_t batch = l[0] * l[1];
  hlo::DotDims d;
  d.lhs_batch = d.rhs_batch = {0};
  d.lhs_contracting = {lhs_contracting - 1};
  d.rhs_contracting = {rhs_contracting - 1};
  Instruction* product = c.Dot(c.Reshape(lhs, {batch, l[2], l[3]}), c.Reshape(rhs, {batch, r[2], r[3]}), d);
  return c.Reshape(product, {l[0], l[1], l[lhs_contracting == 2 ? 3 : 2], r[rhs_contracting == 2 ? 3 : 2]});
}

// q and k, each scaled by sqrt(|scale|), in the type the math runs in.
Scores ScaledQueryKey(LoweringContext& c, const ir::Node& n, const AttentionArgs& a) {
  Scores s;
  const ElementType t = ToHlo(n.operands()[n.args()[a.q].operand].shape().dtype);
  s.acc = hlo::Is16BitFloat(t) ? ElementType::kF32 : t;
  Instruction* q = c.Convert(c.Operand(n, a.q), s.acc);
  Instruction* k = c.Convert(c.Operand(n, a.k), s.acc);
  const int64_t head_size = q->shape().dims[3];
  const double scale = c.IsNone(n, a.scale) ? 1.0 / std::sqrt(static_cast<double>(head_size))
                                            : c.ConstArg(n, a.scale).toDouble();
  s.k_factor = std::sqrt(std::abs(scale));
  s.q_factor = scale < 0 ? -s.k_factor : s.k_factor;
  s.q_scaled = c.Elementwise(Opcode::kMultiply, {q, c.Constant(s.q_factor, s.acc)}, s.acc);
  s.k_scaled = c.Elementwise(Opcode::kMultiply, {k, c.Constant(s.k_factor, s.acc)}, s.acc);
  return s;
}

Scores MaskedScores(LoweringContext& c, const ir::Node& n, const AttentionArgs& a) {
  Scores s = ScaledQueryKey(c, n, a);
  Instruction* scores = BatchedMatMul(c, s.q_scaled, s.k_scaled, 3, 3);  // [B, H, L, S]
  const std::vector<int64_t> dims = scores->shape().dims;
  Instruction* zero = c.Constant(0, s.acc);
  Instruction* neg_inf = c.Constant(-std::numeric_limits<double>::infinity(), s.acc);
  // The mask is added (a boolean one arrives as its float form, 0 where attended and -inf where
  // not, as on the math path): a masked +inf or NaN score is NaN, as there.
  Instruction* bias = nullptr;
  if (c.ConstArg(n, a.is_causal).toBool()) {
    const hlo::Shape grid = hlo::Shape::Array(ElementType::kS64, {dims[2], dims[3]});
    Instruction* attended =
        c.Elementwise(Opcode::kCompare, {c.Iota(grid, 1), c.Iota(grid, 0)}, ElementType::kS64, Comparison::kLe);
    bias = c.Elementwise(Opcode::kSelect, {attended, zero, neg_inf}, s.acc);
  } else if (!c.IsNone(n, a.mask)) {
    bias = c.Convert(c.Operand(n, a.mask), s.acc);
  }
  if (bias != nullptr) scores = c.Elementwise(Opcode::kAdd, {scores, c.BroadcastTo(bias, dims)}, s.acc);
  s.probs = SafeSoftmaxAlong(c, scores, 3, s.acc);
  return s;
}

// Without an explicit mask the forward is one library call (library/attention.h) that never
// stores the [L, S] scores: the same scaled scores, the softmax taken online over blocks of keys
// as eager's CPU kernel takes it. (output, logsumexp), or nothing where the call does not apply.
std::optional<Outs> OnePassAttention(LoweringContext& c, const ir::Node& n) {
  if (!c.IsNone(n, kForwardArgs.mask)) return std::nullopt;
  auto dims = [&](size_t arg) { return n.operands()[n.args()[arg].operand].shape().sizes; };
  const std::vector<int64_t> q = dims(kForwardArgs.q), k = dims(kForwardArgs.k), vd = dims(kForwardArgs.v);
  if (q.size() != 4 || k.size() != 4 || vd.size() != 4 || k[0] != q[0] || k[1] != q[1] || vd[0] != q[0] ||
      vd[1] != q[1] || vd[2] != k[2])
    return std::nullopt;
  const Scores s = ScaledQueryKey(c, n, kForwardArgs);
  Instruction* v = c.Convert(c.Operand(n, kForwardArgs.v), s.acc);
  hlo::Attributes a;
  a.custom_call_target = hlo::CustomCallTarget::kAttention;
  a.index = c.ConstArg(n, kForwardArgs.is_causal).toBool() ? 1 : 0;
  TXLA_COUNTER("AttentionOnePass", 1);
  const int64_t ev = vd[3];
  Instruction* call = c.Add(Opcode::kCustomCall, hlo::Shape::Array(s.acc, {q[0], q[1], q[2], ev + 1}),
                            {s.q_scaled, s.k_scaled, v}, a);
  Instruction* out = c.Slice(call, 3, 0, ev);
  Instruction* lse = c.Reshape(c.Slice(call, 3, ev, ev + 1), n.shape(1).sizes);
  return Outs{c.Convert(out, OutType(n, 0)), c.Convert(lse, OutType(n, 1))};
}

// (output, logsumexp)
Outs FusedAttention(LoweringContext& c, const ir::Node& n) {
  if (std::optional<Outs> one_pass = OnePassAttention(c, n)) return *one_pass;
  const Scores s = MaskedScores(c, n, kForwardArgs);
  Instruction* v = c.Convert(c.Operand(n, kForwardArgs.v), s.acc);
  Instruction* out = BatchedMatMul(c, s.probs.result, v, 3, 2);  // [B, H, L, E]
  // log(sum(exp(scores))); 0 across a fully masked row, as ATen's CPU kernel has it.
  const ElementType lse_type = OutType(n, 1);
  const std::vector<int64_t> rows = n.shape(1).sizes;
  Instruction* max = c.Reshape(s.probs.max, rows);
  Instruction* lse = c.Elementwise(
      Opcode::kAdd, {max, c.Elementwise(Opcode::kLog, {c.Reshape(s.probs.sum, rows)}, s.acc)}, s.acc);
  Instruction* neg_inf = c.Constant(-std::numeric_limits<double>::infinity(), s.acc);
  Instruction* masked = c.Elementwise(Opcode::kCompare, {max, neg_inf}, s.acc, Comparison::kEq);
  lse = c.Elementwise(Opcode::kSelect, {masked, c.Constant(0, s.acc), lse}, s.acc);
  return {c.Convert(out, OutType(n, 0)), c.Convert(lse, lse_type)};
}

// (grad_query, grad_key, grad_value)
Outs FusedAttentionBackward(LoweringContext& c, const ir::Node& n) {
  const Scores s = MaskedScores(c, n, kBackwardArgs);
  Instruction* p = s.probs.result;  // [B, H, L, S]
  Instruction* grad = c.Convert(c.Operand(n, 0), s.acc);
  Instruction* v = c.Convert(c.Operand(n, kBackwardArgs.v), s.acc);
  Instruction* grad_v = BatchedMatMul(c, p, grad, 2, 2);     // [B, H, S, E]
  Instruction* grad_p = BatchedMatMul(c, grad, v, 3, 3);     // [B, H, L, S]
  // _safe_softmax's backward (_softmax_backward_data): p * (grad_p - sum(grad_p * p)).
  Instruction* dot = c.Reduce(c.Elementwise(Opcode::kMultiply, {grad_p, p}, s.acc), {3}, RK::kSum, true);
  Instruction* grad_scores =
      c.Elementwise(Opcode::kMultiply, {p, c.Elementwise(Opcode::kSubtract, {grad_p, dot}, s.acc)}, s.acc);
  Instruction* grad_q = BatchedMatMul(c, grad_scores, s.k_scaled, 3, 2);  // [B, H, L, E]
  Instruction* grad_k = BatchedMatMul(c, grad_scores, s.q_scaled, 2, 2);  // [B, H, S, E]
  grad_q = c.Elementwise(Opcode::kMultiply, {grad_q, c.Constant(s.q_factor, s.acc)}, s.acc);
  grad_k = c.Elementwise(Opcode::kMultiply, {grad_k, c.Constant(s.k_factor, s.acc)}, s.acc);
  return {c.Convert(grad_q, OutType(n, 0)), c.Convert(grad_k, OutType(n, 1)), c.Convert(grad_v, OutType(n, 2))};
}

}  // namespace

TXLA_LOWER(aten__scaled_dot_product_flash_attention_for_cpu, FusedAttention)
TXLA_LOWER(aten__scaled_dot_product_flash_attention_for_cpu_backward, FusedAttentionBackward)

}  // namespace txla::lower
