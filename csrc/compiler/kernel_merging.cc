#include "compiler/kernel_merging.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/passes/pass.h"
#include "metrics/metrics.h"

namespace txla::compiler {
namespace {

bool IsLoopFusion(const hlo::Instruction* i) {
  return i->opcode() == hlo::Opcode::kFusion && i->attrs().fusion_kind == hlo::FusionKind::kLoop &&
         !i->shape().is_tuple;
}

// Whether `producer` can be written by `consumer`'s kernel: only the graph's outputs and the
// consumer read it, the consumer at each element's own index.
bool CanWriteFrom(const hlo::Instruction* producer, const hlo::Instruction* consumer, const hlo::Instruction* root) {
  if (!IsLoopFusion(producer) || producer->shape().dims != consumer->shape().dims) return false;
  for (const hlo::Instruction* u : producer->users())
    if (u != consumer && !(u == root && root->opcode() == hlo::Opcode::kTuple)) return false;
  return FusionReadsAtOwnIndexOnly(consumer, producer);
}

// Accumulators a sibling reduction kernel may keep per reduction: the row-reduction form keeps a
// row of them on the stack for each (codegen's kMaxAccumulatorRow bounds one row at 2^15).
constexpr int64_t kMaxSiblingAccumulators = 1 << 14;

}  // namespace

const hlo::Instruction* ReductionOf(const hlo::Instruction* fusion) {
  if (fusion->opcode() != hlo::Opcode::kFusion || fusion->attrs().fusion_kind != hlo::FusionKind::kInput ||
      fusion->shape().is_tuple)
    return nullptr;
  const hlo::Instruction* r = fusion->attrs().called.at(0)->root();
  return r->opcode() == hlo::Opcode::kReduce && r->operands().size() == 2 ? r : nullptr;
}

bool AreSiblingReductions(const hlo::Instruction* a, const hlo::Instruction* b) {
  const hlo::Instruction *ra = ReductionOf(a), *rb = ReductionOf(b);
  if (!ra || !rb || a == b) return false;
  const hlo::Shape& input = ra->operand(0)->shape();
  if (input.dims != rb->operand(0)->shape().dims || a->shape().dims != b->shape().dims ||
      a->shape().element_count() > kMaxSiblingAccumulators || input.element_count() == 0)
    return false;
  std::vector<int64_t> da = ra->attrs().dimensions, db = rb->attrs().dimensions;
  std::sort(da.begin(), da.end());
  std::sort(db.begin(), db.end());
  if (da != db) return false;
  // Next to each other, neither may read the other (a variance's sum reads the mean's).
  auto reads = [](const hlo::Instruction* user, const hlo::Instruction* value) {
    return std::find(user->operands().begin(), user->operands().end(), value) != user->operands().end();
  };
  if (reads(a, b) || reads(b, a)) return false;
  for (const hlo::Instruction* op : a->operands())
    if (op->shape().element_count() == input.element_count() &&
        std::find(b->operands().begin(), b->operands().end(), op) != b->operands().end())
      return true;
  return false;
}

bool ReadAtOwnIndexOnly(const hlo::Instruction* fused_param, const hlo::Instruction* fused_root) {
  // Each instruction is checked once: a chain whose links read their operand twice (x * x,
  // lerp) has exponentially many paths.
  std::vector<const hlo::Instruction*> stack = {fused_param};
  std::unordered_set<const hlo::Instruction*> seen = {fused_param};
  while (!stack.empty()) {
    const hlo::Instruction* i = stack.back();
    stack.pop_back();
    if (i->shape().dims != fused_root->shape().dims) return false;
    if (i != fused_param && !hlo::IsElementwise(i->opcode())) return false;
    for (const hlo::Instruction* u : i->users())
      if (seen.insert(u).second) stack.push_back(u);
  }
  return true;
}

bool FusionReadsAtOwnIndexOnly(const hlo::Instruction* fusion, const hlo::Instruction* value) {
  if (!IsLoopFusion(fusion)) return false;
  const hlo::Computation* fused = fusion->attrs().called.at(0);
  for (const hlo::Instruction* fp : fused->parameters())
    if (fusion->operand(fp->attrs().parameter_number) == value && !ReadAtOwnIndexOnly(fp, fused->root()))
      return false;
  return true;
}

MergedKernels FindMergedKernels(const hlo::Module& module) {
  MergedKernels merged;
  const hlo::Computation& entry = *module.entry();
  const hlo::Instruction* root = entry.root();
  // One level: a kernel that writes producers is not itself written by a later one, and a
  // producer is written by one consumer (it has no other reader but the outputs).
  for (const hlo::Instruction* consumer : entry.instructions()) {
    if (!IsLoopFusion(consumer)) continue;
    std::vector<const hlo::Instruction*> producers;
    for (const hlo::Instruction* op : consumer->operands())
      if (std::find(producers.begin(), producers.end(), op) == producers.end() && !merged.extra_outputs.count(op) &&
          CanWriteFrom(op, consumer, root))
        producers.push_back(op);
    if (producers.empty()) continue;
    for (const hlo::Instruction* p : producers) merged.writer[p] = consumer;
    TXLA_COUNTER("MultiOutputKernelExtraOutputs", static_cast<int64_t>(producers.size()));
    merged.extra_outputs[consumer] = std::move(producers);
  }
  // Sibling reductions next to each other (the pass placed them): the later one's kernel
  // computes both. Reductions are in none of the loop kernels' pairs above.
  if (!PassEnabled("sibling-reductions")) return merged;
  auto order = entry.instructions();
  for (size_t p = 0; p + 1 < order.size(); ++p) {
    const hlo::Instruction *a = order[p], *b = order[p + 1];
    if (!AreSiblingReductions(a, b)) continue;
    merged.writer[a] = b;
    merged.extra_outputs[b] = {a};
    TXLA_COUNTER("SiblingReductionKernels", 1);
    ++p;  // b writes a: it is no one's sibling again
  }
  return merged;
}

}  // namespace txla::compiler
