#include "compiler/passes/update_order.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace txla::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// The one entry parameter of `v`'s shape that `v` reads, or null (none, or several).
const Instruction* UpdatedParameter(const Instruction& v) {
  const Instruction* found = nullptr;
  for (const Instruction* op : v.operands()) {
    if (op->opcode() != Opcode::kParameter || op->shape() != v.shape() || op == found) continue;
    if (found) return nullptr;
    found = op;
  }
  return found;
}

}  // namespace

bool UpdateOrder::Run(hlo::Module& module) {
  hlo::Computation& entry = *module.entry();
  Instruction* root = entry.root();
  if (root == nullptr || root->opcode() != Opcode::kTuple) return false;
  bool changed = false;
  // Positions in the schedule, taken again only after a move (most graphs move nothing).
  std::vector<Instruction*> order;
  std::unordered_map<const Instruction*, size_t> position;
  auto take_positions = [&] {
    order = entry.instructions();
    position.clear();
    for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  };
  take_positions();
  for (Instruction* v : root->operands()) {
    // An output only the root reads: moving it later cannot put it after a user.
    if (v->opcode() != Opcode::kFusion || v->attrs().fusion_kind != hlo::FusionKind::kLoop ||
        v->shape().element_count() <= 1 || v->users().size() != 1)
      continue;
    const Instruction* p = UpdatedParameter(*v);
    if (!p) continue;
    // The parameter's readers, and the readers of reshapes and transposes of it (which buffer
    // assignment may leave as views read where their users run).
    size_t last = position.at(v);
    std::vector<const Instruction*> readers(p->users().begin(), p->users().end());
    while (!readers.empty()) {
      const Instruction* reader = readers.back();
      readers.pop_back();
      if (reader == root || reader == v) continue;
      last = std::max(last, position.at(reader));
      if (reader->opcode() == Opcode::kReshape || reader->opcode() == Opcode::kTranspose)
        readers.insert(readers.end(), reader->users().begin(), reader->users().end());
    }
    if (last == position.at(v)) continue;
    entry.MoveBefore(v, order.at(last + 1));
    take_positions();
    changed = true;
  }
  return changed;
}

}  // namespace txla::compiler
