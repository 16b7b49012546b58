#include "compiler/passes/algebraic_simplifier.h"

#include <algorithm>
#include <initializer_list>

namespace txla::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Whether every value of type `from` converts to `to` and back unchanged.
bool Widens(hlo::ElementType from, hlo::ElementType to) {
  using T = hlo::ElementType;
  auto any_of = [to](std::initializer_list<T> types) {
    return std::find(types.begin(), types.end(), to) != types.end();
  };
  switch (from) {
    case T::kPred: return to != T::kPred;  // 0 and 1 survive any type
    case T::kS8:
    case T::kU8: return any_of({T::kS16, T::kS32, T::kS64, T::kF32, T::kF64});
    case T::kS16: return any_of({T::kS32, T::kS64, T::kF32, T::kF64});
    case T::kS32: return any_of({T::kS64, T::kF64});
    case T::kF16:
    case T::kBF16: return any_of({T::kF32, T::kF64});
    case T::kF32: return to == T::kF64;
    default: return false;
  }
}

// A scalar constant equal to `value`, possibly broadcast.
bool IsConstantValue(const Instruction* i, double value) {
  if (i->opcode() == Opcode::kBroadcast) i = i->operand(0);
  return i->opcode() == Opcode::kConstant && i->shape().IsScalar() && i->attrs().literal.size() == 1 &&
         i->attrs().literal.IsAll(value);
}

// op(broadcast(a), broadcast(b), ...) with scalar a, b: broadcast(op(a, b)) — the work is done
// once, on scalars (and constant folding can finish it).
Instruction* SinkScalarBroadcasts(Instruction* i) {
  if (!hlo::IsElementwise(i->opcode()) || i->shape().IsScalar() || i->operands().empty()) return nullptr;
  std::vector<Instruction*> scalars;
  for (Instruction* op : i->operands()) {
    if (op->shape().IsScalar()) {
      scalars.push_back(op);
    } else if (op->opcode() == Opcode::kBroadcast && op->operand(0)->shape().IsScalar()) {
      scalars.push_back(op->operand(0));
    } else {
      return nullptr;
    }
  }
  hlo::Computation* c = i->parent();
  Instruction* scalar = c->Add(i->opcode(), hlo::Shape::Scalar(i->shape().type), scalars, i->attrs());
  hlo::Attributes attrs;  // dimensions={} : a scalar fills the shape
  return c->Add(Opcode::kBroadcast, i->shape(), {scalar}, attrs);
}

// A 2-D product without batch dimensions read by one instruction only: a transpose of it is the
// product with its operands swapped ((ab)^T = b^T a^T).
bool SwappableDot(const Instruction* x) {
  return x->opcode() == Opcode::kDot && x->shape().rank() == 2 && x->users().size() == 1 &&
         x->attrs().dot.lhs_batch.empty() && x->operand(0)->shape().rank() == 2 && x->operand(1)->shape().rank() == 2;
}

// The end of a chain of conversions, each read only by the next, below `x` (x itself if none).
const Instruction* BelowConversions(const Instruction* x) {
  while (x->opcode() == Opcode::kConvert && x->users().size() == 1) x = x->operand(0);
  return x;
}

// Returns the instruction that replaces `i`, or nullptr when no rule applies.
Instruction* Simplify(Instruction* i) {
  hlo::Computation* c = i->parent();
  auto operand = [&](size_t k) { return i->operand(k); };
  if (Instruction* sunk = SinkScalarBroadcasts(i)) return sunk;
  switch (i->opcode()) {
    case Opcode::kCustomCall:
      // A sharding annotation in a program no partitioner will see (not SPMD) is the identity.
      if (i->attrs().custom_call_target == hlo::CustomCallTarget::kSharding) return operand(0);
      return nullptr;
    case Opcode::kBroadcast: {
      const auto& dims = i->attrs().dimensions;
      bool identity = operand(0)->shape().dims == i->shape().dims;
      for (size_t k = 0; k < dims.size(); ++k) identity &= dims[k] == static_cast<int64_t>(k);
      if (identity) return operand(0);  // broadcast to its own shape
      if (operand(0)->opcode() == Opcode::kBroadcast) {  // broadcast of a broadcast: compose
        hlo::Attributes attrs;
        for (int64_t d : operand(0)->attrs().dimensions) attrs.dimensions.push_back(dims[d]);
        return c->Add(Opcode::kBroadcast, i->shape(), {operand(0)->operand(0)}, attrs);
      }
      return nullptr;
    }
    case Opcode::kAdd:
      if (IsConstantValue(operand(1), 0) && operand(0)->shape() == i->shape()) return operand(0);  // x+0
      if (IsConstantValue(operand(0), 0) && operand(1)->shape() == i->shape()) return operand(1);  // 0+x
      return nullptr;
    case Opcode::kSubtract:
      if (IsConstantValue(operand(1), 0)) return operand(0);  // x-0
      return nullptr;
    case Opcode::kMultiply:
      if (IsConstantValue(operand(1), 1)) return operand(0);  // x*1
      if (IsConstantValue(operand(0), 1)) return operand(1);  // 1*x
      return nullptr;
    case Opcode::kDivide:
      if (IsConstantValue(operand(1), 1)) return operand(0);  // x/1
      return nullptr;
    case Opcode::kConvert:
      if (operand(0)->shape().type == i->shape().type) return operand(0);  // convert to own type
      // convert(convert(x)) back to x's type through a type that holds every value of it
      // (a mask through float: ReLU's backward).
      if (operand(0)->opcode() == Opcode::kConvert && operand(0)->operand(0)->shape().type == i->shape().type &&
          Widens(i->shape().type, operand(0)->shape().type))
        return operand(0)->operand(0);
      // convert(transpose(x)) = transpose(convert(x)): the conversion then runs over x's own
      // layout (it vectorizes), and the transpose, if dots are all that read it, costs nothing.
      // Autocast's bf16 copy of a Linear weight was a scalar transposing kernel every step.
      // (Not above a product the transpose folds into: the transpose moves down to it instead.)
      // convert(reshape(x)) = reshape(convert(x)): one order for the same value, so CSE finds
      // it. Through torch.compile the bf16 GPT decoder's GELU output was computed by three
      // kernels a step, reshaped before or after its bf16 conversion (for the product, for the
      // next layer's view, saved for the backward), each an erf over 262K elements.
      if (operand(0)->opcode() == Opcode::kReshape ||
          (operand(0)->opcode() == Opcode::kTranspose && operand(0)->users().size() == 1 &&
           !SwappableDot(BelowConversions(operand(0)->operand(0))))) {
        Instruction* x = operand(0)->operand(0);
        Instruction* converted = c->Add(Opcode::kConvert, hlo::Shape::Array(i->shape().type, x->shape().dims), {x});
        return c->Add(operand(0)->opcode(), i->shape(), {converted}, operand(0)->attrs());
      }
      return nullptr;
    case Opcode::kReshape:
      if (operand(0)->shape().dims == i->shape().dims) return operand(0);  // no-op reshape
      if (operand(0)->opcode() == Opcode::kReshape)                         // reshape chain
        return c->Add(Opcode::kReshape, i->shape(), {operand(0)->operand(0)});
      return nullptr;
    case Opcode::kTranspose: {
      const auto& perm = i->attrs().dimensions;
      bool identity = true;
      for (size_t k = 0; k < perm.size(); ++k) identity &= perm[k] == static_cast<int64_t>(k);
      if (identity) return operand(0);  // transpose(x, identity)
      Instruction* in = operand(0);
      if (in->opcode() == Opcode::kTranspose) {  // transpose(transpose(x, p), q) = transpose(x, p o q)
        hlo::Attributes attrs;
        bool composed_identity = true;
        for (size_t k = 0; k < perm.size(); ++k) {
          attrs.dimensions.push_back(in->attrs().dimensions[perm[k]]);
          composed_identity &= attrs.dimensions.back() == static_cast<int64_t>(k);
        }
        if (composed_identity) return in->operand(0);
        return c->Add(Opcode::kTranspose, i->shape(), {in->operand(0)}, attrs);
      }
      if (in->opcode() == Opcode::kConvert && in->users().size() == 1 && SwappableDot(BelowConversions(in))) {
        // transpose(convert(...(dot))) = convert(...(transpose(dot))), which folds below: a
        // weight gradient under autocast (a bf16 product widened to f32, then transposed) was
        // a scalar transposing kernel of 400K elements in the MLP's step.
        std::vector<Instruction*> chain;
        Instruction* x = in;
        for (; x->opcode() == Opcode::kConvert; x = x->operand(0)) chain.push_back(x);
        hlo::Shape shape = hlo::Shape::Array(x->shape().type, i->shape().dims);
        Instruction* moved = c->Add(Opcode::kTranspose, shape, {x}, i->attrs());
        for (size_t k = chain.size(); k-- > 0;)
          moved = c->Add(Opcode::kConvert, hlo::Shape::Array(chain[k]->shape().type, i->shape().dims), {moved});
        return moved;
      }
      if (SwappableDot(in)) {  // (ab)^T = b^T a^T
        hlo::Attributes attrs;
        attrs.dot.lhs_contracting = in->attrs().dot.rhs_contracting;
        attrs.dot.rhs_contracting = in->attrs().dot.lhs_contracting;
        return c->Add(Opcode::kDot, i->shape(), {in->operand(1), in->operand(0)}, attrs);
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

}  // namespace

bool AlgebraicSimplifier::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    for (Instruction* i : c->instructions()) {
      if (i->users().empty() && i != c->root()) continue;  // dead: DCE's business
      Instruction* replacement = Simplify(i);
      if (replacement && replacement != i) {
        i->ReplaceAllUsesWith(replacement);
        changed = true;
      }
    }
    if (changed) c->SortTopologically();
  }
  return changed;
}

}  // namespace txla::compiler
