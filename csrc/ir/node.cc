#include "ir/node.h"

#include <c10/util/Exception.h>

#include <sstream>

#include "ir/op_table.h"
#include "runtime/host_activity.h"

namespace txla::ir {

const Shape& Value::shape() const { return node->shape(index); }

hash_t Value::hash() const { return Mix(node->hash(), index); }

hash_t HashIValue(const c10::IValue& v) {
  if (v.isNone()) return 0x4e6f6e65ULL;
  if (v.isBool()) return Mix(1, v.toBool());
  if (v.isInt()) return Mix(2, static_cast<uint64_t>(v.toInt()));
  if (v.isDouble()) return HashDouble(3, v.toDouble());
  if (v.isSymInt()) return Mix(2, static_cast<uint64_t>(v.toSymInt().expect_int()));
  if (v.isString()) return Mix(4, HashString(v.toStringRef()));
  if (v.isDevice()) {
    return Mix(Mix(5, static_cast<uint64_t>(v.toDevice().type())), v.toDevice().index());
  }
  if (v.isList()) {
    hash_t h = Mix(6, v.toListRef().size());
    for (const c10::IValue& e : v.toListRef()) h = Mix(h, HashIValue(e));
    return h;
  }
  if (v.isTuple()) {
    hash_t h = 7;
    for (const c10::IValue& e : v.toTupleRef().elements()) h = Mix(h, HashIValue(e));
    return h;
  }
  if (v.isComplexDouble()) {
    auto c = v.toComplexDouble();
    return HashDouble(HashDouble(8, c.real()), c.imag());
  }
  TORCH_CHECK(!v.isGenerator(),
              "explicit torch.Generator arguments are not supported on the xla device; use the "
              "default generator (torch.manual_seed)");
  TORCH_CHECK(false, "the xla device cannot record an argument of type ", v.tagKind());
}

std::string IValueToString(const c10::IValue& v) {
  std::ostringstream ss;
  if (v.isList()) {
    ss << "[";
    bool first = true;
    for (const c10::IValue& e : v.toListRef()) {
      ss << (first ? "" : ",") << IValueToString(e);
      first = false;
    }
    ss << "]";
  } else if (v.isSymInt()) {
    ss << v.toSymInt().expect_int();
  } else {
    ss << v;
  }
  return ss.str();
}

hash_t Arg::Hash() const {
  hash_t h = Mix(static_cast<uint64_t>(kind), wrapped_number);
  switch (kind) {
    case Kind::kConst:
      return Mix(h, HashIValue(value));
    case Kind::kTensor:
    case Kind::kScalar:
    case Kind::kGenerator:
      return Mix(h, operand);
    case Kind::kTensorList:
    case Kind::kScalarList:
      return Mix(Mix(h, operand), count);
    case Kind::kOptionalTensorList:
      h = Mix(Mix(h, operand), count);
      for (bool p : present) h = Mix(h, p);
      return h;
  }
  return h;
}

Node::Node(NodeKind kind, const OpInfo* op, std::vector<Value> operands, std::vector<Arg> args,
           std::vector<Shape> shapes)
    : kind_(kind),
      op_(op),
      operands_(std::move(operands)),
      args_(std::move(args)),
      shapes_(std::move(shapes)) {}

Node::~Node() {
  // Destroying a long chain recursively could exhaust the stack (a loop traced for thousands of
  // steps without a barrier); move operands that would die with us onto an explicit worklist.
  std::vector<NodePtr> pending;
  for (Value& v : operands_)
    if (v.node && v.node.use_count() == 1) pending.push_back(std::move(v.node));
  while (!pending.empty()) {
    NodePtr node = std::move(pending.back());
    pending.pop_back();
    for (Value& v : node->operands_)
      if (v.node && v.node.use_count() == 1) pending.push_back(std::move(v.node));
  }
}

NodePtr Node::DeviceData(runtime::BufferPtr data, Shape shape) {
  auto node = std::make_shared<Node>(NodeKind::kDeviceData, nullptr, std::vector<Value>{},
                                     std::vector<Arg>{}, std::vector<Shape>{std::move(shape)});
  node->data_ = std::move(data);
  node->hash_ = Mix(0x64617461ULL, node->shapes_[0].Hash());
  return node;
}

NodePtr Node::Constant(const c10::Scalar& value, c10::ScalarType dtype) {
  auto node = std::make_shared<Node>(NodeKind::kConstant, nullptr, std::vector<Value>{},
                                     std::vector<Arg>{},
                                     std::vector<Shape>{Shape(dtype, {})});
  node->constant_ = value;
  hash_t h = Mix(0x636f6e7374ULL, node->shapes_[0].Hash());
  if (value.isFloatingPoint()) h = HashDouble(h, value.toDouble());
  else if (value.isBoolean()) h = Mix(h, value.toBool());
  else h = Mix(h, static_cast<uint64_t>(value.toLong()));
  node->hash_ = h;
  return node;
}

NodePtr Node::Op(const OpInfo* op, std::vector<Value> operands, std::vector<Arg> args,
                 std::vector<Shape> shapes) {
  runtime::NoteHostActivity();
  auto node = std::make_shared<Node>(NodeKind::kOp, op, std::move(operands), std::move(args),
                                     std::move(shapes));
  hash_t h = op->name_hash;
  for (const Arg& a : node->args_) h = Mix(h, a.Hash());
  for (const Value& v : node->operands_) h = Mix(h, v.hash());
  for (const Shape& s : node->shapes_) h = Mix(h, s.Hash());
  node->hash_ = h;
  return node;
}

std::string Node::OpName() const {
  switch (kind_) {
    case NodeKind::kDeviceData: return "xla::device_data";
    case NodeKind::kConstant: return "prim::Constant";
    case NodeKind::kOp: return op_->name;
  }
  return "?";
}

std::string Node::AttrString() const {
  std::ostringstream ss;
  if (kind_ == NodeKind::kConstant) {
    ss << "value=" << constant_;
    return ss.str();
  }
  if (kind_ != NodeKind::kOp) return "";
  const auto& arguments = op_->schema().arguments();
  bool first = true;
  for (size_t i = 0; i < args_.size() && i < arguments.size(); ++i) {
    if (args_[i].kind != Arg::Kind::kConst || args_[i].value.isNone()) continue;
    ss << (first ? "" : ", ") << arguments[i].name() << "=" << IValueToString(args_[i].value);
    first = false;
  }
  return ss.str();
}

}  // namespace txla::ir
