// Lowering of elementwise math and activations (and their gradients) to HLO elementwise ops,
// written as formulas over a small builder. Integer forms that would divide by zero in native
// code (integer remainder, floor division) are left to the interpreter, which raises as eager does.
#include <ATen/ATen.h>

#include <cmath>

#include "ir/op_table.h"
#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

void RequireFloating(const ir::Node& n, ElementType t) {
  if (!hlo::IsFloating(t))
    throw NotLowered(n.op()->name + " on an integer type has no lowering");
}

#define UNARY_FORMULA(Name, body)                             \
  Outs Name(LoweringContext& c, const ir::Node& n) {          \
    Builder b = For(c, n);                                     \
    Instruction* x = c.Convert(c.Operand(n, 0), b.t);          \
    (void)x;                                                   \
    return {body};                                             \
  }

constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kSqrt1_2 = 0.70710678118654752440, kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

UNARY_FORMULA(Log2, b(Opcode::kMultiply, b(Opcode::kLog, x), b.k(1 / kLn2)))
UNARY_FORMULA(Log10, b(Opcode::kMultiply, b(Opcode::kLog, x), b.k(1 / kLn10)))
UNARY_FORMULA(Log1p, b(Opcode::kLog1p, x))
UNARY_FORMULA(Expm1, b(Opcode::kExpm1, x))
UNARY_FORMULA(Tan, b(Opcode::kTan, x))
UNARY_FORMULA(Atan, b(Opcode::kAtan2, x, b.k(1)))
UNARY_FORMULA(Asin, b(Opcode::kAtan2, x, b(Opcode::kSqrt, b.mul(b.sub(b.k(1), x), b.add(b.k(1), x)))))
UNARY_FORMULA(Acos, b(Opcode::kAtan2, b(Opcode::kSqrt, b.mul(b.sub(b.k(1), x), b.add(b.k(1), x))), x))
UNARY_FORMULA(Sinh, b.mul(b.sub(b(Opcode::kExpm1, x), b(Opcode::kExpm1, b(Opcode::kNegate, x))), b.k(0.5)))
UNARY_FORMULA(Cosh, b.mul(b.add(b(Opcode::kExp, x), b(Opcode::kExp, b(Opcode::kNegate, x))), b.k(0.5)))
UNARY_FORMULA(Erf, b(Opcode::kErf, x))
UNARY_FORMULA(Erfc, b.sub(b.k(1), b(Opcode::kErf, x)))
UNARY_FORMULA(Floor, hlo::IsFloating(b.t) ? b(Opcode::kFloor, x) : x)
UNARY_FORMULA(Ceil, hlo::IsFloating(b.t) ? b(Opcode::kCeil, x) : x)
UNARY_FORMULA(Round, hlo::IsFloating(b.t) ? b(Opcode::kRoundNearestEven, x) : x)
UNARY_FORMULA(Reciprocal, b.div(b.k(1), x))
UNARY_FORMULA(Sign, b(Opcode::kSign, x))
UNARY_FORMULA(Silu, b.mul(x, b(Opcode::kLogistic, x)))
UNARY_FORMULA(Mish, b.mul(x, b(Opcode::kTanh, b(Opcode::kLog1p, b(Opcode::kExp, x)))))
UNARY_FORMULA(Hardsigmoid, b.div(c.Elementwise(Opcode::kClamp, {b.k(0), b.add(x, b.k(3)), b.k(6)}, b.t), b.k(6)))
UNARY_FORMULA(Hardswish, b.mul(x, b.div(c.Elementwise(Opcode::kClamp, {b.k(0), b.add(x, b.k(3)), b.k(6)}, b.t), b.k(6))))

Instruction* Trunc(Builder& b, Instruction* x) {
  return b.sel(b.cmp(Comparison::kLt, x, b.k(0)), b(Opcode::kCeil, x), b(Opcode::kFloor, x));
}
UNARY_FORMULA(TruncOp, hlo::IsFloating(b.t) ? Trunc(b, x) : x)
UNARY_FORMULA(Frac, b.sub(x, Trunc(b, x)))

Outs BitwiseNot(LoweringContext& c, const ir::Node& n) {
  return {c.Elementwise(Opcode::kNot, {c.Operand(n, 0)}, OutType(n))};
}

Instruction* Truthy(LoweringContext& c, Instruction* x) {
  if (x->shape().type == ElementType::kPred) return x;
  return c.Elementwise(Opcode::kCompare, {x, c.Constant(0, x->shape().type)}, x->shape().type, Comparison::kNe);
}

Outs LogicalNot(LoweringContext& c, const ir::Node& n) {
  Instruction* p = c.Elementwise(Opcode::kNot, {Truthy(c, c.Operand(n, 0))}, ElementType::kPred);
  return {c.Convert(p, OutType(n))};
}

template <Opcode kOp>
Outs Logical(LoweringContext& c, const ir::Node& n) {
  Instruction* p = c.Elementwise(kOp, {Truthy(c, c.Operand(n, 0)), Truthy(c, c.Operand(n, 1))}, ElementType::kPred);
  return {c.Convert(p, OutType(n))};
}

template <Opcode kOp>
Outs Bitwise(LoweringContext& c, const ir::Node& n) {
  if (hlo::IsFloating(OutType(n))) throw NotLowered("bitwise op on floating point");
  return {c.Elementwise(kOp, {c.Operand(n, 0), c.Operand(n, 1)}, OutType(n))};
}

// clamp(self, min?, max?) with scalar (args 1, 2) or tensor bounds; NaN propagates as in ATen.
Instruction* Bound(LoweringContext& c, const ir::Node& n, size_t arg, ElementType t) {
  if (c.IsNone(n, arg)) return nullptr;
  return c.TensorOrScalar(n, arg, t);
}

Outs Clamp(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  if (Instruction* lo = Bound(c, n, 1, b.t)) x = b(Opcode::kMaximum, x, lo);
  if (Instruction* hi = Bound(c, n, 2, b.t)) x = b(Opcode::kMinimum, x, hi);
  return {c.Convert(x, b.t)};
}

Outs ClampMin(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b(Opcode::kMaximum, c.Operand(n, 0), Bound(c, n, 1, b.t))};
}

Outs ClampMax(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b(Opcode::kMinimum, c.Operand(n, 0), Bound(c, n, 1, b.t))};
}

// Integer powers too: the emitter computes them by squaring, as ATen does.
Outs PowTensorTensor(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b(Opcode::kPower, c.Operand(n, 0), c.Operand(n, 1))};
}

Outs PowScalar(LoweringContext& c, const ir::Node& n) {  // pow.Scalar(Scalar self, Tensor exponent)
  Builder b = For(c, n);
  return {b(Opcode::kPower, c.ScalarArg(n, 0, b.t), c.Operand(n, 1))};
}

Outs Threshold(LoweringContext& c, const ir::Node& n) {  // x <= threshold ? value : x
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  return {b.sel(b.cmp(Comparison::kLe, x, c.ScalarArg(n, 1, b.t)), c.ScalarArg(n, 2, b.t), x)};
}

Outs SigmoidBackward(LoweringContext& c, const ir::Node& n) {  // grad * (1 - y) * y
  Builder b = For(c, n);
  Instruction* y = c.Operand(n, 1);
  return {b.mul(c.Operand(n, 0), b.mul(b.sub(b.k(1), y), y))};
}

Outs TanhBackward(LoweringContext& c, const ir::Node& n) {  // grad * (1 - y^2)
  Builder b = For(c, n);
  Instruction* y = c.Operand(n, 1);
  return {b.mul(c.Operand(n, 0), b.sub(b.k(1), b.mul(y, y)))};
}

bool TanhApproximation(LoweringContext& c, const ir::Node& n, size_t arg) {
  return arg < n.args().size() && c.ConstArg(n, arg).toStringRef() == "tanh";
}

Outs Gelu(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  RequireFloating(n, b.t);
  Instruction* x = c.Operand(n, 0);
  Instruction* half_x = b.mul(x, b.k(0.5));
  if (TanhApproximation(c, n, 1)) {
    Instruction* inner = b.mul(b.k(kSqrt2OverPi), b.add(x, b.mul(b.k(0.044715), b.mul(x, b.mul(x, x)))));
    return {b.mul(half_x, b.add(b.k(1), b(Opcode::kTanh, inner)))};
  }
  return {b.mul(half_x, b.add(b.k(1), b(Opcode::kErf, b.mul(x, b.k(kSqrt1_2)))))};
}

Outs GeluBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, approximate)
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  if (TanhApproximation(c, n, 2)) {
    constexpr double kKappa = 0.044715;
    Instruction* x_sq = b.mul(x, x);
    Instruction* inner = b.mul(b.k(kSqrt2OverPi), b.add(x, b.mul(b.k(kKappa), b.mul(x_sq, x))));
    Instruction* th = b(Opcode::kTanh, inner);
    Instruction* left_derivative = b.mul(b.k(0.5), b.add(b.k(1), th));
    Instruction* inner_derivative = b.mul(b.k(kSqrt2OverPi), b.add(b.k(1), b.mul(b.k(3 * kKappa), x_sq)));
    Instruction* right_derivative =
        b.mul(b.mul(b.mul(b.k(0.5), x), b.sub(b.k(1), b.mul(th, th))), inner_derivative);
    return {b.mul(g, b.add(left_derivative, right_derivative))};
  }
  Instruction* cdf = b.mul(b.k(0.5), b.add(b.k(1), b(Opcode::kErf, b.mul(x, b.k(kSqrt1_2)))));
  Instruction* pdf = b.mul(b.k(kInvSqrt2Pi), b(Opcode::kExp, b.mul(b.k(-0.5), b.mul(x, x))));
  return {b.mul(g, b.add(cdf, b.mul(x, pdf)))};
}

Outs LeakyRelu(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  return {b.sel(b.cmp(Comparison::kGt, x, b.k(0)), x, b.mul(x, c.ScalarArg(n, 1, b.t)))};
}

Outs LeakyReluBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, slope, self_is_result)
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  return {b.sel(b.cmp(Comparison::kGt, c.Operand(n, 1), b.k(0)), g, b.mul(g, c.ScalarArg(n, 2, b.t)))};
}

// PReLU (nn.PReLU; torch.prelu reshapes the weight to broadcast along the channels first).
Outs PreluKernel(LoweringContext& c, const ir::Node& n) {  // (self, weight)
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  return {b.sel(b.cmp(Comparison::kGt, x, b.k(0)), x, b.mul(c.Operand(n, 1), x))};
}

// (grad, self, weight) -> (grad_self, grad_weight), both at the broadcast shape: autograd sums
// grad_weight down to the weight's shape, as for eager's kernel.
Outs PreluKernelBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0), *x = c.Operand(n, 1);
  Instruction* positive = b.cmp(Comparison::kGt, x, b.k(0));
  return {b.sel(positive, g, b.mul(c.Operand(n, 2), g)), b.sel(positive, b.k(0), b.mul(x, g))};
}

Outs Elu(LoweringContext& c, const ir::Node& n) {  // (self, alpha, scale, input_scale)
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* alpha = c.ScalarArg(n, 1, b.t), *scale = c.ScalarArg(n, 2, b.t), *in_scale = c.ScalarArg(n, 3, b.t);
  Instruction* neg = b.mul(b.mul(alpha, scale), b(Opcode::kExpm1, b.mul(x, in_scale)));
  return {b.sel(b.cmp(Comparison::kGt, x, b.k(0)), b.mul(x, scale), neg)};
}

Outs EluBackward(LoweringContext& c, const ir::Node& n) {
  // (grad, alpha, scale, input_scale, is_result, self_or_result)
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* alpha = c.ScalarArg(n, 1, b.t), *scale = c.ScalarArg(n, 2, b.t), *in_scale = c.ScalarArg(n, 3, b.t);
  bool is_result = c.ConstArg(n, 4).toBool();
  Instruction* v = c.Operand(n, 5);
  Instruction* neg = is_result
                         ? b.mul(b.mul(g, in_scale), b.add(v, b.mul(alpha, scale)))
                         : b.mul(b.mul(g, b.mul(in_scale, b.mul(alpha, scale))), b(Opcode::kExp, b.mul(v, in_scale)));
  return {b.sel(b.cmp(Comparison::kLe, v, b.k(0)), neg, b.mul(g, scale))};
}

Outs Hardtanh(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b(Opcode::kMinimum, b(Opcode::kMaximum, c.Operand(n, 0), c.ScalarArg(n, 1, b.t)), c.ScalarArg(n, 2, b.t))};
}

Outs HardtanhBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, min, max)
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 1);
  Instruction* outside = c.Elementwise(
      Opcode::kOr, {b.cmp(Comparison::kLe, x, c.ScalarArg(n, 2, b.t)), b.cmp(Comparison::kGe, x, c.ScalarArg(n, 3, b.t))},
      ElementType::kPred);
  return {b.sel(outside, b.k(0), c.Operand(n, 0))};
}

Outs Softplus(LoweringContext& c, const ir::Node& n) {  // (self, beta, threshold)
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* beta = c.ScalarArg(n, 1, b.t);
  Instruction* bx = b.mul(x, beta);
  return {b.sel(b.cmp(Comparison::kGt, bx, c.ScalarArg(n, 2, b.t)), x,
                b.div(b(Opcode::kLog1p, b(Opcode::kExp, bx)), beta))};
}

Outs SoftplusBackward(LoweringContext& c, const ir::Node& n) {  // (grad, self, beta, threshold)
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* bx = b.mul(c.Operand(n, 1), c.ScalarArg(n, 2, b.t));
  Instruction* z = b(Opcode::kExp, bx);
  return {b.sel(b.cmp(Comparison::kGt, bx, c.ScalarArg(n, 3, b.t)), g, b.div(b.mul(g, z), b.add(z, b.k(1))))};
}

Outs HardsigmoidBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 1);
  Instruction* inside = c.Elementwise(
      Opcode::kAnd, {b.cmp(Comparison::kGt, x, b.k(-3)), b.cmp(Comparison::kLt, x, b.k(3))}, ElementType::kPred);
  return {b.sel(inside, b.div(c.Operand(n, 0), b.k(6)), b.k(0))};
}

Outs HardswishBackward(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* g = c.Operand(n, 0);
  Instruction* x = c.Operand(n, 1);
  Instruction* middle = b.mul(g, b.add(b.div(x, b.k(3)), b.k(0.5)));
  return {b.sel(b.cmp(Comparison::kLt, x, b.k(-3)), b.k(0),
                b.sel(b.cmp(Comparison::kLe, x, b.k(3)), middle, g))};
}

Outs RsubScalar(LoweringContext& c, const ir::Node& n) {  // other - alpha * self
  Builder b = For(c, n);
  return {b.sub(c.ScalarArg(n, 1, b.t), b.mul(c.Operand(n, 0), c.ScalarArg(n, 2, b.t)))};
}

// Where C's remainder m of a division by y is not Python's: nonzero, with a sign other than the
// divisor's (floor division is one less there, and the remainder y more).
Instruction* SignDiffersFromDivisor(Builder& b, Instruction* m, Instruction* y) {
  Instruction* opposite = b.c.Elementwise(
      Opcode::kCompare, {b.cmp(Comparison::kLt, m, b.k(0)), b.cmp(Comparison::kLt, y, b.k(0))}, ElementType::kPred,
      Comparison::kNe);
  return b.all(b.cmp(Comparison::kNe, m, b.k(0)), opposite);
}

// Integer floor division (kernels divide with a checked divisor, raising eager's
// ZeroDivisionError): the truncated quotient, one less where the remainder's sign is wrong.
Instruction* IntegerFloorDivide(Builder& b, Instruction* x, Instruction* y) {
  Instruction* q = b.div(x, y);
  return b.sel(SignDiffersFromDivisor(b, b(Opcode::kRemainder, x, y), y), b.sub(q, b.k(1)), q);
}

// Floor division as ATen computes it for floating types: from fmod, so that 1 // 0.1 is 9 as in
// Python (floor(1 / 0.1) would be 10), rounding the exact quotient's floor; x / 0 stays x / 0.
Instruction* FloorDivide(Builder& b, Instruction* x, Instruction* y) {
  Instruction* zero = b.k(0);
  Instruction* mod = b(Opcode::kRemainder, x, y);
  Instruction* div = b.div(b.sub(x, mod), y);
  div = b.sel(SignDiffersFromDivisor(b, mod, y), b.sub(div, b.k(1)), div);
  Instruction* floored = b(Opcode::kFloor, div);
  floored = b.sel(b.cmp(Comparison::kGt, b.sub(div, floored), b.k(0.5)), b.add(floored, b.k(1)), floored);
  Instruction* signed_zero = b.mul(zero, b.div(x, y));  // copysign(0, x / y)
  Instruction* result = b.sel(b.cmp(Comparison::kNe, div, zero), floored, signed_zero);
  return b.sel(b.cmp(Comparison::kEq, y, zero), b.div(x, y), result);
}

Outs DivMode(LoweringContext& c, const ir::Node& n) {  // (self, other, rounding_mode)
  Builder b = For(c, n);
  const c10::IValue& mode = c.ConstArg(n, 2);
  Instruction* x = c.Operand(n, 0);
  Instruction* y = c.Operand(n, 1);
  if (hlo::IsInteger(b.t)) {  // an integer result: 'trunc' or 'floor' (true division gives a float)
    x = c.Convert(x, b.t), y = c.Convert(y, b.t);
    return {mode.toStringRef() == "floor" ? IntegerFloorDivide(b, x, y) : b.div(x, y)};
  }
  RequireFloating(n, b.t);
  if (!mode.isNone() && mode.toStringRef() == "floor") return {FloorDivide(b, c.Convert(x, b.t), c.Convert(y, b.t))};
  Instruction* q = b.div(x, y);
  if (mode.isNone()) return {q};
  return {Trunc(b, q)};
}

Outs FloorDivideOp(LoweringContext& c, const ir::Node& n) {  // floor_divide(self, other) / .Scalar
  Builder b = For(c, n);
  Instruction* y = c.TensorOrScalar(n, 1, b.t);
  if (hlo::IsInteger(b.t)) return {IntegerFloorDivide(b, c.Convert(c.Operand(n, 0), b.t), y)};
  RequireFloating(n, b.t);
  return {FloorDivide(b, c.Convert(c.Operand(n, 0), b.t), y)};
}

// Python's modulo: the remainder takes the divisor's sign.
Instruction* PythonRemainder(Builder& b, Instruction* x, Instruction* y) {
  Instruction* m = b(Opcode::kRemainder, x, y);
  return b.sel(SignDiffersFromDivisor(b, m, y), b.add(m, y), m);
}

Outs Remainder(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsInteger(b.t)) RequireFloating(n, b.t);
  Instruction* y = c.TensorOrScalar(n, 1, b.t);
  return {PythonRemainder(b, c.Operand(n, 0), y)};
}

Outs Fmod(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsInteger(b.t)) RequireFloating(n, b.t);
  Instruction* y = c.TensorOrScalar(n, 1, b.t);
  return {b(Opcode::kRemainder, c.Operand(n, 0), y)};
}

Outs Atan2(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  return {b(Opcode::kAtan2, c.Operand(n, 0), c.Operand(n, 1))};
}

// copysign(self, other): |self| with other's sign bit, so -0.0 and a NaN with its sign bit set
// count as negative, as in C's copysign. The bit is read through the float's integer image.
Outs Copysign(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (hlo::Is16BitFloat(b.t)) throw NotLowered("copysign in a 16-bit float type");
  ElementType bits = b.t == ElementType::kF64 ? ElementType::kS64 : ElementType::kS32;
  Instruction* magnitude = b(Opcode::kAbs, c.Operand(n, 0));
  Instruction* other = c.TensorOrScalar(n, 1, b.t);
  Instruction* image = c.Add(Opcode::kBitcastConvert, hlo::Shape::Array(bits, other->shape().dims), {other});
  Instruction* negative = c.Elementwise(Opcode::kCompare, {image, c.Constant(0, bits)}, bits, Comparison::kLt);
  return {b.sel(negative, b(Opcode::kNegate, magnitude), magnitude)};
}

// sinc(x) = sin(pi x) / (pi x), 1 at 0, as ATen computes it in the input's float type.
Outs Sinc(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* px = b.mul(b.k(M_PI), x);
  return {b.sel(b.cmp(Comparison::kEq, x, b.k(0)), b.k(1), b.div(b(Opcode::kSin, px), px))};
}

// lerp(self, end, weight), ATen's two-sided form (exact at both ends).
Outs Lerp(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  Instruction* x = c.Operand(n, 0);
  Instruction* y = c.Operand(n, 1);
  Instruction* w = c.TensorOrScalar(n, 2, b.t);
  Instruction* diff = b.sub(y, x);
  return {b.sel(b.cmp(Comparison::kLt, b(Opcode::kAbs, w), b.k(0.5)), b.add(x, b.mul(w, diff)),
                b.sub(y, b.mul(diff, b.sub(b.k(1), w))))};
}

Outs MaskedFill(LoweringContext& c, const ir::Node& n) {  // (self, mask, value)
  Builder b = For(c, n);
  Instruction* v = c.TensorOrScalar(n, 2, b.t);
  return {b.sel(c.Operand(n, 1), v, c.Operand(n, 0))};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_log2, Log2)
TXLA_LOWER(aten_log10, Log10)
TXLA_LOWER(aten_log1p, Log1p)
TXLA_LOWER(aten_expm1, Expm1)
TXLA_LOWER(aten_tan, Tan)
TXLA_LOWER(aten_asin, Asin)
TXLA_LOWER(aten_acos, Acos)
TXLA_LOWER(aten_atan, Atan)
TXLA_LOWER(aten_sinh, Sinh)
TXLA_LOWER(aten_cosh, Cosh)
TXLA_LOWER(aten_erf, Erf)
TXLA_LOWER(aten_erfc, Erfc)
TXLA_LOWER(aten_floor, Floor)
TXLA_LOWER(aten_ceil, Ceil)
TXLA_LOWER(aten_round, Round)
TXLA_LOWER(aten_trunc, TruncOp)
TXLA_LOWER(aten_frac, Frac)
TXLA_LOWER(aten_sign, Sign)
TXLA_LOWER(aten_sgn, Sign)
TXLA_LOWER(aten_reciprocal, Reciprocal)
TXLA_LOWER(aten_bitwise_not, BitwiseNot)
TXLA_LOWER(aten_logical_not, LogicalNot)
TXLA_LOWER(aten_logical_and, Logical<Opcode::kAnd>)
TXLA_LOWER(aten_logical_or, Logical<Opcode::kOr>)
TXLA_LOWER(aten_logical_xor, Logical<Opcode::kXor>)
TXLA_LOWER(aten_bitwise_and_Tensor, Bitwise<Opcode::kAnd>)
TXLA_LOWER(aten_bitwise_or_Tensor, Bitwise<Opcode::kOr>)
TXLA_LOWER(aten_bitwise_xor_Tensor, Bitwise<Opcode::kXor>)
TXLA_LOWER(aten_clamp, Clamp)
TXLA_LOWER(aten_clamp_Tensor, Clamp)
TXLA_LOWER(aten_clamp_min, ClampMin)
TXLA_LOWER(aten_clamp_max, ClampMax)
TXLA_LOWER(aten_pow_Tensor_Tensor, PowTensorTensor)
TXLA_LOWER(aten_pow_Scalar, PowScalar)
TXLA_LOWER(aten_threshold, Threshold)
TXLA_LOWER(aten_sigmoid_backward, SigmoidBackward)
TXLA_LOWER(aten_tanh_backward, TanhBackward)
TXLA_LOWER(aten_gelu, Gelu)
TXLA_LOWER(aten_gelu_backward, GeluBackward)
TXLA_LOWER(aten_silu, Silu)
TXLA_LOWER(aten_mish, Mish)
TXLA_LOWER(aten_leaky_relu, LeakyRelu)
TXLA_LOWER(aten_leaky_relu_backward, LeakyReluBackward)
TXLA_LOWER(aten__prelu_kernel, PreluKernel)
TXLA_LOWER(aten__prelu_kernel_backward, PreluKernelBackward)
TXLA_LOWER(aten_elu, Elu)
TXLA_LOWER(aten_elu_backward, EluBackward)
TXLA_LOWER(aten_hardtanh, Hardtanh)
TXLA_LOWER(aten_hardtanh_backward, HardtanhBackward)
TXLA_LOWER(aten_softplus, Softplus)
TXLA_LOWER(aten_softplus_backward, SoftplusBackward)
TXLA_LOWER(aten_hardsigmoid, Hardsigmoid)
TXLA_LOWER(aten_hardsigmoid_backward, HardsigmoidBackward)
TXLA_LOWER(aten_hardswish, Hardswish)
TXLA_LOWER(aten_hardswish_backward, HardswishBackward)
TXLA_LOWER(aten_rsub_Scalar, RsubScalar)
TXLA_LOWER(aten_div_Tensor_mode, DivMode)
TXLA_LOWER(aten_floor_divide, FloorDivideOp)
TXLA_LOWER(aten_remainder_Tensor, Remainder)
TXLA_LOWER(aten_remainder_Scalar, Remainder)
TXLA_LOWER(aten_fmod_Tensor, Fmod)
TXLA_LOWER(aten_fmod_Scalar, Fmod)
TXLA_LOWER(aten_atan2, Atan2)
TXLA_LOWER(aten_copysign_Tensor, Copysign)
TXLA_LOWER(aten_copysign_Scalar, Copysign)
TXLA_LOWER(aten_sinc, Sinc)
TXLA_LOWER(aten_lerp_Scalar, Lerp)
TXLA_LOWER(aten_lerp_Tensor, Lerp)
TXLA_LOWER(aten_masked_fill_Scalar, MaskedFill)
TXLA_LOWER(aten_masked_fill_Tensor, MaskedFill)

}  // namespace txla::lower
