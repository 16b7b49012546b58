// What a loop kernel reads, for the shape of its loops: which trailing dimensions run as one
// loop, whether it reads through transposes (walked in tiles, or down the output's columns), and
// whether a reduction loads narrow elements (staged).
#include "compiler/codegen/fusion_kernel.h"

#include <functional>
#include <set>

#include "runtime/element_type.h"

namespace txla::compiler::emitter {

using hlo::Instruction;
using hlo::Opcode;

// Dimensions [k, rank) of the loop kernel being emitted run as one loop when every value reads
// them only as its own row-major offset (buffers of the output's shape, broadcasts that keep
// them as their trailing dimensions) or not at all (broadcasts along them): the reads' offsets
// recombine from the merged index's quotients and remainders into the index itself
// (index_expr.h), and the loop is as long as the dimensions together. An optimizer's update of
// a 512x512x3x3 convolution weight was four loops, the innermost of 3; one loop of 4608 is less
// code for the C++ compiler to version and vectorize (ResNet-18's cold compile: 1390 -> 1232 ms,
// medians of 4 on an EPYC Milan) and runs as fast.
size_t FusionKernel::MergedInnerDimensions(const Instruction& root, size_t first_candidate) const {
  size_t rank = root.shape().rank();
  if (root.shape().element_count() == 0) return rank;  // no loop runs
  std::vector<int64_t> identity(rank);
  for (size_t d = 0; d < rank; ++d) identity[d] = static_cast<int64_t>(d);
  for (size_t k = first_candidate; k + 1 < rank; ++k) {
    bool ok = ReadsMergeable(root, identity, k, rank);
    for (const auto& [producer, fused_root] : expr.inlined) ok = ok && ReadsMergeable(*fused_root, identity, k, rank);
    if (ok) return k;
  }
  return rank;
}

// Whether `i`, whose dimension j is the root's dimension root_dim_of[j], reads the root's
// dimensions [k, root_rank) only as described above.
bool FusionKernel::ReadsMergeable(const Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k,
                                  size_t root_rank) const {
  MergeableReads seen;
  return ReadsMergeable(i, root_dim_of, k, root_rank, &seen);
}

// `seen`: the (instruction, dimension map) pairs already entered in this walk. A walk stops at
// the first pair that fails, so a pair met again has passed: without this, a chain of ops that
// each read the previous value twice (lerp_, an update that reads its parameter twice) was
// walked once per path, 2^depth times (a 20-op chain compiled for minutes).
bool FusionKernel::ReadsMergeable(const Instruction& i, const std::vector<int64_t>& root_dim_of, size_t k,
                                  size_t root_rank, MergeableReads* seen) const {
  if (!seen->emplace(&i, root_dim_of).second) return true;
  size_t merged = root_rank - k;
  size_t n = root_dim_of.size(), reading = 0;
  for (int64_t d : root_dim_of) reading += static_cast<size_t>(d) >= k;
  if (reading == 0) return true;  // constant along the merged dimensions
  if (reading != merged || n < merged) return false;
  for (size_t t = 0; t < merged; ++t)
    if (root_dim_of[n - merged + t] != static_cast<int64_t>(k + t)) return false;
  // Read at the root's trailing dimensions in order: a buffer read recombines.
  auto param = expr.fusion_params.find(&i);
  if (param != expr.fusion_params.end()) return ReadsMergeable(*param->second, root_dim_of, k, root_rank, seen);
  auto inlined = expr.inlined.find(&i);
  if (inlined != expr.inlined.end()) return ReadsMergeable(*inlined->second, root_dim_of, k, root_rank, seen);
  if (Materialized(i) && &i != expr.current_output) return true;
  if (hlo::IsElementwise(i.opcode())) {
    for (const Instruction* op : i.operands())
      if (!ReadsMergeable(*op, root_dim_of, k, root_rank, seen)) return false;
    return true;
  }
  if (i.opcode() == Opcode::kBroadcast) {
    std::vector<int64_t> sub;
    for (int64_t d : i.attrs().dimensions) sub.push_back(root_dim_of[d]);
    return ReadsMergeable(*i.operand(0), sub, k, root_rank, seen);
  }
  return false;
}

// Whether the loop kernel being emitted (`root` and the producers it also writes) reads
// through a transpose that moves the last dimension.
bool FusionKernel::KernelTransposesLastDimension(const Instruction& root) const {
  if (TransposesLastDimension(root)) return true;
  for (const auto& [producer, fused_root] : expr.inlined)
    if (TransposesLastDimension(*fused_root)) return true;
  return false;
}

namespace {

enum class Walk { kDescend, kSkip, kStop };

// Depth first over the instructions a loop kernel rooted at `root` computes and reads, each
// once: `visit` says whether to go on into an instruction's operands, or to stop the walk.
template <typename Visit>
void WalkKernel(const Instruction& root, Visit visit) {
  std::vector<const Instruction*> stack = {&root};
  std::set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    const Walk next = visit(*i);
    if (next == Walk::kStop) return;
    if (next == Walk::kDescend)
      for (const Instruction* op : i->operands()) stack.push_back(op);
  }
}

}  // namespace

// Whether every array the loop kernel rooted at `root` reads comes through a transpose whose
// output rows (dimension rank-2) run along its input's rows, with only elementwise operations
// between: a tile is then best walked down the output's columns, reading the input's rows. A
// weight's transposed bf16 copy (AOTAutograd saves one for the backward) ran 5-6x faster so on
// a Zen 4 EPYC (f32 [128,512] -> bf16 [512,128]: 352 -> 63 us on one core; its bf16 stores
// vectorize only that way round), a plain f32 transpose 1.4x; a kernel that also reads an array
// in the output's order (a + transpose(b)) ran 1.4x slower, so it keeps the rows.
bool FusionKernel::ReadsOnlyThroughTransposedRows(const Instruction& root) const {
  if (!expr.inlined.empty()) return false;
  const int64_t rank = root.shape().rank();
  bool transposed = false, only = true;
  WalkKernel(root, [&](const Instruction& i) {
    const auto& perm = i.attrs().dimensions;
    if (i.opcode() == Opcode::kTranspose && i.shape().rank() == rank && perm.size() == static_cast<size_t>(rank) &&
        perm[rank - 2] == rank - 1) {
      transposed = true;
      return Walk::kSkip;
    }
    if (i.shape().element_count() <= 1) return Walk::kSkip;  // a scalar, however it is read
    if (i.opcode() == Opcode::kBroadcast && i.operand(0)->shape().element_count() <= 1) return Walk::kSkip;
    if (expr.fusion_params.count(&i) || !hlo::IsElementwise(i.opcode()) || i.shape().dims != root.shape().dims) {
      only = false;
      return Walk::kStop;
    }
    return Walk::kDescend;
  });
  return only && transposed;
}

// Whether a loop kernel rooted at `root` reads through a transpose that moves the last dimension.
bool FusionKernel::TransposesLastDimension(const Instruction& root) const {
  bool found = false;
  WalkKernel(root, [&](const Instruction& i) {
    const auto& perm = i.attrs().dimensions;
    if (i.opcode() == Opcode::kTranspose && !perm.empty() && perm.back() != static_cast<int64_t>(perm.size()) - 1) {
      found = true;
      return Walk::kStop;
    }
    return expr.fusion_params.count(&i) ? Walk::kSkip : Walk::kDescend;
  });
  return found;
}

// Whether computing `i` in the kernel being emitted loads elements narrower than 4 bytes
// (following fusion parameters and inlined producers as Value does; every operand counts).
bool FusionKernel::LoadsNarrowElements(const Instruction& i, std::set<const Instruction*>* seen) const {
  if (!seen->insert(&i).second) return false;
  auto param = expr.fusion_params.find(&i);
  if (param != expr.fusion_params.end()) return LoadsNarrowElements(*param->second, seen);
  auto inlined = expr.inlined.find(&i);
  if (inlined != expr.inlined.end()) return LoadsNarrowElements(*inlined->second, seen);
  if (i.opcode() == Opcode::kConstant && i.shape().IsScalar()) return false;
  if (Materialized(i) && &i != expr.current_output) return runtime::ByteWidth(i.shape().type) < 4;
  for (const Instruction* operand : i.operands())
    if (LoadsNarrowElements(*operand, seen)) return true;
  return false;
}

}  // namespace txla::compiler::emitter
