#include "compiler/passes/fusion.h"

#include "compiler/buffer_assignment.h"
#include "compiler/passes/dce.h"
#include "metrics/metrics.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

namespace txla::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Can start a fusion: loop-fusible ops and reductions.
bool IsFusionRoot(const Instruction& i) {
  return IsLoopFusible(i) || i.opcode() == Opcode::kReduce;
}

}  // namespace

bool IsLoopFusible(const Instruction& i) {
  if (i.shape().is_tuple) return false;
  switch (i.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kIota:
    case Opcode::kConstant:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kReduceWindow:  // a small loop per output element (pooling)
    case Opcode::kReverse:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kRngUniform:
    case Opcode::kGather:
      return true;
    default:
      return hlo::KindOf(i.opcode()) != hlo::OpcodeKind::kOther;
  }
}

// Cheap enough to compute again inside each consumer fusion rather than materialize once:
// elementwise work and index remapping (a memory round trip costs more than recomputing).
bool IsDuplicable(const Instruction& i) {
  return IsLoopFusible(i) && i.opcode() != Opcode::kConstant && i.opcode() != Opcode::kReduceWindow &&
         i.opcode() != Opcode::kRngUniform;
}

constexpr size_t kMaxDuplication = 3;  // consumer fusions one producer may be copied into

// A value whose elementwise cone costs this much or more per element is computed once and
// stored, not recomputed in each consumer: GELU's backward (an erf and an exp) computed again
// in the bias gradient's reduction and in the GEMMs' operand took 0.27 ms each on GPT's
// 512x512 activations, where reading it back costs a few hundredths.
constexpr int kExpensiveCone = 40;
// A single transcendental's cone is computed once where the value is large: recomputing softmax's
// exp in its sum's reduction and again in the normalizing loop costs far more per element than
// storing it and reading it back. Below kLargeValueElements the difference is about what a
// kernel of its own costs to start, so the value stays duplicated.
constexpr int kTranscendentalCone = 20;
constexpr int64_t kLargeValueElements = 1 << 12;

// Rough work per element, in multiply-adds: a transcendental is a polynomial or rational
// function (runtime/scalar_ops.h) or a libm call; a division or square root a long-latency
// instruction.
int ElementCost(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kErf:
    case Opcode::kLgamma:
    case Opcode::kDigamma:
    case Opcode::kErfInv:
    case Opcode::kGcd:
    case Opcode::kAcosh:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kPower:
    case Opcode::kAtan2:
      return 20;
    case Opcode::kDivide:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kRemainder:
      return 4;
    case Opcode::kConcatenate:
      // Read inside a fused loop, every element evaluates each part's cone at a clamped index and
      // selects one: GPT's q/k/v gradients concatenated for the bias gradient's reduction as well
      // as for the weight gradient's GEMM took 0.46 ms in the reduction, where materializing the
      // concatenation once (its own loop split at the part boundaries) and reading it back costs
      // a tenth of that.
      return kExpensiveCone;
    default:
      return 1;
  }
}

// The per-element cost of computing `i` from the values that are materialized anyway (the
// operands of its loop-fusible cone), counted up to kExpensiveCone.
int ConeCost(const Instruction& i) {
  std::vector<const Instruction*> stack = {&i};
  std::set<const Instruction*> seen = {&i};
  int cost = 0;
  while (!stack.empty() && cost < kExpensiveCone) {
    const Instruction* c = stack.back();
    stack.pop_back();
    cost += ElementCost(c->opcode());
    for (const Instruction* op : c->operands())
      if (IsDuplicable(*op) && op->opcode() != Opcode::kBroadcast && seen.insert(op).second) stack.push_back(op);
  }
  return cost;
}

// Whether `i` is cheap to duplicate in kind but costs too much per element to compute again in
// each consumer.
bool IsExpensive(const Instruction& i) {
  if (!IsDuplicable(i) || i.opcode() == Opcode::kBroadcast) return false;
  int cost = ConeCost(i);
  return cost >= kExpensiveCone || (cost >= kTranscendentalCone && i.shape().element_count() >= kLargeValueElements);
}

// How many consumer fusions may each compute `i` again. A broadcast reads one small operand per
// element, an iota none: materializing either (a full-size array written once, read by every
// consumer) costs far more than recomputing it anywhere, so it goes into every consumer (GELU's
// constants, biases; cross-entropy's class indices, s64[504,512] for the GPT decoder's loss,
// were a 2 MB kernel of their own when the loss and its gradient both read them).
size_t DuplicationLimit(const Instruction& i) {
  if (!IsDuplicable(i)) return 1;
  if (i.opcode() == Opcode::kBroadcast || i.opcode() == Opcode::kIota) return SIZE_MAX;
  return IsExpensive(i) ? 1 : kMaxDuplication;
}

namespace {

// Inside a loop kernel a value is computed once per distinct index it is read at: users that
// read it elementwise share their own indices with it, every other user (a gather, a reverse,
// a concatenation's part, a broadcast) reads it at indices of its own. A chain that reads each
// value both directly and through such a user (x + x[perm], repeated) doubles the code at every
// step: 20 steps were a million lines for the C++ compiler. As XLA's fusion does, a producer
// does not join a fusion where it would be computed more than this many times per element.
constexpr int64_t kAllowedCodeDuplication = 15;

// The longest chain of members from a fusion's root down to any member. Emitting a kernel
// recurses along such chains, and 2000 in-place updates of one tensor between barriers (one
// elementwise chain) overflowed the host's stack; a longer chain is cut into kernels this deep.
constexpr int64_t kMaxFusionDepth = 128;

// For one fusion member: the members that index it, each weighted by how many of its operands
// it is, and the resulting number of times it is computed per element of the kernel.
struct Indexing {
  std::map<const Instruction*, int64_t> by;  // indexing member -> operand occurrences
  int64_t emitted = 1;
  int64_t depth = 1;  // members on the longest path from the fusion's root to this one
};

}  // namespace

bool Fusion::Run(hlo::Module& module) {
  hlo::Computation* entry = module.entry();
  auto order = entry->instructions();
  std::unordered_map<Instruction*, std::vector<int>> groups;  // instruction -> its fusions
  std::map<int, std::vector<Instruction*>> members;
  int next_group = 0;
  std::map<std::pair<const Instruction*, int>, Indexing> indexed;  // (member, its fusion)
  // How `i` would be indexed inside fusion g, whose members among its users are decided.
  auto indexing_in = [&](const Instruction& i, int g) {
    Indexing result{{}, 0, 1};
    for (const Instruction* u : i.users()) {
      auto it = indexed.find({u, g});
      if (it == indexed.end()) continue;
      result.depth = std::max(result.depth, it->second.depth + 1);
      if (hlo::IsElementwise(u->opcode())) {
        for (const auto& [by, weight] : it->second.by) result.by[by] = std::max(result.by[by], weight);
      } else {
        result.by[u] = std::count(u->operands().begin(), u->operands().end(), &i);
      }
    }
    for (const auto& [by, weight] : result.by) {
      const Indexing& of = indexed.at({by, g});
      // The member itself counts once per element; a user that reads it at other indices,
      // as often as that user is computed.
      result.emitted = std::min(result.emitted + weight * of.emitted, kAllowedCodeDuplication + 1);
    }
    return result;
  };
  // Consumers before producers: a producer's users are all decided when we reach it.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* i = *it;
    if (i->opcode() == Opcode::kParameter || i->opcode() == Opcode::kTuple) continue;
    if (!IsFusionRoot(*i)) continue;
    // A 2-D transpose that only feeds dots stays outside: the GEMM reads it through its
    // transpose flag, so it is never materialized.
    if (IsVirtualTranspose(*i)) continue;
    std::vector<int> joined;
    if (IsLoopFusible(*i) && !i->users().empty() && i != entry->root()) {
      // The fusions of all users, if every user is inside one.
      std::set<int> user_groups;
      bool all_fused = true;
      for (Instruction* u : i->users()) {
        auto f = groups.find(u);
        if (f == groups.end()) {
          all_fused = false;
          break;
        }
        user_groups.insert(f->second.begin(), f->second.end());
      }
      if (all_fused && user_groups.size() <= DuplicationLimit(*i))
        joined.assign(user_groups.begin(), user_groups.end());
      else if (all_fused && user_groups.size() <= kMaxDuplication && IsExpensive(*i))
        TXLA_COUNTER("FusionExpensiveValuesComputedOnce", 1);
    }
    std::vector<Indexing> indexing;
    for (int g : joined) indexing.push_back(indexing_in(*i, g));
    bool too_many = std::any_of(indexing.begin(), indexing.end(),
                                [](const Indexing& x) { return x.emitted > kAllowedCodeDuplication; });
    if (too_many) {
      TXLA_COUNTER("FusionCodeDuplicationLimited", 1);
      joined.clear();
    }
    if (std::any_of(indexing.begin(), indexing.end(), [](const Indexing& x) { return x.depth > kMaxFusionDepth; })) {
      TXLA_COUNTER("FusionDepthLimited", 1);
      joined.clear();
    }
    if (joined.empty()) {
      if (i->opcode() == Opcode::kConstant && i->shape().IsScalar()) continue;  // inlined by users
      joined.push_back(next_group++);
      indexing.assign(1, Indexing{{{i, 1}}, 1, 1});
    }
    groups[i] = joined;
    for (size_t k = 0; k < joined.size(); ++k) {
      members[joined[k]].push_back(i);
      indexed[{i, joined[k]}] = std::move(indexing[k]);
    }
  }

  bool changed = false;
  for (auto& [g, list] : members) {
    // A reshape alone stays unfused: buffer assignment reads it in its operand's buffer.
    if (list.size() == 1 && list[0]->opcode() == Opcode::kReshape) continue;
    std::reverse(list.begin(), list.end());  // operands first
    Instruction* root = list.back();
    hlo::Computation* fused = module.AddComputation(module.UniqueName("fused_computation"));
    std::unordered_map<Instruction*, Instruction*> mapped;
    std::vector<Instruction*> fusion_operands;
    auto map_operand = [&](Instruction* op) -> Instruction* {
      auto f = mapped.find(op);
      if (f != mapped.end()) return f->second;
      Instruction* clone;
      // Small constants are copied into the fusion rather than passed in.
      if (op->opcode() == Opcode::kConstant && op->shape().rank() <= 1) {
        clone = fused->AddConstant(op->attrs().literal);
      } else {
        clone = fused->AddParameter(static_cast<int64_t>(fusion_operands.size()), op->shape(),
                                    "param_" + std::to_string(fusion_operands.size()));
        fusion_operands.push_back(op);
      }
      mapped[op] = clone;
      return clone;
    };
    for (Instruction* m : list) {
      std::vector<Instruction*> ops;
      for (Instruction* op : m->operands()) ops.push_back(map_operand(op));
      Instruction* clone = fused->Add(m->opcode(), m->shape(), ops, m->attrs());
      mapped[m] = clone;
    }
    fused->set_root(mapped[root]);
    hlo::Attributes attrs;
    attrs.fusion_kind = root->opcode() == Opcode::kReduce ? hlo::FusionKind::kInput : hlo::FusionKind::kLoop;
    attrs.called = {fused};
    Instruction* fusion = entry->Add(Opcode::kFusion, root->shape(), fusion_operands, attrs);
    root->ReplaceAllUsesWith(fusion);
    changed = true;
  }
  if (changed) {
    entry->SortTopologically();
    DeadCodeElimination().Run(module);  // the fused originals are now unused
  }
  return changed;
}

}  // namespace txla::compiler
