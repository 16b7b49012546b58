#include "hlo/instruction.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace txla::hlo {

const char* ComparisonName(Comparison c) {
  switch (c) {
    case Comparison::kEq: return "EQ";
    case Comparison::kNe: return "NE";
    case Comparison::kLt: return "LT";
    case Comparison::kLe: return "LE";
    case Comparison::kGt: return "GT";
    case Comparison::kGe: return "GE";
  }
  return "?";
}

bool ConvDims::operator==(const ConvDims& o) const {
  return input_batch == o.input_batch && input_feature == o.input_feature &&
         input_spatial == o.input_spatial && kernel_input_feature == o.kernel_input_feature &&
         kernel_output_feature == o.kernel_output_feature && kernel_spatial == o.kernel_spatial &&
         output_batch == o.output_batch && output_feature == o.output_feature &&
         output_spatial == o.output_spatial;
}

Instruction::Instruction(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                         Attributes attrs)
    : opcode_(opcode), shape_(std::move(shape)), operands_(std::move(operands)),
      attrs_(std::move(attrs)) {
  for (Instruction* op : operands_) op->users_.push_back(this);
}

void Instruction::ReplaceOperand(size_t i, Instruction* replacement) {
  Instruction* old = operands_.at(i);
  operands_[i] = replacement;
  // `old` loses one use (it may still be used by another operand slot).
  auto it = std::find(old->users_.begin(), old->users_.end(), this);
  if (it != old->users_.end()) old->users_.erase(it);
  replacement->users_.push_back(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    for (size_t i = 0; i < user->operands_.size(); ++i)
      if (user->operands_[i] == this) user->ReplaceOperand(i, replacement);
  }
  if (parent_ && parent_->root() == this) parent_->set_root(replacement);
}

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kDefault: return "default";
    case Precision::kHigh: return "high";
    case Precision::kHighest: return "highest";
  }
  return "default";
}

bool PrecisionFromName(const std::string& name, Precision* p) {
  for (Precision candidate : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
    if (name == PrecisionName(candidate)) {
      *p = candidate;
      return true;
    }
  }
  return false;
}

bool Instruction::IdenticalTo(const Instruction& o) const {
  if (opcode_ != o.opcode_ || shape_ != o.shape_ || operands_ != o.operands_) return false;
  const Attributes& a = attrs_;
  const Attributes& b = o.attrs_;
  return a.dimensions == b.dimensions && a.parameter_number == b.parameter_number &&
         a.index == b.index && a.slice == b.slice && a.padding == b.padding &&
         a.comparison == b.comparison && a.dot == b.dot && a.window == b.window &&
         a.conv == b.conv && a.feature_group_count == b.feature_group_count &&
         a.literal == b.literal && a.called == b.called && a.fusion_kind == b.fusion_kind &&
         a.custom_call_target == b.custom_call_target && a.replica_groups == b.replica_groups &&
         a.precision == b.precision && a.sharding == b.sharding && a.operand_sharding == b.operand_sharding;
}

Instruction* Computation::Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                              Attributes attrs) {
  for (Instruction* op : operands) {
    if (op == nullptr || op->parent_ != this)
      throw std::invalid_argument(std::string(OpcodeName(opcode)) +
                                  ": operand is not in computation " + name_);
  }
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape), std::move(operands),
                                                   std::move(attrs));
  instruction->parent_ = this;
  instruction->name_ = parent_ ? parent_->UniqueName(OpcodeName(opcode)) : std::string(OpcodeName(opcode));
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

Instruction* Computation::AddParameter(int64_t number, Shape shape, std::string name) {
  Attributes attrs;
  attrs.parameter_number = number;
  Instruction* p = Add(Opcode::kParameter, std::move(shape), {}, std::move(attrs));
  if (!name.empty()) p->set_name(std::move(name));
  return p;
}

Instruction* Computation::AddConstant(Literal literal) {
  Attributes attrs;
  Shape shape = literal.shape();
  attrs.literal = std::move(literal);
  return Add(Opcode::kConstant, std::move(shape), {}, std::move(attrs));
}

std::vector<Instruction*> Computation::parameters() const {
  std::vector<Instruction*> params;
  for (const auto& i : instructions_)
    if (i->opcode() == Opcode::kParameter) params.push_back(i.get());
  std::sort(params.begin(), params.end(), [](Instruction* a, Instruction* b) {
    return a->attrs().parameter_number < b->attrs().parameter_number;
  });
  return params;
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> out;
  out.reserve(instructions_.size());
  for (const auto& i : instructions_) out.push_back(i.get());
  return out;
}

void Computation::Remove(Instruction* instruction) {
  if (!instruction->users_.empty() || instruction == root_)
    throw std::logic_error("cannot remove " + instruction->name() + ": it is still used");
  for (Instruction* op : instruction->operands_) {
    auto it = std::find(op->users_.begin(), op->users_.end(), instruction);
    if (it != op->users_.end()) op->users_.erase(it);
  }
  instructions_.erase(std::find_if(instructions_.begin(), instructions_.end(),
                                   [&](const auto& p) { return p.get() == instruction; }));
}

void Computation::MoveBefore(Instruction* moved, Instruction* anchor) {
  auto find = [&](const Instruction* i) {
    return std::find_if(instructions_.begin(), instructions_.end(), [&](const auto& p) { return p.get() == i; });
  };
  auto from = find(moved), to = find(anchor);
  if (from == instructions_.end() || to == instructions_.end())
    throw std::logic_error("MoveBefore: not an instruction of computation " + name_);
  auto refuse_if_uses = [&](const Instruction* user, const Instruction* value) {
    if (std::find(user->operands_.begin(), user->operands_.end(), value) != user->operands_.end())
      throw std::logic_error("MoveBefore: moving " + moved->name() + " before " + anchor->name() +
                             " would put " + value->name() + " after its user " + user->name());
  };
  if (from < to) {  // later: nothing it passes may use it
    for (auto it = from + 1; it != to; ++it) refuse_if_uses(it->get(), moved);
    std::rotate(from, from + 1, to);
  } else if (from > to) {  // earlier: nothing it passes may be its operand
    for (auto it = to; it != from; ++it) refuse_if_uses(moved, it->get());
    std::rotate(to, from, from + 1);
  }
}

void Computation::MoveToFront(const std::unordered_set<const Instruction*>& group) {
  for (const auto& i : instructions_) {
    if (!group.count(i.get())) continue;
    for (const Instruction* op : i->operands_)
      if (!group.count(op))
        throw std::logic_error("MoveToFront: " + i->name() + " reads " + op->name() + ", which stays behind");
  }
  std::stable_partition(instructions_.begin(), instructions_.end(),
                        [&](const std::unique_ptr<Instruction>& i) { return group.count(i.get()) > 0; });
}

void Computation::SortTopologically() {
  std::vector<std::unique_ptr<Instruction>> sorted;
  std::unordered_set<Instruction*> placed;
  std::vector<std::unique_ptr<Instruction>> pending = std::move(instructions_);
  while (!pending.empty()) {
    size_t before = pending.size();
    for (auto& p : pending) {
      if (!p) continue;
      bool ready = std::all_of(p->operands_.begin(), p->operands_.end(),
                               [&](Instruction* op) { return placed.count(op) > 0; });
      if (ready) {
        placed.insert(p.get());
        sorted.push_back(std::move(p));
      }
    }
    pending.erase(std::remove(pending.begin(), pending.end(), nullptr), pending.end());
    if (pending.size() == before) throw std::logic_error("cycle in computation " + name_);
  }
  instructions_ = std::move(sorted);
}

Computation* Module::AddComputation(std::string name, bool is_entry) {
  computations_.push_back(std::make_unique<Computation>(std::move(name)));
  Computation* c = computations_.back().get();
  c->parent_ = this;
  if (is_entry) entry_ = c;
  return c;
}

Computation* Module::Find(const std::string& name) const {
  for (const auto& c : computations_)
    if (c->name() == name) return c.get();
  return nullptr;
}

std::vector<Computation*> Module::computations() const {
  std::vector<Computation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

std::string Module::UniqueName(std::string_view prefix) {
  return std::string(prefix) + "." + std::to_string(next_id_++);
}

}  // namespace txla::hlo
