#include "compiler/passes/float_normalization.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hlo/custom_call.h"
#include "metrics/metrics.h"

namespace txla::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool Is16BitFloat(const hlo::Shape& s) { return !s.is_tuple && hlo::Is16BitFloat(s.type); }

hlo::Shape Widened(const hlo::Shape& s) {
  hlo::Shape w = s;
  if (Is16BitFloat(s)) w.type = ElementType::kF32;
  return w;
}

// Instructions that keep their 16-bit type: the graph's inputs and constants (read, then
// widened), and the instructions whose 16-bit meaning is the point (a program's convert rounds,
// a bitcast reinterprets bits).
bool StaysNarrow(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return i.shape().is_tuple;
  }
}

// A dot of two bf16 values: it runs as a bf16 GEMM with an f32 result (library/gemm_bf16.h).
bool MixedPrecisionDot(const Instruction& i) {
  return i.opcode() == Opcode::kDot && i.operand(0)->shape().type == ElementType::kBF16 &&
         i.operand(1)->shape().type == ElementType::kBF16;
}

// A convolution (or one of its gradients) of two bf16 values: it runs as a bf16 convolution with
// an f32 result (library/conv2d.h), as a mixed-precision dot does; a bias stays an f32 operand.
bool MixedPrecisionConvolution(const Instruction& i) {
  bool convolution = i.opcode() == Opcode::kConvolution;
  if (i.opcode() == Opcode::kCustomCall) {
    switch (i.attrs().custom_call_target) {
      case hlo::CustomCallTarget::kConv2dBias:
      case hlo::CustomCallTarget::kConv2dBackwardInput:
      case hlo::CustomCallTarget::kConv2dBackwardFilter:
        convolution = true;
        break;
      default:
        break;
    }
  }
  return convolution && i.operand(0)->shape().type == ElementType::kBF16 &&
         i.operand(1)->shape().type == ElementType::kBF16;
}

hlo::Literal WidenedLiteral(const hlo::Literal& narrow) {
  std::vector<double> values;
  for (int64_t k = 0; k < narrow.size(); ++k) values.push_back(narrow.GetDouble(k));
  return hlo::Literal::FromDoubles(Widened(narrow.shape()), std::move(values));
}

// Ops that only move elements: exact in any type, so one whose operands are all still narrow
// stays narrow (a weight cast to bf16 and transposed for a product stays a bf16 transpose the
// GEMM reads in place, instead of a widened copy rounded back).
bool MovesElementsOnly(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
      return true;
    default:
      return false;
  }
}

// A called computation (a reducer, a scatter's combiner) with its 16-bit floats at f32.
hlo::Computation* WidenedComputation(hlo::Module& module, const hlo::Computation& narrow,
                                     std::map<const hlo::Computation*, hlo::Computation*>& done) {
  auto it = done.find(&narrow);
  if (it != done.end()) return it->second;
  hlo::Computation* wide = module.AddComputation(narrow.name() + ".f32");
  std::map<const Instruction*, Instruction*> map;
  for (const Instruction* i : narrow.instructions()) {
    Instruction* w;
    if (i->opcode() == Opcode::kParameter) {
      w = wide->AddParameter(i->attrs().parameter_number, Widened(i->shape()));
    } else if (i->opcode() == Opcode::kConstant && Is16BitFloat(i->shape())) {
      w = wide->AddConstant(WidenedLiteral(i->attrs().literal));
    } else {
      std::vector<Instruction*> operands;
      for (const Instruction* op : i->operands()) operands.push_back(map.at(op));
      w = wide->Add(i->opcode(), Widened(i->shape()), operands, i->attrs());
    }
    map[i] = w;
  }
  wide->set_root(map.at(narrow.root()));
  done[&narrow] = wide;
  return wide;
}

}  // namespace

bool FloatNormalization::Run(hlo::Module& module) {
  hlo::Computation* c = module.entry();
  std::map<const Instruction*, Instruction*> wide;  // a 16-bit instruction -> its f32 version
  std::map<const Instruction*, Instruction*> widened_operand;  // one convert per narrow value
  std::map<const Instruction*, Instruction*> narrow_of;        // an f32 value -> its 16-bit value
  std::map<const hlo::Computation*, hlo::Computation*> computations;
  auto f32_of = [&](Instruction* op) -> Instruction* {
    auto w = wide.find(op);
    if (w != wide.end()) return w->second;
    if (!Is16BitFloat(op->shape())) return op;
    Instruction*& convert = widened_operand[op];
    if (convert) return convert;
    // A lowering's constant (gelu's 1/sqrt(2), a scalar operand) keeps the value it was written
    // with, as eager's float opmath keeps a scalar; a folded convert's constant is already rounded.
    convert = op->opcode() == Opcode::kConstant ? c->AddConstant(WidenedLiteral(op->attrs().literal))
                                                : c->Add(Opcode::kConvert, Widened(op->shape()), {op});
    narrow_of[convert] = op;
    return convert;
  };
  // A product's 16-bit operand. Rounding commutes with moving elements, so the rounding of a
  // transposed or reshaped f32 value is taken before the move: the GEMM then reads the rounded
  // value through the transpose in place, where rounding after it is a transposing copy.
  std::function<Instruction*(Instruction*)> narrow_operand = [&](Instruction* op) -> Instruction* {
    auto w = wide.find(op);
    if (w == wide.end()) return op;
    Instruction* moved = w->second;
    if (moved->opcode() != Opcode::kTranspose && moved->opcode() != Opcode::kReshape) return op;
    auto source = narrow_of.find(moved->operand(0));
    if (source == narrow_of.end()) return op;
    hlo::Shape shape = moved->shape();
    shape.type = op->shape().type;
    return c->Add(moved->opcode(), shape, {narrow_operand(source->second)}, moved->attrs());
  };
  for (Instruction* i : c->instructions()) {
    if (StaysNarrow(*i)) continue;
    // (A constant's broadcast is widened: the constant then keeps the value it was written with.)
    if (MovesElementsOnly(i->opcode()) &&
        std::none_of(i->operands().begin(), i->operands().end(),
                     [&](Instruction* op) { return wide.count(op) || op->opcode() == Opcode::kConstant; }))
      continue;
    bool touches = Is16BitFloat(i->shape());
    for (const Instruction* op : i->operands()) touches |= Is16BitFloat(op->shape());
    if (!touches) continue;
    std::vector<Instruction*> operands;
    if (MixedPrecisionDot(*i)) {
      // Its bf16 operands as they are (rounded, where the value was computed wider): the GEMM
      // takes 16-bit operands and accumulates in f32.
      for (Instruction* op : i->operands()) operands.push_back(narrow_operand(op));
    } else if (MixedPrecisionConvolution(*i)) {
      for (size_t k = 0; k < i->operands().size(); ++k)
        operands.push_back(k < 2 ? narrow_operand(i->operand(k)) : f32_of(i->operand(k)));
    } else {
      for (Instruction* op : i->operands()) operands.push_back(f32_of(op));
    }
    hlo::Attributes attrs = i->attrs();
    for (hlo::Computation*& called : attrs.called) called = WidenedComputation(module, *called, computations);
    Instruction* w = c->Add(i->opcode(), Widened(i->shape()), operands, attrs);
    TXLA_COUNTER("FloatNormalizedInstructions", 1);
    if (!Is16BitFloat(i->shape())) {  // e.g. a compare of bf16 values: its result is unchanged
      i->ReplaceAllUsesWith(w);
      continue;
    }
    // Users that stay narrow (outputs, converts) read the value rounded back; users normalized
    // later in this loop read `w` (through `wide`), and the rounding dies if nothing needs it.
    Instruction* rounded = c->Add(Opcode::kConvert, i->shape(), {w});
    i->ReplaceAllUsesWith(rounded);
    wide[rounded] = w;
    narrow_of[w] = rounded;
  }
  if (wide.empty() && widened_operand.empty()) return false;
  c->SortTopologically();
  return true;
}

}  // namespace txla::compiler
