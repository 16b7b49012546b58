// One scalar semantics: for every op computed by runtime/scalar_ops.h, on special values (NaN,
// infinities, signed zeros, ...), a compiled kernel, constant folding and the host function give
// the same bits; collectives reduce with the same NaN-propagating min/max; integer + - * wrap
// around alike everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/passes/constant_folding.h"
#include "hlo/opcode.h"
#include "hlo/parser.h"
#include "runtime/collectives.h"
#include "runtime/scalar_ops.h"

namespace txla::compiler {
namespace {

using hlo::Opcode;

const std::vector<double> kSpecials = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0,
                                       2.5, -2.5,     3.0,       0.5, 1e30, -7.0, 0.1};

struct ScalarOp {
  Opcode opcode;
  int arity;
  std::function<double(double, double)> f32, f64;
};

// `function` at T when it has a form for T (shifts have none for floats): NaN marks "none".
template <typename T, typename F>
double HostCall(F function, int arity, double a, double b) {
  if (arity == 1) {
    if constexpr (std::is_invocable_v<F, T>) return static_cast<double>(static_cast<T>(function(T(a))));
  } else {
    if constexpr (std::is_invocable_v<F, T, T>) return static_cast<double>(static_cast<T>(function(T(a), T(b))));
  }
  throw std::logic_error("no form");
}

std::vector<ScalarOp> FloatingOps() {
  std::vector<ScalarOp> ops;
  // Integer-only functions (shifts, gcd) have no float form; is-finite answers a predicate.
#define TXLA_TEST_OP(name, function, arity)                                                   \
  if (auto f = [](auto... a) -> decltype(function(a...)) { return function(a...); };          \
      (arity == 1 ? std::is_invocable_v<decltype(f), float>                                   \
                  : std::is_invocable_v<decltype(f), float, float>) &&                        \
      Opcode::k##name != Opcode::kIsFinite) {                                                 \
    ops.push_back({Opcode::k##name, arity,                                                    \
                   [f](double a, double b) { return HostCall<float>(f, arity, a, b); },       \
                   [f](double a, double b) { return HostCall<double>(f, arity, a, b); }});    \
  }
  TXLA_SCALAR_FUNCTIONS(TXLA_TEST_OP)
#undef TXLA_TEST_OP
  return ops;
}

std::string Join(const std::vector<double>& v) {
  std::ostringstream ss;
  ss.precision(17);
  ss << "{";
  for (size_t k = 0; k < v.size(); ++k) {
    if (k) ss << ", ";
    if (std::isnan(v[k])) ss << "nan";
    else if (std::isinf(v[k])) ss << (v[k] > 0 ? "inf" : "-inf");
    else if (v[k] == 0 && std::signbit(v[k])) ss << "-0";
    else ss << v[k];
  }
  return ss.str() + "}";
}

bool SameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// The module computing `op` on x (and y): from parameters, or from constants when `folded`.
std::string Module(const ScalarOp& op, const std::string& type, const std::vector<double>& x,
                   const std::vector<double>& y, bool folded) {
  const std::string shape = type + "[" + std::to_string(x.size()) + "]";
  std::string body;
  if (folded) {
    body = "  %x = " + shape + " constant(" + Join(x) + ")\n  %y = " + shape + " constant(" + Join(y) + ")\n";
  } else {
    body = "  %x = " + shape + " parameter(0)\n  %y = " + shape + " parameter(1)\n";
  }
  body += "  %r = " + shape + " " + std::string(hlo::OpcodeName(op.opcode)) + (op.arity == 2 ? "(%x, %y)\n" : "(%x)\n");
  return "HloModule m\n\nENTRY %main {\n" + body + "  ROOT %t = (" + shape + ") tuple(%r)\n}\n";
}

template <typename T>
std::vector<double> Read(const runtime::Buffer& b) {
  std::vector<double> out(b.element_count());
  for (int64_t k = 0; k < b.element_count(); ++k) out[k] = static_cast<double>(static_cast<const T*>(b.data())[k]);
  return out;
}

template <typename T>
runtime::BufferPtr Make(runtime::ElementType type, const std::vector<double>& v) {
  auto b = std::make_shared<runtime::Buffer>(type, std::vector<int64_t>{static_cast<int64_t>(v.size())}, 0);
  for (size_t k = 0; k < v.size(); ++k) static_cast<T*>(b->data())[k] = static_cast<T>(v[k]);
  return b;
}

template <typename T>
void CheckType(const std::string& type_name, runtime::ElementType type, bool f32) {
  std::vector<double> x, y;  // every pair of special values
  for (double a : kSpecials)
    for (double b : kSpecials) x.push_back(static_cast<T>(a)), y.push_back(static_cast<T>(b));
  for (const ScalarOp& op : FloatingOps()) {
    SCOPED_TRACE(std::string(hlo::OpcodeName(op.opcode)) + " " + type_name);
    auto executable = Compile(hlo::ParseModule(Module(op, type_name, x, y, false)));
    std::vector<runtime::BufferPtr> out = executable->Execute({Make<T>(type, x), Make<T>(type, y)}, 0);
    std::vector<double> kernel = Read<T>(*out.at(0));

    auto folded_module = hlo::ParseModule(Module(op, type_name, x, y, true));
    ConstantFolding().Run(*folded_module);
    const hlo::Instruction* root = folded_module->entry()->root()->operand(0);
    ASSERT_EQ(root->opcode(), Opcode::kConstant) << "not folded";
    for (size_t k = 0; k < x.size(); ++k) {
      const double host = f32 ? op.f32(x[k], y[k]) : op.f64(x[k], y[k]);
      const double fold = root->attrs().literal.GetDouble(root->attrs().literal.size() == 1 ? 0 : k);
      EXPECT_TRUE(SameBits(kernel[k], host)) << "kernel(" << x[k] << ", " << y[k] << ") = " << kernel[k]
                                             << ", host " << host;
      EXPECT_TRUE(SameBits(fold, host)) << "folded(" << x[k] << ", " << y[k] << ") = " << fold << ", host " << host;
    }
  }
}

TEST(ScalarSemanticsTest, KernelsFoldingAndHostAgreeOnSpecialValuesF32) {
  CheckType<float>("f32", runtime::ElementType::kF32, true);
}

TEST(ScalarSemanticsTest, KernelsFoldingAndHostAgreeOnSpecialValuesF64) {
  CheckType<double>("f64", runtime::ElementType::kF64, false);
}

TEST(ScalarSemanticsTest, FloatExpUnderflowsToZeroAndReachesTheDenormals) {
  // Past the denormals (a mask's -3.4e38 fill, -inf) exp is +0, computed without a denormal.
  for (float x : {-103.98f, -200.0f, -3.4028234663852886e38f, -INFINITY}) {
    float e = txla_exp(x);
    EXPECT_EQ(e, 0.0f) << x;
    EXPECT_FALSE(std::signbit(e)) << x;
  }
  // Above it, denormal results as libm's, within its 1-2 ulp.
  for (float x : {-88.0f, -95.5f, -100.0f, -103.0f, -103.9f}) {
    float want = std::exp(x);
    ASSERT_TRUE(std::fpclassify(want) == FP_SUBNORMAL) << x;
    EXPECT_NEAR(txla_exp(x), want, 2 * std::numeric_limits<float>::denorm_min()) << x;
  }
}

TEST(ScalarSemanticsTest, FloatTanhIsTheCorrectlyRoundedDoubleTanhAcrossItsScaledRange) {
  // Every power 2^n its range reduction builds (|2x| <= 40: n in [-58, 58]) and the clamped ends:
  // within an ulp of tanh computed in double and rounded once, the sign x's.
  for (int n = -58; n <= 58; ++n) {
    for (float frac : {-0.34f, -0.1f, 0.0f, 0.2f, 0.34f}) {
      const float x = (static_cast<float>(n) + frac) * 0.34657359f;  // 2x = (n + frac) ln2
      const float want = static_cast<float>(std::tanh(static_cast<double>(x)));
      const float got = txla_tanh(x);
      EXPECT_LE(std::fabs(got - want), std::fabs(std::nextafter(want, 2.0f) - want)) << x;
      EXPECT_EQ(std::signbit(got), std::signbit(x)) << x;
    }
  }
  for (float x : {1e-30f, 1e-7f, 25.0f, 1e30f, INFINITY}) {
    EXPECT_EQ(txla_tanh(x), static_cast<float>(std::tanh(static_cast<double>(x)))) << x;
    EXPECT_EQ(txla_tanh(-x), -txla_tanh(x)) << x;
  }
  EXPECT_TRUE(std::isnan(txla_tanh(NAN)));
}

TEST(ScalarSemanticsTest, MaximumAndMinimumPropagateNaNFromEitherSide) {
  EXPECT_TRUE(std::isnan(txla_max(1.0f, NAN)));
  EXPECT_TRUE(std::isnan(txla_max(NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(txla_min(-double(INFINITY), double(NAN))));
  EXPECT_TRUE(std::isnan(txla_min(double(NAN), -double(INFINITY))));
  EXPECT_EQ(txla_max(int64_t{-3}, int64_t{2}), 2);
}

// ATen's rules for which element a running maximum keeps (max pooling's indices; cummax).
TEST(ScalarSemanticsTest, RunningMaximaTakeAsATenDoes) {
  EXPECT_TRUE(txla_max_takes(2.0f, 1.0f));
  EXPECT_FALSE(txla_max_takes(1.0f, 1.0f));  // pooling keeps the first of equal values
  EXPECT_TRUE(txla_max_takes(float(NAN), 1.0f));
  EXPECT_TRUE(txla_max_takes(float(NAN), float(NAN)));  // the last NaN of a window
  EXPECT_FALSE(txla_max_takes(5.0f, float(NAN)));
  EXPECT_TRUE(txla_scan_max_takes(1.0, 1.0));  // cummax moves to a later equal value
  EXPECT_FALSE(txla_scan_max_takes(0.0, 1.0));
  EXPECT_TRUE(txla_scan_max_takes(double(NAN), 1.0));
  EXPECT_TRUE(txla_scan_max_takes(double(NAN), double(NAN)));
  EXPECT_FALSE(txla_scan_max_takes(5.0, double(NAN)));  // nothing replaces a NaN but a NaN
  EXPECT_TRUE(txla_scan_min_takes(int64_t{-3}, int64_t{-3}));
  EXPECT_FALSE(txla_scan_min_takes(int64_t{4}, int64_t{-3}));
}

TEST(ScalarSemanticsTest, CollectivesReduceWithTheSameMinAndMax) {
  float dst[4] = {1, NAN, 3, -1};
  const float src[4] = {NAN, 2, -INFINITY, -1};
  runtime::ReduceInto(runtime::ReduceKind::kMax, runtime::ElementType::kF32, dst, src, 4);
  EXPECT_TRUE(std::isnan(dst[0]));
  EXPECT_TRUE(std::isnan(dst[1]));
  EXPECT_EQ(dst[2], 3);
  float mins[2] = {0, 5};
  const float other[2] = {NAN, 4};
  runtime::ReduceInto(runtime::ReduceKind::kMin, runtime::ElementType::kF32, mins, other, 2);
  EXPECT_TRUE(std::isnan(mins[0]));
  EXPECT_EQ(mins[1], 4);
}

TEST(ScalarSemanticsTest, IntegerPowerShiftsRemainderAndGcdFoldAsKernelsComputeThem) {
  const std::string text =
      "HloModule m\n\nENTRY %main {\n"
      "  %a = s32[4] constant({3, -2, 7, 1})\n  %b = s32[4] constant({4, 3, 40, -1})\n"
      "  %p = s32[4] power(%a, %b)\n  %l = s32[4] shift-left(%a, %b)\n"
      "  %r = s32[4] shift-right-arithmetic(%a, %b)\n  %m = s32[4] remainder(%a, %b)\n"
      "  %c = s32[4] constant({12, -18, 0, 0})\n  %d = s32[4] constant({18, 12, 5, 0})\n  %g = s32[4] gcd(%c, %d)\n"
      "  ROOT %t = (s32[4], s32[4], s32[4], s32[4], s32[4]) tuple(%p, %l, %r, %m, %g)\n}\n";
  auto module = hlo::ParseModule(text);
  ConstantFolding().Run(*module);
  const hlo::Instruction* root = module->entry()->root();
  const std::vector<std::vector<int64_t>> want = {
      {81, -8, txla_pow(7, 40), 1}, {48, -16, 0, 0}, {0, -1, 0, 0}, {3, -2, 7, 0}, {6, 6, 5, 0}};
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(root->operand(k)->opcode(), Opcode::kConstant);
    for (size_t e = 0; e < 4; ++e) EXPECT_EQ(root->operand(k)->attrs().literal.GetInt(e), want[k][e]) << k << "," << e;
  }
}

// The module computing `opcode` on integer x (and y), from parameters or from constants.
std::string IntegerModule(Opcode opcode, const std::string& type, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& y, bool folded) {
  auto join = [](const std::vector<int64_t>& v) {
    std::string out = "{";
    for (size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
    return out + "}";
  };
  const std::string shape = type + "[" + std::to_string(x.size()) + "]";
  std::string body = folded ? "  %x = " + shape + " constant(" + join(x) + ")\n  %y = " + shape + " constant(" + join(y) + ")\n"
                            : "  %x = " + shape + " parameter(0)\n  %y = " + shape + " parameter(1)\n";
  body += "  %r = " + shape + " " + std::string(hlo::OpcodeName(opcode)) +
          (opcode == Opcode::kNegate ? "(%x)\n" : "(%x, %y)\n");
  return "HloModule m\n\nENTRY %main {\n" + body + "  ROOT %t = (" + shape + ") tuple(%r)\n}\n";
}

// x op y on every pair of `values`, by a kernel and by folding, against two's complement
// arithmetic done here in uint64 and cut to the type's width.
template <typename T>
void CheckWrapping(const std::string& type_name, runtime::ElementType type, const std::vector<int64_t>& values) {
  std::vector<int64_t> x, y;
  for (int64_t a : values)
    for (int64_t b : values) x.push_back(a), y.push_back(b);
  auto make = [&](const std::vector<int64_t>& v) {
    auto b = std::make_shared<runtime::Buffer>(type, std::vector<int64_t>{static_cast<int64_t>(v.size())}, 0);
    for (size_t k = 0; k < v.size(); ++k) static_cast<T*>(b->data())[k] = static_cast<T>(v[k]);
    return b;
  };
  const std::vector<std::pair<Opcode, std::function<uint64_t(uint64_t, uint64_t)>>> ops = {
      {Opcode::kAdd, [](uint64_t a, uint64_t b) { return a + b; }},
      {Opcode::kSubtract, [](uint64_t a, uint64_t b) { return a - b; }},
      {Opcode::kMultiply, [](uint64_t a, uint64_t b) { return a * b; }},
      {Opcode::kNegate, [](uint64_t a, uint64_t) { return 0 - a; }}};
  for (const auto& [opcode, wrap] : ops) {
    SCOPED_TRACE(std::string(hlo::OpcodeName(opcode)) + " " + type_name);
    auto executable = Compile(hlo::ParseModule(IntegerModule(opcode, type_name, x, y, false)));
    std::vector<runtime::BufferPtr> out = executable->Execute({make(x), make(y)}, 0);
    auto folded_module = hlo::ParseModule(IntegerModule(opcode, type_name, x, y, true));
    ConstantFolding().Run(*folded_module);
    const hlo::Instruction* root = folded_module->entry()->root()->operand(0);
    ASSERT_EQ(root->opcode(), Opcode::kConstant) << "not folded";
    for (size_t k = 0; k < x.size(); ++k) {
      const T want = static_cast<T>(wrap(static_cast<uint64_t>(x[k]), static_cast<uint64_t>(y[k])));
      EXPECT_EQ(static_cast<const T*>(out.at(0)->data())[k], want) << x[k] << ", " << y[k];
      EXPECT_EQ(root->attrs().literal.GetInt(k), want) << x[k] << ", " << y[k];
    }
  }
}

TEST(ScalarSemanticsTest, IntegerArithmeticWrapsAlikeInKernelsFoldingAndCollectives) {
  CheckWrapping<int8_t>("s8", runtime::ElementType::kS8, {127, -128, 100, -1, 0, 3});
  CheckWrapping<int32_t>("s32", runtime::ElementType::kS32, {INT32_MAX, INT32_MIN, 65536, -1, 0, 7});
  CheckWrapping<int64_t>("s64", runtime::ElementType::kS64, {INT64_MAX, INT64_MIN, int64_t{1} << 32, -1, 0, 5});
  int32_t sums[2] = {INT32_MAX, INT32_MIN};
  const int32_t more[2] = {1, -1};
  runtime::ReduceInto(runtime::ReduceKind::kSum, runtime::ElementType::kS32, sums, more, 2);
  EXPECT_EQ(sums[0], INT32_MIN);
  EXPECT_EQ(sums[1], INT32_MAX);
  int64_t products[1] = {int64_t{1} << 62};
  const int64_t four[1] = {4};
  runtime::ReduceInto(runtime::ReduceKind::kProduct, runtime::ElementType::kS64, products, four, 1);
  EXPECT_EQ(products[0], 0);
}

TEST(ScalarSemanticsTest, IntegerDivisionByZeroIsLeftToRunTime) {
  auto module = hlo::ParseModule(
      "HloModule m\n\nENTRY %main {\n  %x = s32[] constant(7)\n  %z = s32[] constant(0)\n"
      "  %d = s32[] divide(%x, %z)\n  %m = s32[] remainder(%x, %z)\n  ROOT %t = (s32[], s32[]) tuple(%d, %m)\n}\n");
  EXPECT_FALSE(ConstantFolding().Run(*module));
  EXPECT_NE(module->entry()->root()->operand(0)->opcode(), Opcode::kConstant);
  EXPECT_NE(module->entry()->root()->operand(1)->opcode(), Opcode::kConstant);
}

}  // namespace
}  // namespace txla::compiler
