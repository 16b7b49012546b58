#include "lower/lowering_context.h"

#include <algorithm>
#include <stdexcept>

#include "hlo/shape_inference.h"
#include "ir/shape_rules.h"

namespace txla::lower {

hlo::ElementType ToHlo(c10::ScalarType dtype) { return ir::ToElementType(dtype); }

hlo::Shape ToHlo(const ir::Shape& shape) {
  return hlo::Shape::Array(ToHlo(shape.dtype), shape.sizes);
}

int64_t WrapDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) throw std::invalid_argument("dimension out of range");
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> IntList(const c10::IValue& v) { return ir::rules::ToInts(v); }

hlo::Instruction* LoweringContext::Get(const ir::Value& value) const {
  auto it = values_.find(value.node.get());
  if (it == values_.end()) throw std::logic_error("operand lowered out of order");
  return it->second.at(value.index);
}

void LoweringContext::Set(const ir::Node* node, std::vector<hlo::Instruction*> outputs) {
  values_[node] = std::move(outputs);
}

hlo::Instruction* LoweringContext::Operand(const ir::Node& node, size_t arg) const {
  const ir::Arg& a = node.args().at(arg);
  if (a.kind != ir::Arg::Kind::kTensor)
    throw std::invalid_argument(node.OpName() + ": argument " + std::to_string(arg) + " is not a tensor");
  return Get(node.operands().at(a.operand));
}

const c10::IValue& LoweringContext::ConstArg(const ir::Node& node, size_t arg) const {
  const ir::Arg& a = node.args().at(arg);
  if (a.kind != ir::Arg::Kind::kConst)
    throw std::invalid_argument(node.OpName() + ": argument " + std::to_string(arg) + " is not constant");
  return a.value;
}

bool LoweringContext::IsNone(const ir::Node& node, size_t arg) const {
  const ir::Arg& a = node.args().at(arg);
  return a.kind == ir::Arg::Kind::kConst && a.value.isNone();
}

hlo::Instruction* LoweringContext::ScalarArg(const ir::Node& node, size_t arg,
                                             hlo::ElementType type) {
  const ir::Arg& a = node.args().at(arg);
  if (a.kind == ir::Arg::Kind::kConst) return Constant(a.value.toScalar().toDouble(), type);
  if (a.kind == ir::Arg::Kind::kScalar || a.kind == ir::Arg::Kind::kTensor)
    return Convert(Get(node.operands().at(a.operand)), type);
  throw std::invalid_argument(node.OpName() + ": argument " + std::to_string(arg) + " is not a scalar");
}

hlo::Instruction* LoweringContext::Add(hlo::Opcode op, hlo::Shape shape,
                                       std::vector<hlo::Instruction*> operands,
                                       hlo::Attributes attrs) {
  return entry_->Add(op, std::move(shape), std::move(operands), std::move(attrs));
}

hlo::Instruction* LoweringContext::Constant(double value, hlo::ElementType type) {
  return entry_->AddConstant(hlo::Literal::Scalar(type, value));
}

hlo::Instruction* LoweringContext::Slice(hlo::Instruction* x, int64_t dim, int64_t start, int64_t limit,
                                         int64_t stride) {
  hlo::Attributes a;
  const auto& dims = x->shape().dims;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    a.slice.push_back(d == dim ? hlo::SliceDim{start, limit, stride} : hlo::SliceDim{0, dims[d], 1});
  std::vector<int64_t> out = dims;
  out[dim] = limit > start ? (limit - start + stride - 1) / stride : 0;
  return Add(hlo::Opcode::kSlice, hlo::Shape::Array(x->shape().type, out), {x}, a);
}

hlo::Instruction* LoweringContext::TensorOrScalar(const ir::Node& node, size_t arg, hlo::ElementType type) {
  return node.args()[arg].kind == ir::Arg::Kind::kTensor ? Convert(Operand(node, arg), type) : ScalarArg(node, arg, type);
}

hlo::Instruction* LoweringContext::IndexConstant(std::vector<int64_t> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return entry_->AddConstant(hlo::Literal::FromInts(hlo::Shape::Array(hlo::ElementType::kS64, {count}), std::move(values)));
}

hlo::Instruction* LoweringContext::Iota(hlo::Shape shape, int64_t dimension) {
  hlo::Attributes attrs;
  attrs.index = dimension;
  return Add(hlo::Opcode::kIota, std::move(shape), {}, std::move(attrs));
}

hlo::Instruction* LoweringContext::Convert(hlo::Instruction* x, hlo::ElementType type) {
  if (x->shape().type == type) return x;
  return Add(hlo::Opcode::kConvert, hlo::Shape::Array(type, x->shape().dims), {x});
}

hlo::Instruction* LoweringContext::Reshape(hlo::Instruction* x, const std::vector<int64_t>& dims) {
  if (x->shape().dims == dims) return x;
  return Add(hlo::Opcode::kReshape, hlo::Shape::Array(x->shape().type, dims), {x});
}

hlo::Instruction* LoweringContext::Transpose(hlo::Instruction* x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x->shape().dims.at(p));
  hlo::Attributes attrs;
  attrs.dimensions = perm;
  return Add(hlo::Opcode::kTranspose, hlo::Shape::Array(x->shape().type, dims), {x}, attrs);
}

hlo::Instruction* LoweringContext::BroadcastTo(hlo::Instruction* x, const std::vector<int64_t>& dims) {
  const auto& in = x->shape().dims;
  if (in == dims) return x;
  int64_t offset = static_cast<int64_t>(dims.size()) - static_cast<int64_t>(in.size());
  if (offset < 0) throw std::invalid_argument("broadcast to a lower rank");
  // Drop size-1 dims that stretch, then broadcast the rest into their aligned positions.
  std::vector<int64_t> kept_dims, kept_positions;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t target = dims[offset + i];
    if (in[i] == target) {
      kept_dims.push_back(in[i]);
      kept_positions.push_back(offset + static_cast<int64_t>(i));
    } else if (in[i] != 1) {
      throw std::invalid_argument("cannot broadcast a dimension of size " + std::to_string(in[i]) +
                                  " to " + std::to_string(target));
    }
  }
  hlo::Instruction* squeezed = Reshape(x, kept_dims);
  hlo::Attributes attrs;
  attrs.dimensions = kept_positions;
  return Add(hlo::Opcode::kBroadcast, hlo::Shape::Array(x->shape().type, dims), {squeezed}, attrs);
}

hlo::Instruction* LoweringContext::Elementwise(hlo::Opcode op,
                                               std::vector<hlo::Instruction*> operands,
                                               hlo::ElementType type,
                                               hlo::Comparison comparison) {
  std::vector<int64_t> dims;
  for (hlo::Instruction* x : operands) {
    const auto& d = x->shape().dims;
    if (d.size() > dims.size()) dims.insert(dims.begin(), d.size() - dims.size(), 1);
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& target = dims[dims.size() - d.size() + i];
      if (target == 1) target = d[i];
    }
  }
  for (hlo::Instruction*& x : operands) x = BroadcastTo(Convert(x, type), dims);
  hlo::Attributes attrs;
  attrs.comparison = comparison;
  hlo::ElementType out =
      op == hlo::Opcode::kCompare || op == hlo::Opcode::kIsFinite ? hlo::ElementType::kPred : type;
  if (op == hlo::Opcode::kSelect) {
    operands[0] = BroadcastTo(Convert(operands[0], hlo::ElementType::kPred), dims);
  }
  return Add(op, hlo::Shape::Array(out, dims), operands, attrs);
}

hlo::Computation* LoweringContext::AssignComputation(hlo::ElementType type) {
  std::string name = std::string("assign_") + runtime::ElementTypeName(type);
  auto it = reducers_.find(name);
  if (it != reducers_.end()) return it->second;
  hlo::Computation* c = module_->AddComputation(name);
  hlo::Shape scalar = hlo::Shape::Scalar(type);
  c->AddParameter(0, scalar, "old");
  c->set_root(c->AddParameter(1, scalar, "new"));
  reducers_[name] = c;
  return c;
}

hlo::Computation* LoweringContext::ReducerComputation(ReduceKind kind, hlo::ElementType type) {
  static const char* kNames[] = {"add", "max", "min", "mul", "and", "or"};
  static const hlo::Opcode kOps[] = {hlo::Opcode::kAdd, hlo::Opcode::kMaximum, hlo::Opcode::kMinimum,
                                     hlo::Opcode::kMultiply, hlo::Opcode::kAnd, hlo::Opcode::kOr};
  int k = static_cast<int>(kind);
  std::string name = std::string(kNames[k]) + "_" + runtime::ElementTypeName(type);
  auto it = reducers_.find(name);
  if (it != reducers_.end()) return it->second;
  hlo::Computation* c = module_->AddComputation(name);
  hlo::Shape scalar = hlo::Shape::Scalar(type);
  hlo::Instruction* x = c->AddParameter(0, scalar, "x");
  hlo::Instruction* y = c->AddParameter(1, scalar, "y");
  c->set_root(c->Add(kOps[k], scalar, {x, y}));
  reducers_[name] = c;
  return c;
}

namespace {
// The range of an integer (or pred) element type: the identities of max and min.
std::pair<double, double> IntegerLimits(hlo::ElementType type) {
  switch (type) {
    case hlo::ElementType::kPred: return {0, 1};
    case hlo::ElementType::kS8: return {INT8_MIN, INT8_MAX};
    case hlo::ElementType::kS16: return {INT16_MIN, INT16_MAX};
    case hlo::ElementType::kS32: return {INT32_MIN, INT32_MAX};
    case hlo::ElementType::kU8: return {0, UINT8_MAX};
    default: return {static_cast<double>(INT64_MIN), static_cast<double>(INT64_MAX)};
  }
}
}  // namespace

double LoweringContext::ReduceInit(ReduceKind kind, hlo::ElementType type) {
  switch (kind) {
    case ReduceKind::kSum: case ReduceKind::kOr: return 0;
    case ReduceKind::kProd: case ReduceKind::kAnd: return 1;
    case ReduceKind::kMax: return hlo::IsFloating(type) ? -INFINITY : IntegerLimits(type).first;
    case ReduceKind::kMin: return hlo::IsFloating(type) ? INFINITY : IntegerLimits(type).second;
  }
  return 0;
}

hlo::Instruction* LoweringContext::Reduce(hlo::Instruction* x, std::vector<int64_t> dims,
                                          ReduceKind kind, bool keepdim) {
  hlo::ElementType type = x->shape().type;
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  std::vector<int64_t> out_dims, keep_dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!reduced) out_dims.push_back(x->shape().dims[d]);
    keep_dims.push_back(reduced ? 1 : x->shape().dims[d]);
  }
  hlo::Attributes attrs;
  attrs.dimensions = dims;
  attrs.called = {ReducerComputation(kind, type)};
  hlo::Instruction* r = Add(hlo::Opcode::kReduce, hlo::Shape::Array(type, out_dims),
                            {x, Constant(ReduceInit(kind, type), type)}, attrs);
  return keepdim ? Reshape(r, keep_dims) : r;
}

hlo::Instruction* LoweringContext::ReduceWindow(hlo::Instruction* x, std::vector<hlo::WindowDim> window,
                                                ReduceKind kind) {
  hlo::ElementType type = x->shape().type;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d)
    dims.push_back(hlo::WindowedOutputSize(x->shape().dims[d], window.at(d)));
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  attrs.called = {ReducerComputation(kind, type)};
  return Add(hlo::Opcode::kReduceWindow, hlo::Shape::Array(type, dims),
             {x, Constant(ReduceInit(kind, type), type)}, attrs);
}

hlo::Instruction* LoweringContext::Dot(hlo::Instruction* lhs, hlo::Instruction* rhs,
                                       hlo::DotDims dims) {
  hlo::Attributes attrs;
  attrs.dot = std::move(dims);
  std::vector<int64_t> out;
  const auto& d = attrs.dot;
  auto is_in = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (int64_t b : d.lhs_batch) out.push_back(lhs->shape().dims[b]);
  for (int64_t k = 0; k < lhs->shape().rank(); ++k)
    if (!is_in(d.lhs_batch, k) && !is_in(d.lhs_contracting, k)) out.push_back(lhs->shape().dims[k]);
  for (int64_t k = 0; k < rhs->shape().rank(); ++k)
    if (!is_in(d.rhs_batch, k) && !is_in(d.rhs_contracting, k)) out.push_back(rhs->shape().dims[k]);
  return Add(hlo::Opcode::kDot, hlo::Shape::Array(lhs->shape().type, out), {lhs, rhs}, attrs);
}

hlo::Instruction* LoweringContext::TakeAlong(hlo::Instruction* x, hlo::Instruction* index, int64_t dim) {
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = 1;  // along
  return Add(hlo::Opcode::kGather, hlo::Shape::Array(x->shape().type, index->shape().dims), {x, index}, a);
}

// Gather and scatter in "select" mode (index 0): one index per row of `dim`.
hlo::Instruction* LoweringContext::TakeRows(hlo::Instruction* x, hlo::Instruction* index, int64_t dim) {
  std::vector<int64_t> dims = x->shape().dims;
  dims[dim] = index->shape().dims.at(0);
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = 0;
  return Add(hlo::Opcode::kGather, hlo::Shape::Array(x->shape().type, dims), {x, index}, a);
}

hlo::Instruction* LoweringContext::AddRows(hlo::Instruction* self, hlo::Instruction* index,
                                           hlo::Instruction* updates, int64_t dim) {
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = 0;
  hlo::ElementType t = self->shape().type;
  a.called = {ReducerComputation(ReduceKind::kSum, t)};
  return Add(hlo::Opcode::kScatter, self->shape(), {self, index, Convert(updates, t)}, a);
}

hlo::Instruction* LoweringContext::AddAlong(hlo::Instruction* self, hlo::Instruction* index,
                                            hlo::Instruction* updates, int64_t dim) {
  hlo::Attributes a;
  a.dimensions = {dim};
  a.index = 1;  // along
  hlo::ElementType t = self->shape().type;
  a.called = {ReducerComputation(ReduceKind::kSum, t)};
  return Add(hlo::Opcode::kScatter, self->shape(), {self, index, Convert(updates, t)}, a);
}

hlo::ElementType PromotedWithNumber(LoweringContext& c, const ir::Node& n, size_t tensor_arg, size_t other_arg) {
  using hlo::ElementType;
  ElementType e = c.Operand(n, tensor_arg)->shape().type;
  const ir::Arg& a = n.args().at(other_arg);
  if (a.kind != ir::Arg::Kind::kTensor || a.wrapped_number) {
    bool floating = a.kind == ir::Arg::Kind::kConst ? a.value.toScalar().isFloatingPoint()
                                                    : hlo::IsFloating(c.Get(n.operands().at(a.operand))->shape().type);
    return floating && !hlo::IsFloating(e) ? ElementType::kF32 : e;
  }
  ElementType t = c.Operand(n, other_arg)->shape().type;
  if (hlo::IsFloating(e) != hlo::IsFloating(t)) return hlo::IsFloating(e) ? e : t;
  if (hlo::IsFloating(e)) return runtime::ByteWidth(e) >= runtime::ByteWidth(t) ? e : t;
  return e == t ? e : ElementType::kS64;  // integers of two kinds: s64 holds both
}

}  // namespace txla::lower
