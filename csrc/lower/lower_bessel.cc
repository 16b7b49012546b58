// Modified Bessel functions of the first kind: i0, special_i0e, special_i1, special_i1e, as
// ATen computes them (Cephes: Chebyshev series on [0, 8] and on 8/x beyond, in the op's own
// type; float32 drops the i1 series' terms below its precision, as ATen's float tables do).
#include <vector>

#include "ir/op_table.h"
#include "lower/formula.h"
#include "lower/lowering.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// Chebyshev coefficients (Cephes, via ATen's Math.h): exp(-x) I0(x) on [0, 8] and
// exp(-x) sqrt(x) I0(x) on [8, inf); the same for I1(x) / x and I1.
const std::vector<double> kI0eA = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,  -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14,  -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,   -2.67079385394061173391E-7,  1.11738753912010371815E-6,
    -4.41673835845875056359E-6,  1.64484480707288970893E-5,   -5.75419501008210370398E-5,  1.88502885095841655729E-4,
    -5.76375574538582365885E-4,  1.63947561694133579842E-3,   -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,   -9.49010970480476444210E-2,  1.71620901522208775349E-1,
    -3.04682672343198398683E-1,  6.76795274409476084995E-1};
const std::vector<double> kI0eB = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,  3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15,  3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11,  4.94060238822496958910E-10,  3.39623202570838634515E-9,   2.26666899049817806459E-8,
    2.04891858946906374183E-7,   2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
const std::vector<double> kI1eA = {
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16, -1.10559694773538630805E-15,
    7.60068429473540693410E-15, -5.04218550472791168711E-14, 3.22379336594557470981E-13, -1.98397439776494371520E-12,
    1.17361862988909016308E-11, -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9,  -4.44505912879632808065E-8,  2.00329475355213526229E-7,  -8.56872026469545474066E-7,
    3.47025130813767847674E-6,  -1.32731636560394358279E-5,  4.78156510755005422638E-5,  -1.61760815825896745588E-4,
    5.12285956168575772895E-4,  -1.51357245063125314899E-3,  4.15642294431288815669E-3,  -1.05640848946261981558E-2,
    2.47264490306265168283E-2,  -5.29459812080949914269E-2,  1.02643658689847095384E-1,  -1.76416518357834055153E-1,
    2.52587186443633654823E-1};
const std::vector<double> kI1eB = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17, -3.20952592199342395980E-17,
    2.96262899764595013876E-16,  3.30820231092092828324E-16,  -1.88035477551078244854E-15, -3.81440307243700780478E-15,
    1.04202769841288027642E-14,  4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,  3.25260358301548823856E-11,
    -1.89749581235054123450E-11, -5.58974346219658380687E-10, -3.83538038596423702205E-9,  -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,  -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};
// ATen's float32 tables for I1 keep the last 17 and 7 of these.
constexpr size_t kI1eAFloatTerms = 17, kI1eBFloatTerms = 7;

// chbevl: Clenshaw's recurrence over the coefficients, highest order first.
Instruction* Chebyshev(Builder& b, Instruction* x, const std::vector<double>& coefficients, size_t terms) {
  const size_t first = coefficients.size() - terms;
  Instruction* b0 = b.k(coefficients[first]);
  Instruction* b1 = b.k(0);
  Instruction* b2 = b1;
  for (size_t i = first + 1; i < coefficients.size(); ++i) {
    b2 = b1;
    b1 = b0;
    b0 = b.add(b.sub(b.mul(x, b1), b2), b.k(coefficients[i]));
  }
  return b.mul(b.k(0.5), b.sub(b0, b2));
}

// I0 or I1 of x, scaled by exp(-|x|) or not, in the op's type: the two series joined at |x| = 8.
template <bool kOrderOne, bool kScaled>
Outs Bessel(LoweringContext& c, const ir::Node& n) {
  Builder b = For(c, n);
  if (!hlo::IsFloating(b.t)) throw NotLowered(n.op()->name + " of an integer type");
  Instruction* signed_x = c.Convert(c.Operand(n, 0), b.t);
  Instruction* x = b(Opcode::kAbs, signed_x);
  const bool f32 = b.t != ElementType::kF64;
  const std::vector<double>& near_table = kOrderOne ? kI1eA : kI0eA;
  const std::vector<double>& far_table = kOrderOne ? kI1eB : kI0eB;
  const size_t near_terms = kOrderOne && f32 ? kI1eAFloatTerms : near_table.size();
  const size_t far_terms = kOrderOne && f32 ? kI1eBFloatTerms : far_table.size();
  Instruction* near = Chebyshev(b, b.sub(b.div(x, b.k(2)), b.k(2)), near_table, near_terms);
  Instruction* far = Chebyshev(b, b.sub(b.div(b.k(32), x), b.k(2)), far_table, far_terms);
  // ATen's order of operations: exp(x) [* x] * near, (exp(x) * far) / sqrt(x); the near series
  // of I1 is of I1(x) / x.
  if (kScaled) {
    if (kOrderOne) near = b.mul(near, x);
  } else {
    Instruction* growth = b(Opcode::kExp, x);
    near = b.mul(kOrderOne ? b.mul(growth, x) : growth, near);
    far = b.mul(growth, far);
  }
  far = b.div(far, b(Opcode::kSqrt, x));
  Instruction* y = b.sel(b.cmp(Comparison::kLe, x, b.k(8)), near, far);
  if (kOrderOne) y = b.sel(b.cmp(Comparison::kLt, signed_x, b.k(0)), b(Opcode::kNegate, y), y);
  return {y};
}

}  // namespace

// The lowering of each op row (ir/op_rows.h) this family holds.
TXLA_LOWER(aten_i0, Bessel<false, false>)
TXLA_LOWER(aten_special_i0e, Bessel<false, true>)
TXLA_LOWER(aten_special_i1, Bessel<true, false>)
TXLA_LOWER(aten_special_i1e, Bessel<true, true>)

}  // namespace txla::lower
