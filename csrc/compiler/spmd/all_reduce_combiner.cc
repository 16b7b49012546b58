#include "compiler/spmd/all_reduce_combiner.h"

#include <map>
#include <tuple>
#include <unordered_map>

namespace txla::compiler::spmd {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool Candidate(const Instruction* i) {
  return i->opcode() == Opcode::kAllReduce && i->operands().size() == 1 && !i->shape().is_tuple &&
         i->shape().element_count() * static_cast<int64_t>(runtime::ByteWidth(i->shape().type)) <=
             AllReduceCombiner::kMaxCombinedBytes;
}

// Replaces `group` (independent all-reduces alike in groups, reduction and type) with one.
void Combine(hlo::Computation& c, const std::vector<Instruction*>& group) {
  const hlo::ElementType type = group[0]->shape().type;
  std::vector<Instruction*> flat;
  int64_t total = 0;
  for (Instruction* ar : group) {
    const int64_t n = ar->shape().element_count();
    flat.push_back(c.Add(Opcode::kReshape, hlo::Shape::Array(type, {n}), {ar->operand(0)}));
    total += n;
  }
  hlo::Attributes cat;
  cat.dimensions = {0};
  Instruction* joined = c.Add(Opcode::kConcatenate, hlo::Shape::Array(type, {total}), flat, cat);
  hlo::Attributes ar_attrs = group[0]->attrs();
  ar_attrs.sharding.reset();
  Instruction* reduced = c.Add(Opcode::kAllReduce, hlo::Shape::Array(type, {total}), {joined}, ar_attrs);
  int64_t offset = 0;
  for (Instruction* ar : group) {
    const int64_t n = ar->shape().element_count();
    hlo::Attributes s;
    s.slice = {{offset, offset + n, 1}};
    Instruction* part = c.Add(Opcode::kSlice, hlo::Shape::Array(type, {n}), {reduced}, s);
    Instruction* back = c.Add(Opcode::kReshape, ar->shape(), {part});
    back->mutable_attrs().sharding = ar->attrs().sharding;
    ar->ReplaceAllUsesWith(back);
    offset += n;
  }
  for (Instruction* ar : group) c.Remove(ar);
}

}  // namespace

bool AllReduceCombiner::Run(hlo::Module& module) {
  hlo::Computation& c = *module.entry();
  const std::vector<Instruction*> order = c.instructions();
  // Which candidates each instruction depends on (bits over the candidates, in order).
  std::vector<Instruction*> candidates;
  for (Instruction* i : order)
    if (Candidate(i)) candidates.push_back(i);
  if (candidates.size() < 2) return false;
  std::unordered_map<const Instruction*, size_t> index;
  for (size_t k = 0; k < candidates.size(); ++k) index[candidates[k]] = k;
  const size_t words = (candidates.size() + 63) / 64;
  std::unordered_map<const Instruction*, std::vector<uint64_t>> below;
  for (Instruction* i : order) {
    std::vector<uint64_t> bits(words, 0);
    for (const Instruction* op : i->operands()) {
      const auto& ob = below[op];
      for (size_t w = 0; w < words && w < ob.size(); ++w) bits[w] |= ob[w];
      if (auto it = index.find(op); it != index.end()) bits[it->second / 64] |= uint64_t{1} << (it->second % 64);
    }
    below[i] = std::move(bits);
  }
  // Greedily, in program order: a candidate joins the open group of its kind unless it depends
  // on one of the group's members.
  using Kind = std::tuple<std::vector<std::vector<int64_t>>, Opcode, hlo::ElementType>;
  std::map<Kind, std::vector<Instruction*>> open;
  std::vector<std::vector<Instruction*>> groups;
  for (Instruction* ar : candidates) {
    Kind kind{ar->attrs().replica_groups, ar->attrs().called.at(0)->root()->opcode(), ar->shape().type};
    auto& group = open[kind];
    bool depends = false;
    for (const Instruction* member : group) {
      const size_t k = index[member];
      depends |= (below[ar][k / 64] >> (k % 64)) & 1;
    }
    if (depends) {
      if (group.size() > 1) groups.push_back(group);
      group.clear();
    }
    group.push_back(ar);
  }
  for (auto& [kind, group] : open)
    if (group.size() > 1) groups.push_back(group);
  for (const auto& group : groups) Combine(c, group);
  if (!groups.empty()) c.SortTopologically();
  return !groups.empty();
}

}  // namespace txla::compiler::spmd
