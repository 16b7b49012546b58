// HLO instructions, computations and modules.
//
// A Computation owns its instructions and keeps them in a valid order (operands first); an
// instruction knows its operands and its users, so passes can rewrite in place
// (ReplaceAllUsesWith, RemoveInstruction). A Module owns computations; one is the entry.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "hlo/custom_call.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"
#include "hlo/sharding.h"

namespace txla::hlo {

class Computation;

enum class Comparison { kEq, kNe, kLt, kLe, kGt, kGe };
const char* ComparisonName(Comparison c);  // "EQ", ...

struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim& o) const {
    return start == o.start && limit == o.limit && stride == o.stride;
  }
};

struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;
  bool operator==(const PadDim& o) const { return lo == o.lo && hi == o.hi && interior == o.interior; }
};

struct DotDims {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  bool operator==(const DotDims& o) const {
    return lhs_batch == o.lhs_batch && lhs_contracting == o.lhs_contracting &&
           rhs_batch == o.rhs_batch && rhs_contracting == o.rhs_contracting;
  }
};

// One spatial dimension of a convolution or reduce-window.
struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, lhs_dilation = 1, rhs_dilation = 1;
  bool operator==(const WindowDim& o) const {
    return size == o.size && stride == o.stride && pad_lo == o.pad_lo && pad_hi == o.pad_hi &&
           lhs_dilation == o.lhs_dilation && rhs_dilation == o.rhs_dilation;
  }
};

// Which dimension of input, kernel and output plays which role (dim_labels=b01f_01io->b01f).
struct ConvDims {
  int64_t input_batch = 0, input_feature = 1;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 1, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 1;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDims& o) const;
};

enum class FusionKind { kLoop, kInput, kOutput };

// XLA's PrecisionConfig of a dot's or a convolution's operands (`operand_precision={...}`).
// kDefault lets the compiler choose an algorithm that rounds differently from summing the
// products in float32 (XLA's bf16 passes on TPUs; oneDNN's Winograd convolutions here); kHighest
// asks for float32 products and sums throughout. The lowering writes the user's choice
// (graph/numerics.h), kHighest unless they opted in.
enum class Precision { kDefault, kHigh, kHighest };
const char* PrecisionName(Precision p);
// "default", "high", "highest"; false for another word.
bool PrecisionFromName(const std::string& name, Precision* p);

// Everything an instruction may carry besides operands; each opcode uses its own few fields.
struct Attributes {
  std::vector<int64_t> dimensions;  // broadcast, transpose, reduce, reverse, concatenate
  int64_t parameter_number = 0;
  int64_t index = 0;  // iota_dimension, get-tuple-element index
  std::vector<SliceDim> slice;
  std::vector<PadDim> padding;
  Comparison comparison = Comparison::kEq;
  DotDims dot;
  std::vector<WindowDim> window;
  ConvDims conv;
  int64_t feature_group_count = 1;
  Literal literal;
  std::vector<Computation*> called;  // to_apply (reduce, reduce-window, ...) or calls (fusion)
  FusionKind fusion_kind = FusionKind::kLoop;
  CustomCallTarget custom_call_target = CustomCallTarget::kNone;
  // How the value is laid out over devices (sharding={...}); none: the partitioner decides.
  std::optional<Sharding> sharding;
  // The layout a resharding custom call moves its operand from (txla.spmd_exchange,
  // txla.spmd_reduce_scatter; `sharding` is where it moves it to).
  std::optional<Sharding> operand_sharding;
  Precision precision = Precision::kDefault;  // convolutions, dots
  // all-reduce, all-gather, reduce-scatter: lists of replica ids; empty = one group of all.
  std::vector<std::vector<int64_t>> replica_groups;
  // Where the instruction comes from (XLA's OpMetadata; XLA_HLO_DEBUG): the lazy IR op and the
  // user's source line. Never part of what an instruction computes (CSE ignores it); copies of
  // an instruction (fusion) keep it, so kernels can name the lines they compute.
  struct Metadata {
    std::string op_type, source_file;
    int64_t source_line = 0;
    bool empty() const { return op_type.empty() && source_file.empty(); }
  } metadata;
};

class Instruction {
 public:
  Instruction(Opcode opcode, Shape shape, std::vector<Instruction*> operands, Attributes attrs);

  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  // Passes that change what an instruction computes over (the SPMD partitioner's local shapes).
  void set_shape(Shape shape) { shape_ = std::move(shape); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(size_t i) const { return operands_.at(i); }
  const std::vector<Instruction*>& users() const { return users_; }
  const Attributes& attrs() const { return attrs_; }
  Attributes& mutable_attrs() { return attrs_; }
  Computation* parent() const { return parent_; }

  void ReplaceOperand(size_t i, Instruction* replacement);
  // Every use of this instruction now uses `replacement` instead.
  void ReplaceAllUsesWith(Instruction* replacement);
  // Same opcode, shape, attributes and operands (the test common-subexpression elimination uses).
  bool IdenticalTo(const Instruction& other) const;

 private:
  friend class Computation;
  Opcode opcode_;
  Shape shape_;
  std::string name_;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  Attributes attrs_;
  Computation* parent_ = nullptr;
};

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  Module* parent() const { return parent_; }

  // Appends an instruction; its operands must already be in this computation. The root is
  // set explicitly (set_root), never moved by adding.
  Instruction* Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   Attributes attrs = {});
  Instruction* AddParameter(int64_t number, Shape shape, std::string name = "");
  Instruction* AddConstant(Literal literal);

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  // Parameters by number.
  std::vector<Instruction*> parameters() const;
  // All instructions, operands before users.
  std::vector<Instruction*> instructions() const;
  size_t instruction_count() const { return instructions_.size(); }
  // The k-th instruction in the order they were added (before any sorting or removal).
  Instruction* instruction_at(size_t k) const { return instructions_.at(k).get(); }
  // Removes an instruction that has no users and is not the root.
  void Remove(Instruction* instruction);
  // Moves `moved` to just before `anchor` in the instruction list; throws if that would put an
  // operand after its user (schedulers use it to place instructions that run together).
  void MoveBefore(Instruction* moved, Instruction* anchor);
  // Moves `group` ahead of every other instruction, each side keeping its order; throws unless
  // the group holds every operand of its members (nothing it reads could run before it then).
  void MoveToFront(const std::unordered_set<const Instruction*>& group);
  // Re-sorts the instruction list so every operand precedes its users (after rewrites that
  // added operands late).
  void SortTopologically();

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  Instruction* root_ = nullptr;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  Computation* AddComputation(std::string name, bool is_entry = false);
  Computation* entry() const { return entry_; }
  Computation* Find(const std::string& name) const;
  std::vector<Computation*> computations() const;
  // "%add.3": unique within the module, numbered from 1 in the order made (as XLA's builder
  // numbers PyTorch/XLA's instructions, so dumps read alike).
  std::string UniqueName(std::string_view prefix);

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  int64_t next_id_ = 1;
};

}  // namespace txla::hlo
