#include "compiler/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "metrics/metrics.h"

namespace txla::compiler {

namespace {

// The dot multiplies batches of matrices with the batch dimension leading, the one layout of a
// batched product the GEMM call expresses (codegen's EmitDot).
bool BatchLeads(const hlo::Instruction& dot) {
  const hlo::DotDims& d = dot.attrs().dot;
  return d.lhs_batch == std::vector<int64_t>{0} && d.rhs_batch == std::vector<int64_t>{0} &&
         d.lhs_contracting.size() == 1 && d.rhs_contracting.size() == 1;
}

}  // namespace

bool IsVirtualTranspose(const hlo::Instruction& i) {
  if (i.opcode() != hlo::Opcode::kTranspose || i.users().empty()) return false;
  int64_t rank = i.shape().rank();
  if (rank == 2) {
    return std::all_of(i.users().begin(), i.users().end(),
                       [](const hlo::Instruction* u) { return u->opcode() == hlo::Opcode::kDot; });
  }
  // A batch of matrices, each transposed (attention's K^T, and most products of its backward).
  if (rank != 3 || i.attrs().dimensions != std::vector<int64_t>{0, 2, 1}) return false;
  return std::all_of(i.users().begin(), i.users().end(),
                     [](const hlo::Instruction* u) { return u->opcode() == hlo::Opcode::kDot && BatchLeads(*u); });
}

int64_t ByteSize(const hlo::Shape& shape) {
  return shape.element_count() * static_cast<int64_t>(runtime::ByteWidth(shape.type));
}

bool BufferPlan::IsView(const hlo::Instruction* i) const {
  auto slot = slots.find(i);
  return slot != slots.end() &&
         (slot->second.kind == BufferSlot::Kind::kVirtual || slot->second.kind == BufferSlot::Kind::kAlias);
}

namespace {

// A reshape left outside every fusion (its users are GEMMs, library calls or other fusions' reads)
// that the graph does not return: its users read its operand's buffer as it is.
bool CanAlias(const BufferPlan& plan, const hlo::Instruction* i) {
  if (i->opcode() != hlo::Opcode::kReshape || plan.slots.count(i)) return false;
  auto base = plan.slots.find(i->operand(0));
  if (base == plan.slots.end()) return true;  // a kernel's result (a temp or an output)
  return base->second.kind != BufferSlot::Kind::kInline && base->second.kind != BufferSlot::Kind::kVirtual;
}

void FindDonations(BufferPlan& plan, const hlo::Instruction* root,
                   const std::unordered_map<const hlo::Instruction*, size_t>& position) {
  if (root->opcode() != hlo::Opcode::kTuple) return;
  std::set<int64_t> taken;
  for (auto [out, param] : plan.parameter_outputs) taken.insert(param);
  std::set<int64_t> shared_outputs;
  for (auto [out, other] : plan.output_aliases) shared_outputs.insert(out), shared_outputs.insert(other);
  for (size_t k = 0; k < root->operands().size(); ++k) {
    const hlo::Instruction* v = root->operand(k);
    auto slot = plan.slots.find(v);
    if (slot == plan.slots.end() || slot->second.kind != BufferSlot::Kind::kOutput ||
        slot->second.index != static_cast<int64_t>(k) || shared_outputs.count(static_cast<int64_t>(k)) ||
        v->opcode() != hlo::Opcode::kFusion || v->attrs().fusion_kind != hlo::FusionKind::kLoop)
      continue;
    const hlo::Computation* fused = v->attrs().called.at(0);
    for (const hlo::Instruction* fp : fused->parameters()) {
      const hlo::Instruction* p = v->operand(fp->attrs().parameter_number);
      if (p->opcode() != hlo::Opcode::kParameter || p->shape() != v->shape() ||
          taken.count(p->attrs().parameter_number))
        continue;
      // Every other reader of the parameter (and of views of it read in place) runs before, or
      // in the same multi-output kernel at each element's own index.
      const hlo::Instruction* kernel = plan.merged.KernelOf(v);
      bool last = true;
      std::vector<const hlo::Instruction*> readers(p->users().begin(), p->users().end());
      while (!readers.empty()) {
        const hlo::Instruction* u = readers.back();
        readers.pop_back();
        if (u == v) continue;
        const hlo::Instruction* reader_kernel = plan.merged.KernelOf(u);
        if (reader_kernel == kernel) last &= FusionReadsAtOwnIndexOnly(u, p);
        else last &= position.at(reader_kernel) < position.at(kernel);
        if (plan.IsView(u)) readers.insert(readers.end(), u->users().begin(), u->users().end());
      }
      if (!last || !ReadAtOwnIndexOnly(fp, fused->root())) continue;
      // Every candidate is listed: at run time the first that nothing else holds is used.
      plan.donations.emplace_back(static_cast<int64_t>(k), p->attrs().parameter_number);
    }
  }
}

}  // namespace

BufferPlan AssignBuffers(const hlo::Module& module) {
  const hlo::Computation& entry = *module.entry();
  auto order = entry.instructions();
  BufferPlan plan;
  const hlo::Instruction* root = entry.root();

  for (const hlo::Instruction* i : order) {
    if (i->opcode() == hlo::Opcode::kParameter) {
      plan.slots[i] = {BufferSlot::Kind::kParameter, i->attrs().parameter_number, 0};
    } else if (i->opcode() == hlo::Opcode::kConstant && i->shape().IsScalar()) {
      plan.slots[i] = {BufferSlot::Kind::kInline, 0, 0};
    } else if (IsVirtualTranspose(*i)) {
      plan.slots[i] = {BufferSlot::Kind::kVirtual, 0, 0};
      if (i->shape().rank() == 3) TXLA_COUNTER("BatchedTransposesReadByGemm", 1);
    }
  }
  if (root->opcode() == hlo::Opcode::kTuple) {
    for (size_t k = 0; k < root->operands().size(); ++k) {
      const hlo::Instruction* v = root->operand(k);
      auto found = plan.slots.find(v);
      if (found != plan.slots.end()) {
        const BufferSlot& slot = found->second;
        int64_t out = static_cast<int64_t>(k);
        if (slot.kind == BufferSlot::Kind::kOutput) plan.output_aliases.emplace_back(out, slot.index);
        else if (slot.kind == BufferSlot::Kind::kParameter) plan.parameter_outputs.emplace_back(out, slot.index);
        else plan.output_copies.emplace_back(out, v);
      } else {
        plan.slots[v] = {BufferSlot::Kind::kOutput, static_cast<int64_t>(k), 0};
      }
    }
  }

  for (const hlo::Instruction* i : order)
    if (i != root && CanAlias(plan, i)) {
      plan.slots[i] = {BufferSlot::Kind::kAlias, 0, 0, i->operand(0)};
      TXLA_COUNTER("ReshapesReadInPlace", 1);
    }

  // Temps: live from their definition to their last use; a freed range is reused first-fit.
  std::unordered_map<const hlo::Instruction*, size_t> position, last_use;
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  plan.merged = FindMergedKernels(module);
  FindDonations(plan, root, position);
  for (size_t p = 0; p < order.size(); ++p)
    for (const hlo::Instruction* op : order[p]->operands()) last_use[op] = p;
  // A value another kernel writes is computed there: its operands live until then.
  for (auto [value, writer] : plan.merged.writer)
    for (const hlo::Instruction* op : value->operands()) last_use[op] = std::max(last_use[op], position[writer]);
  // A view is read where its users run: its operand lives until then too.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const hlo::Instruction* v = *it;
    if (!plan.IsView(v)) continue;
    for (const hlo::Instruction* op : v->operands())
      last_use[op] = std::max(last_use[op], last_use[v]);
  }
  std::map<int64_t, int64_t> free_ranges;  // offset -> size
  std::multimap<size_t, std::pair<int64_t, int64_t>> release_at;  // position -> (offset, size)
  constexpr int64_t kAlign = 64;
  for (size_t p = 0; p < order.size(); ++p) {
    for (auto it = release_at.begin(); it != release_at.end() && it->first < p;) {
      free_ranges[it->second.first] = it->second.second;
      it = release_at.erase(it);
    }
    const hlo::Instruction* i = order[p];
    if (plan.slots.count(i) || i == root || i->shape().is_tuple) continue;
    int64_t size = (ByteSize(i->shape()) + kAlign - 1) / kAlign * kAlign;
    int64_t offset = -1;
    for (auto& [off, sz] : free_ranges) {
      if (sz >= size) {
        offset = off;
        if (sz > size) free_ranges[off + size] = sz - size;
        free_ranges.erase(off);
        break;
      }
    }
    if (offset < 0) {
      offset = plan.arena_bytes;
      plan.arena_bytes += size;
    }
    plan.slots[i] = {BufferSlot::Kind::kTemp, 0, offset};
    release_at.emplace(last_use.count(i) ? last_use[i] : p, std::make_pair(offset, size));
  }
  return plan;
}

}  // namespace txla::compiler
