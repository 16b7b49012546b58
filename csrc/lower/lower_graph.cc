// The lowering's driver: each op's rule, taken by its op-table row, and LowerGraph, which
// lowers a cut graph node by node and checks every rule's outputs against the IR's shapes.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "debug/config.h"
#include "ir/op_table.h"
#include "lower/lowering.h"
#include "lower/lowering_context.h"
#include "lower/lowering_table.h"

namespace txla::lower {
namespace {

// Every row's rule, in the rows' order (which is OpTable()'s).
constexpr LowerFn kRuleByRow[] = {
#define TXLA_RULE_OF_ROW(id, ...) &rules::id,
    TXLA_OP_ROWS(TXLA_RULE_OF_ROW)
#undef TXLA_RULE_OF_ROW
};

}  // namespace

LowerFn RuleFor(const ir::OpInfo& op) { return kRuleByRow[op.index]; }

std::vector<std::string> LoweredOps() {
  std::vector<std::string> names;
  for (const ir::OpInfo& op : ir::OpTable())
    if (RuleFor(op)) names.push_back(op.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string FirstUnloweredOp(const graph::GraphCut& cut) {
  for (const ir::Node* node : cut.nodes)
    if (node->kind() == ir::NodeKind::kOp && !RuleFor(*node->op())) return node->op()->name;
  return "";
}

namespace {

// TXLA_TEST_MISCOMPILE=<op name>: that op's first floating-point output is lowered off by one, a
// deliberate miscompile with which tests check that TXLA_CHECK_GRAPHS finds and names it.
void InjectFault(const std::string& target, LoweringContext& ctx, const ir::Node& node, Outs& outs) {
  if (target.empty() || target != node.op()->name || outs.empty() || !outs[0] ||
      !hlo::IsFloating(outs[0]->shape().type))
    return;
  hlo::ElementType type = outs[0]->shape().type;
  outs[0] = ctx.Elementwise(Opcode::kAdd, {outs[0], ctx.Constant(1.0, type)}, type);
}

}  // namespace

std::unique_ptr<hlo::Module> LowerGraph(const graph::GraphCut& cut) {
  auto module = std::make_unique<hlo::Module>("graph");
  hlo::Computation* entry = module->AddComputation("main", /*is_entry=*/true);
  LoweringContext ctx(module.get(), entry);
  ctx.set_convolution_precision(cut.convolution_precision);
  std::vector<Instruction*> params;
  for (size_t i = 0; i < cut.parameters.size(); ++i) {
    const runtime::Buffer& b = *cut.parameters[i];
    Instruction* p = entry->AddParameter(static_cast<int64_t>(i), hlo::Shape::Array(b.type(), b.dims()));
    const std::string& numbered = p->name();  // "parameter.<id>": PyTorch/XLA's p<i>.<id>
    p->set_name("p" + std::to_string(i) + numbered.substr(numbered.find('.')));
    params.push_back(p);
  }
  const debug::Config& config = debug::GetConfig();
  const std::string& miscompile = config.test_miscompile;
  const bool numeric_mode = config.use_bf16 || config.downcast_bf16 || config.use_32bit_long;
  size_t data_seen = 0;
  for (const ir::Node* node : cut.nodes) {
    switch (node->kind()) {
      case ir::NodeKind::kDeviceData:
        ctx.Set(node, {params[data_seen++]});
        break;
      case ir::NodeKind::kConstant:
        ctx.Set(node, {ctx.Constant(node->constant().toDouble(), ToHlo(node->shape().dtype))});
        break;
      case ir::NodeKind::kOp: {
        const LowerFn rule = RuleFor(*node->op());
        if (!rule) throw NotLowered("no HLO lowering for " + node->op()->name);
        size_t first_new = entry->instruction_count();
        Outs outs = rule(ctx, *node);
        InjectFault(miscompile, ctx, *node, outs);
        for (size_t k = 0; k < outs.size(); ++k) {
          if (!outs[k]) continue;
          const hlo::Shape want = ToHlo(node->shape(k));
          // Rules that build positions or indices in s64 (argmax, max pooling's indices, ...) or
          // accumulate in f32/f64: under a numeric mode (XLA_USE_32BIT_LONG, XLA_USE_BF16, ...)
          // the IR stores that dtype narrower, so the value is converted to the storage type.
          if (numeric_mode && outs[k]->shape().dims == want.dims && outs[k]->shape().type != want.type)
            outs[k] = ctx.Convert(outs[k], want.type);
          if (outs[k]->shape() != want)
            throw std::logic_error("lowering " + node->op()->name + " output " + std::to_string(k) +
                                   " gives " + outs[k]->shape().ToString() + ", the IR says " +
                                   node->shape(k).ToString());
        }
        // Eager rounds every op's 16-bit float result to its type; float normalization computes
        // 16-bit arithmetic in f32, and this convert is where the value the next ops read is
        // rounded (the op's own steps, before it, keep f32 as eager's opmath does).
        if (!config.allow_excess_precision)
          for (Instruction*& out : outs)
            if (out && hlo::Is16BitFloat(out->shape().type) && !out->shape().is_tuple &&
                out->opcode() != Opcode::kParameter && out->opcode() != Opcode::kConvert)
              out = entry->Add(Opcode::kConvert, out->shape(), {out});
        if (config.hlo_debug) {  // XLA_HLO_DEBUG: every instruction of the op names where it came from
          hlo::Attributes::Metadata m;
          m.op_type = node->OpName();
          if (const debug::Frame* f = node->user_frame()) m.source_file = f->file, m.source_line = f->line;
          for (size_t k = first_new; k < entry->instruction_count(); ++k) {
            hlo::Instruction* made = entry->instruction_at(k);
            if (made->attrs().metadata.empty()) made->mutable_attrs().metadata = m;
          }
        }
        ctx.Set(node, std::move(outs));
        break;
      }
    }
  }
  std::vector<Instruction*> roots;
  std::vector<hlo::Shape> shapes;
  for (const ir::Value& v : cut.roots) {
    roots.push_back(ctx.Get(v));
    shapes.push_back(roots.back()->shape());
  }
  entry->set_root(entry->Add(Opcode::kTuple, hlo::Shape::Tuple(shapes), roots));
  return module;
}

}  // namespace txla::lower
