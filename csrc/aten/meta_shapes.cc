#include "aten/meta_shapes.h"

#include <torch/version.h>

#include <ATen/Functions.h>
#include <ATen/core/stack.h>

#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include "metrics/metrics.h"

namespace txla::aten {
namespace {

ArgClass Classify(const c10::TypePtr& type) {
  c10::TypePtr t = type;
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  if (t->kind() == c10::TypeKind::TensorType) return ArgClass::kTensor;
  if (t->kind() == c10::TypeKind::NumberType) return ArgClass::kScalar;
  if (t->kind() == c10::TypeKind::GeneratorType) return ArgClass::kGenerator;
  if (auto list = t->cast<c10::ListType>()) {
    c10::TypePtr e = list->getElementType();
    if (e->kind() == c10::TypeKind::TensorType) return ArgClass::kTensorList;
    if (e->kind() == c10::TypeKind::NumberType) return ArgClass::kScalarList;
    if (auto opt = e->cast<c10::OptionalType>()) {
      if (opt->getElementType()->kind() == c10::TypeKind::TensorType)
        return ArgClass::kOptionalTensorList;
    }
  }
  return ArgClass::kOther;
}

at::Tensor ToMeta(const at::Tensor& t) {
  if (!t.defined()) return t;
#if TORCH_VERSION_MAJOR >= 2
  // A Python number (a CPU wrapped number) goes to the Meta kernel as it is, as in eager: torch
  // 2.x's Python meta kernels accept CPU scalars beside meta tensors, and refuse wrapped numbers
  // on any other device.
  if (t.unsafeGetTensorImpl()->is_wrapped_number() && t.device().is_cpu()) return t;
#endif
  at::Tensor m = at::empty(t.sizes(), at::TensorOptions().dtype(t.scalar_type()).device(c10::kMeta));
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) m.unsafeGetTensorImpl()->set_wrapped_number(true);
  return m;
}

void CollectShapes(const c10::IValue& v, std::vector<ir::Shape>* shapes) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    shapes->push_back(t.defined() ? ir::Shape(t.scalar_type(), t.sizes())
                                  : ir::Shape(c10::ScalarType::Undefined, {}));
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) shapes->emplace_back(t.scalar_type(), t.sizes());
  } else if (v.isNone()) {
    shapes->emplace_back(c10::ScalarType::Undefined, c10::IntArrayRef{});
  } else {
    TORCH_INTERNAL_ASSERT(false, "ops returning non-tensors cannot be recorded lazily");
  }
}

// Runs the op's Meta kernel on stand-ins of the arguments: shapes, dtypes and eager's checks.
std::vector<ir::Shape> MetaShapes(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args,
                                  const std::vector<ArgClass>& classes) {
  torch::jit::Stack meta;
  meta.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = args[i];
    switch (classes[i]) {
      case ArgClass::kTensor:
        meta.emplace_back(v.isTensor() ? c10::IValue(ToMeta(v.toTensor())) : v);
        break;
      case ArgClass::kTensorList: {
        c10::List<at::Tensor> list;
        for (const c10::IValue& e : v.toListRef()) list.push_back(ToMeta(e.toTensor()));
        meta.emplace_back(std::move(list));
        break;
      }
      case ArgClass::kOptionalTensorList: {
        c10::List<c10::optional<at::Tensor>> list;
        for (const c10::IValue& e : v.toListRef())
          list.push_back(e.isTensor() ? c10::optional<at::Tensor>(ToMeta(e.toTensor()))
                                      : c10::nullopt);
        meta.emplace_back(std::move(list));
        break;
      }
      case ArgClass::kGenerator:
        meta.emplace_back();
        break;
      default:
        meta.emplace_back(v.isDevice() ? c10::IValue(c10::Device(c10::kMeta)) : v);
    }
  }
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op.callBoxed(meta);
  }
  std::vector<ir::Shape> shapes;
  for (const c10::IValue& v : meta) CollectShapes(v, &shapes);
  return shapes;
}

// A key for the Meta kernel's result: the op and every argument's metadata (dtype and sizes of
// tensors, exact values of everything else). A Meta kernel sees nothing more.
void AppendKey(const c10::IValue& v, std::string* key) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) {
      *key += "U;";
      return;
    }
    *key += 'T';
    *key += std::to_string(static_cast<int>(t.scalar_type()));
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) *key += 'w';
    for (int64_t d : t.sizes()) {
      *key += ',';
      *key += std::to_string(d);
    }
    *key += ';';
  } else if (v.isList()) {
    *key += "[";
    for (const c10::IValue& e : v.toListRef()) AppendKey(e, key);
    *key += "]";
  } else if (v.isDouble()) {
    const double d = v.toDouble();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    *key += "d" + std::to_string(bits) + ";";
  } else if (v.isInt()) {
    *key += "i" + std::to_string(v.toInt()) + ";";
  } else if (v.isBool()) {
    *key += v.toBool() ? "t;" : "f;";
  } else if (v.isNone()) {
    *key += "N;";
  } else if (v.isString()) {
    *key += "s" + v.toStringRef() + ";";
  } else if (v.isDevice()) {
    *key += "D;";  // the Meta kernel sees the meta device whatever it was
  } else if (v.isGenerator()) {
    *key += "G;";
  } else {
    std::ostringstream repr;
    repr << v.tagKind() << ":" << v;
    *key += repr.str() + ";";
  }
}

}  // namespace

const std::vector<ArgClass>& ArgClasses(const c10::OperatorHandle& op) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<const void*, std::vector<ArgClass>>();
  const c10::FunctionSchema& schema = op.schema();
  std::lock_guard<std::mutex> lock(mu);
  auto& classes = (*cache)[&schema];
  if (classes.empty() && !schema.arguments().empty()) {
    for (const c10::Argument& a : schema.arguments()) classes.push_back(Classify(a.type()));
  }
  return classes;
}

// torch 2.x runs many Meta kernels in Python (torch._meta_registrations, decompositions): a
// traced training step would call Python for every op of every step. The result depends only on
// the key above, so each op and argument signature runs its Meta kernel once; errors are not
// cached (a bad call raises every time).
// Ops whose Meta kernel never looks at a Scalar's value (ir::kScalarKindOnly) are cached per
// Scalar kind.
std::vector<ir::Shape> CachedMetaShapes(const ir::OpInfo& info, const c10::OperatorHandle& op,
                                        c10::ArrayRef<c10::IValue> args, const std::vector<ArgClass>& classes) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::vector<ir::Shape>> cache;
  constexpr size_t kMaxEntries = 1 << 16;
  // Built in a buffer each tracing thread keeps (a step looks up a key per recorded op; a fresh
  // string would grow through several allocations each time).
  thread_local std::string key;
  key.clear();
  key += op.schema().name();
  key += '.';
  key += op.schema().overload_name();
  key += '|';
  const bool scalar_kind_only = info.Has(ir::kScalarKindOnly);
  for (size_t i = 0; i < args.size(); ++i) {
    if (scalar_kind_only && classes[i] == ArgClass::kScalar && args[i].isScalar()) {
      const c10::Scalar s = args[i].toScalar();
      key += s.isBoolean() ? "sb;" : s.isIntegral(false) ? "si;" : s.isComplex() ? "sc;" : "sf;";
    } else {
      AppendKey(args[i], &key);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  TXLA_COUNTER("MetaKernelShapes", 1);  // slow (often Python): a C++ shape rule avoids it
  std::string owned = key;  // a Meta kernel in Python may trace another op on this thread
  std::vector<ir::Shape> shapes = MetaShapes(op, args, classes);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxEntries) cache.clear();  // a program that never repeats a signature
  cache.emplace(std::move(owned), shapes);
  return shapes;
}

}  // namespace txla::aten
