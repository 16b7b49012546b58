#include "hlo/shape_inference.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace txla::hlo {
namespace {

[[noreturn]] void Fail(const Instruction& i, const std::string& why) {
  throw std::invalid_argument(std::string(OpcodeName(i.opcode())) + " " + i.name() + ": " + why);
}

void Check(const Instruction& i, bool ok, const std::string& why) {
  if (!ok) Fail(i, why);
}

std::string Dims(const std::vector<int64_t>& v) {
  std::ostringstream ss;
  ss << "{";
  for (size_t k = 0; k < v.size(); ++k) ss << (k ? "," : "") << v[k];
  ss << "}";
  return ss.str();
}

const Shape& Op(const Instruction& i, size_t k) { return i.operand(k)->shape(); }

void CheckArity(const Instruction& i, size_t n) {
  Check(i, i.operands().size() == n,
        "expects " + std::to_string(n) + " operands, has " + std::to_string(i.operands().size()));
}

void CheckArray(const Instruction& i, const Shape& s) {
  Check(i, !s.is_tuple, "operand is a tuple " + s.ToString());
}

bool IsPermutation(const std::vector<int64_t>& perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::set<int64_t> seen(perm.begin(), perm.end());
  return static_cast<int64_t>(seen.size()) == rank && (rank == 0 || (*seen.begin() >= 0 && *seen.rbegin() < rank));
}

Shape Elementwise(const Instruction& i) {
  const Shape& a = Op(i, 0);
  for (size_t k = 0; k < i.operands().size(); ++k) {
    CheckArray(i, Op(i, k));
    Check(i, Op(i, k) == a, "operand shapes differ: " + a.ToString() + " vs " + Op(i, k).ToString());
  }
  return a;
}

Shape InferReduce(const Instruction& i) {
  size_t n = i.operands().size() / 2;
  Check(i, n >= 1 && i.operands().size() == 2 * n, "expects inputs followed by as many inits");
  Check(i, i.attrs().called.size() == 1, "needs to_apply");
  const Shape& in = Op(i, 0);
  std::set<int64_t> reduced(i.attrs().dimensions.begin(), i.attrs().dimensions.end());
  for (int64_t d : reduced) Check(i, d >= 0 && d < in.rank(), "reduce dimension out of range");
  std::vector<Shape> outs;
  for (size_t k = 0; k < n; ++k) {
    Check(i, Op(i, k).dims == in.dims, "reduced inputs differ in dimensions");
    Check(i, Op(i, n + k).IsScalar(), "init value must be a scalar");
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < in.rank(); ++d)
      if (!reduced.count(d)) dims.push_back(in.dims[d]);
    outs.push_back(Shape::Array(Op(i, n + k).type, dims));
  }
  return n == 1 ? outs[0] : Shape::Tuple(outs);
}

Shape InferDot(const Instruction& i) {
  CheckArity(i, 2);
  const Shape& l = Op(i, 0);
  const Shape& r = Op(i, 1);
  const DotDims& d = i.attrs().dot;
  Check(i, l.type == r.type, "operand element types differ");
  Check(i, d.lhs_batch.size() == d.rhs_batch.size() &&
               d.lhs_contracting.size() == d.rhs_contracting.size(),
        "batch or contracting dimension counts differ");
  for (size_t k = 0; k < d.lhs_contracting.size(); ++k)
    Check(i, l.dims.at(d.lhs_contracting[k]) == r.dims.at(d.rhs_contracting[k]),
          "contracting dimensions differ in size: " + l.ToString() + " x " + r.ToString());
  std::vector<int64_t> dims;
  for (size_t k = 0; k < d.lhs_batch.size(); ++k) {
    Check(i, l.dims.at(d.lhs_batch[k]) == r.dims.at(d.rhs_batch[k]), "batch dimensions differ");
    dims.push_back(l.dims[d.lhs_batch[k]]);
  }
  auto free_dims = [&](const Shape& s, const std::vector<int64_t>& batch,
                       const std::vector<int64_t>& contracting) {
    for (int64_t k = 0; k < s.rank(); ++k)
      if (std::find(batch.begin(), batch.end(), k) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), k) == contracting.end())
        dims.push_back(s.dims[k]);
  };
  free_dims(l, d.lhs_batch, d.lhs_contracting);
  free_dims(r, d.rhs_batch, d.rhs_contracting);
  // 16-bit float operands may accumulate into an f32 result (XLA's preferred_element_type).
  bool wide_result = Is16BitFloat(l.type) && i.shape().type == ElementType::kF32;
  return Shape::Array(wide_result ? ElementType::kF32 : l.type, dims);
}

// Window sizes, strides and dilations of at least one and padding (negative trims) of moderate
// size: what the output-size arithmetic and the emitter's loops assume.
void CheckWindow(const Instruction& i, const std::vector<WindowDim>& window) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  auto positive = [&](int64_t v) { return v >= 1 && v < kLimit; };
  for (const WindowDim& w : window)
    Check(i, positive(w.size) && positive(w.stride) && positive(w.lhs_dilation) && positive(w.rhs_dilation) &&
                 w.pad_lo > -kLimit && w.pad_lo < kLimit && w.pad_hi > -kLimit && w.pad_hi < kLimit,
          "window sizes, strides and dilations must be in [1, 2^31), padding in (-2^31, 2^31)");
}

Shape InferConvolution(const Instruction& i) {
  CheckArity(i, 2);
  const Shape& in = Op(i, 0);
  const Shape& k = Op(i, 1);
  const ConvDims& c = i.attrs().conv;
  const auto& window = i.attrs().window;
  size_t spatial = c.input_spatial.size();
  Check(i, in.rank() == static_cast<int64_t>(spatial + 2) && k.rank() == in.rank() &&
               window.size() == spatial && c.kernel_spatial.size() == spatial &&
               c.output_spatial.size() == spatial,
        "convolution ranks and window do not agree");
  CheckWindow(i, window);
  // Each of input, kernel and output names every one of its dimensions exactly once.
  auto labels = [](int64_t a, int64_t b, const std::vector<int64_t>& spatial) {
    std::vector<int64_t> all = {a, b};
    all.insert(all.end(), spatial.begin(), spatial.end());
    return all;
  };
  Check(i, IsPermutation(labels(c.input_batch, c.input_feature, c.input_spatial), in.rank()) &&
               IsPermutation(labels(c.kernel_input_feature, c.kernel_output_feature, c.kernel_spatial), in.rank()) &&
               IsPermutation(labels(c.output_batch, c.output_feature, c.output_spatial), in.rank()),
        "dim_labels must name each dimension of input, kernel and output once");
  int64_t groups = i.attrs().feature_group_count;
  Check(i, groups >= 1, "feature_group_count must be at least 1");
  Check(i, in.dims[c.input_feature] == k.dims[c.kernel_input_feature] * groups,
        "input features " + std::to_string(in.dims[c.input_feature]) + " != kernel input features " +
            std::to_string(k.dims[c.kernel_input_feature]) + " x groups " + std::to_string(groups));
  std::vector<int64_t> dims(in.rank());
  dims[c.output_batch] = in.dims[c.input_batch];
  dims[c.output_feature] = k.dims[c.kernel_output_feature];
  for (size_t s = 0; s < spatial; ++s) {
    Check(i, window[s].size == k.dims[c.kernel_spatial[s]], "window size differs from kernel");
    dims[c.output_spatial[s]] = WindowedOutputSize(in.dims[c.input_spatial[s]], window[s]);
    Check(i, dims[c.output_spatial[s]] >= 0, "window larger than padded input");
  }
  // 16-bit float operands may accumulate into an f32 result, as a dot's.
  bool wide_result = Is16BitFloat(in.type) && i.shape().type == ElementType::kF32;
  return Shape::Array(wide_result ? ElementType::kF32 : in.type, dims);
}

}  // namespace

bool WindowsTileExactly(const std::vector<WindowDim>& window, const std::vector<int64_t>& in_dims,
                        const std::vector<int64_t>& out_dims) {
  if (window.size() != in_dims.size() || window.size() != out_dims.size()) return false;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& w = window[d];
    if (w.lhs_dilation != 1 || w.rhs_dilation != 1 || w.pad_lo != 0 || w.pad_hi != 0 || w.stride != w.size ||
        in_dims[d] != out_dims[d] * w.size)
      return false;
  }
  return true;
}

int64_t WindowedOutputSize(int64_t input, const WindowDim& w) {
  int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.lhs_dilation + 1;
  int64_t padded = dilated_input + w.pad_lo + w.pad_hi;
  int64_t dilated_window = (w.size - 1) * w.rhs_dilation + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

Shape InferShape(const Instruction& i) {
  const Shape& declared = i.shape();
  const Attributes& a = i.attrs();
  switch (i.opcode()) {
    case Opcode::kGather: {
      // gather(operand, indices), dimensions={d}: index_mode=select picks rows of dimension d by
      // a 1-D s64 index (index_select); index_mode=along reads operand at the output position
      // with coordinate d replaced by the index there (torch.gather). Indices are clamped.
      CheckArity(i, 2);
      Check(i, a.dimensions.size() == 1 && a.dimensions[0] >= 0 && a.dimensions[0] < Op(i, 0).rank(),
            "gather needs one dimension of the operand");
      Check(i, Op(i, 1).type == ElementType::kS64, "gather indices must be s64");
      Check(i, declared.rank() == Op(i, 0).rank(), "gather keeps the operand's rank");
      if (a.index == 0) Check(i, Op(i, 1).rank() == 1 && declared.dims[a.dimensions[0]] == Op(i, 1).dims[0],
                              "select gather: 1-D indices, one per output row");
      else Check(i, Op(i, 1).dims == declared.dims, "along gather: indices shaped like the output");
      return Shape::Array(Op(i, 0).type, declared.dims);
    }
    case Opcode::kParameter:
    case Opcode::kCustomCall:
      return declared;
    case Opcode::kAllGather:
    case Opcode::kReduceScatter: {
      // The operand's `dimension` grows (all-gather) or shrinks (reduce-scatter) by the group
      // size; without explicit groups the number of replicas is not known here. A second operand
      // only orders collectives (a token).
      Check(i, i.operands().size() == 1 || i.operands().size() == 2, "takes an operand and an optional token");
      const bool gather = i.opcode() == Opcode::kAllGather;
      Check(i, a.dimensions.size() == 1 && a.dimensions[0] >= 0 && a.dimensions[0] < Op(i, 0).rank(),
            "needs one dimension of the operand");
      Check(i, gather || a.called.size() == 1, "needs to_apply");
      if (a.replica_groups.empty()) return Shape::Array(Op(i, 0).type, declared.dims);
      std::vector<int64_t> dims = Op(i, 0).dims;
      const int64_t members = static_cast<int64_t>(a.replica_groups[0].size());
      int64_t& d = dims[a.dimensions[0]];
      Check(i, gather || d % members == 0, "the scattered dimension must divide into the group");
      d = gather ? d * members : d / members;
      return Shape::Array(Op(i, 0).type, dims);
    }
    case Opcode::kConstant:
      Check(i, a.literal.shape() == declared, "literal shape differs from the declared shape");
      return declared;
    case Opcode::kIota:
      Check(i, a.index >= 0 && a.index < declared.rank(), "iota_dimension out of range");
      return declared;
    case Opcode::kRngUniform:
      // (low, high, seed): a counter-based generator, so a value depends only on the seed, the
      // stream and the element's position (fusion may compute it anywhere, any number of times).
      CheckArity(i, 3);
      Check(i, Op(i, 0).IsScalar() && Op(i, 1).IsScalar() && Op(i, 0).type == Op(i, 1).type,
            "rng bounds must be scalars of one type");
      Check(i, Op(i, 2).IsScalar() && Op(i, 2).type == ElementType::kS64, "rng seed must be s64[]");
      Check(i, IsFloating(Op(i, 0).type), "rng-uniform draws floating-point values");
      return Shape::Array(Op(i, 0).type, declared.dims);
    case Opcode::kConvert:
      CheckArity(i, 1);
      return Shape::Array(declared.type, Op(i, 0).dims);
    case Opcode::kBitcastConvert:  // the same bits read as another type of the same width
      CheckArity(i, 1);
      Check(i, runtime::ByteWidth(declared.type) == runtime::ByteWidth(Op(i, 0).type),
            "bitcast-convert between types of different widths");
      return Shape::Array(declared.type, Op(i, 0).dims);
    case Opcode::kCompare: {
      CheckArity(i, 2);
      Shape s = Elementwise(i);
      return Shape::Array(ElementType::kPred, s.dims);
    }
    case Opcode::kIsFinite:
      CheckArity(i, 1);
      Check(i, IsFloating(Op(i, 0).type), "is-finite needs a floating operand");
      return Shape::Array(ElementType::kPred, Op(i, 0).dims);
    case Opcode::kSelect:
      CheckArity(i, 3);
      Check(i, Op(i, 0).type == ElementType::kPred && Op(i, 0).dims == Op(i, 1).dims,
            "select predicate must be pred with the operands' dimensions");
      Check(i, Op(i, 1) == Op(i, 2), "select branches differ");
      return Op(i, 1);
    case Opcode::kClamp:
      CheckArity(i, 3);
      for (size_t k : {0u, 2u})
        Check(i, Op(i, k).IsScalar() ? Op(i, k).type == Op(i, 1).type : Op(i, k) == Op(i, 1),
              "clamp bounds must be scalars or shaped like the operand");
      return Op(i, 1);
    case Opcode::kBroadcast: {
      CheckArity(i, 1);
      const Shape& in = Op(i, 0);
      Check(i, static_cast<int64_t>(a.dimensions.size()) == in.rank(),
            "dimensions " + Dims(a.dimensions) + " do not match operand rank");
      for (int64_t k = 0; k < in.rank(); ++k)
        Check(i, a.dimensions[k] >= 0 && a.dimensions[k] < declared.rank() &&
                     declared.dims[a.dimensions[k]] == in.dims[k],
              "operand dimension " + std::to_string(k) + " does not map onto the result");
      return Shape::Array(in.type, declared.dims);
    }
    case Opcode::kReshape:
      CheckArity(i, 1);
      Check(i, Op(i, 0).element_count() == declared.element_count(),
            "element count changes: " + Op(i, 0).ToString() + " -> " + declared.ToString());
      return Shape::Array(Op(i, 0).type, declared.dims);
    case Opcode::kTranspose: {
      CheckArity(i, 1);
      const Shape& in = Op(i, 0);
      Check(i, IsPermutation(a.dimensions, in.rank()), "dimensions are not a permutation");
      std::vector<int64_t> dims;
      for (int64_t d : a.dimensions) dims.push_back(in.dims[d]);
      return Shape::Array(in.type, dims);
    }
    case Opcode::kSlice: {
      CheckArity(i, 1);
      const Shape& in = Op(i, 0);
      Check(i, static_cast<int64_t>(a.slice.size()) == in.rank(), "one slice range per dimension");
      std::vector<int64_t> dims;
      for (int64_t k = 0; k < in.rank(); ++k) {
        const SliceDim& s = a.slice[k];
        Check(i, s.start >= 0 && s.start <= s.limit && s.limit <= in.dims[k] && s.stride > 0,
              "slice range out of bounds in dimension " + std::to_string(k));
        dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
      }
      return Shape::Array(in.type, dims);
    }
    case Opcode::kPad: {
      CheckArity(i, 2);
      const Shape& in = Op(i, 0);
      Check(i, Op(i, 1).IsScalar() && Op(i, 1).type == in.type, "padding value must be a scalar");
      Check(i, static_cast<int64_t>(a.padding.size()) == in.rank(), "one padding per dimension");
      std::vector<int64_t> dims;
      for (int64_t k = 0; k < in.rank(); ++k) {
        const PadDim& p = a.padding[k];
        int64_t d = in.dims[k];
        dims.push_back(p.lo + p.hi + d + std::max<int64_t>(d - 1, 0) * p.interior);
        Check(i, dims.back() >= 0 && p.interior >= 0, "negative padded size");
      }
      return Shape::Array(in.type, dims);
    }
    case Opcode::kConcatenate: {
      Check(i, !i.operands().empty() && a.dimensions.size() == 1, "needs operands and one dimension");
      int64_t dim = a.dimensions[0];
      Shape out = Op(i, 0);
      Check(i, dim >= 0 && dim < out.rank(), "dimension out of range");
      for (size_t k = 1; k < i.operands().size(); ++k) {
        const Shape& s = Op(i, k);
        Check(i, s.type == out.type && s.rank() == out.rank(), "operands differ in type or rank");
        for (int64_t d = 0; d < out.rank(); ++d)
          if (d != dim) Check(i, s.dims[d] == out.dims[d], "operands differ outside the dimension");
        out.dims[dim] += s.dims[dim];
      }
      return out;
    }
    case Opcode::kReverse:
      CheckArity(i, 1);
      return Op(i, 0);
    case Opcode::kReduce:
      return InferReduce(i);
    case Opcode::kReduceWindow: {
      CheckArity(i, 2);
      const Shape& in = Op(i, 0);
      Check(i, static_cast<int64_t>(a.window.size()) == in.rank(), "one window dimension per input dimension");
      Check(i, a.called.size() == 1, "needs to_apply");
      CheckWindow(i, a.window);
      std::vector<int64_t> dims;
      for (int64_t k = 0; k < in.rank(); ++k) dims.push_back(WindowedOutputSize(in.dims[k], a.window[k]));
      return Shape::Array(Op(i, 1).type, dims);
    }
    case Opcode::kDot:
      return InferDot(i);
    case Opcode::kConvolution:
      return InferConvolution(i);
    case Opcode::kScatter:
      // scatter(operand, indices, updates), dimensions={d}, to_apply=combiner: the operand with
      // each update combined into the position gather (same index_mode) would read it from.
      CheckArity(i, 3);
      Check(i, a.dimensions.size() == 1 && a.called.size() == 1, "scatter needs one dimension and to_apply");
      Check(i, Op(i, 1).type == ElementType::kS64 && Op(i, 2).type == Op(i, 0).type,
            "scatter: s64 indices and updates of the operand's type");
      return Op(i, 0);
    case Opcode::kAllReduce:
      Check(i, i.operands().size() == 1 || i.operands().size() == 2, "takes an operand and an optional token");
      Check(i, a.called.size() == 1, "needs to_apply");
      return Op(i, 0);
    case Opcode::kTuple: {
      std::vector<Shape> shapes;
      for (Instruction* op : i.operands()) shapes.push_back(op->shape());
      return Shape::Tuple(shapes);
    }
    case Opcode::kGetTupleElement:
      CheckArity(i, 1);
      Check(i, Op(i, 0).is_tuple && a.index >= 0 &&
                   a.index < static_cast<int64_t>(Op(i, 0).tuple_shapes.size()),
            "index out of range of the tuple");
      return Op(i, 0).tuple_shapes[a.index];
    case Opcode::kFusion:
    case Opcode::kCall: {
      Check(i, a.called.size() == 1 && a.called[0]->root() != nullptr, "needs a called computation");
      auto params = a.called[0]->parameters();
      Check(i, params.size() == i.operands().size(), "operand count differs from the callee's parameters");
      for (size_t k = 0; k < params.size(); ++k)
        Check(i, params[k]->shape() == Op(i, k), "operand " + std::to_string(k) + " does not match the callee");
      return a.called[0]->root()->shape();
    }
    default:
      break;
  }
  switch (KindOf(i.opcode())) {
    case OpcodeKind::kUnary:
      CheckArity(i, 1);
      return Elementwise(i);
    case OpcodeKind::kBinary:
      CheckArity(i, 2);
      return Elementwise(i);
    default:
      Fail(i, "no shape rule");
  }
}

}  // namespace txla::hlo
