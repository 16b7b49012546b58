// The scalar semantics of the device's elementwise operations, written once. This one text is
// compiled into the host (constant folding evaluates with it, collectives reduce with it) and
// pasted verbatim into every generated kernel's prelude (CMake embeds it as a string), so a
// value folded at compile time, computed by a kernel or reduced across replicas is the same.
//
// It must stay self-contained: no #include, no typedef (the generated code has its own int64_t),
// only compiler builtins (libm underneath, resolved from the host process), `static inline` and
// templates over the element type. Semantics are eager PyTorch's: NaN propagates through
// maximum/minimum (and so through max reductions, max pooling and clamp); integer power, shifts
// and remainder as ATen computes them.
#ifndef TXLA_RUNTIME_SCALAR_OPS_H_
#define TXLA_RUNTIME_SCALAR_OPS_H_

#define TXLA_UNARY(name, f32, f64) \
  static inline float name(float x) { return f32(x); } \
  static inline double name(double x) { return f64(x); }
TXLA_UNARY(txla_expm1, __builtin_expm1f, __builtin_expm1)
TXLA_UNARY(txla_log, __builtin_logf, __builtin_log)
TXLA_UNARY(txla_log1p, __builtin_log1pf, __builtin_log1p)
TXLA_UNARY(txla_sqrt, __builtin_sqrtf, __builtin_sqrt)
TXLA_UNARY(txla_sin, __builtin_sinf, __builtin_sin)
TXLA_UNARY(txla_cos, __builtin_cosf, __builtin_cos)
TXLA_UNARY(txla_tan, __builtin_tanf, __builtin_tan)
TXLA_UNARY(txla_floor, __builtin_floorf, __builtin_floor)
TXLA_UNARY(txla_ceil, __builtin_ceilf, __builtin_ceil)
TXLA_UNARY(txla_round_even, __builtin_nearbyintf, __builtin_nearbyint)
TXLA_UNARY(txla_acosh, __builtin_acoshf, __builtin_acosh)
TXLA_UNARY(txla_asinh, __builtin_asinhf, __builtin_asinh)
TXLA_UNARY(txla_atanh, __builtin_atanhf, __builtin_atanh)
#undef TXLA_UNARY
// float exp, branch-free so that loops over it vectorize (libm's expf is a scalar call per
// element): x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, Cephes' split of ln2), a degree-6
// polynomial for e^r, then 2^n built in the exponent bits, in two factors so that results
// down to the denormals are reached. Within 1-2 ulp of the exact value; NaN, +-inf, overflow
// and underflow as libm's. Below `lo` the result is 0 and the polynomial runs on 0 instead: at
// `lo` its scaling ends in a denormal, which costs Intel cores a microcode assist per element
// (a masked softmax's -3.4e38 fill ran 6x slower than its unmasked half).
__attribute__((always_inline)) static inline float txla_exp(float x) {
  const float hi = 88.72283935546875f, lo = -103.972084045410f;
  float c = x > hi ? hi : x < lo ? 0.0f : x;  // NaN compares false: stays NaN, replaced below
  c = c == c ? c : 0.0f;
  float n = __builtin_nearbyintf(c * 1.44269504088896341f);
  // Explicit fused multiply-adds: the kernels (-march=native) and the host (folding) then
  // round identically whatever each compiler would contract.
  float r = __builtin_fmaf(-n, 0.693359375f, c);
  r = __builtin_fmaf(-n, -2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = __builtin_fmaf(p, r, 1.3981999507e-3f);
  p = __builtin_fmaf(p, r, 8.3334519073e-3f);
  p = __builtin_fmaf(p, r, 4.1665795894e-2f);
  p = __builtin_fmaf(p, r, 1.6666665459e-1f);
  p = __builtin_fmaf(p, r, 5.0000001201e-1f);
  p = __builtin_fmaf(p * r, r, r) + 1.0f;
  int ni = (int)n;
  int n1 = ni / 2, n2 = ni - ni / 2;
  float s1 = __builtin_bit_cast(float, (n1 + 127) << 23);
  float s2 = __builtin_bit_cast(float, (n2 + 127) << 23);
  float e = p * s1 * s2;
  e = x > hi ? __builtin_inff() : e;
  e = x < lo ? 0.0f : e;
  return x == x ? e : x;
}
static inline double txla_exp(double x) { return __builtin_exp(x); }

// float tanh = expm1(2x) / (expm1(2x) + 2), evaluated in double and rounded once, branch-free so
// that loops over it vectorize: libm's tanhf is a scalar call per element that calls expm1f
// (a sixth of an LSTM step's time). 2x = n ln2 + r with |r| <= ln2/2 (ln2 split in two), e^r - 1
// by its Taylor series to r^13 (the next term is below 1e-17), expm1 = 2^n (e^r - 1) + (2^n - 1).
// The double result is within a few 1e-16 of tanh, so the float is correctly rounded but in
// rare ties. 2x is clamped to [-40, 40], where tanh is +-1 in double (infinities too); NaN
// compares false and passes through; the sign is x's, so tanh(-0) is -0. Always inlined: at the
// kernels' -O1 a call per element would keep the loop scalar.
__attribute__((always_inline)) static inline float txla_tanh(float x) {
  double t = 2.0 * (double)x;
  t = t > 40.0 ? 40.0 : t < -40.0 ? -40.0 : t;
  const double n = __builtin_rint(t * 1.4426950408889634);
  const double r = __builtin_fma(-n, 1.9082149292705877e-10, __builtin_fma(-n, 6.9314718036912382e-01, t));
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = __builtin_fma(p, r, 1.0 / 479001600.0);
  p = __builtin_fma(p, r, 1.0 / 39916800.0);
  p = __builtin_fma(p, r, 1.0 / 3628800.0);
  p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0);
  p = __builtin_fma(p, r, 1.0 / 5040.0);
  p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0);
  p = __builtin_fma(p, r, 1.0 / 24.0);
  p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  const double em1_r = __builtin_fma(p * r, r, r);  // e^r - 1
  // 2^n from the exponent bits. n + 1023 is put in the low bits of a double's mantissa by adding
  // 1.5 * 2^52, not by a double -> int64 conversion, which AVX2 has no vector form of: with it
  // this loop stayed scalar on AVX2 machines (an LSTM step's cells 5x slower than on AVX-512).
  const double biased = n + (1023.0 + 6755399441055744.0);
  const double scale = __builtin_bit_cast(double, __builtin_bit_cast(long long, biased) << 52);
  const double em1 = __builtin_fma(scale, em1_r, scale - 1.0);
  const float result = (float)(em1 / (em1 + 2.0));
  return __builtin_copysignf(result, x);
}
static inline double txla_tanh(double x) { return __builtin_tanh(x); }

// float erf as a rational function of x on [-4, 4] (XLA's f32 erf; |error| within a few ulp;
// erf(+-4) rounds to +-1 in float): branch-free, so loops over it vectorize, where libm's erff
// is a scalar call per element. NaN propagates through the clamp.
__attribute__((always_inline)) static inline float txla_erf(float x) {
  float c = x > 4.0f ? 4.0f : x < -4.0f ? -4.0f : x;  // NaN compares false: stays NaN
  float x2 = c * c;
  float p = -2.72614225801306e-10f;
  p = __builtin_fmaf(p, x2, 2.77068142495902e-08f);
  p = __builtin_fmaf(p, x2, -2.10102402082508e-06f);
  p = __builtin_fmaf(p, x2, -5.69250639462346e-05f);
  p = __builtin_fmaf(p, x2, -7.34990630326855e-04f);
  p = __builtin_fmaf(p, x2, -2.95459980854025e-03f);
  p = __builtin_fmaf(p, x2, -1.60960333262415e-02f);
  float q = -1.45660718464996e-05f;
  q = __builtin_fmaf(q, x2, -2.13374055278905e-04f);
  q = __builtin_fmaf(q, x2, -1.68282697438203e-03f);
  q = __builtin_fmaf(q, x2, -7.37332916720468e-03f);
  q = __builtin_fmaf(q, x2, -1.42647390514189e-02f);
  return c * p / q;
}
static inline double txla_erf(double x) { return __builtin_erf(x); }
static inline float txla_rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
static inline double txla_rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
__attribute__((always_inline)) static inline float txla_logistic(float x) { return 1.0f / (1.0f + txla_exp(-x)); }
static inline double txla_logistic(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }

// Digamma as ATen computes it: reflection below zero, recurrence up to 10, asymptotic series.
static inline double txla_digamma_f64(double x) {
  if (x == 0) return __builtin_copysign(__builtin_inf(), -x);
  double result = 0;
  if (x < 0) {
    if (x == __builtin_trunc(x)) return __builtin_nan("");
    const double pi = 3.14159265358979323846;
    result = -pi / __builtin_tan(pi * (x - __builtin_trunc(x)));
    x = 1 - x;
  }
  while (x < 10) { result -= 1 / x; x += 1; }
  if (x == 10) return result + 2.25175258906672110764;
  double y = 0;
  if (x < 1.0e17) {
    const double z = 1.0 / (x * x);
    double p = 8.33333333333333333333E-2;
    p = p * z - 2.10927960927960927961E-2; p = p * z + 7.57575757575757575758E-3;
    p = p * z - 4.16666666666666666667E-3; p = p * z + 3.96825396825396825397E-3;
    p = p * z - 8.33333333333333333333E-3; p = p * z + 8.33333333333333333333E-2;
    y = z * p;
  }
  return result + __builtin_log(x) - 0.5 / x - y;
}
static inline float txla_digamma(float x) { return (float)txla_digamma_f64(x); }
static inline double txla_digamma(double x) { return txla_digamma_f64(x); }

// erfinv as ATen's calc_erfinv computes it, in the element's own type: a rational first guess
// (central and tail ranges), then two Newton steps on erf.
#define TXLA_ERFINV(T, ERF, EXP, SQRT, LOG)                                                     \
  static inline T txla_erfinv(T y) {                                                           \
    const T ay = y < 0 ? -y : y;                                                               \
    if (ay > (T)1) return (T)__builtin_nan("");                                                \
    if (ay == (T)1) return __builtin_copysign((T)__builtin_inf(), y);                          \
    T x;                                                                                       \
    if (ay <= (T)0.7) {                                                                        \
      const T z = y * y;                                                                       \
      const T num = (((T)-0.140543331 * z + (T)0.914624893) * z + (T)-1.645349621) * z + (T)0.886226899; \
      const T dem = (((((T)0.012229801 * z + (T)-0.329097515) * z + (T)1.442710462) * z +        \
                      (T)-2.118377725) * z + (T)1.0);                                          \
      x = y * num / dem;                                                                       \
    } else {                                                                                   \
      const T z = SQRT(-LOG(((T)1.0 - ay) / (T)2.0));                                          \
      const T num = (((T)1.641345311 * z + (T)3.429567803) * z + (T)-1.624906493) * z + (T)-1.970840454; \
      const T dem = ((T)1.6370678 * z + (T)3.5438892) * z + (T)1.0;                            \
      x = __builtin_copysign(num, y) / dem;                                                    \
    }                                                                                          \
    const T two_over_sqrt_pi = (T)2.0 / (T)1.7724538509055159;                                 \
    x = x - (ERF(x) - y) / (two_over_sqrt_pi * EXP(-x * x));                                   \
    x = x - (ERF(x) - y) / (two_over_sqrt_pi * EXP(-x * x));                                   \
    return x;                                                                                  \
  }
TXLA_ERFINV(float, __builtin_erff, __builtin_expf, __builtin_sqrtf, __builtin_logf)
TXLA_ERFINV(double, __builtin_erf, __builtin_exp, __builtin_sqrt, __builtin_log)
#undef TXLA_ERFINV

// gcd as ATen's calc_gcd: Euclid on the absolute values (integers only).
static inline bool txla_gcd(bool a, bool b) { return a || b; }
template <typename T> static inline auto txla_gcd(T a, T b) -> decltype((T)(a % b)) {
  a = a < 0 ? (T)-a : a;
  b = b < 0 ? (T)-b : b;
  while (a != 0) {
    const T c = a;
    a = (T)(b % a);
    b = c;
  }
  return b;
}

// Shifts as ATen 2.x defines them: a count outside [0, bits) shifts everything out (left) or
// fills with the sign (right); the left shift wraps in unsigned arithmetic.
// (The trailing return types keep them to integer T, also for code that asks whether they apply.)
template <typename T> static inline auto txla_shl(T a, T b) -> decltype((T)(a << 1)) {
  const long long bits = sizeof(T) * 8, s = (long long)b;
  return (s < 0 || s >= bits) ? (T)0 : (T)((unsigned long long)(long long)a << s);
}
template <typename T> static inline auto txla_shr(T a, T b) -> decltype((T)(a >> 1)) {
  const long long bits = sizeof(T) * 8;
  long long s = (long long)b;
  if (s < 0 || s >= bits) s = bits - 1;
  return (T)(a >> s);
}

static inline float txla_pow(float a, float b) { return __builtin_powf(a, b); }
static inline double txla_pow(double a, double b) { return __builtin_pow(a, b); }
// Integer powers as ATen computes them: by squaring, wrapping on overflow (done in unsigned
// arithmetic, where wrapping is defined); a negative exponent gives 1, -1 or 0.
// Booleans (constant folding instantiates every function for them): a^0 = 1, a^1 = a.
static inline bool txla_pow(bool a, bool b) { return b ? a : true; }
template <typename T> static inline T txla_pow(T a, T b) {
  if (b < 0) return a == 1 ? (T)1 : a == -1 ? (T)((b & 1) ? -1 : 1) : (T)0;
  unsigned long long r = 1, x = (unsigned long long)(long long)a;
  for (unsigned long long e = (unsigned long long)(long long)b; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return (T)r;
}

// C's remainder (the sign of the dividend), as torch.fmod. For integers, a zero divisor never
// gets here (kernels replace it by 1 and report ZeroDivisionError; folding leaves it alone), and
// -1 is handled apart: the minimum divided by -1 traps.
static inline float txla_fmod(float a, float b) { return __builtin_fmodf(a, b); }
static inline double txla_fmod(double a, double b) { return __builtin_fmod(a, b); }
static inline bool txla_fmod(bool a, bool b) { return (bool)((int)a % (int)b); }
template <typename T> static inline auto txla_fmod(T a, T b) -> decltype((T)(a % b)) {
  return ((T)-1 < (T)0 && b == (T)-1) ? (T)0 : (T)(a % b);
}
// Integer division truncating toward zero; b != 0 (the kernels check it), b == -1 wraps.
static inline bool txla_idiv(bool a, bool b) { return (bool)((int)a / (int)b); }
template <typename T> static inline auto txla_idiv(T a, T b) -> decltype((T)(a % b)) {
  return ((T)-1 < (T)0 && b == (T)-1) ? (T)(0ULL - (unsigned long long)a) : (T)(a / b);
}
static inline float txla_atan2(float a, float b) { return __builtin_atan2f(a, b); }
static inline double txla_atan2(double a, double b) { return __builtin_atan2(a, b); }

static inline bool txla_abs(bool x) { return x; }
template <typename T> static inline T txla_abs(T x) { return x < 0 ? (T)-x : x; }
// sign(NaN) is 0, as eager's torch.sign gives it.
static inline bool txla_sign(bool x) { return x; }
template <typename T> static inline T txla_sign(T x) { return (T)((x > 0) - (x < 0)); }
static inline bool txla_isfinite(float x) { return __builtin_isfinite(x); }
static inline bool txla_isfinite(double x) { return __builtin_isfinite(x); }

// Addition, subtraction, multiplication and negation. Floats as C computes them. Integers wrap
// around in two's complement, as eager's CPU kernels compute them: in unsigned arithmetic of the
// type's width (32 bits for the narrower ones), where C defines the wrap; a signed overflow is
// undefined, and the compiler may assume it never happens. Booleans: + and * are or and and.
#define TXLA_ARITHMETIC(name, op)                                                                  \
  static inline float name(float a, float b) { return a op b; }                                    \
  static inline double name(double a, double b) { return a op b; }                                 \
  template <typename T> static inline T name(T a, T b) {                                           \
    return sizeof(T) <= 4 ? (T)((unsigned)a op (unsigned)b) : (T)((unsigned long long)a op (unsigned long long)b); \
  }
TXLA_ARITHMETIC(txla_add, +)
TXLA_ARITHMETIC(txla_sub, -)
TXLA_ARITHMETIC(txla_mul, *)
#undef TXLA_ARITHMETIC
static inline float txla_neg(float a) { return -a; }
static inline double txla_neg(double a) { return -a; }
template <typename T> static inline T txla_neg(T a) { return txla_sub((T)0, a); }

// NaN-propagating maximum/minimum, as ATen's maximum/minimum, max/min reductions, max pooling,
// clamp and relu: a NaN in either operand is the result. Written as selects, not ||, since the
// short circuit becomes a branch that mispredicts on data; for integers the NaN tests fold away.
template <typename T> static inline T txla_max(T a, T b) {
  T m = b > a ? b : a;
  m = b != b ? b : m;
  return a != a ? a : m;
}
template <typename T> static inline T txla_min(T a, T b) {
  T m = b < a ? b : a;
  m = b != b ? b : m;
  return a != a ? a : m;
}

// Which element a running maximum keeps, as ATen's max pooling (and so its indices) chooses: the
// first seeds it; a larger value or a NaN replaces it, so the last NaN of a window wins.
template <typename T> static inline bool txla_max_takes(T v, T best) { return (v > best) | (v != v); }
// ... and as cummax / cummin choose: a NaN replaces it (a later NaN an earlier one), and a later
// equal value replaces a number.
template <typename T> static inline bool txla_scan_max_takes(T v, T best) {
  return (v != v) | ((best == best) & (v >= best));
}
template <typename T> static inline bool txla_scan_min_takes(T v, T best) {
  return (v != v) | ((best == best) & (v <= best));
}

// bf16 and f16 are stored as their 16-bit patterns and computed in float: every operation of a
// 16-bit float type is the float operation rounded back to the type, as eager PyTorch's CPU
// kernels compute them. Both conversions round to nearest even, as c10::BFloat16 and c10::Half
// do (NaN becomes the canonical quiet NaN); written with integer and float arithmetic only, so
// loops over them vectorize and the host (folding) rounds as the kernels do.
static inline float txla_bf16_to_float(unsigned short b) { return __builtin_bit_cast(float, (unsigned)b << 16); }
static inline unsigned short txla_bf16_from_float(float f) {
  unsigned u = __builtin_bit_cast(unsigned, f);
  unsigned rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  // NaN picked by a mask, not a ?: GCC turned the select into a branch whose two stores it then
  // merged into a scatter, and a loop storing bf16 ran scalar.
  unsigned nan = 0u - (unsigned)(f != f);
  return (unsigned short)((rounded & ~nan) | (0x7FC0u & nan));
}
static inline float txla_f16_to_float(unsigned short h) {
  unsigned w = (unsigned)h << 16, sign = w & 0x80000000u, two_w = w + w;
  // Normal values: the exponent rebiased by a multiply (which also makes inf and NaN of the
  // largest exponents); subnormals: the mantissa placed under a fixed exponent, minus its bias.
  float normal = __builtin_bit_cast(float, (two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  float subnormal = __builtin_bit_cast(float, (two_w >> 17) | (126u << 23)) - 0.5f;
  unsigned bits = two_w < (1u << 27) ? __builtin_bit_cast(unsigned, subnormal) : __builtin_bit_cast(unsigned, normal);
  return __builtin_bit_cast(float, sign | bits);
}
static inline unsigned short txla_f16_from_float(float f) {
  // Scaling by 2^112 then 2^-110 rounds the mantissa at f16's precision (and overflows to inf);
  // adding a power of two aligned to the value's exponent moves the rounded bits into place.
  float a = f < 0 ? -f : f;
  float base = (a * 0x1.0p+112f) * 0x1.0p-110f;
  unsigned w = __builtin_bit_cast(unsigned, f), shl1_w = w + w, sign = w & 0x80000000u;
  unsigned bias = shl1_w & 0xFF000000u;
  bias = bias < 0x71000000u ? 0x71000000u : bias;
  base = __builtin_bit_cast(float, (bias >> 1) + 0x07800000u) + base;
  unsigned bits = __builtin_bit_cast(unsigned, base);
  unsigned nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
  unsigned nan = 0u - (unsigned)(shl1_w > 0xFF000000u);  // a mask, as in txla_bf16_from_float
  return (unsigned short)((sign >> 16) | (0x7E00u & nan) | (nonsign & ~nan));
}
static inline float txla_round_bf16(float f) { return txla_bf16_to_float(txla_bf16_from_float(f)); }
static inline float txla_round_f16(float f) { return txla_f16_to_float(txla_f16_from_float(f)); }

// The HLO opcodes computed by one of the functions above, for code that maps opcodes to them
// (the emitter prints the name, constant folding calls it): V(opcode without its k, function,
// operand count).
#define TXLA_SCALAR_FUNCTIONS(V)                                                              \
  V(Exp, txla_exp, 1) V(Expm1, txla_expm1, 1) V(Log, txla_log, 1) V(Log1p, txla_log1p, 1)      \
  V(Sqrt, txla_sqrt, 1) V(Rsqrt, txla_rsqrt, 1) V(Sin, txla_sin, 1) V(Cos, txla_cos, 1)          \
  V(Tan, txla_tan, 1) V(Tanh, txla_tanh, 1) V(Logistic, txla_logistic, 1) V(Erf, txla_erf, 1)   \
  V(Floor, txla_floor, 1) V(Ceil, txla_ceil, 1) V(RoundNearestEven, txla_round_even, 1)         \
  V(Acosh, txla_acosh, 1) V(Asinh, txla_asinh, 1) V(Atanh, txla_atanh, 1)                       \
  V(Digamma, txla_digamma, 1) V(Abs, txla_abs, 1) V(Sign, txla_sign, 1)                         \
  V(IsFinite, txla_isfinite, 1) V(Maximum, txla_max, 2) V(Minimum, txla_min, 2)                 \
  V(Power, txla_pow, 2) V(Atan2, txla_atan2, 2) V(Remainder, txla_fmod, 2)                      \
  V(ShiftLeft, txla_shl, 2) V(ShiftRightArithmetic, txla_shr, 2) V(ErfInv, txla_erfinv, 1)        \
  V(Gcd, txla_gcd, 2) V(Add, txla_add, 2) V(Subtract, txla_sub, 2) V(Multiply, txla_mul, 2)      \
  V(Negate, txla_neg, 1)

#endif  // TXLA_RUNTIME_SCALAR_OPS_H_
