// Foreach ops (ir/op_rows.h's TXLA_FOREACH_ROWS): one node per call, lowered position by
// position through its element op's own rule, so each position computes (and rounds) exactly as
// the element op recorded alone would, and the compiler fuses the positions as it fused those.
#include <stdexcept>

#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_context.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

bool IsListType(const c10::TypePtr& type) { return type->kind() == c10::TypeKind::ListType; }

// Built whole: assigning over a default Arg's None trips a false -Wstringop-overflow in GCC 12.
ir::Arg ConstantArg(c10::IValue value) { return ir::Arg{ir::Arg::Kind::kConst, false, 0, 0, {}, std::move(value)}; }

// The element op's node at `position`: each list argument's entry there (a tensor or a scalar
// parameter), every other argument shared, the element's further arguments at their defaults.
// It stands outside any graph; its operands are the foreach node's, already lowered.
ir::Node ElementNode(const ir::Node& node, size_t position) {
  const ir::OpInfo& element = *node.op()->element;
  const auto& outer = node.op()->schema().arguments();
  const auto& inner = element.schema().arguments();
  std::vector<ir::Value> operands;
  std::vector<ir::Arg> args;
  args.reserve(inner.size());
  auto take = [&](uint32_t operand) {
    operands.push_back(node.operands().at(operand));
    return static_cast<uint32_t>(operands.size() - 1);
  };
  for (size_t j = 0; j < node.args().size(); ++j) {
    const ir::Arg& a = node.args()[j];
    if (a.kind == ir::Arg::Kind::kConst) {  // a constant list (pow's exponents): each position its entry
      const bool per_position = IsListType(outer.at(j).type()) && !IsListType(inner.at(j).type());
      args.push_back(ConstantArg(per_position ? a.value.toListRef().at(position) : a.value));
      continue;
    }
    ir::Arg e;
    e.wrapped_number = a.wrapped_number;
    switch (a.kind) {
      case ir::Arg::Kind::kTensorList:
        e.kind = ir::Arg::Kind::kTensor;
        e.operand = take(a.operand + static_cast<uint32_t>(position));
        break;
      case ir::Arg::Kind::kScalarList:
        e.kind = ir::Arg::Kind::kScalar;
        e.operand = take(a.operand + static_cast<uint32_t>(position));
        break;
      case ir::Arg::Kind::kTensor:
      case ir::Arg::Kind::kScalar:
        e.kind = a.kind;
        e.operand = take(a.operand);
        break;
      default:
        throw std::invalid_argument(node.OpName() + ": argument " + std::to_string(j) +
                                    " has no per-position form");
    }
    args.push_back(std::move(e));
  }
  for (size_t j = node.args().size(); j < inner.size(); ++j) args.push_back(ConstantArg(*inner[j].default_value()));
  return ir::Node(ir::NodeKind::kOp, &element, std::move(operands), std::move(args), {node.shape(position)});
}

Outs LowerForeach(LoweringContext& ctx, const ir::Node& node) {
  const LowerFn rule = RuleFor(*node.op()->element);
  Outs outs;
  outs.reserve(node.shapes().size());
  for (size_t i = 0; i < node.shapes().size(); ++i) outs.push_back(rule(ctx, ElementNode(node, i)).at(0));
  return outs;
}

}  // namespace

#define TXLA_LOWER_FOREACH(V, id, name, element) TXLA_LOWER(id, LowerForeach)
TXLA_FOREACH_ROWS(TXLA_LOWER_FOREACH, _)
#undef TXLA_LOWER_FOREACH

}  // namespace txla::lower
