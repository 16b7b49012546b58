#include "compiler/library/conv2d_onednn.h"

#include "debug/config.h"

#ifdef TXLA_WITH_ONEDNN

#include <dnnl.hpp>

// The OpenMP runtime oneDNN runs on (Debian's libdnnl uses libgomp).
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "compiler/library/conv2d.h"
#include "metrics/metrics.h"

namespace txla::compiler::library {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum class Pass { kForward, kBackwardInput, kBackwardFilter };

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One pass of one geometry: the primitive, and the reorders between our plain layouts and the
// layouts it chose (absent when they coincide).
struct Plan {
  dnnl::primitive primitive;
  // oneDNN's OpenMP kernels split work for the thread count they were created with and wait for
  // every share: a run on a thread whose OpenMP default differs would spin forever.
  int threads = 1;
  // In the primitive's argument order: two inputs, then the output.
  std::array<memory::desc, 3> plain, chosen;
  std::array<std::unique_ptr<dnnl::reorder>, 3> reorders;
  std::array<int, 3> args;
};

struct Descs {
  memory::desc src, weights, dst;  // plain: NCHW, (G)OIHW, NCHW
  memory::desc any_src, any_weights, any_dst;
  memory::dims strides, dilates, pad_l, pad_r;
};

bool MakeDescs(const Conv2dGeometry& g, Descs* d) {
  const memory::dim pr_h = (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1 - g.in_h - g.pad_h;
  const memory::dim pr_w = (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1 - g.in_w - g.pad_w;
  if (pr_h < 0 || pr_w < 0 || g.batch == 0 || g.out_h <= 0 || g.out_w <= 0) return false;
  const auto f32 = memory::data_type::f32;
  memory::dims src{g.batch, g.in_channels, g.in_h, g.in_w}, dst{g.batch, g.out_channels, g.out_h, g.out_w};
  memory::dims weights = g.groups == 1
      ? memory::dims{g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}
      : memory::dims{g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.kernel_h, g.kernel_w};
  d->src = memory::desc(src, f32, tag::nchw);
  d->dst = memory::desc(dst, f32, tag::nchw);
  d->weights = memory::desc(weights, f32, g.groups == 1 ? tag::oihw : tag::goihw);
  d->any_src = memory::desc(src, f32, tag::any);
  d->any_dst = memory::desc(dst, f32, tag::any);
  d->any_weights = memory::desc(weights, f32, tag::any);
  d->strides = {g.stride_h, g.stride_w};
  d->dilates = {g.dilation_h - 1, g.dilation_w - 1};
  d->pad_l = {g.pad_h, g.pad_w};
  d->pad_r = {pr_h, pr_w};
  return true;
}

dnnl::convolution_forward::primitive_desc ForwardDesc(const Descs& d) {
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training,
                                       dnnl::algorithm::convolution_direct, d.any_src,
                                       d.any_weights, d.any_dst, d.strides, d.dilates, d.pad_l,
                                       d.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, Engine());
}

void Finish(Plan* plan) {
  for (int i = 0; i < 3; ++i)
    if (plan->chosen[i] != plan->plain[i])
      plan->reorders[i] = i < 2 ? std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
                                      Engine(), plan->plain[i], Engine(), plan->chosen[i]))
                                : std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
                                      Engine(), plan->chosen[i], Engine(), plan->plain[i]));
}

std::shared_ptr<Plan> MakePlan(Pass pass, const Conv2dGeometry& g) {
  Descs d;
  if (!MakeDescs(g, &d)) return nullptr;
  auto plan = std::make_shared<Plan>();
  auto fwd = ForwardDesc(d);
  switch (pass) {
    case Pass::kForward:
      plan->primitive = dnnl::convolution_forward(fwd);
      plan->plain = {d.src, d.weights, d.dst};
      plan->chosen = {fwd.src_desc(), fwd.weights_desc(), fwd.dst_desc()};
      plan->args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
      break;
    case Pass::kBackwardInput: {
      dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.any_src,
                                                 d.any_weights, d.any_dst, d.strides, d.dilates,
                                                 d.pad_l, d.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(desc, Engine(), fwd);
      plan->primitive = dnnl::convolution_backward_data(pd);
      plan->plain = {d.dst, d.weights, d.src};
      plan->chosen = {pd.diff_dst_desc(), pd.weights_desc(), pd.diff_src_desc()};
      plan->args = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
      break;
    }
    case Pass::kBackwardFilter: {
      dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct,
                                                    d.any_src, d.any_weights, d.any_dst, d.strides,
                                                    d.dilates, d.pad_l, d.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, Engine(), fwd);
      plan->primitive = dnnl::convolution_backward_weights(pd);
      plan->plain = {d.dst, d.src, d.weights};
      plan->chosen = {pd.diff_dst_desc(), pd.src_desc(), pd.diff_weights_desc()};
      plan->args = {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS};
      break;
    }
  }
  Finish(plan.get());
  plan->threads = omp_get_max_threads();
  return plan;
}

// Plans by pass and geometry; a geometry oneDNN rejects is remembered as null.
std::shared_ptr<Plan> PlanFor(Pass pass, const int64_t* geometry) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  std::vector<int64_t> key(geometry, geometry + kConv2dGeometryFields);
  key.push_back(static_cast<int64_t>(pass));
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  std::shared_ptr<Plan> plan;
  try {
    plan = MakePlan(pass, Conv2dGeometryFrom(geometry));
  } catch (const dnnl::error&) {
    plan = nullptr;  // a geometry oneDNN has no implementation for: im2col runs it
  }
  plans.emplace(std::move(key), plan);
  return plan;
}

bool Enabled() { return debug::GetConfig().conv_library == "onednn"; }

bool Run(Pass pass, const float* in0, const float* in1, float* out, const int64_t* geometry) {
  if (!Enabled()) return false;
  std::shared_ptr<Plan> plan = PlanFor(pass, geometry);
  if (!plan) return false;
  TXLA_COUNTER("OneDnnConvolution", 1);
  // One convolution at a time: several devices' execution threads (threaded DataParallel) would
  // otherwise each start an OpenMP team on the same cores.
  static std::mutex run_mu;
  std::lock_guard<std::mutex> lock(run_mu);
  if (omp_get_max_threads() != plan->threads) omp_set_num_threads(plan->threads);
  dnnl::stream stream(Engine());
  std::array<void*, 3> user{const_cast<float*>(in0), const_cast<float*>(in1), out};
  std::array<memory, 3> args;
  std::vector<std::vector<float>> scratch;
  for (int i = 0; i < 3; ++i) {
    memory plain(plan->plain[i], Engine(), user[i]);
    if (!plan->reorders[i]) {
      args[i] = plain;
      continue;
    }
    scratch.emplace_back(plan->chosen[i].get_size() / sizeof(float));
    args[i] = memory(plan->chosen[i], Engine(), scratch.back().data());
    if (i < 2) plan->reorders[i]->execute(stream, plain, args[i]);
  }
  plan->primitive.execute(stream, {{plan->args[0], args[0]}, {plan->args[1], args[1]}, {plan->args[2], args[2]}});
  if (plan->reorders[2]) {
    memory plain_out(plan->plain[2], Engine(), out);
    plan->reorders[2]->execute(stream, args[2], plain_out);
  }
  stream.wait();
  return true;
}

}  // namespace

bool OneDnnAvailable() { return true; }

bool OneDnnConv2dForward(const float* x, const float* w, float* y, const int64_t* geometry) {
  return Run(Pass::kForward, x, w, y, geometry);
}
bool OneDnnConv2dBackwardInput(const float* dy, const float* w, float* dx, const int64_t* geometry) {
  return Run(Pass::kBackwardInput, dy, w, dx, geometry);
}
bool OneDnnConv2dBackwardFilter(const float* dy, const float* x, float* dw, const int64_t* geometry) {
  return Run(Pass::kBackwardFilter, dy, x, dw, geometry);
}

}  // namespace txla::compiler::library

#else  // built without oneDNN

namespace txla::compiler::library {
bool OneDnnAvailable() { return false; }
bool OneDnnConv2dForward(const float*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardInput(const float*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardFilter(const float*, const float*, float*, const int64_t*) { return false; }
}  // namespace txla::compiler::library

#endif
