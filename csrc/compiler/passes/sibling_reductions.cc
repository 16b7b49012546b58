#include "compiler/passes/sibling_reductions.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/kernel_merging.h"

namespace txla::compiler {

bool SiblingReductions::Run(hlo::Module& module) {
  hlo::Computation* entry = module.entry();
  std::vector<hlo::Instruction*> order;
  std::unordered_map<const hlo::Instruction*, size_t> position;
  auto renumber = [&] {
    order = entry->instructions();
    for (size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  };
  renumber();
  std::unordered_set<const hlo::Instruction*> paired;
  bool changed = false;
  // Moving an instruction shifts only instructions already visited (before p) or the one moved:
  // the scan goes on at p + 1 either way.
  for (size_t p = 0; p < order.size(); ++p) {
    hlo::Instruction* b = order[p];
    if (paired.count(b) || !ReductionOf(b)) continue;
    hlo::Instruction* partner = nullptr;
    bool partner_moves = false;
    for (const hlo::Instruction* op : b->operands()) {
      for (hlo::Instruction* a : op->users()) {
        if (position.at(a) >= p || paired.count(a) || !AreSiblingReductions(a, b)) continue;
        bool read_after_b = std::all_of(a->users().begin(), a->users().end(),
                                        [&](const hlo::Instruction* u) { return position.at(u) > p; });
        bool b_ready_at_a = std::all_of(b->operands().begin(), b->operands().end(),
                                        [&](const hlo::Instruction* o) { return position.at(o) < position.at(a); });
        if (!read_after_b && !b_ready_at_a) continue;
        partner = a;
        partner_moves = read_after_b;
        break;
      }
      if (partner) break;
    }
    if (!partner) continue;
    if (partner_moves) entry->MoveBefore(partner, b);
    else entry->MoveBefore(b, order[position.at(partner) + 1]);
    paired.insert(partner);
    paired.insert(b);
    changed = true;
    renumber();
  }
  return changed;
}

}  // namespace txla::compiler
