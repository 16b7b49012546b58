// Lowering of random ops to rng-uniform, HLO's counter-based generator: the seed each node drew
// when it was traced is a graph parameter, so re-running a graph redraws the same values and a
// new trace (new seed) draws new ones, as on the interpreter. The streams of numbers differ
// from eager CPU's (Mersenne twister); their distributions are the same.
#include <ATen/ATen.h>

#include <cmath>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// The s64[] seed of the node's generator argument (the last one when `arg` is past the schema).
Instruction* Seed(LoweringContext& c, const ir::Node& n, size_t arg) {
  const ir::Arg& a = n.args().at(arg);
  if (a.kind != ir::Arg::Kind::kGenerator) throw std::invalid_argument("expected a generator argument");
  return c.Get(n.operands().at(a.operand));
}

// uniform [0, 1) values of `type` in the node's output shape, from stream `stream`.
Instruction* Uniform(LoweringContext& c, const ir::Node& n, Instruction* seed, ElementType type,
                     int64_t stream) {
  if (!hlo::IsFloating(type)) type = ElementType::kF32;
  hlo::Attributes a;
  a.index = stream;
  return c.Add(Opcode::kRngUniform, hlo::Shape::Array(type, n.shape().sizes),
               {c.Constant(0, type), c.Constant(1, type), seed}, a);
}

void RequireFloating(const ir::Node& n) {
  if (!hlo::IsFloating(OutType(n))) throw NotLowered(n.op()->name + " of an integer type");
}

Outs UniformOp(LoweringContext& c, const ir::Node& n) {  // uniform(self, from, to, generator)
  RequireFloating(n);
  ElementType t = OutType(n);
  Instruction* lo = c.ScalarArg(n, 1, t);
  Instruction* hi = c.ScalarArg(n, 2, t);
  Instruction* u = Uniform(c, n, Seed(c, n, 3), t, 0);
  return {c.Elementwise(Opcode::kAdd, {lo, c.Elementwise(Opcode::kMultiply, {u, c.Elementwise(Opcode::kSubtract, {hi, lo}, t)}, t)}, t)};
}

// Box-Muller: two uniforms give one standard normal.
Outs Normal(LoweringContext& c, const ir::Node& n) {  // normal_functional(self, mean, std, generator)
  RequireFloating(n);
  ElementType t = OutType(n);
  Instruction* seed = Seed(c, n, 3);
  Instruction* u1 = Uniform(c, n, seed, t, 0);
  Instruction* u2 = Uniform(c, n, seed, t, 1);
  // 1 - u1 is in (0, 1]: the log never sees 0.
  Instruction* radius = c.Elementwise(
      Opcode::kSqrt,
      {c.Elementwise(Opcode::kMultiply,
                     {c.Constant(-2, t), c.Elementwise(Opcode::kLog, {c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), u1}, t)}, t)}, t)},
      t);
  Instruction* angle = c.Elementwise(Opcode::kMultiply, {u2, c.Constant(2 * M_PI, t)}, t);
  Instruction* z = c.Elementwise(Opcode::kMultiply, {radius, c.Elementwise(Opcode::kCos, {angle}, t)}, t);
  return {c.Elementwise(Opcode::kAdd, {c.ScalarArg(n, 1, t), c.Elementwise(Opcode::kMultiply, {z, c.ScalarArg(n, 2, t)}, t)}, t)};
}

// 1 where a uniform draw falls below the probability `p` (broadcast to the output), else 0.
Instruction* BernoulliDraw(LoweringContext& c, const ir::Node& n, Instruction* seed, Instruction* p) {
  ElementType t = OutType(n);
  ElementType draw = hlo::IsFloating(t) ? t : ElementType::kF64;
  Instruction* hit = c.Elementwise(Opcode::kCompare, {Uniform(c, n, seed, draw, 0), c.Convert(p, draw)}, draw, Comparison::kLt);
  return c.Convert(hit, t);
}

Outs Bernoulli(LoweringContext& c, const ir::Node& n) {  // bernoulli.p(self, p, generator)
  return {BernoulliDraw(c, n, Seed(c, n, 2), c.ScalarArg(n, 1, ElementType::kF64))};
}

// bernoulli.Tensor(self, p, generator): bernoulli_ with a tensor of probabilities (p broadcast
// to self); bernoulli(self, generator): self holds the probabilities.
Outs BernoulliTensor(LoweringContext& c, const ir::Node& n) {
  return {BernoulliDraw(c, n, Seed(c, n, 2), c.BroadcastTo(c.Operand(n, 1), n.shape().sizes))};
}
Outs BernoulliOfSelf(LoweringContext& c, const ir::Node& n) {
  return {BernoulliDraw(c, n, Seed(c, n, 1), c.Operand(n, 0))};
}

// native_dropout(input, p, train?) with the seed as a trailing argument -> (output, mask)
Outs NativeDropout(LoweringContext& c, const ir::Node& n) {
  ElementType t = OutType(n);
  Instruction* x = c.Operand(n, 0);
  bool train = c.IsNone(n, 2) || c.ConstArg(n, 2).toBool();
  if (!train) return {x, c.BroadcastTo(c.Constant(1, ElementType::kPred), n.shape(1).sizes)};
  const ir::Arg& p_arg = n.args().at(1);
  double p = p_arg.kind == ir::Arg::Kind::kConst ? p_arg.value.toDouble() : -1;
  Instruction* prob = c.ScalarArg(n, 1, t);
  // Keep with probability 1 - p; survivors scale by 1 / (1 - p) (0 when p == 1, as ATen).
  Instruction* keep = c.Elementwise(Opcode::kCompare, {Uniform(c, n, Seed(c, n, n.args().size() - 1), t, 0), prob},
                                    t, Comparison::kGe);
  Instruction* scale = p == 1 ? c.Constant(0, t)
                              : c.Elementwise(Opcode::kDivide, {c.Constant(1, t), c.Elementwise(Opcode::kSubtract, {c.Constant(1, t), prob}, t)}, t);
  Instruction* y = c.Elementwise(Opcode::kMultiply, {c.Elementwise(Opcode::kMultiply, {x, c.Convert(keep, t)}, t), scale}, t);
  return {y, keep};
}

// Integers uniform in [lo, hi): floor(lo + u * (hi - lo)) with a 53-bit double u.
Instruction* UniformIntegers(LoweringContext& c, const ir::Node& n, Instruction* seed, Instruction* lo,
                             Instruction* hi) {
  using E = ElementType;
  Instruction* u = Uniform(c, n, seed, E::kF64, 0);
  Instruction* v = c.Elementwise(Opcode::kFloor, {c.Elementwise(Opcode::kAdd, {lo, c.Elementwise(Opcode::kMultiply, {u, c.Elementwise(Opcode::kSubtract, {hi, lo}, E::kF64)}, E::kF64)}, E::kF64)}, E::kF64);
  return c.Convert(v, OutType(n));
}

Outs RandomFrom(LoweringContext& c, const ir::Node& n) {  // random.from(self, from, to?, generator)
  if (c.IsNone(n, 2)) throw NotLowered("random_(from) without an upper bound");
  return {UniformIntegers(c, n, Seed(c, n, 3), c.ScalarArg(n, 1, ElementType::kF64), c.ScalarArg(n, 2, ElementType::kF64))};
}

Outs Random(LoweringContext& c, const ir::Node& n) {  // random(self, generator): [0, 2^digits]
  double top;
  switch (OutType(n)) {
    case ElementType::kF32: top = 16777216.0 + 1; break;          // 2^24, inclusive
    case ElementType::kF64: top = 9007199254740992.0; break;      // 2^53 (53-bit draws)
    case ElementType::kS32: top = 2147483647.0 + 1; break;
    case ElementType::kS16: top = 32767.0 + 1; break;
    case ElementType::kS8: top = 127.0 + 1; break;
    case ElementType::kU8: top = 255.0 + 1; break;
    default: throw NotLowered("random_() of this dtype");
  }
  return {UniformIntegers(c, n, Seed(c, n, 1), c.Constant(0, ElementType::kF64), c.Constant(top, ElementType::kF64))};
}

// randperm(n, ...) with its seed trailing, randperm.generator(n, generator, ...): the stable sort
// order of n uniform draws (53-bit), every permutation equally likely.
template <bool kGeneratorArg>
Outs Randperm(LoweringContext& c, const ir::Node& n) {
  Instruction* seed = Seed(c, n, kGeneratorArg ? 1 : n.args().size() - 1);
  Instruction* keys = Uniform(c, n, seed, ElementType::kF64, 0);
  return {c.Convert(SortPositions(c, keys, 0, /*descending=*/false), OutType(n))};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_uniform, UniformOp)
TXLA_LOWER(aten_normal_functional, Normal)
TXLA_LOWER(aten_bernoulli_p, Bernoulli)
TXLA_LOWER(aten_bernoulli_Tensor, BernoulliTensor)
TXLA_LOWER(aten_bernoulli, BernoulliOfSelf)
TXLA_LOWER(aten_native_dropout, NativeDropout)
TXLA_LOWER(aten_random, Random)
TXLA_LOWER(aten_random_from, RandomFrom)
TXLA_LOWER(aten_randperm, Randperm<false>)
TXLA_LOWER(aten_randperm_generator, Randperm<true>)

}  // namespace txla::lower
