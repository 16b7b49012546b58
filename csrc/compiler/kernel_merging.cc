#include "compiler/kernel_merging.h"

#include <algorithm>
#include <unordered_set>

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

}  // namespace

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
  return merged;
}

}  // namespace txla::compiler
