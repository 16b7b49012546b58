// Argument checks PyTorch/XLA 2.9 makes at the op, raised with its messages (its users and its
// tests read them: test_ops_error_message.py). Each rule checks, then leaves the shape to the
// Meta kernel (nullopt) or to the rule it wraps.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <ATen/Dispatch.h>
#include <ATen/WrapDimUtils.h>
#include <c10/util/Exception.h>

#include "ir/shape_rules.h"
#include "runtime/element_type.h"

namespace txla::ir::rules {
namespace {

std::string IntList(const std::vector<int64_t>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t k = 0; k < values.size(); ++k) out << (k ? ", " : "") << values[k];
  out << "]";
  return out.str();
}

std::string IntList(c10::IntArrayRef values) { return IntList(values.vec()); }

bool IsPlainTensor(const c10::IValue& v) {
  return v.isTensor() && v.toTensor().defined() && !v.toTensor().unsafeGetTensorImpl()->is_wrapped_number();
}

}  // namespace

std::string XlaShapeText(const at::Tensor& t) {
  std::ostringstream out;
  // The storage type, as XLA prints a shape (bf16 under XLA_USE_BF16, as PyTorch/XLA shows it).
  out << runtime::ElementTypeName(ToElementType(t.scalar_type())) << "[";
  for (int64_t d = 0; d < t.dim(); ++d) out << (d ? "," : "") << t.size(d);
  out << "]";
  return out.str();
}

void CheckBroadcastable(const at::Tensor& a, const at::Tensor& b) {
  const int64_t ra = a.dim(), rb = b.dim(), n = std::min(ra, rb);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t da = ra - n + k, db = rb - n + k;
    const int64_t x = a.size(da), y = b.size(db);
    TORCH_CHECK(x == y || x == 1 || y == 1, "Shapes are not compatible for broadcasting: ", XlaShapeText(a), " vs. ",
                XlaShapeText(b), ". Expected dimension ", da, " of shape ", XlaShapeText(a), " (", x,
                ") to match dimension ", db, " of shape ", XlaShapeText(b), " (", y,
                "). Either that or that any of them is either 1 or unbounded. Try reshaping one of the tensors to "
                "match the other.");
  }
}

void CheckBinaryOperands(c10::ArrayRef<c10::IValue> args) {
  if (args.size() >= 2 && IsPlainTensor(args[0]) && IsPlainTensor(args[1]))
    CheckBroadcastable(args[0].toTensor(), args[1].toTensor());
}

void CheckExpandSizes(const at::Tensor& self, const std::vector<int64_t>& sizes) {
  const int64_t rank = self.dim(), given = static_cast<int64_t>(sizes.size());
  TORCH_CHECK(given >= rank, "expand(): expected the `input` tensor ", XlaShapeText(self), " (rank: ", rank,
              ") to have a rank smaller or equal to the given `sizes` ", IntList(sizes), " (rank: ", given, ").");
  for (int64_t k = given - rank; k < given; ++k) {
    const int64_t d = k - (given - rank), want = sizes[k], have = self.size(d);
    TORCH_CHECK(want == -1 || want == have || have == 1, "expand(): expected dimension ", k, " of the given `sizes` ",
                IntList(sizes), " (", want, ") to be -1, or equal to the size of the `input` tensor ",
                XlaShapeText(self), " at dimension ", d, " (", have, ").");
  }
}

Shapes Cat(c10::ArrayRef<c10::IValue> args) {
  std::vector<at::Tensor> tensors = args[0].toTensorVector();
  const at::Tensor* first = nullptr;
  for (const at::Tensor& t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0) continue;  // eager's legacy empty tensor joins anything
    if (!first) {
      first = &t;
      continue;
    }
    if (t.dim() != first->dim()) break;  // the Meta kernel words a rank mismatch
    const int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), first->dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      TORCH_CHECK(d == dim || t.size(d) == first->size(d), "cat(): cannot concatenate tensors of shape ",
                  XlaShapeText(*first), " with ", XlaShapeText(t), " at dimension ", dim,
                  ". Expected shapes to be equal (except at dimension ", dim,
                  ") or that either of them was a 1D empty tensor of size (0,).");
  }
  return std::nullopt;
}

Shapes DivTensorMode(c10::ArrayRef<c10::IValue> args) {
  if (args.size() >= 3 && args[2].isString()) {
    const std::string mode = args[2].toStringRef();
    TORCH_CHECK(mode == "trunc" || mode == "floor", "div(): invalid rounding mode `", mode,
                "`. Expected it to be either 'trunc', 'floor', or be left unspecified.");
  }
  CheckBinaryOperands(args);
  return std::nullopt;
}

Shapes Flip(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const std::vector<int64_t> dims = args[1].toIntVector();
  std::map<int64_t, int> count;
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  for (int64_t d : dims) {
    // A RuntimeError with the dim wrapping's message, as PyTorch/XLA raises it.
    TORCH_CHECK(d >= -rank && d < rank, "Dimension out of range (expected to be in range of [", -rank, ", ",
                rank - 1, "], but got ", d, ")");
    ++count[c10::maybe_wrap_dim(d, self.dim())];
  }
  std::ostringstream repeated;
  for (const auto& [d, n] : count)
    if (n > 1) repeated << (repeated.tellp() > 0 ? ", " : "") << d << " (" << n << " times)";
  if (repeated.tellp() > 0) {
    std::vector<int64_t> unique;
    for (const auto& entry : count) unique.push_back(entry.first);
    TORCH_CHECK(false, "flip(): expected each dimension to appear at most once. Found dimensions: ", repeated.str(),
                ". Consider changing dims from ", IntList(dims), " to ", IntList(unique), ".");
  }
  return std::nullopt;
}

namespace {

// max()/min() of every element, and max.dim/min.dim: a reduction without identity needs
// elements. Eager's messages; RuntimeError for both forms, as PyTorch/XLA raises them (eager
// raises IndexError for the dim form).
Shapes NonEmptyExtremum(const char* op, c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  if (args.size() == 1 || !args[1].isInt()) {
    TORCH_CHECK(self.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.");
  } else if (self.dim() > 0) {
    const int64_t d = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
    TORCH_CHECK(self.size(d) > 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  }
  return std::nullopt;
}

}  // namespace

Shapes Max(c10::ArrayRef<c10::IValue> args) { return NonEmptyExtremum("max", args); }
Shapes Min(c10::ArrayRef<c10::IValue> args) { return NonEmptyExtremum("min", args); }

Shapes Full(c10::ArrayRef<c10::IValue> args) {
  const std::vector<int64_t> sizes = ToInts(args[0]);
  for (int64_t s : sizes)
    TORCH_CHECK(s >= 0, "full(): expected concrete sizes (i.e. non-symbolic) to be positive values. However found "
                        "negative ones: ", IntList(sizes), ".");
  return std::nullopt;
}

Shapes Gather(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& input = args[0].toTensor();
  const at::Tensor& index = args[2].toTensor();
  // A 0-dim tensor counts as a one-element vector, as in eager.
  TORCH_CHECK(std::max<int64_t>(input.dim(), 1) == std::max<int64_t>(index.dim(), 1), "gather(): expected rank of input (",
              input.dim(), ") and index (", index.dim(), ") tensors to be the same.");
  if (input.dim() == 0 || index.dim() == 0) return std::nullopt;
  const int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), input.dim());
  std::vector<int64_t> larger;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != dim && index.size(d) > input.size(d)) larger.push_back(d);
  TORCH_CHECK(larger.empty(), "gather(): expected sizes of index ", IntList(index.sizes()),
              " to be smaller or equal those of input ", IntList(input.sizes()),
              " on all dimensions, except on dimension ", dim, ". However, that's not true on dimensions ",
              IntList(larger), ".");
  return std::nullopt;
}

Shapes Mm(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& a = args[0].toTensor();
  const at::Tensor& b = args[1].toTensor();
  TORCH_CHECK(a.dim() == 2, "mm(): expected the first input tensor ", XlaShapeText(a),
              " to be a matrix (i.e. a 2D tensor).");
  TORCH_CHECK(b.dim() == 2, "mm(): expected the second input tensor ", XlaShapeText(b),
              " to be a matrix (i.e. a 2D tensor).");
  TORCH_CHECK(a.size(1) == b.size(0), "mm(): cannot matrix-multiply tensors ", XlaShapeText(a), " and ",
              XlaShapeText(b), ". Expected the size of dimension 1 of the first input tensor (", a.size(1),
              ") to be equal the size of dimension 0 of the second input tensor (", b.size(0), ").");
  return MatrixProduct(args);
}

Shapes RandomFrom(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  const int64_t from = args[1].toInt();
  if (args.size() < 3 || args[2].isNone()) return SameAsFirst(args);
  const int64_t to = args[2].toInt();
  TORCH_CHECK(from < to, "random_(): expected `from` (", from, ") to be smaller than `to` (", to, ").");
  // The values drawn are [from, to - 1]: both ends must be values of the tensor's type.
  std::string lo, hi;
  double lowest = 0, highest = 0;
  AT_DISPATCH_ALL_TYPES_AND3(c10::kHalf, c10::kBFloat16, c10::kBool, self.scalar_type(), "random_", [&] {
    using limits = std::numeric_limits<scalar_t>;
    lowest = static_cast<double>(limits::lowest());
    highest = static_cast<double>(limits::max());
    std::ostringstream l, h;
    if constexpr (limits::is_integer) {
      l << static_cast<int64_t>(limits::lowest());
      h << static_cast<int64_t>(limits::max());
    } else {
      l << lowest;
      h << highest;
    }
    lo = l.str(), hi = h.str();
  });
  auto range = [&](const char* name, int64_t value) {
    const char* side = static_cast<double>(value) < lowest    ? "smaller than the lower"
                       : static_cast<double>(value) > highest ? "greater than the upper"
                                                              : nullptr;
    TORCH_CHECK(side == nullptr, "random_(): expected `", name, "` to be within the range [", lo, ", ", hi,
                "]. However got value ", value, ", which is ", side, " bound.");
  };
  range("from", from);
  range("to", to - 1);
  return SameAsFirst(args);
}

Shapes Roll(c10::ArrayRef<c10::IValue> args) {
  const std::vector<int64_t> shifts = ToInts(args[1]);
  const std::vector<int64_t> dims = args[2].toIntVector();
  TORCH_CHECK(!shifts.empty(), "roll(): expected `shifts` to have at least 1 element.");
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, "roll(): expected `shifts` ", IntList(shifts), " (size=", shifts.size(),
                ") to have exactly 1 element when `dims` is empty.");
  } else {
    TORCH_CHECK(dims.size() == shifts.size(), "roll(): expected `dims` ", IntList(dims), " (size=", dims.size(),
                ") to match the size of `shifts` ", IntList(shifts), " (size=", shifts.size(), ").");
  }
  return std::nullopt;
}

Shapes Trace(c10::ArrayRef<c10::IValue> args) {
  const at::Tensor& self = args[0].toTensor();
  TORCH_CHECK(self.dim() == 2, "trace(): expected the input tensor ", XlaShapeText(self),
              " to be a matrix (i.e. a 2D tensor).");
  return std::nullopt;
}

}  // namespace txla::ir::rules
