// The lazy IR: what the user did, at ATen granularity.
//
// A node is one of: device data (a parameter of the graph), a constant (the baked-in scalars 0
// and 1), or an ATen op recorded from the dispatcher. An op node keeps the op's boxed argument
// list as a template: constant arguments are stored as IValues, tensor arguments refer to
// operands. The same template replays the op on CPU (the interpreter) and drives lowering.
// Shapes are known when the node is built; its hash is computed once, at construction.
#pragma once

#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

#include "debug/frames.h"
#include "ir/hash.h"
#include "ir/shape.h"
#include "runtime/buffer.h"

namespace txla::ir {

struct OpInfo;
class Node;
using NodePtr = std::shared_ptr<Node>;

// One output of a node.
struct Value {
  NodePtr node;
  uint32_t index = 0;

  explicit operator bool() const { return node != nullptr; }
  const Shape& shape() const;
  hash_t hash() const;
};

// How one schema argument of an op node is supplied when the op runs.
struct Arg {
  enum class Kind : uint8_t {
    kConst,               // `value`: ints, lists, bools, dtypes, None, the scalars 0 and 1
    kTensor,              // operands[operand]
    kTensorList,          // operands[operand, operand + count)
    kOptionalTensorList,  // as kTensorList, `present` marks the entries that are not None
    kScalar,              // a Scalar argument read from the 0-dim parameter operands[operand]
    kScalarList,          // a Scalar[] argument, as kScalar from operands[operand, operand + count)
    kGenerator,           // a generator seeded from the 0-dim int64 parameter operands[operand]
  };
  Kind kind = Kind::kConst;
  // kTensor: the operand stands for a Python number, which type promotion treats specially.
  bool wrapped_number = false;
  uint32_t operand = 0;
  uint32_t count = 0;
  std::vector<bool> present;
  c10::IValue value;

  hash_t Hash() const;
};

enum class NodeKind : uint8_t { kDeviceData, kConstant, kOp };

class Node {
 public:
  // A graph parameter. Hashed by shape only: which buffer it is enters the graph hash as the
  // parameter pattern, so a graph compiled once serves every set of inputs of those shapes.
  static NodePtr DeviceData(runtime::BufferPtr data, Shape shape);
  static NodePtr Constant(const c10::Scalar& value, c10::ScalarType dtype);
  static NodePtr Op(const OpInfo* op, std::vector<Value> operands, std::vector<Arg> args,
                    std::vector<Shape> shapes);

  NodeKind kind() const { return kind_; }
  const OpInfo* op() const { return op_; }
  const std::vector<Value>& operands() const { return operands_; }
  const std::vector<Arg>& args() const { return args_; }
  const std::vector<Shape>& shapes() const { return shapes_; }
  const Shape& shape(size_t index = 0) const { return shapes_.at(index); }
  hash_t hash() const { return hash_; }
  const runtime::BufferPtr& data() const { return data_; }
  // A device-data node no tensor and no future graph can reach lets go of its buffer before the
  // node itself is freed (graph/graph_retirement.h), so that a run may donate it.
  void ReleaseData() { data_.reset(); }
  const c10::Scalar& constant() const { return constant_; }
  // The Python frames that created the node, when XLA_IR_DEBUG is set.
  const std::string& frames() const { return frames_; }
  void set_frames(std::string frames) { frames_ = std::move(frames); }
  // The innermost frame of user code that created the node (kept when a debugging switch asks:
  // XLA_IR_DEBUG, PT_XLA_DEBUG); nullptr otherwise.
  const debug::Frame* user_frame() const { return user_frame_.get(); }
  void set_user_frame(debug::Frame frame) { user_frame_ = std::make_unique<debug::Frame>(std::move(frame)); }

  // "aten::add.Tensor", "xla::device_data", "prim::Constant".
  std::string OpName() const;
  // The constant arguments, as "alpha=2, dim=[1]".
  std::string AttrString() const;

  // Scratch slot for graph walks (post-order visit marks, program slot numbers).
  mutable uint64_t visit_epoch = 0;
  // Its position in the post-order of the graph cut that last visited it (graph/post_order.cc).
  mutable uint32_t cut_index = 0;
  mutable int64_t scratch = -1;

  Node(NodeKind kind, const OpInfo* op, std::vector<Value> operands, std::vector<Arg> args,
       std::vector<Shape> shapes);
  ~Node();

 private:
  NodeKind kind_;
  const OpInfo* op_ = nullptr;
  std::vector<Value> operands_;
  std::vector<Arg> args_;
  std::vector<Shape> shapes_;
  hash_t hash_ = 0;
  runtime::BufferPtr data_;
  c10::Scalar constant_;
  std::string frames_;
  std::unique_ptr<debug::Frame> user_frame_;
};

// Hash of a constant argument. Throws for arguments the lazy IR cannot carry (a Generator).
hash_t HashIValue(const c10::IValue& value);
std::string IValueToString(const c10::IValue& value);

}  // namespace txla::ir
