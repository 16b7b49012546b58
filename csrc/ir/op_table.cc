#include "ir/op_table.h"

#include <unordered_map>

#include "ir/node.h"
#include "ir/op_names.h"
#include "ir/op_rows.h"
#include "ir/shape_rules.h"

namespace txla::ir {
namespace {

using namespace rules;

bool HasBooleanIndex(c10::ArrayRef<c10::IValue> args) {
  // index.Tensor(self, Tensor?[] indices): a bool/uint8 mask selects a data-dependent count.
  for (const c10::IValue& index : args[1].toListRef()) {
    if (index.isTensor()) {
      auto dtype = index.toTensor().scalar_type();
      if (dtype == c10::kBool || dtype == c10::kByte) return true;
    }
  }
  return false;
}

bool IndexPutHasBooleanIndex(c10::ArrayRef<c10::IValue> args) { return HasBooleanIndex(args); }

// bool, which ATen's order statistics and binary searches reject (the device's sort would take
// it): the CPU fallback raises eager's error. (Complex and wide unsigned tensors never reach the
// device.)
bool Unsortable(const c10::IValue& arg) { return arg.isTensor() && arg.toTensor().scalar_type() == c10::kBool; }

// Pooling of an integer tensor (ATen's kernels are floating only): the CPU fallback's error.
bool NotFloatingFirst(c10::ArrayRef<c10::IValue> args) {
  return args[0].isTensor() && !c10::isFloatingType(args[0].toTensor().scalar_type());
}

// grid_sampler_2d(_backward) with bicubic interpolation (mode 2): the CPU fallback computes it.
bool BicubicGridSample(c10::ArrayRef<c10::IValue> args) {
  const size_t mode = args.size() == 5 ? 2 : 3;  // forward (input, grid, mode, ...) or backward
  return args[mode].toInt() == 2;
}

bool UnsortableFirst(c10::ArrayRef<c10::IValue> args) { return Unsortable(args[0]); }

// median() / nanmedian() of an empty integer tensor: eager returns its NaN conversion.
bool EmptyIntegerOrUnsortable(c10::ArrayRef<c10::IValue> args) {
  if (Unsortable(args[0])) return true;
  const at::Tensor& t = args[0].toTensor();
  return t.numel() == 0 && !c10::isFloatingType(t.scalar_type());
}

// searchsorted / bucketize: the sequence or the values.
bool UnsortableSearch(c10::ArrayRef<c10::IValue> args) { return Unsortable(args[0]) || Unsortable(args[1]); }

// linear(input, weight, bias) and txla::linear_backward(grad_output, input, weight, mask) outside
// what their lowerings compute (integer tensors, a 1-D weight, a broadcast bias): on the CPU.
bool LinearOutsideLowering(c10::ArrayRef<c10::IValue> args) {
  return !LinearSupports(args[0].toTensor(), args[1].toTensor(), OptionalTensor(args[2]));
}
bool LinearBackwardOutsideLowering(c10::ArrayRef<c10::IValue> args) {
  return !LinearSupports(args[1].toTensor(), args[2].toTensor(), nullptr);
}

// Fused attention outside what its lowering computes (dropout, broadcast batches, other head
// sizes: scaled_dot_product_attention sends none of them, a direct call may): eager's CPU kernel.
// Arguments q, k, v at `q`..`q`+2, dropout_p and is_causal at `dropout`, `dropout`+1.
bool AttentionOutsideLowering(c10::ArrayRef<c10::IValue> args, size_t q, size_t dropout, size_t mask) {
  return !args[dropout].isDouble() || !args[dropout + 1].isBool() ||
         !FusedAttentionSupports(args[q].toTensor(), args[q + 1].toTensor(), args[q + 2].toTensor(),
                                 OptionalTensor(args[mask]), args[dropout].toDouble(), args[dropout + 1].toBool());
}
// (query, key, value, dropout_p, is_causal, attn_mask, scale)
bool FusedAttentionOutsideLowering(c10::ArrayRef<c10::IValue> args) { return AttentionOutsideLowering(args, 0, 3, 5); }
// (grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale)
bool FusedAttentionBackwardOutsideLowering(c10::ArrayRef<c10::IValue> args) {
  return AttentionOutsideLowering(args, 1, 6, 8);
}

std::vector<int> BatchNormRunningStats(c10::ArrayRef<c10::IValue> args) {
  bool training = args[5].toBool();
  bool has_stats = args[3].isTensor() && args[3].toTensor().defined() && args[4].isTensor() &&
                   args[4].toTensor().defined();
  if (training && has_stats) return {3, 4};
  return {};
}

struct OpDecl {
  const char* name;
  ShapeRule shape_rule = nullptr;
  FallbackRule needs_fallback = nullptr;
  WrittenArgsRule written_args = nullptr;
  unsigned flags = 0;  // OpFlag bits
  const char* inplace = nullptr;  // the in-place overload that records this op (OpInfo::inplace)
};

const OpDecl kOps[] = {
#define TXLA_OP_DECL(id, name, shape_rule, needs_fallback, written_args, flags, inplace) \
  {name, shape_rule, needs_fallback, written_args, flags, inplace},
    TXLA_OP_ROWS(TXLA_OP_DECL)
#undef TXLA_OP_DECL
};

struct Table {
  std::vector<OpInfo> ops;
  std::unordered_map<std::string, const OpInfo*> by_name;
  Table() {
    ops.reserve(sizeof(kOps) / sizeof(kOps[0]));
    for (const OpDecl& decl : kOps) {
      OpInfo info;
      info.name = decl.name;
      info.shape_rule = decl.shape_rule;
      info.needs_fallback = decl.needs_fallback;
      info.written_args = decl.written_args;
      info.flags = decl.flags;
      if (decl.inplace) info.inplace = decl.inplace;
      info.name_hash = HashString(info.name);
      info.index = ops.size();
      ops.push_back(std::move(info));
    }
    for (const OpInfo& info : ops) by_name.emplace(info.name, &info);
    struct ForeachDecl {
      const char* name;
      const char* element;
    };
    const ForeachDecl foreach_rows[] = {
#define TXLA_FOREACH_DECL(V, id, name, element) {name, op::element},
        TXLA_FOREACH_ROWS(TXLA_FOREACH_DECL, _)
#undef TXLA_FOREACH_DECL
    };
    for (const ForeachDecl& decl : foreach_rows) {
      OpInfo& info = ops[by_name.at(decl.name)->index];
      info.element = by_name.at(decl.element);
      // The element's scalars are the foreach op's: constants of the graph or parameters.
      info.flags |= info.element->flags & (kConstantScalars | kScalarKindOnly);
    }
  }
};

const Table& GetTable() {
  static const Table* table = new Table();
  return *table;
}

}  // namespace

const c10::OperatorHandle& OpInfo::handle() const {
  if (!handle_) {
    auto dot = name.find('.');
    std::string base = name.substr(0, dot);
    std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
    handle_ = c10::Dispatcher::singleton().findSchemaOrThrow(base.c_str(), overload.c_str());
  }
  return *handle_;
}

const std::vector<OpInfo>& OpTable() { return GetTable().ops; }

const OpInfo* FindOp(const std::string& qualified_name) {
  const auto& by_name = GetTable().by_name;
  auto it = by_name.find(qualified_name);
  return it == by_name.end() ? nullptr : it->second;
}

const std::string* ShardingAnnotation(const Value& value) {
  static const OpInfo* annotation = FindOp(op::txla_custom_sharding);
  const Node& node = *value.node;
  if (node.kind() != NodeKind::kOp || node.op() != annotation) return nullptr;
  return &node.args().at(1).value.toStringRef();
}

}  // namespace txla::ir
