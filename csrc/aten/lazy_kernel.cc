#include "aten/lazy_kernel.h"
#include "aten/device_rng.h"

#include <torch/version.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "aten/cpu_fallback.h"
#include "aten/foreach_args.h"
#include "aten/memory_bound.h"
#include "aten/meta_shapes.h"
#include "debug/config.h"
#include "debug/frames.h"
#include "graph/debug_analysis.h"
#include "graph/eager_mode.h"
#include "hlo/shape.h"
#include "metrics/metrics.h"
#include "metrics/trace.h"
#include "runtime/scalar_cache.h"
#include "tensor/bridge.h"

namespace txla::aten {
namespace {

bool SpecialScalarsEnabled() {
  return !debug::GetConfig().no_special_scalars;
}

bool IsSpecialScalar(const c10::Scalar& s) {
  if (!SpecialScalarsEnabled()) return false;
  if (s.isBoolean()) return true;
  if (s.isIntegral(/*includeBool=*/false)) return s.toLong() == 0 || s.toLong() == 1;
  if (s.isFloatingPoint()) return s.toDouble() == 0.0 || s.toDouble() == 1.0;
  return false;
}

// The same kind and bits (so 0.0 and -0.0, or 1 and 1.0, differ; NaN matches its own bits).
bool SameScalar(const c10::Scalar& a, const c10::Scalar& b) {
  if (a.type() != b.type()) return false;
  if (a.isFloatingPoint()) {
    const double x = a.toDouble(), y = b.toDouble();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  if (a.isBoolean()) return a.toBool() == b.toBool();
  if (a.isIntegral(/*includeBool=*/false)) return a.toLong() == b.toLong();
  return false;
}

c10::ScalarType ScalarTypeOf(const c10::Scalar& s) {
  if (s.isBoolean()) return c10::kBool;
  if (s.isIntegral(false)) return c10::kLong;
  TORCH_CHECK(!s.isComplex(), "complex scalars are not supported on the xla device");
  return c10::kDouble;
}

}  // namespace

thread_local SeedRecording* SeedRecording::active = nullptr;

SeedRecording::SeedRecording() : outer_(active) { active = this; }
SeedRecording::~SeedRecording() { active = outer_; }

thread_local OpLog* OpLog::active = nullptr;

OpLog::OpLog() : outer_(active) { active = this; }
OpLog::~OpLog() { active = outer_; }

void OpLog::Note(const ir::OpInfo& info, const ir::Shape& result) {
  if (active == nullptr) return;
  std::string name = info.name.substr(0, info.name.find('.'));  // aten::add.Tensor -> aten::add
  std::string shape = hlo::Shape::Array(ir::ToElementType(result.dtype), result.sizes).ToString();  // with layout
  active->ops_.push_back("[] " + name + ", xla_shape=" + shape + ", dynamic_dims: ()");
}

namespace {

// A seed is drawn fresh for every random op and noted by address (SeedRecording): it gets a
// buffer of its own; other values share the device's cached buffer of that value.
enum class ScalarUse { kValue, kSeed };

// A 0-dim host value entering the graph: a constant when it is 0 or 1, else a parameter, so a
// changing learning rate does not change the graph.
ir::Value ScalarValue(const c10::Scalar& s, c10::ScalarType dtype, int device,
                      bool allow_constant, ScalarUse use = ScalarUse::kValue) {
  if (allow_constant && IsSpecialScalar(s)) return ir::Value{ir::Node::Constant(s, dtype), 0};
  // Written straight into a device buffer: no host tensor, no dispatch (an optimizer step passes
  // a few scalars to every one of its hundreds of ops). Scalar::to checks the range as
  // at::scalar_tensor would.
  const runtime::ElementType type = ir::ToElementType(dtype);
  c10::ScalarType storage = ir::StorageScalarType(dtype);  // the numeric modes store some dtypes narrower
  uint64_t bits = 0;
  AT_DISPATCH_ALL_TYPES_AND3(c10::kBool, c10::kHalf, c10::kBFloat16, storage, "ScalarValue", [&] {
    static_assert(sizeof(scalar_t) <= sizeof(bits), "a scalar wider than 8 bytes");
    scalar_t value = s.to<scalar_t>();
    std::memcpy(&bits, &value, sizeof(value));
  });
  runtime::BufferPtr buffer;
  if (use == ScalarUse::kSeed) {
    buffer = runtime::OwnScalarBuffer(type, bits, device);
  } else {
    // A value not cached yet is written to the device: a transfer, as PyTorch/XLA counts it
    // (TransferToDeviceTime, OutboundData); the next uses of the value share its buffer.
    runtime::ScalarWrite write;
    buffer = runtime::ScalarBuffer(type, bits, device, &write);
    if (write.made) {
      static metrics::Metric* const transfers = metrics::GetMetric("TransferToDeviceTime");
      transfers->AddSample(static_cast<double>(write.ns));
      CountTransferToDevice(buffer->size_bytes());
    }
  }
  return ir::Value{ir::Node::DeviceData(std::move(buffer), ir::Shape(dtype, {})), 0};
}

int FindDevice(c10::ArrayRef<c10::IValue> args) {
  for (const c10::IValue& v : args) {
    if (v.isTensor() && IsXlaTensor(v.toTensor())) return DeviceOrdinal(v.toTensor().device());
    if (v.isList()) {
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor() && IsXlaTensor(e.toTensor())) return DeviceOrdinal(e.toTensor().device());
    }
    if (v.isDevice() && v.toDevice().type() == c10::DeviceType::XLA)
      return DeviceOrdinal(v.toDevice());
  }
  return -1;
}

// Builds a node's operands and argument templates.
class NodeBuilder {
 public:
  NodeBuilder(const c10::FunctionSchema& schema, int device, bool constant_scalars, bool host_indices)
      : schema_(schema), device_(device), constant_scalars_(constant_scalars), host_indices_(host_indices) {
    // An Arg holds an IValue and a vector: growing the lists one argument at a time moved them
    // again at every doubling (~3% of a small model's trace time in malloc and moves).
    const size_t n = schema.arguments().size() + 1;  // + a default generator's seed
    args_.reserve(n);
    operands_.reserve(n);
  }

  void AddTensor(size_t i, const at::Tensor& t) {
    ir::Arg arg;
    if (!t.defined()) {
      args_.push_back(std::move(arg));  // kConst None
      return;
    }
    arg.kind = ir::Arg::Kind::kTensor;
    arg.operand = static_cast<uint32_t>(operands_.size());
    operands_.push_back(ValueFor(i, t, &arg.wrapped_number));
    args_.push_back(std::move(arg));
  }

  void AddTensorList(size_t i, const c10::IValue& v) {
    ir::Arg arg;
    arg.kind = ir::Arg::Kind::kTensorList;
    arg.operand = static_cast<uint32_t>(operands_.size());
    for (const c10::IValue& e : v.toListRef()) {
      bool wrapped = false;
      operands_.push_back(ValueFor(i, e.toTensor(), &wrapped));
      ++arg.count;
    }
    args_.push_back(std::move(arg));
  }

  void AddOptionalTensorList(size_t i, const c10::IValue& v) {
    ir::Arg arg;
    arg.kind = ir::Arg::Kind::kOptionalTensorList;
    arg.operand = static_cast<uint32_t>(operands_.size());
    for (const c10::IValue& e : v.toListRef()) {
      bool present = e.isTensor() && e.toTensor().defined();
      arg.present.push_back(present);
      if (present) {
        const at::Tensor& t = e.toTensor();
        bool wrapped = false;
        operands_.push_back(host_indices_ && t.device().is_cpu() ? HostIndex(t) : ValueFor(i, t, &wrapped));
        ++arg.count;
      }
    }
    args_.push_back(std::move(arg));
  }

  void AddScalar(const c10::IValue& v) {
    ir::Arg arg;
    if (v.isNone() || constant_scalars_ || IsSpecialScalar(v.toScalar())) {
      arg.value = v;
    } else {
      c10::Scalar s = v.toScalar();
      arg.kind = ir::Arg::Kind::kScalar;
      arg.operand = static_cast<uint32_t>(operands_.size());
      operands_.push_back(ScalarValue(s, ScalarTypeOf(s), device_, /*allow_constant=*/false));
    }
    args_.push_back(std::move(arg));
  }

  // Each entry a parameter as AddScalar makes it, or a constant when it is 0 or 1 (a foreach
  // op's per-tensor factors: Adam's bias corrections change every step, the graph does not).
  void AddScalarList(const c10::IValue& v) {
    if (constant_scalars_) {
      AddOther(v);
      return;
    }
    ir::Arg arg;
    arg.kind = ir::Arg::Kind::kScalarList;
    arg.operand = static_cast<uint32_t>(operands_.size());
    c10::Scalar previous;
    for (const c10::IValue& e : v.toListRef()) {
      c10::Scalar s = e.toScalar();
      // An entry equal to the one before shares its parameter (Adam's step sizes are one value
      // per parameter group): the device's cached buffer of a value is one parameter anyway.
      if (arg.count > 0 && SameScalar(s, previous)) {
        operands_.push_back(operands_.back());
      } else {
        operands_.push_back(ScalarValue(s, ScalarTypeOf(s), device_, /*allow_constant=*/true));
      }
      previous = s;
      ++arg.count;
    }
    args_.push_back(std::move(arg));
  }

  // Random ops draw a seed now, from the generator given or the default CPU one (so
  // torch.manual_seed governs them): re-running the graph reproduces the same numbers.
  void AddGenerator(const c10::IValue& v) {
    int64_t seed = v.isNone() ? DrawDeviceSeed(device_) : DrawSeed(v.toGenerator());
    ir::Arg arg;
    arg.kind = ir::Arg::Kind::kGenerator;
    arg.operand = static_cast<uint32_t>(operands_.size());
    operands_.push_back(ScalarValue(seed, c10::kLong, device_, /*allow_constant=*/false, ScalarUse::kSeed));
    SeedRecording::Note(operands_.back().node->data());
    args_.push_back(std::move(arg));
  }

  void AddOther(const c10::IValue& v) {
    ir::Arg arg;
    // The device is where the node lives, not part of what it computes; replayed on CPU.
    if (!v.isDevice()) {
      ir::HashIValue(v);  // rejects values the IR cannot carry, at the op
      arg.value = v;
    }
    args_.push_back(std::move(arg));
  }

  std::vector<ir::Value> TakeOperands() { return std::move(operands_); }
  std::vector<ir::Arg> TakeArgs() { return std::move(args_); }

 private:
  ir::Value ValueFor(size_t i, const at::Tensor& t, bool* wrapped) {
    if (LazyTensorPtr lt = TryGetLazyTensor(t)) {
      TORCH_CHECK(lt->device() == device_,
                  "Expected all tensors to be on the same device, but found at least two "
                  "devices, xla:", device_, " and xla:", lt->device(), "! (argument '",
                  schema_.arguments()[i].name(), "' of ", schema_.name(), ")");
      return lt->GetIrValue();
    }
    TORCH_CHECK(t.dim() == 0 && t.device().is_cpu(),
                "Input tensor is not an XLA tensor: ", TensorTypeName(t), " (argument '",
                schema_.arguments()[i].name(), "' of ", schema_.name(), ")");
    *wrapped = t.unsafeGetTensorImpl()->is_wrapped_number();
    return ScalarValue(t.item(), t.scalar_type(), device_, /*allow_constant=*/true);
  }

  // An index tensor given on the CPU (ir::kHostIndices), copied to the device as graph data.
  ir::Value HostIndex(const at::Tensor& t) {
    return ir::Value{ir::Node::DeviceData(TransferToDevice(t, device_), ir::Shape(t.scalar_type(), t.sizes())), 0};
  }

  const c10::FunctionSchema& schema_;
  int device_;
  bool constant_scalars_;
  bool host_indices_;
  std::vector<ir::Value> operands_;
  std::vector<ir::Arg> args_;
};

}  // namespace

at::Tensor ShareValue(const LazyTensorPtr& tensor) {
  if (!tensor->pending() && tensor->data())
    return MakeXlaTensor(LazyTensor::FromData(tensor->data(), tensor->dtype(), tensor->device()));
  return MakeXlaTensor(LazyTensor::FromValue(tensor->GetIrValue(), tensor->device()));
}

// PyTorch/XLA counts every op its backend records, by name without namespace or overload
// (`xla::add` for aten::add.Tensor): scripts and tests read these counters to see what ran on the
// device. One counter per row, looked up once.
metrics::Counter* OpCounter(const ir::OpInfo& info) {
  static std::vector<std::atomic<metrics::Counter*>> counters(ir::OpTable().size());
  std::atomic<metrics::Counter*>& slot = counters.at(info.index);
  metrics::Counter* counter = slot.load(std::memory_order_acquire);
  if (counter == nullptr) {
    std::string name = info.name.substr(info.name.find("::") + 2);
    name = "xla::" + name.substr(0, name.find('.'));
    counter = metrics::GetCounter(name);
    slot.store(counter, std::memory_order_release);
  }
  return counter;
}

// The argument classes of the op a row records, found once per row without the shared cache's
// lock (every traced op asks). A row recorded through another handle than the one first seen
// (an out= twin) goes to the shared cache.
const std::vector<ArgClass>& RowArgClasses(const ir::OpInfo& info, const c10::OperatorHandle& op) {
  struct Entry {
    const c10::FunctionSchema* schema;
    const std::vector<ArgClass>* classes;  // held by ArgClasses' cache for the process's life
  };
  static std::vector<std::atomic<const Entry*>> slots(ir::OpTable().size());
  static std::mutex mu;
  static std::deque<Entry> entries;  // stable addresses as it grows
  std::atomic<const Entry*>& slot = slots.at(info.index);
  const c10::FunctionSchema* schema = &op.schema();
  if (const Entry* e = slot.load(std::memory_order_acquire); e != nullptr && e->schema == schema) return *e->classes;
  const std::vector<ArgClass>& classes = ArgClasses(op);
  std::lock_guard<std::mutex> lock(mu);
  if (slot.load(std::memory_order_relaxed) == nullptr) {
    entries.push_back(Entry{schema, &classes});
    slot.store(&entries.back(), std::memory_order_release);
  }
  return classes;
}

namespace {

// The op's result shapes: its shape rule's, else its Meta kernel's.
std::vector<ir::Shape> Shapes(const ir::OpInfo& info, const c10::OperatorHandle& op,
                              c10::ArrayRef<c10::IValue> args, const std::vector<ArgClass>& classes) {
  if (info.shape_rule) {
    if (auto ruled = info.shape_rule(args); ruled && !ruled->empty()) return std::move(*ruled);
  }
  return CachedMetaShapes(info, op, args, classes);
}

// A foreach op's shapes, its element's at each position (with the element's checks), into
// `shapes`; false when a position needs the CPU fallback. Counted as its element ops, as
// PyTorch/XLA counts the per-tensor ops its foreach decomposition records.
bool ForeachShapes(const ir::OpInfo& info, c10::ArrayRef<c10::IValue> args, const std::vector<ArgClass>& classes,
                   std::vector<ir::Shape>* shapes) {
  const ir::OpInfo& element = *info.element;
  const size_t n = ForeachLength(info, args, classes);
  const std::vector<ArgClass>& element_classes = RowArgClasses(element, element.handle());
  std::vector<c10::IValue> element_args;
  shapes->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ElementArguments(info, args, classes, i, &element_args);
    if (element.needs_fallback && element.needs_fallback(element_args)) return false;
    std::vector<ir::Shape> one = Shapes(element, element.handle(), element_args, element_classes);
    TORCH_INTERNAL_ASSERT(one.size() == 1, element.name, " has ", one.size(), " results, not one");
    shapes->push_back(std::move(one.front()));
  }
  OpCounter(element)->Add(n);
  return true;
}

}  // namespace

metrics::Metric* LazyTracingMetric() {
  static metrics::Metric* const metric = metrics::GetMetric("LazyTracing");
  return metric;
}

void RecordOp(const ir::OpInfo& info, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  metrics::TraceSpan span("lazy", schema.name());  // host tracing, on the profiler's timeline
  const metrics::ElapsedSample traced(LazyTracingMetric());
  const size_t num_args = schema.arguments().size();
  c10::ArrayRef<c10::IValue> args(stack->data() + stack->size() - num_args, num_args);
  const std::vector<ArgClass>& classes = RowArgClasses(info, op);
  int device = FindDevice(args);
  TORCH_INTERNAL_ASSERT(device >= 0, schema.name(), " reached the xla kernel without xla inputs");
  if (info.needs_fallback && info.needs_fallback(args)) {
    CpuFallback(op, stack);
    return;
  }
  std::vector<ir::Shape> shapes;
  bool traceable = true;
  try {
    if (info.element) {
      traceable = ForeachShapes(info, args, classes, &shapes);
    } else {
      OpCounter(info)->Add(1);
      shapes = Shapes(info, op, args, classes);
    }
  } catch (const c10::NotImplementedError&) {
    traceable = false;  // no Meta kernel in this PyTorch: still correct, through the CPU
  }
  if (!traceable) {
    CpuFallback(op, stack);
    return;
  }
  std::vector<int> written;
  if (info.written_args) written = info.written_args(args);
  for (int i : written) {
    const at::Tensor& t = args[i].toTensor();
    shapes.emplace_back(t.scalar_type(), t.sizes());
  }
  for (const ir::Shape& s : shapes)
    if (s.dtype != c10::ScalarType::Undefined) ir::ToElementType(s.dtype);  // rejects e.g. complex
  CheckResultsFitInMemory(schema, shapes);

  bool has_tensor_input = false;
  NodeBuilder builder(schema, device, info.Has(ir::kConstantScalars), info.Has(ir::kHostIndices));
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& v = args[i];
    switch (classes[i]) {
      case ArgClass::kTensor:
        if (v.isTensor()) {
          has_tensor_input = true;
          builder.AddTensor(i, v.toTensor());
        } else {
          builder.AddOther(v);
        }
        break;
      case ArgClass::kTensorList:
        has_tensor_input = true;
        builder.AddTensorList(i, v);
        break;
      case ArgClass::kOptionalTensorList:
        has_tensor_input = true;
        builder.AddOptionalTensorList(i, v);
        break;
      case ArgClass::kScalar:
        builder.AddScalar(v);
        break;
      case ArgClass::kScalarList:
        builder.AddScalarList(v);
        break;
      case ArgClass::kGenerator:
        builder.AddGenerator(v);
        break;
      case ArgClass::kOther:
        builder.AddOther(v);
        break;
    }
  }
  if (info.Has(ir::kSeedsDefaultGenerator)) builder.AddGenerator(c10::IValue());
  std::vector<LazyTensorPtr> written_targets;
  for (int i : written) written_targets.push_back(GetLazyTensor(args[i].toTensor(), schema.name().c_str()));

  const size_t num_results = shapes.size() - written.size();
  if (!shapes.empty()) OpLog::Note(info, shapes.front());
  ir::NodePtr node =
      ir::Node::Op(&info, builder.TakeOperands(), builder.TakeArgs(), std::move(shapes));
  const bool ir_debug = debug::IrDebugEnabled();
  if (ir_debug) node->set_frames(debug::CurrentFrames());
  if (ir_debug || graph::analysis::Level() > 0) {  // dumps, HLO metadata and the debugging tool
    debug::Frame user = debug::InnermostUserFrame(debug::CurrentFrameList());
    if (!user.file.empty()) node->set_user_frame(std::move(user));  // none on autograd's threads
  }

  const bool eager = graph::RunsEagerly();
  std::vector<LazyTensorPtr> made;  // the results eager mode computes at once
  auto result = [&](size_t k) -> at::Tensor {
    if (node->shape(k).dtype == c10::ScalarType::Undefined) return at::Tensor();
    LazyTensorPtr lt = LazyTensor::FromValue(ir::Value{node, static_cast<uint32_t>(k)}, device);
    if (eager) made.push_back(lt);
    // A factory (no tensor inputs) is an entry point: its result is handed to the user.
    return has_tensor_input ? MakeXlaTensor(std::move(lt)) : MakeEntryXlaTensor(std::move(lt));
  };
  torch::jit::drop(*stack, num_args);
  const auto& returns = schema.returns();
  if (returns.size() == 1 && returns[0].type()->kind() == c10::TypeKind::ListType) {
    std::vector<at::Tensor> list;
    for (size_t k = 0; k < num_results; ++k) list.push_back(result(k));
    stack->emplace_back(std::move(list));
  } else {
    TORCH_INTERNAL_ASSERT(returns.size() == num_results, schema.name(), ": ", num_results,
                          " shapes for ", returns.size(), " results");
    for (size_t k = 0; k < num_results; ++k) stack->emplace_back(result(k));
  }
  for (size_t j = 0; j < written_targets.size(); ++j)
    written_targets[j]->SetIrValue(ir::Value{node, static_cast<uint32_t>(num_results + j)});
  if (eager) {
    made.insert(made.end(), written_targets.begin(), written_targets.end());
    graph::RunEagerly(made);
  }
}

}  // namespace txla::aten
