#include "graph/interpreter.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <unordered_map>

#include "ir/op_names.h"
#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "runtime/collectives.h"
#include "tensor/bridge.h"

namespace txla::graph {
namespace {

struct Instruction {
  std::string name;
  const ir::OpInfo* op = nullptr;  // nullptr: a constant
  std::vector<ir::Arg> args;
  std::vector<int> operand_slots;
  std::vector<int> output_slots;
  std::vector<ir::Shape> shapes;
  std::vector<int> release;  // slots whose last use is this instruction
  c10::Scalar constant;
  c10::ScalarType constant_dtype = c10::kFloat;
};

class InterpreterProgram final : public runtime::Executable {
 public:
  explicit InterpreterProgram(const GraphCut& cut);
  std::vector<runtime::BufferPtr> Execute(const std::vector<runtime::BufferPtr>& parameters,
                                          int device) override;
  std::string kind() const override { return "interpreter"; }

 private:
  size_t num_parameters_ = 0;
  int num_slots_ = 0;
  std::vector<Instruction> program_;
  std::vector<int> output_slots_;
  std::vector<c10::ScalarType> output_dtypes_;  // the roots' PyTorch dtypes
};

// The instruction that replays `node` (a constant or an op) from `operand_slots` into consecutive
// slots starting at `*next_slot`.
Instruction MakeInstruction(const ir::Node& node, std::vector<int> operand_slots, int* next_slot) {
  Instruction instr;
  instr.name = node.OpName();
  if (node.kind() == ir::NodeKind::kConstant) {
    instr.constant = node.constant();
    instr.constant_dtype = node.shape().dtype;
  } else {
    instr.op = node.op();
    instr.args = node.args();
    instr.operand_slots = std::move(operand_slots);
  }
  instr.shapes = node.shapes();
  for (size_t i = 0; i < node.shapes().size(); ++i) instr.output_slots.push_back((*next_slot)++);
  return instr;
}

// Plain CPU kernels: no autograd recording, no functionalization.
struct CpuReplayScope {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  c10::impl::ExcludeDispatchKeyGuard no_functionalize{c10::DispatchKey::Functionalize};
};

InterpreterProgram::InterpreterProgram(const GraphCut& cut) {
  num_parameters_ = cut.parameters.size();
  num_slots_ = static_cast<int>(num_parameters_);
  std::unordered_map<const ir::Node*, int> first_slot;  // a node's outputs take consecutive slots
  size_t data_seen = 0;
  for (const ir::Node* node : cut.nodes) {
    if (node->kind() == ir::NodeKind::kDeviceData) {
      first_slot[node] = static_cast<int>(data_seen++);
      continue;
    }
    std::vector<int> operand_slots;
    for (const ir::Value& v : node->operands())
      operand_slots.push_back(first_slot.at(v.node.get()) + static_cast<int>(v.index));
    first_slot[node] = num_slots_;
    program_.push_back(MakeInstruction(*node, std::move(operand_slots), &num_slots_));
  }
  for (const ir::Value& root : cut.roots) {
    output_slots_.push_back(first_slot.at(root.node.get()) + static_cast<int>(root.index));
    output_dtypes_.push_back(root.shape().dtype);
  }

  // Free each intermediate after its last use, so peak memory follows the live set.
  std::vector<int> last_use(num_slots_, -1);
  for (size_t i = 0; i < program_.size(); ++i)
    for (int s : program_[i].operand_slots) last_use[s] = static_cast<int>(i);
  for (int s : output_slots_) last_use[s] = -2;  // never released
  for (int s = 0; s < num_slots_; ++s)
    if (last_use[s] >= 0) program_[last_use[s]].release.push_back(s);
}

// Ops without a Generator argument draw from the default generator in ATen. Replaying them must
// not reseed that shared generator (another thread may be tracing and drawing from it), so each is
// replayed as its ATen kernel does, drawing from a private generator seeded with the node's seed.
void ReplayWithPrivateGenerator(const Instruction& instr, torch::jit::Stack& stack, uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  TORCH_CHECK(instr.name == ir::op::aten_native_dropout, "the interpreter has no replay of ", instr.name,
              " with a private generator");
  // native_dropout(input, p, train?) -> (output, mask), as ATen's CPU kernel computes it.
  at::Tensor input = stack[0].toTensor();
  double p = stack[1].toDouble();
  bool train = stack[2].isNone() || stack[2].toBool();
  stack.clear();
  if (input.numel() == 0) {
    stack.emplace_back(input);
    stack.emplace_back(at::empty_like(input, input.options().dtype(at::kBool)));
    return;
  }
  if (!train) {
    stack.emplace_back(input.clone());
    stack.emplace_back(at::ones_like(input, input.options().dtype(at::kBool)));
    return;
  }
  double keep = 1. - p;
  double scale = keep == 0 ? 0. : 1. / keep;
  at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool));
  mask.bernoulli_(keep, generator);
  stack.emplace_back(input.mul(mask).mul_(scale));
  stack.emplace_back(mask);
}

void RunInstruction(const Instruction& instr, std::vector<at::Tensor>& slots) {
  if (instr.op == nullptr) {
    slots[instr.output_slots[0]] = at::scalar_tensor(instr.constant,
                                                     at::TensorOptions().dtype(instr.constant_dtype));
    return;
  }
  auto operand = [&](uint32_t i) -> const at::Tensor& { return slots[instr.operand_slots[i]]; };
  torch::jit::Stack stack;
  stack.reserve(instr.args.size());
  for (const ir::Arg& a : instr.args) {
    switch (a.kind) {
      case ir::Arg::Kind::kConst:
        stack.emplace_back(a.value);
        break;
      case ir::Arg::Kind::kTensor:
        if (a.wrapped_number) {
          at::Tensor wrapped = operand(a.operand).clone();
          wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
          stack.emplace_back(std::move(wrapped));
        } else {
          stack.emplace_back(operand(a.operand));
        }
        break;
      case ir::Arg::Kind::kTensorList: {
        c10::List<at::Tensor> list;
        list.reserve(a.count);
        for (uint32_t i = 0; i < a.count; ++i) list.push_back(operand(a.operand + i));
        stack.emplace_back(std::move(list));
        break;
      }
      case ir::Arg::Kind::kOptionalTensorList: {
        c10::List<c10::optional<at::Tensor>> list;
        uint32_t next = a.operand;
        for (bool present : a.present)
          list.push_back(present ? c10::optional<at::Tensor>(operand(next++)) : c10::nullopt);
        stack.emplace_back(std::move(list));
        break;
      }
      case ir::Arg::Kind::kScalar:
        stack.emplace_back(operand(a.operand).item());
        break;
      case ir::Arg::Kind::kScalarList: {
        c10::impl::GenericList list(c10::NumberType::get());
        list.reserve(a.count);
        for (uint32_t i = 0; i < a.count; ++i) list.push_back(operand(a.operand + i).item());
        stack.emplace_back(std::move(list));
        break;
      }
      case ir::Arg::Kind::kGenerator:
        stack.emplace_back(at::make_generator<at::CPUGeneratorImpl>(
            static_cast<uint64_t>(operand(a.operand).item<int64_t>())));
        break;
    }
  }
  // A trailing seed beyond the schema's arguments: the op would draw from the default generator;
  // it draws from a private one seeded with the node's seed, so re-running the graph redraws the
  // same and the user's generator is untouched.
  c10::optional<uint64_t> default_generator_seed;
  if (stack.size() > instr.op->schema().arguments().size()) {
    default_generator_seed = stack.back().toGenerator().current_seed();
    stack.pop_back();
  }
  // Arguments the op writes without declaring it get private copies, returned as extra outputs.
  std::vector<int> written;
  if (instr.op->written_args) {
    written = instr.op->written_args(stack);
    for (int i : written) stack[i] = stack[i].toTensor().clone();
  }
  std::vector<at::Tensor> written_values;
  for (int i : written) written_values.push_back(stack[i].toTensor());

  if (default_generator_seed) {
    ReplayWithPrivateGenerator(instr, stack, *default_generator_seed);
  } else {
    instr.op->handle().callBoxed(stack);
  }

  std::vector<at::Tensor> results;
  for (c10::IValue& v : stack) {
    if (v.isTensor()) {
      results.push_back(std::move(v).toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) results.push_back(t);
    } else if (v.isNone()) {
      results.emplace_back();
    } else {
      TORCH_INTERNAL_ASSERT(false, instr.name, " returned a non-tensor value");
    }
  }
  for (at::Tensor& t : written_values) results.push_back(std::move(t));
  TORCH_INTERNAL_ASSERT(results.size() == instr.output_slots.size(), instr.name, " returned ",
                        results.size(), " values, the IR expects ", instr.output_slots.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const ir::Shape& expect = instr.shapes[i];
    if (expect.dtype == c10::ScalarType::Undefined) continue;
    TORCH_INTERNAL_ASSERT(results[i].defined() && results[i].scalar_type() == expect.dtype &&
                              results[i].sizes() == c10::IntArrayRef(expect.sizes),
                          instr.name, " output ", i, ": the IR expects ", expect.ToString(),
                          " but the kernel produced ",
                          results[i].defined() ? ir::Shape(results[i].scalar_type(),
                                                           results[i].sizes()).ToString()
                                               : std::string("undefined"));
    slots[instr.output_slots[i]] = std::move(results[i]);
  }
  for (int s : instr.release) slots[s].reset();
}

std::vector<runtime::BufferPtr> InterpreterProgram::Execute(
    const std::vector<runtime::BufferPtr>& parameters, int device) {
  TORCH_INTERNAL_ASSERT(parameters.size() == num_parameters_);
  TXLA_COUNTER("InterpretedExecution", 1);  // every run; InterpretedGraph counts compiles
  CpuReplayScope cpu;
  runtime::ScopedExecutingDevice executing(device);  // which replica a collective runs for
  std::vector<at::Tensor> slots(num_slots_);
  for (size_t i = 0; i < parameters.size(); ++i) {
    parameters[i]->WaitReady();
    slots[i] = BufferAsTensor(parameters[i]);
  }
  for (const Instruction& instr : program_) {
    try {
      RunInstruction(instr, slots);
    } catch (const c10::Error& e) {
      TORCH_CHECK(false, "while running ", instr.name, " on the xla device: ", e.what_without_backtrace());
    }
  }
  std::vector<runtime::BufferPtr> outputs;
  outputs.reserve(output_slots_.size());
  for (size_t k = 0; k < output_slots_.size(); ++k) {
    int s = output_slots_[k];
    if (static_cast<size_t>(s) < num_parameters_) outputs.push_back(parameters[s]);
    else outputs.push_back(TensorAsBuffer(slots[s], device, output_dtypes_[k]));
  }
  return outputs;
}

}  // namespace

std::shared_ptr<runtime::Executable> BuildInterpreterProgram(const GraphCut& cut) {
  return std::make_shared<InterpreterProgram>(cut);
}

std::vector<at::Tensor> ReplayNode(const ir::Node& node, const std::vector<at::Tensor>& operands) {
  std::vector<int> operand_slots;
  for (size_t i = 0; i < operands.size(); ++i) operand_slots.push_back(static_cast<int>(i));
  int next_slot = static_cast<int>(operands.size());
  Instruction instr = MakeInstruction(node, std::move(operand_slots), &next_slot);
  std::vector<at::Tensor> slots(operands);
  slots.resize(next_slot);
  CpuReplayScope cpu;
  RunInstruction(instr, slots);
  return std::vector<at::Tensor>(slots.begin() + static_cast<int64_t>(operands.size()), slots.end());
}

}  // namespace txla::graph
