// Calls into the support table: GEMM, convolution, pooling and collectives, with their geometry.
#include "compiler/codegen/library_call_emitter.h"

#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include "compiler/codegen/reduction_emitter.h"
#include "compiler/codegen/support_abi.h"
#include "compiler/library/recurrent.h"
#include "hlo/shape_inference.h"
#include "compiler/spmd/tile_map.h"
#include "debug/config.h"
#include "runtime/collectives.h"
#include "runtime/shards.h"
#include "runtime/element_type.h"

namespace txla::compiler::emitter {

namespace {

using hlo::CustomCallTarget;

// The geometry each kind of custom call passes its routine (the last column of
// hlo/custom_call.h's rows): the int64 array compiler/library/*.h reads.

// x, w, y in NCHW / OIHW, whichever way round the call names them; the last field asks for
// float32 throughout (kHighest) or lets oneDNN choose (torch.backends' precision switches).
std::vector<int64_t> ConvGeometry(const Instruction& i) {
  const CustomCallTarget target = i.attrs().custom_call_target;
  const bool forward = i.opcode() == Opcode::kConvolution || target == CustomCallTarget::kConv2dBias;
  const bool filter = target == CustomCallTarget::kConv2dBackwardFilter;
  const hlo::Shape& x = filter ? i.operand(1)->shape() : forward ? i.operand(0)->shape() : i.shape();
  const hlo::Shape& w = filter ? i.shape() : i.operand(1)->shape();
  const hlo::Shape& y = forward ? i.shape() : i.operand(0)->shape();
  const hlo::Attributes& a = i.attrs();
  if (!IsCanonicalConv2d(a, x.rank()))
    throw std::invalid_argument("codegen: only 2-D NCHW/OIHW convolutions without base dilation are supported");
  return {x.dims[0], x.dims[1], x.dims[2], x.dims[3], w.dims[0], w.dims[2], w.dims[3], y.dims[2], y.dims[3],
          a.window[0].stride, a.window[1].stride, a.window[0].pad_lo, a.window[1].pad_lo,
          a.window[0].rhs_dilation, a.window[1].rhs_dilation, a.feature_group_count,
          a.precision == hlo::Precision::kHighest ? 0 : 1};
}

// Planes (every dimension before the last two), the input's and output's height and width, and
// the window's size, stride, padding and dilation in those two.
std::vector<int64_t> PoolGeometry(const Instruction& i) {
  const bool indices = i.attrs().custom_call_target == CustomCallTarget::kMaxPool2dIndices;
  const hlo::Shape& x = indices ? i.operand(0)->shape() : i.shape();
  const hlo::Shape& y = indices ? i.shape() : i.operand(0)->shape();
  const auto& window = i.attrs().window;
  const int64_t r = x.rank();
  if (r < 2 || window.size() != static_cast<size_t>(r))
    throw std::invalid_argument("codegen: " + i.name() + " needs a window per dimension");
  int64_t planes = 1;
  for (int64_t d = 0; d < r - 2; ++d) planes *= x.dims[d];
  const hlo::WindowDim &h = window[r - 2], &w = window[r - 1];
  return {planes, x.dims[r - 2], x.dims[r - 1], y.dims[r - 2], y.dims[r - 1], h.size, w.size,
          h.stride, w.stride, h.pad_lo, w.pad_lo, h.rhs_dilation, w.rhs_dilation};
}

// Steps, batch, hidden size, the cell, and whether the layer runs from its last step.
std::vector<int64_t> RecurrentGeometry(const Instruction& i) {
  const CustomCallTarget target = i.attrs().custom_call_target;
  const bool backward = target == CustomCallTarget::kLstmLayerBackward || target == CustomCallTarget::kGruLayerBackward;
  const bool lstm = target == CustomCallTarget::kLstmLayer || target == CustomCallTarget::kLstmLayerBackward;
  const hlo::Shape& w_hh = i.operand(backward ? 3 : 1)->shape();
  const hlo::Shape& h0 = i.operand(backward ? 4 : 3)->shape();
  const int64_t steps = backward ? i.operand(0)->shape().dims.at(0) : i.shape().dims.at(0);
  return {steps, h0.dims.at(0), w_hh.dims.at(1),
          static_cast<int64_t>(lstm ? library::RnnCell::kLstm : library::RnnCell::kGru),
          i.attrs().dimensions == std::vector<int64_t>{0} ? 1 : 0};
}

// The batch's matrices (batch * heads), queries, keys, q's and v's head sizes, and 1 for the
// causal mask (index=1).
std::vector<int64_t> AttentionGeometry(const Instruction& i) {
  const hlo::Shape &q = i.operand(0)->shape(), &k = i.operand(1)->shape(), &v = i.operand(2)->shape();
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    throw std::invalid_argument("codegen: " + i.name() + " needs [batch, heads, ., .] operands");
  return {q.dims[0] * q.dims[1], q.dims[2], k.dims[2], q.dims[3], v.dims[3], i.attrs().index == 1 ? 1 : 0};
}

// Lines along dimensions={d}: the product of the dimensions before d, d's length, the product of
// those after it.
std::vector<int64_t> ScanGeometry(const Instruction& i) {
  const hlo::Shape& x = i.operand(0)->shape();
  const int64_t d = i.attrs().dimensions.at(0);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.dims[k];
  for (int64_t k = d + 1; k < x.rank(); ++k) inner *= x.dims[k];
  return {outer, x.dims[d], inner};
}

// A scan's lines, and 1 for descending (index=1).
std::vector<int64_t> SortGeometry(const Instruction& i) {
  std::vector<int64_t> geometry = ScanGeometry(i);
  geometry.push_back(i.attrs().index);
  return geometry;
}

struct Routine {
  std::string_view name;  // the support table's slots are `<name>_<type>`; "loop" for our own kernels
  std::vector<int64_t> (*geometry)(const Instruction&);
};

// The whole value's and this device's tile's dimensions, and where every device's tile starts.
std::vector<int64_t> ReshardGeometry(const Instruction& i) {
  const hlo::Sharding& sharding = i.attrs().sharding.value();
  const auto devices = static_cast<int64_t>(sharding.devices.size());  // a tiled layout, on every kind
  const hlo::ElementType type = i.shape().type;
  auto layout = [&](const hlo::Sharding& s, const std::vector<int64_t>& full) {
    return spmd::LayoutOf(spmd::TileMap::Of(s, static_cast<int64_t>(full.size()), devices), full);
  };
  switch (i.attrs().custom_call_target) {
    case CustomCallTarget::kSpmdAllGather: {
      const std::vector<int64_t>& full = i.shape().dims;
      return runtime::EncodeReshard(runtime::ReshardOp::kAllGather, type, full, layout(sharding, full),
                                    runtime::Layout::Whole(full, devices));
    }
    case CustomCallTarget::kSpmdShard: {
      const std::vector<int64_t>& full = i.operand(0)->shape().dims;
      return runtime::EncodeReshard(runtime::ReshardOp::kShard, type, full, runtime::Layout::Whole(full, devices),
                                    layout(sharding, full));
    }
    default: {
      const std::vector<int64_t>& full = i.attrs().dimensions;
      const bool exchange = i.attrs().custom_call_target == CustomCallTarget::kSpmdExchange;
      return runtime::EncodeReshard(exchange ? runtime::ReshardOp::kExchange : runtime::ReshardOp::kReduceScatter,
                                    type, full, layout(i.attrs().operand_sharding.value(), full),
                                    layout(sharding, full), i.attrs().replica_groups);
    }
  }
}

// Annotations the SPMD partitioner consumes never reach codegen in a partitioned program.
std::vector<int64_t> PartitionerGeometry(const Instruction& i) {
  throw std::invalid_argument("codegen: " + i.name() + " is an SPMD annotation (" +
                              std::string(hlo::CustomCallTargetName(i.attrs().custom_call_target)) +
                              "); only a program partitioned for SPMD (torch_xla.runtime.use_spmd()) can run it");
}

Routine RoutineOf(const Instruction& i) {
  if (i.opcode() == Opcode::kConvolution) return {"conv2d", &ConvGeometry};
  switch (i.attrs().custom_call_target) {
#define TXLA_ROUTINE_OF(e, name, routine, geometry) \
  case CustomCallTarget::e:                         \
    return {#routine, &geometry##Geometry};
    TXLA_CUSTOM_CALL_TARGETS(TXLA_ROUTINE_OF)
#undef TXLA_ROUTINE_OF
    case CustomCallTarget::kNone: break;
  }
  throw std::invalid_argument("codegen: " + i.name() + " is not a library call");
}

bool IsSupportSlot(const std::string& name) {
  static const std::unordered_set<std::string_view> slots{
#define TXLA_SLOT_NAME(ret, name, params, host) #name,
      TXLA_SUPPORT_ABI(TXLA_SLOT_NAME)
#undef TXLA_SLOT_NAME
  };
  return slots.count(name) > 0;
}

// Most of the convolutions' loop kernels (emit_direct_conv.cc's gradients, every pass of
// emit_small_image_conv.cc) keep 16-float vectors, up to 28 of them, in registers: AVX-512's
// register file (32 of 16 floats). On AVX2's 16 registers of 8 floats they spill on every
// multiply-add and ran 1.5-6x slower than oneDNN (a Zen 3: ResNet-18's 4x4 stage 3-4x, the MNIST
// CNN's second input gradient 4.7x), which takes them there (TXLA_CONV_LOOP_KERNELS=auto; on and
// off force the choice). The few-channel forward kernel still beat oneDNN 2.6 on AVX2 (the
// MNIST CNN's second layer: 1.3 against 3.4 ms) and is taken everywhere.
bool ConvLoopKernelsEnabled() {
  const std::string& mode = debug::GetConfig().conv_loop_kernels;
  if (mode == "on") return true;
  if (mode == "off") return false;
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

}  // namespace

void LibraryCallEmitter::EmitLibraryCall(const Instruction& i) {
  if (!steps_.Materialized(i)) throw std::invalid_argument("codegen: " + i.name() + " has no buffer");
  const CustomCallTarget target = i.attrs().custom_call_target;
  // Calls with a loop kernel of their own for some geometries: the routine takes the rest.
  switch (target) {
    case CustomCallTarget::kMaxPool2dIndices:
      if (EmitPoolIndices(i)) return;
      break;
    case CustomCallTarget::kMaxPool2dBackwardFromInput:
      if (EmitPoolBackwardFromInput(i)) return;
      break;
    case CustomCallTarget::kConv2dBias:
    case CustomCallTarget::kNone:  // kConvolution
      if (EmitDirectConv(i) || (ConvLoopKernelsEnabled() && EmitSmallImageConv(i, false))) return;
      break;
    case CustomCallTarget::kConv2dBackwardInput:
      if (ConvLoopKernelsEnabled() && (EmitDirectConvInputGradient(i) || EmitSmallImageConv(i, true))) return;
      break;
    case CustomCallTarget::kConv2dBackwardFilter:
      if (ConvLoopKernelsEnabled() && (EmitDirectConvFilterGradient(i) || EmitSmallImageConvFilterGradient(i)))
        return;
      break;
    default: break;
  }
  const Routine routine = RoutineOf(i);
  if (routine.name == "loop") {
    EmitScan(steps_, i, routine.geometry(i));
    return;
  }
  if (routine.name == "reshard" || routine.name == "partitioner") {  // untyped: bytes moved as they are
    std::string table = steps_.Geometry(i.name(), routine.geometry(i));
    steps_.code() << "  support->reshard(" << table << ", " << steps_.Operand(i, 0) << ", " << BufferName(i) << ");\n";
    return;
  }
  const ElementType type = i.operand(0)->shape().type;
  const std::string slot = std::string(routine.name) + "_" + runtime::ElementTypeName(type);
  if (!IsSupportSlot(slot))
    throw std::invalid_argument("codegen: " + i.name() + " (" + std::string(routine.name) + ") on " +
                                runtime::ElementTypeName(type) + " is not supported yet");
  std::string args;
  for (size_t k = 0; k < i.operands().size(); ++k) args += steps_.Operand(i, k) + ", ";
  if (i.opcode() == Opcode::kConvolution) args += "nullptr, ";  // no bias
  std::string table = steps_.Geometry(i.name(), routine.geometry(i));
  steps_.code() << "  support->" << slot << "(" << args << BufferName(i) << ", " << table << ");\n";
}

// Collectives go to the runtime's transport on whole buffers (runtime/collectives.h decodes the
// spec). Gathering or scattering along dimension 0 of a row-major buffer is contiguous blocks;
// lowering transposes other dimensions there.
void LibraryCallEmitter::EmitCollective(const Instruction& i) {
  if (!steps_.Materialized(i)) throw std::invalid_argument("codegen: " + i.name() + " has no buffer");
  const hlo::Attributes& a = i.attrs();
  auto op = i.opcode() == Opcode::kAllReduce   ? runtime::CollectiveOp::kAllReduce
            : i.opcode() == Opcode::kAllGather ? runtime::CollectiveOp::kAllGather
                                               : runtime::CollectiveOp::kReduceScatter;
  if (op != runtime::CollectiveOp::kAllReduce && a.dimensions != std::vector<int64_t>{0})
    throw std::invalid_argument("codegen: " + i.name() + " along a dimension other than 0");
  runtime::ReduceKind kind = runtime::ReduceKind::kSum;
  if (op != runtime::CollectiveOp::kAllGather) {
    switch (a.called.at(0)->root()->opcode()) {
      case Opcode::kAdd: kind = runtime::ReduceKind::kSum; break;
      case Opcode::kMultiply: kind = runtime::ReduceKind::kProduct; break;
      case Opcode::kMinimum: kind = runtime::ReduceKind::kMin; break;
      case Opcode::kMaximum: kind = runtime::ReduceKind::kMax; break;
      default: throw std::invalid_argument("codegen: " + i.name() + " reduces with an unsupported computation");
    }
  }
  const hlo::Shape& in = i.operand(0)->shape();
  std::string table = steps_.Geometry(i.name(), runtime::EncodeCollective(op, kind, in.type, in.element_count(),
                                                                   a.replica_groups));
  steps_.code() << "  support->collective(" << table << ", " << steps_.Operand(i, 0) << ", " << BufferName(i) << ");\n";
}

bool IsCanonicalConv2d(const hlo::Attributes& a, int64_t rank) {
  const hlo::ConvDims& c = a.conv;
  bool canonical = rank == 4 && a.window.size() == 2 && c.input_batch == 0 && c.input_feature == 1 &&
                   c.input_spatial == std::vector<int64_t>{2, 3} && c.kernel_output_feature == 0 &&
                   c.kernel_input_feature == 1 && c.kernel_spatial == std::vector<int64_t>{2, 3} &&
                   c.output_batch == 0 && c.output_feature == 1 &&
                   c.output_spatial == std::vector<int64_t>{2, 3};
  for (const hlo::WindowDim& w : a.window)
    canonical &= w.lhs_dilation == 1 && w.pad_lo == w.pad_hi;
  return canonical;
}

std::pair<const Instruction*, bool> LibraryCallEmitter::GemmOperand(const Instruction& i) {
  if (IsVirtualTranspose(i)) return {i.operand(0), true};
  return {&i, false};
}

void LibraryCallEmitter::EmitDot(const Instruction& dot) {
  const hlo::DotDims& d = dot.attrs().dot;
  ElementType type = dot.shape().type;
  // bf16 operands with an f32 result: a mixed-precision product (float-normalization's).
  bool bf16 = dot.operand(0)->shape().type == ElementType::kBF16 && dot.operand(1)->shape().type == ElementType::kBF16 &&
              type == ElementType::kF32;
  bool same = dot.operand(0)->shape().type == type && dot.operand(1)->shape().type == type;
  if (!(bf16 || (same && (type == ElementType::kF32 || type == ElementType::kF64))))
    throw std::invalid_argument("codegen: dot of " + std::string(runtime::ElementTypeName(dot.operand(0)->shape().type)) +
                                " into " + runtime::ElementTypeName(type) + " is not supported yet");
  auto [lhs, lhs_t] = GemmOperand(*dot.operand(0));
  auto [rhs, rhs_t] = GemmOperand(*dot.operand(1));
  const auto& ls = dot.operand(0)->shape().dims;  // logical (after any transpose)
  const auto& rs = dot.operand(1)->shape().dims;
  int64_t batch = d.lhs_batch.empty() ? 1 : ls[0];
  size_t lb = d.lhs_batch.size();
  if (d.lhs_batch.size() > 1 || (lb == 1 && (d.lhs_batch[0] != 0 || d.rhs_batch[0] != 0)) ||
      d.lhs_contracting.size() != 1 || ls.size() - lb > 2 || rs.size() - lb > 2)
    throw std::invalid_argument("codegen: this dot layout is not supported yet");
  // Row-major C[M,N] = op(A)[M,K] op(B)[K,N].
  bool lhs_vec = ls.size() - lb == 1, rhs_vec = rs.size() - lb == 1;
  int64_t m = lhs_vec ? 1 : ls[lb + (d.lhs_contracting[0] == static_cast<int64_t>(lb) ? 1 : 0)];
  int64_t k = ls[d.lhs_contracting[0]];
  int64_t n = rhs_vec ? 1 : rs[lb + (d.rhs_contracting[0] == static_cast<int64_t>(lb) ? 1 : 0)];
  bool trans_a = lhs_t != (!lhs_vec && d.lhs_contracting[0] == static_cast<int64_t>(lb));
  bool trans_b = rhs_t != (!rhs_vec && d.rhs_contracting[0] != static_cast<int64_t>(lb));
  int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  if (rhs_vec) { trans_b = false; ldb = 1; }
  if (lhs_vec) { trans_a = false; lda = k; }
  std::string fn = bf16 ? "gemm_bf16" : type == ElementType::kF32 ? "gemm_f32" : "gemm_f64";
  steps_.code() << "  support->" << fn << "(" << batch << ", " << trans_a << ", " << trans_b << ", " << m << ", " << n
       << ", " << k << ", " << BufferName(*lhs) << ", " << lda << ", " << m * k << ", " << BufferName(*rhs) << ", " << ldb
       << ", " << k * n << ", " << BufferName(dot) << ", " << n << ", " << m * n << ");\n";
}

}  // namespace txla::compiler::emitter
