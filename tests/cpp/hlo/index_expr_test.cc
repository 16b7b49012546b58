// Index expressions: the simplified form of each read is what the emitter prints, so it must
// equal the naive formula at every point of the loop nest, and be as simple as the ranges allow.
#include "compiler/codegen/index_expr.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace txla::compiler {
namespace {

using Index = std::vector<IndexExpr>;

// Takes a row-major linear index apart into `dims` (as a reshape's read does).
Index Delinearize(const IndexExpr& lin, const std::vector<int64_t>& dims) {
  Index out(dims.size());
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    out[k] = lin.Div(stride).Mod(dims[k]);
    stride *= dims[k];
  }
  return out;
}
IndexExpr Linearize(const Index& idx, const std::vector<int64_t>& dims) {
  IndexExpr out = idx[0];
  for (size_t k = 1; k < dims.size(); ++k) out = out * dims[k] + idx[k];
  return out;
}
std::vector<int64_t> DelinearizeValue(int64_t lin, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    out[k] = lin % dims[k];
    lin /= dims[k];
  }
  return out;
}
int64_t LinearizeValue(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t out = idx[0];
  for (size_t k = 1; k < dims.size(); ++k) out = out * dims[k] + idx[k];
  return out;
}

TEST(IndexExprTest, ReshapeOfARowIsTheLoopIndex) {
  IndexExpr i0 = IndexExpr::Var("i0", 512), i1 = IndexExpr::Var("i1", 512);
  Index sub = Delinearize(Linearize({i0, i1}, {512, 512}), {8, 64, 512});
  EXPECT_EQ(sub[0].str(), "(i0 / 64)");
  EXPECT_EQ(sub[1].str(), "(i0 % 64)");
  EXPECT_EQ(sub[2].str(), "i1");
  // Reshaping back recovers the linear index itself: 64*(i0 / 64) + i0 % 64 == i0.
  EXPECT_EQ(Linearize(sub, {8, 64, 512}).str(), Linearize({i0, i1}, {512, 512}).str());
  EXPECT_EQ(Linearize(sub, {8, 64, 512}).str(), "(i0*512 + i1)");
}

TEST(IndexExprTest, ThreeOrMoreDimensionsTakenApartRecombine) {
  // One loop over dimensions merged by the emitter: their row-major offset is the loop index.
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
           {512, 3, 3}, {4, 5, 6, 7}, {2, 1, 3}, {16, 8, 8, 2, 3}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    IndexExpr f = IndexExpr::Var("f", n);
    EXPECT_EQ(Linearize(Delinearize(f, dims), dims).str(), "f");
    // And in a larger offset, with a stride and another variable.
    IndexExpr j = IndexExpr::Var("j", 10);
    EXPECT_EQ((Linearize(Delinearize(f, dims), dims) * 2 + j * (2 * n)).str(), "(f*2 + j*" + std::to_string(2 * n) + ")");
  }
  // Not a row-major offset: stays as it is (and equals the naive value).
  IndexExpr f = IndexExpr::Var("f", 36);
  Index parts = Delinearize(f, {4, 3, 3});
  IndexExpr swapped = parts[0] * 9 + parts[2] * 3 + parts[1];
  for (int64_t v = 0; v < 36; ++v)
    EXPECT_EQ(swapped.Evaluate({{"f", v}}), (v / 9) * 9 + (v % 3) * 3 + (v / 3) % 3) << v;
  EXPECT_NE(swapped.str(), "f");
}

TEST(IndexExprTest, RangesDecideClampsDivisionsAndRemainders) {
  IndexExpr i = IndexExpr::Var("i", 64);
  EXPECT_EQ(i.Clamp(0, 63).str(), "i");
  EXPECT_EQ(i.Clamp(0, 62).str(), "txla_iclamp(i, 0, 62)");
  EXPECT_EQ((i - 70).Clamp(0, 5).str(), "0");
  EXPECT_EQ(i.Div(64).str(), "0");
  EXPECT_EQ(i.Mod(64).str(), "i");
  EXPECT_EQ((i * 4 + 3).Div(4).str(), "i");
  EXPECT_EQ((i * 4 + 3).Mod(4).str(), "3");
  EXPECT_EQ(i.Div(8).Div(4).str(), "(i / 32)");
  EXPECT_EQ(i.lo(), 0);
  EXPECT_EQ(i.hi(), 63);
  EXPECT_EQ((i * -2 + 5).lo(), -121);
  // A variable over part of its range: one quotient throughout divides into a constant, and
  // its remainder into an offset (a concatenation's second operand, read at j - 128).
  IndexExpr j = IndexExpr::Var("j", 128, 256);
  EXPECT_EQ(j.Div(128).str(), "1");
  EXPECT_EQ(j.Mod(128).str(), "(j - 128)");
  EXPECT_EQ((j - 128 + i * 128).Div(128).str(), "i");
  EXPECT_EQ((j - 128 + i * 128).Mod(128).str(), "(j - 128)");
  EXPECT_EQ(j.Div(64).str(), "(j / 64)");  // two quotients: stays
  // A possibly negative dividend keeps C's truncating division as it is.
  EXPECT_EQ((i - 3).Div(4).str(), "((i - 3) / 4)");
  EXPECT_EQ((IndexExpr(7) - i).str(), "(-i + 7)");
}

// Random chains of reshapes, transposes, slices and pads, evaluated at every point of the
// loop nest, against the same reads computed with plain integers.
TEST(IndexExprTest, SimplifiedReadsEqualTheNaiveFormulaEverywhere) {
  std::mt19937 rng(1234);
  auto factorize = [&](int64_t n) {  // a random shape with n elements
    std::vector<int64_t> dims;
    while (n > 1 && dims.size() < 4) {
      std::vector<int64_t> divisors;
      for (int64_t d = 2; d <= n; ++d)
        if (n % d == 0) divisors.push_back(d);
      int64_t d = divisors[rng() % divisors.size()];
      dims.push_back(d);
      n /= d;
    }
    if (dims.empty() || rng() % 3 == 0) dims.push_back(n);
    return dims;
  };
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int64_t> sizes = {24, 36, 48, 60, 64, 96};
    std::vector<int64_t> out_dims = factorize(sizes[rng() % sizes.size()]);
    Index vars;
    for (size_t k = 0; k < out_dims.size(); ++k)
      vars.push_back(IndexExpr::Var("v" + std::to_string(k), out_dims[k]));
    // Each step maps an index into the current shape to an index into the next (as a read
    // through that op does) in both forms.
    std::vector<std::function<Index(const Index&)>> symbolic;
    std::vector<std::function<std::vector<int64_t>(const std::vector<int64_t>&)>> numeric;
    std::vector<int64_t> dims = out_dims;
    for (int step = 0; step < 4; ++step) {
      int kind = rng() % 4;
      if (kind == 0) {  // reshape: read an operand of another shape with the same element count
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        std::vector<int64_t> from = dims, to = factorize(n);
        symbolic.push_back([=](const Index& idx) { return Delinearize(Linearize(idx, from), to); });
        numeric.push_back([=](const std::vector<int64_t>& idx) { return DelinearizeValue(LinearizeValue(idx, from), to); });
        dims = to;
      } else if (kind == 1 && dims.size() >= 2) {  // transpose of the last two dimensions
        std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
        auto swap_last = [](auto idx) { std::swap(idx[idx.size() - 1], idx[idx.size() - 2]); return idx; };
        symbolic.push_back(swap_last);
        numeric.push_back(swap_last);
      } else if (kind == 2) {  // a slice with a start and stride on dimension 0
        int64_t stride = 1 + rng() % 2, start = rng() % 3;
        std::vector<int64_t> next = dims;
        next[0] = start + (dims[0] - 1) * stride + 1 + rng() % 2;
        symbolic.push_back([=](Index idx) { idx[0] = idx[0] * stride + start; return idx; });
        numeric.push_back([=](std::vector<int64_t> idx) { idx[0] = idx[0] * stride + start; return idx; });
        dims = next;
      } else {  // a pad: the operand is read at the shifted index, clamped into its bounds
        int64_t lo = rng() % 3, size = dims.back() - rng() % 3;
        if (size < 1) size = 1;
        std::vector<int64_t> next = dims;
        next.back() = size;
        symbolic.push_back([=](Index idx) { idx.back() = (idx.back() - lo).Clamp(0, size - 1); return idx; });
        numeric.push_back([=](std::vector<int64_t> idx) {
          idx.back() = std::min(std::max<int64_t>(idx.back() - lo, 0), size - 1);
          return idx;
        });
        dims = next;
      }
    }
    Index sym = vars;
    for (auto& f : symbolic) sym = f(sym);
    IndexExpr read = Linearize(sym, dims);
    // Every point of the loop nest.
    std::vector<int64_t> point(out_dims.size(), 0);
    for (;;) {
      std::map<std::string, int64_t> values;
      for (size_t k = 0; k < point.size(); ++k) values["v" + std::to_string(k)] = point[k];
      std::vector<int64_t> idx = point;
      for (auto& f : numeric) idx = f(idx);
      int64_t expected = LinearizeValue(idx, dims);
      ASSERT_EQ(read.Evaluate(values), expected) << "trial " << trial << ": " << read.str();
      ASSERT_GE(expected, read.lo()) << read.str();
      ASSERT_LE(expected, read.hi()) << read.str();
      size_t k = point.size();
      while (k-- > 0 && ++point[k] == out_dims[k]) point[k] = 0;
      if (k == static_cast<size_t>(-1)) break;
    }
  }
}

}  // namespace
}  // namespace txla::compiler
