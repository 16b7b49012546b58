#include "compiler/library/conv2d_onednn.h"

#include "debug/config.h"

#ifdef TXLA_WITH_ONEDNN

#include <dnnl.hpp>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <vector>

#include "compiler/library/conv2d.h"
#include "compiler/library/onednn.h"
#include "compiler/library/parallel.h"
#include "metrics/metrics.h"
#include "runtime/buffer.h"

namespace txla::compiler::library {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum class Pass { kForward, kBackwardInput, kBackwardFilter };

// The element type of a pass's two operands; its result is f32 either way. bf16 operands are
// torch.autocast's convolutions: bf16 products accumulated in f32 (AMX tiles, AVX512-BF16).
enum class Operands { kF32, kBf16 };

memory::data_type OperandType(Operands operands) {
  return operands == Operands::kBf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

size_t OperandBytes(Operands operands) { return operands == Operands::kBf16 ? 2 : 4; }

using onednn::Engine;

// The slice of a convolution one thread computes: images [n0, n1), output channels [o0, o1),
// input channels [c0, c1) of the whole tensors, which keep their plain NCHW / OIHW strides.
// Forward and the input gradient split images or the channels they produce (SplitFor); the
// filter gradient splits output channels, so no part sums another's result, unless there are
// too few of them (SumsImageParts).
struct Part {
  int64_t n0, n1, o0, o1, c0, c1;
};

// One pass of one part's geometry, built for a single OpenMP thread: the primitive, and the
// reorders between the plain layouts and the layouts it chose (absent when they coincide).
// Several threads may run one plan at once, so each run brings its scratchpads.
struct Plan {
  dnnl::primitive primitive;
  memory::desc scratchpad;
  // In the primitive's argument order: two inputs, then the output.
  std::array<memory::desc, 3> plain, chosen;
  std::array<std::unique_ptr<dnnl::reorder>, 3> reorders;
  std::array<memory::desc, 3> reorder_scratchpads;
  std::array<int, 3> args;
  memory::desc bias;  // forward passes with a bias: the part's output channels' slice
  bool channels_last = false;  // its images in NHWC (ActivationsTag)
  bool winograd = false;       // oneDNN's Winograd algorithm (UseWinograd)
};

struct Descs {
  memory::desc src, weights, dst;  // plain: NCHW, (G)OIHW, NCHW slices of the whole tensors
  memory::desc any_src, any_weights, any_dst;  // what the primitive may choose (activations: see
                                               // ActivationsTag)
  // The forward pass: the pass itself, or the one a gradient's primitive is built against
  // (operands in the operands' type, the output f32).
  memory::desc forward_src, forward_weights, forward_dst;
  memory::dims strides, dilates, pad_l, pad_r;
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
};

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The layout a pass's images take inside oneDNN. Its blocked layouts (nChw16c) pad channels to
// a multiple of 16, or fall back to 8-wide AVX2 kernels (a part of 10 output channels); for the
// gradients of such convolutions its NHWC kernels, reorders included, were faster on a 2-core
// Zen 4 EPYC (single thread, the MNIST CNN's 10->20 5x5 at batch 64: input gradient 0.60 against
// 0.95 ms, filter gradient 0.63-0.64 against 0.93-1.24), while the forward pass stayed faster
// blocked (0.63 against 0.71). Fewer than 8 input channels keep the blocked first-layer kernels,
// which read plain images (ResNet's 3-channel stem: filter gradient 1.42 against 1.79 NHWC).
tag ActivationsTag(Pass pass, const Part& part) {
  const memory::dim out = part.o1 - part.o0, in = part.c1 - part.c0;
  const bool padded = out % 16 != 0 || in % 16 != 0;
  return pass != Pass::kForward && in >= 8 && padded ? tag::nhwc : tag::any;
}

// oneDNN's Winograd F(4x4, 3x3) kernels (AVX-512 only: elsewhere PlanFor falls back to direct)
// for 3x3 stride-1 convolutions whose outputs are at least TXLA_CONV_WINOGRAD_MIN pixels a side,
// where the user allowed reduced precision (Conv2dGeometry::fast_algorithms): they round
// differently from eager, which alone is enough to make a trained model drift from it.
// Forward and both gradients of a 3x3 64->64 convolution over 16 images on a 2-core Zen 5 EPYC:
// 1.75-1.80 against 2.19-2.38 ms at 16x16, 7.1 against 9.8 at 32x32, 22.7 against 29.6 at 56x56;
// 128 channels at 28x28 17.6-17.8 against 26.6, 256 at 14x14 18.8-19.6 against 25.7-25.9. At 8x8
// and 4x4 it was within 5% of direct, at 2x2 (a single tile, mostly padding) 5-15% slower; with
// it on 8x8 outputs ResNet-18's step at 64x64 images was 1-2 ms slower than with it on 16x16 and
// up only. Its results differ from the exact ones by ~2e-6 of their largest value (direct: ~3e-7).
bool UseWinograd(const Conv2dGeometry& g) {
  const int64_t min = debug::GetConfig().conv_winograd_min;
  return g.fast_algorithms != 0 && min > 0 && g.groups == 1 && g.kernel_h == 3 && g.kernel_w == 3 &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 && g.out_h >= min &&
         g.out_w >= min;
}

bool MakeDescs(Pass pass, const Conv2dGeometry& g, const Part& part, bool winograd, Operands operands, Descs* d) {
  const memory::dim pr_h = (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1 - g.in_h - g.pad_h;
  const memory::dim pr_w = (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1 - g.in_w - g.pad_w;
  if (pr_h < 0 || pr_w < 0 || g.batch == 0 || g.out_h <= 0 || g.out_w <= 0) return false;
  // The pass's two operands in the operands' type, its result (the output, the input gradient,
  // the filter gradient) in f32.
  const auto f32 = memory::data_type::f32, in = OperandType(operands);
  const auto src_type = pass == Pass::kBackwardInput ? f32 : in;
  const auto weights_type = pass == Pass::kBackwardFilter ? f32 : in;
  const auto dst_type = pass == Pass::kForward ? f32 : in;
  const memory::dim n = part.n1 - part.n0, o = part.o1 - part.o0, c = part.c1 - part.c0;
  memory::dims src{n, c, g.in_h, g.in_w}, dst{n, o, g.out_h, g.out_w};
  d->src = memory::desc(src, src_type, {g.in_channels * g.in_h * g.in_w, g.in_h * g.in_w, g.in_w, 1});
  d->dst = memory::desc(dst, dst_type, {g.out_channels * g.out_h * g.out_w, g.out_h * g.out_w, g.out_w, 1});
  memory::dims weights;
  if (g.groups == 1) {
    weights = {o, c, g.kernel_h, g.kernel_w};
    const memory::dim plane = g.kernel_h * g.kernel_w;
    d->weights = memory::desc(weights, weights_type, {g.in_channels * plane, plane, g.kernel_w, 1});
  } else {  // grouped: whole channels only (SplitFor)
    weights = {g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.kernel_h, g.kernel_w};
    d->weights = memory::desc(weights, weights_type, tag::goihw);
  }
  const tag activations = g.groups == 1 ? ActivationsTag(pass, part) : tag::any;
  d->any_src = memory::desc(src, src_type, activations);
  d->any_dst = memory::desc(dst, dst_type, activations);
  d->any_weights = memory::desc(weights, weights_type, tag::any);
  d->forward_src = memory::desc(src, in, activations);
  d->forward_weights = memory::desc(weights, in, tag::any);
  d->forward_dst = memory::desc(dst, f32, activations);
  d->strides = {g.stride_h, g.stride_w};
  d->dilates = {g.dilation_h - 1, g.dilation_w - 1};
  d->pad_l = {g.pad_h, g.pad_w};
  d->pad_r = {pr_h, pr_w};
  if (winograd) d->algorithm = dnnl::algorithm::convolution_winograd;
  return true;
}

// With a bias (forward passes only), the primitive adds it to its output as it writes it; an
// empty bias descriptor is oneDNN's "no bias".
dnnl::convolution_forward::primitive_desc ForwardDesc(const Descs& d, const dnnl::primitive_attr& attr, bool bias) {
  const memory::desc bias_desc =
      bias ? memory::desc({d.forward_dst.dims()[1]}, memory::data_type::f32, tag::a) : memory::desc();
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, d.algorithm,
                                       d.forward_src, d.forward_weights, bias_desc, d.forward_dst, d.strides, d.dilates,
                                       d.pad_l, d.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, attr, Engine());
}

void Finish(Plan* plan) {
  for (int i = 0; i < 3; ++i) {
    if (plan->chosen[i] == plan->plain[i]) continue;
    const memory::desc& from = i < 2 ? plan->plain[i] : plan->chosen[i];
    const memory::desc& to = i < 2 ? plan->chosen[i] : plan->plain[i];
    dnnl::reorder::primitive_desc pd(Engine(), from, Engine(), to, UserScratchpad());
    plan->reorder_scratchpads[i] = pd.scratchpad_desc();
    plan->reorders[i] = std::make_unique<dnnl::reorder>(pd);
  }
}

std::shared_ptr<Plan> MakePlan(Pass pass, const Conv2dGeometry& g, const Part& part, bool bias, bool winograd,
                               Operands operands) {
  Descs d;
  if (!MakeDescs(pass, g, part, winograd, operands, &d)) return nullptr;
  const char* implementation = nullptr;
  auto plan = std::make_shared<Plan>();
  const dnnl::primitive_attr attr = UserScratchpad();
  auto fwd = ForwardDesc(d, attr, bias);
  switch (pass) {
    case Pass::kForward:
      plan->bias = fwd.bias_desc();
      plan->primitive = dnnl::convolution_forward(fwd);
      plan->scratchpad = fwd.scratchpad_desc();
      plan->plain = {d.src, d.weights, d.dst};
      plan->chosen = {fwd.src_desc(), fwd.weights_desc(), fwd.dst_desc()};
      plan->args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
      implementation = fwd.impl_info_str();
      break;
    case Pass::kBackwardInput: {
      dnnl::convolution_backward_data::desc desc(d.algorithm, d.any_src,
                                                 d.any_weights, d.any_dst, d.strides, d.dilates,
                                                 d.pad_l, d.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(desc, attr, Engine(), fwd);
      plan->primitive = dnnl::convolution_backward_data(pd);
      plan->scratchpad = pd.scratchpad_desc();
      plan->plain = {d.dst, d.weights, d.src};
      plan->chosen = {pd.diff_dst_desc(), pd.weights_desc(), pd.diff_src_desc()};
      plan->args = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
      implementation = pd.impl_info_str();
      break;
    }
    case Pass::kBackwardFilter: {
      dnnl::convolution_backward_weights::desc desc(d.algorithm,
                                                    d.any_src, d.any_weights, d.any_dst, d.strides,
                                                    d.dilates, d.pad_l, d.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, Engine(), fwd);
      plan->primitive = dnnl::convolution_backward_weights(pd);
      plan->scratchpad = pd.scratchpad_desc();
      plan->plain = {d.dst, d.src, d.weights};
      plan->chosen = {pd.diff_dst_desc(), pd.src_desc(), pd.diff_weights_desc()};
      plan->args = {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS};
      implementation = pd.impl_info_str();
      break;
    }
  }
  if (operands == Operands::kBf16 && onednn::IsReferenceKernel(implementation)) return nullptr;
  plan->channels_last = d.any_src.data.format_kind == dnnl_blocked;
  plan->winograd = winograd;
  Finish(plan.get());
  return plan;
}

// Plans by pass, geometry and part extents; a geometry oneDNN rejects is remembered as null.
std::shared_ptr<Plan> PlanFor(Pass pass, const int64_t* geometry, const Part& part, bool bias, bool may_winograd,
                              Operands operands) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  std::vector<int64_t> key(geometry, geometry + kConv2dGeometryFields);
  key.insert(key.end(), {static_cast<int64_t>(pass), part.n1 - part.n0, part.o1 - part.o0, part.c1 - part.c0, bias,
                         may_winograd, static_cast<int64_t>(operands)});
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  std::shared_ptr<Plan> plan;
  for (bool winograd : {true, false}) {
    if (winograd && !may_winograd) continue;
    try {
      plan = MakePlan(pass, g, part, bias, winograd, operands);
      break;
    } catch (const dnnl::error&) {
      plan = nullptr;  // no Winograd kernels on this CPU: direct; no kernels at all: im2col runs it
    }
  }
  plans.emplace(std::move(key), plan);
  return plan;
}

bool Enabled() { return debug::GetConfig().conv_library == "onednn"; }

// Below this many multiply-adds a convolution runs whole on the calling thread.
constexpr double kParallelWork = 4e6;

// Whether a filter gradient splits its images, each part computing a whole partial gradient
// that Run sums, instead of its output channels: when the output channels cannot give each
// thread a 16-wide block. The MNIST CNN's 1->10 5x5 at batch 128, on a 2-core Zen 4 EPYC: half
// the images 0.32 ms a part, half the channels (5, padded to 16) 0.67.
bool SumsImageParts(const Conv2dGeometry& g, int threads) {
  return g.out_channels < 16 * threads && g.batch >= threads;
}

// Such a filter gradient's image parts: this many a thread (as the batch allows), claimed one at
// a time. A thread that a host's trace preempts (a step that releases its loss early traces the
// next one beside its own backward pass) then holds up less of the pass, and a part's images
// stay in a core's L2. The MNIST CNN, loss read every step, interleaved in one process (2 runs
// of 50 blocks, Zen 4 EPYC): 6.05 -> 5.72 and 5.59 -> 5.42 ms a step; piped 5.63 -> 5.25 and
// 5.14 -> 4.92. The partial gradients are summed in part order, as before.
constexpr int kFilterGradientImagePartsPerThread = 4;

// The parts `threads` threads compute. Channel splits keep whole vector widths where they can.
std::vector<Part> SplitFor(Pass pass, const Conv2dGeometry& g, int threads) {
  const Part whole{0, g.batch, 0, g.out_channels, 0, g.in_channels};
  const double work = static_cast<double>(g.batch) * g.out_channels * g.out_h * g.out_w * g.in_channels /
                      g.groups * g.kernel_h * g.kernel_w;
  if (threads <= 1 || work < kParallelWork) return {whole};
  // `extent` in at most `count` parts of whole `unit`s.
  auto split = [&](int64_t extent, int64_t unit, int64_t count, auto make) {
    std::vector<Part> parts;
    int64_t units = (extent + unit - 1) / unit, per = (units + count - 1) / count;
    for (int64_t b = 0; b < extent; b += per * unit) parts.push_back(make(b, std::min(extent, b + per * unit)));
    return parts;
  };
  auto by_images = [&](int64_t count) {
    return split(g.batch, 1, count, [&](int64_t b, int64_t e) { return Part{b, e, 0, g.out_channels, 0, g.in_channels}; });
  };
  auto by_outputs = [&] {
    int64_t unit = g.out_channels >= 16 * threads ? 16 : 1;
    return split(g.out_channels, unit, threads, [&](int64_t b, int64_t e) { return Part{0, g.batch, b, e, 0, g.in_channels}; });
  };
  auto by_inputs = [&] {
    int64_t unit = g.in_channels >= 16 * threads ? 16 : 1;
    return split(g.in_channels, unit, threads, [&](int64_t b, int64_t e) { return Part{0, g.batch, 0, g.out_channels, b, e}; });
  };
  // Each part reorders whole the operands it does not slice: a part of a batch split reorders
  // all the weights, a part of a channel split all the images. Split whichever is larger
  // (ResNet-18's last stage: 16 2x2 images against 9 MB of weights, where splitting images
  // doubled the weights' reorder and ran at half eager's speed).
  const bool channels = g.groups == 1;
  const Conv2dFootprint footprint = FootprintOf(g);
  const bool images_first = g.batch >= threads && (!channels || footprint.images >= footprint.weights);
  switch (pass) {
    case Pass::kForward:
      return images_first ? by_images(threads) : channels ? by_outputs() : std::vector<Part>{whole};
    case Pass::kBackwardInput:
      return images_first ? by_images(threads) : channels ? by_inputs() : std::vector<Part>{whole};
    case Pass::kBackwardFilter:
      if (!channels) return {whole};
      return SumsImageParts(g, threads) ? by_images(int64_t{threads} * kFilterGradientImagePartsPerThread) : by_outputs();
  }
  return {whole};
}

// Runs one part on the calling thread, with oneDNN's OpenMP held to that thread.
void RunPart(const Plan& plan, const std::array<void*, 3>& user, const float* bias) {
  UseOneOpenMpThread();
  dnnl::stream stream(Engine());
  std::vector<runtime::PooledBlock> scratch;
  auto scratch_memory = [&](const memory::desc& desc) {
    scratch.emplace_back(desc.get_size());
    return memory(desc, Engine(), scratch.back().data());
  };
  std::array<memory, 3> args;
  for (int i = 0; i < 3; ++i) {
    memory plain(plan.plain[i], Engine(), user[i]);
    if (!plan.reorders[i]) {
      args[i] = plain;
      continue;
    }
    args[i] = scratch_memory(plan.chosen[i]);
    if (i < 2)
      plan.reorders[i]->execute(stream, {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, args[i]},
                                         {DNNL_ARG_SCRATCHPAD, scratch_memory(plan.reorder_scratchpads[i])}});
  }
  std::unordered_map<int, memory> primitive_args{{plan.args[0], args[0]}, {plan.args[1], args[1]}, {plan.args[2], args[2]},
                                                 {DNNL_ARG_SCRATCHPAD, scratch_memory(plan.scratchpad)}};
  if (bias != nullptr) primitive_args.emplace(DNNL_ARG_BIAS, memory(plan.bias, Engine(), const_cast<float*>(bias)));
  plan.primitive.execute(stream, primitive_args);
  if (plan.reorders[2]) {
    memory plain_out(plan.plain[2], Engine(), user[2]);
    plan.reorders[2]->execute(stream, {{DNNL_ARG_FROM, args[2]}, {DNNL_ARG_TO, plain_out},
                                       {DNNL_ARG_SCRATCHPAD, scratch_memory(plan.reorder_scratchpads[2])}});
  }
  stream.wait();
}

// Pointers to a part's slices of the whole tensors, in the plan's argument order: two operands
// of `operand_bytes` an element, then the f32 result.
std::array<void*, 3> PartPointers(Pass pass, const Conv2dGeometry& g, const Part& part, const void* in0,
                                  const void* in1, float* out, size_t operand_bytes) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w, plane_k = g.kernel_h * g.kernel_w;
  const int64_t src = part.n0 * g.in_channels * plane_in + part.c0 * plane_in;
  const int64_t dst = part.n0 * g.out_channels * plane_out + part.o0 * plane_out;
  const int64_t weights = part.o0 * (g.in_channels / g.groups) * plane_k + part.c0 * plane_k;
  auto at = [operand_bytes](const void* p, int64_t offset) -> void* {
    return static_cast<char*>(const_cast<void*>(p)) + offset * static_cast<int64_t>(operand_bytes);
  };
  switch (pass) {
    case Pass::kForward:  // x, w -> y
      return {at(in0, src), at(in1, weights), out + dst};
    case Pass::kBackwardInput:  // dy, w -> dx
      return {at(in0, dst), at(in1, weights), out + src};
    case Pass::kBackwardFilter:  // dy, x -> dw
      return {at(in0, dst), at(in1, src), out + weights};
  }
  return {};
}

// Elements of a pass's output: the images it produces, or the filter's gradient.
int64_t OutputElements(Pass pass, const Conv2dGeometry& g) {
  switch (pass) {
    case Pass::kForward:
      return g.batch * g.out_channels * g.out_h * g.out_w;
    case Pass::kBackwardInput:
      return g.batch * g.in_channels * g.in_h * g.in_w;
    case Pass::kBackwardFilter:
      return g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w;
  }
  return 0;
}

// Image parts of a filter gradient each write a whole gradient: the first into `out`, the others
// into scratch, summed in part order afterwards (the same sums for the same threads).
bool SumsPartials(Pass pass, const Conv2dGeometry& g, const std::vector<Part>& parts) {
  return pass == Pass::kBackwardFilter && parts.size() > 1 && parts[0].n1 < g.batch;
}

// Every part of a pass, each on its own thread, with the plans made for them.
void RunParts(Pass pass, Operands operands, const Conv2dGeometry& g, const std::vector<Part>& parts,
              const std::vector<std::shared_ptr<Plan>>& plans, const void* in0, const void* in1, float* out,
              const float* bias) {
  const bool partial_sums = SumsPartials(pass, g, parts);
  const int64_t gradient = OutputElements(Pass::kBackwardFilter, g);
  std::vector<runtime::PooledBlock> partials;
  for (size_t i = 1; partial_sums && i < parts.size(); ++i) partials.emplace_back(gradient * sizeof(float));
  ParallelChunks(static_cast<int64_t>(parts.size()), NumThreads(), [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::array<void*, 3> pointers = PartPointers(pass, g, parts[i], in0, in1, out, OperandBytes(operands));
      if (partial_sums && i > 0) pointers[2] = partials[i - 1].data();
      RunPart(*plans[i], pointers, bias ? bias + parts[i].o0 : nullptr);
    }
  });
  for (const runtime::PooledBlock& partial : partials) {
    const float* add = static_cast<const float*>(partial.data());
    for (int64_t i = 0; i < gradient; ++i) out[i] += add[i];
  }
}

// Whether no value is NaN or infinite: their magnitudes' bits are the largest. 16 lanes where the
// CPU has AVX-512 (as every CPU with oneDNN's Winograd kernels does) keep the scan of a pass's
// output well under 1% of the pass; the scalar loop, which -O2 does not vectorize, cost 5% of
// ResNet-18's step.
uint32_t LargestMagnitudeBits(const float* p, int64_t begin, int64_t end) {
  uint32_t largest = 0;
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    largest = std::max(largest, bits & 0x7fffffffu);
  }
  return largest;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) uint32_t LargestMagnitudeBitsAvx512(const float* p, int64_t n) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  __m512i lanes = _mm512_setzero_si512();
  int64_t i = 0;
  // The masked max with every lane set, and the reduction through memory: GCC 12's
  // _mm512_max_epu32 and _mm512_reduce_max_epu32 start from an undefined register and warn of it.
  for (; i + 16 <= n; i += 16)
    lanes = _mm512_mask_max_epu32(lanes, 0xffff, lanes, _mm512_and_si512(_mm512_loadu_si512(p + i), magnitude));
  alignas(64) uint32_t lane[16];
  _mm512_store_si512(lane, lanes);
  return std::max(*std::max_element(lane, lane + 16), LargestMagnitudeBits(p, i, n));
}
#endif

bool AllFinite(const float* p, int64_t n) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return LargestMagnitudeBitsAvx512(p, n) < 0x7f800000u;
#endif
  return LargestMagnitudeBits(p, 0, n) < 0x7f800000u;
}

bool Run(Pass pass, Operands operands, const void* in0, const void* in1, float* out, const int64_t* geometry,
         const float* bias = nullptr) {
  if (!Enabled()) return false;
  const Conv2dGeometry g = Conv2dGeometryFrom(geometry);
  const std::vector<Part> parts = SplitFor(pass, g, NumThreads());
  // Before the plans: oneDNN fixes a primitive's thread count when it creates it (its filter
  // gradients run `parallel(nthr)` with the OpenMP setting of the creating thread), and a plan
  // made while this thread still had OpenMP's default ran every part with a team of its own that
  // spins in its barriers: the MNIST CNN's 1->10 filter gradient, when the process's first
  // oneDNN call, took 4.7-11 ms on two threads against 0.37 on one (Zen 4, in isolation, host idle).
  UseOneOpenMpThread();
  auto plans_for = [&](bool may_winograd) {
    std::vector<std::shared_ptr<Plan>> plans;
    for (const Part& part : parts) {
      plans.push_back(PlanFor(pass, geometry, part, bias != nullptr, may_winograd, operands));
      if (!plans.back()) return std::vector<std::shared_ptr<Plan>>{};
    }
    return plans;
  };
  // (No Winograd kernels take bf16.)
  std::vector<std::shared_ptr<Plan>> plans = plans_for(operands == Operands::kF32 && UseWinograd(g));
  if (plans.empty()) return false;
  TXLA_COUNTER("OneDnnConvolution", 1);
  if (operands == Operands::kBf16) TXLA_COUNTER("OneDnnConvolutionBf16", 1);
  if (plans[0]->channels_last) TXLA_COUNTER("OneDnnConvolutionNhwc", 1);
  if (parts.size() > 1) TXLA_COUNTER("OneDnnConvolutionParts", static_cast<int64_t>(parts.size()));
  if (SumsPartials(pass, g, parts)) TXLA_COUNTER("OneDnnFilterGradientPartialSums", 1);
  RunParts(pass, operands, g, parts, plans, in0, in1, out, bias);
  // Parts of unequal extents have plans of their own, and oneDNN may refuse Winograd for one.
  if (std::none_of(plans.begin(), plans.end(), [](const auto& plan) { return plan->winograd; })) return true;
  TXLA_COUNTER("OneDnnConvolutionWinograd", 1);
  // Winograd's transforms spread a NaN or an infinity over the whole tile (and make infinities
  // NaN), where the direct algorithm reaches only the outputs whose window holds it. Any
  // non-finite operand gives some non-finite result, so finite operands pay only for this scan,
  // and the others are computed again directly, with eager's results.
  if (AllFinite(out, OutputElements(pass, g))) return true;
  TXLA_COUNTER("OneDnnConvolutionWinogradRedone", 1);
  plans = plans_for(false);
  if (plans.empty()) return false;
  RunParts(pass, operands, g, parts, plans, in0, in1, out, bias);
  return true;
}

}  // namespace

bool OneDnnAvailable() { return true; }

bool OneDnnConv2dForward(const float* x, const float* w, const float* bias, float* y, const int64_t* geometry) {
  return Run(Pass::kForward, Operands::kF32, x, w, y, geometry, bias);
}
bool OneDnnConv2dBackwardInput(const float* dy, const float* w, float* dx, const int64_t* geometry) {
  return Run(Pass::kBackwardInput, Operands::kF32, dy, w, dx, geometry);
}
bool OneDnnConv2dBackwardFilter(const float* dy, const float* x, float* dw, const int64_t* geometry) {
  return Run(Pass::kBackwardFilter, Operands::kF32, dy, x, dw, geometry);
}
bool OneDnnConv2dForwardBf16(const uint16_t* x, const uint16_t* w, const float* bias, float* y,
                             const int64_t* geometry) {
  return Run(Pass::kForward, Operands::kBf16, x, w, y, geometry, bias);
}
bool OneDnnConv2dBackwardInputBf16(const uint16_t* dy, const uint16_t* w, float* dx, const int64_t* geometry) {
  return Run(Pass::kBackwardInput, Operands::kBf16, dy, w, dx, geometry);
}
bool OneDnnConv2dBackwardFilterBf16(const uint16_t* dy, const uint16_t* x, float* dw, const int64_t* geometry) {
  return Run(Pass::kBackwardFilter, Operands::kBf16, dy, x, dw, geometry);
}

}  // namespace txla::compiler::library

#else  // built without oneDNN

namespace txla::compiler::library {
bool OneDnnAvailable() { return false; }
bool OneDnnConv2dForward(const float*, const float*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardInput(const float*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardFilter(const float*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dForwardBf16(const uint16_t*, const uint16_t*, const float*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardInputBf16(const uint16_t*, const uint16_t*, float*, const int64_t*) { return false; }
bool OneDnnConv2dBackwardFilterBf16(const uint16_t*, const uint16_t*, float*, const int64_t*) { return false; }
}  // namespace txla::compiler::library

#endif
