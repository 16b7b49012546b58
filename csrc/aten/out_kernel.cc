#include "aten/out_kernel.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include "aten/lazy_kernel.h"
#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "tensor/bridge.h"

namespace txla::aten {
namespace {

// The op-table entry whose arguments are the out= op's arguments without its out ones:
// name.X_out -> name.X, name.out -> name or name.Tensor. nullptr when there is none.
const ir::OpInfo* FunctionalTwin(const c10::OperatorHandle& op) {
  static std::mutex mu;
  static std::unordered_map<const c10::FunctionSchema*, const ir::OpInfo*> twins;
  std::lock_guard<std::mutex> lock(mu);
  auto found = twins.find(&op.schema());
  if (found != twins.end()) return found->second;
  const c10::FunctionSchema& schema = op.schema();
  const std::string& overload = schema.overload_name();
  std::vector<std::string> candidates;
  if (overload == "out") {
    candidates = {schema.name(), schema.name() + ".Tensor"};
  } else if (overload.size() > 4 && overload.compare(overload.size() - 4, 4, "_out") == 0) {
    candidates = {schema.name() + "." + overload.substr(0, overload.size() - 4)};
  }
  const ir::OpInfo* twin = nullptr;
  for (const std::string& name : candidates) {
    const ir::OpInfo* info = ir::FindOp(name);
    if (!info) continue;
    const auto& in = info->schema().arguments();
    size_t outs = 0, k = 0;
    bool same = true;
    for (const c10::Argument& a : schema.arguments()) {
      if (a.is_out()) {
        ++outs;
        continue;
      }
      same = same && k < in.size() && in[k].name() == a.name() && *in[k].type() == *a.type();
      ++k;
    }
    if (same && k == in.size() && outs > 0 && outs == info->schema().returns().size()) {
      twin = info;
      break;
    }
  }
  twins.emplace(&schema, twin);
  return twin;
}

}  // namespace

bool RecordOutVariant(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const ir::OpInfo* twin = FunctionalTwin(op);
  if (!twin) return false;
  const auto& arguments = op.schema().arguments();
  const size_t first = stack->size() - arguments.size();
  torch::jit::Stack functional;
  std::vector<at::Tensor> outs;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& v = (*stack)[first + i];
    if (!arguments[i].is_out()) {
      functional.push_back(v);
    } else if (v.isTensor() && IsXlaTensor(v.toTensor())) {
      outs.push_back(v.toTensor());
    } else {
      return false;
    }
  }
  RecordOp(*twin, twin->handle(), &functional);
  TORCH_INTERNAL_ASSERT(functional.size() == outs.size(), op.schema().name(), ": ", functional.size(),
                        " results for ", outs.size(), " out tensors");
  for (size_t k = 0; k < outs.size(); ++k) {
    const at::Tensor result = functional[k].toTensor();
    if (result.sizes() != outs[k].sizes() || result.scalar_type() != outs[k].scalar_type()) return false;
  }
  for (size_t k = 0; k < outs.size(); ++k)
    GetLazyTensor(outs[k], op.schema().name().c_str())
        ->SetIrValue(GetLazyTensor(functional[k].toTensor(), "out")->GetIrValue());
  TXLA_COUNTER("OutVariantsRecorded", 1);
  torch::jit::drop(*stack, arguments.size());
  for (at::Tensor& out : outs) stack->emplace_back(std::move(out));
  return true;
}

}  // namespace txla::aten
