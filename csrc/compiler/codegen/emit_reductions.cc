// Kernels that accumulate: reductions (whole and row-wise), scans and scatter.
#include "compiler/codegen/reduction_emitter.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "metrics/metrics.h"

namespace txla::compiler::emitter {

// A block of partials is unrolled whole: GCC vectorizes it into a few vector steps but, left as a
// loop at -O1, keeps the partials on the stack, so every block's combine waits on a store and a
// reload of the one before; unrolled, they stay in registers.
static std::string UnrolledWhole(int64_t trip_count) {
  return "#pragma GCC unroll " + std::to_string(trip_count) + "\n";
}

std::vector<ReductionEmitter::Reduction> ReductionEmitter::KernelReductions(const Instruction& reduce,
                                                                            const std::string& out) const {
  std::vector<Reduction> all = {{&reduce, "", out}};
  for (size_t k = 0; k < kernel_.sibling_reductions.size(); ++k)
    all.push_back({kernel_.sibling_reductions[k], std::to_string(k + 1), BufferName(*kernel_.extra_outputs[k])});
  for (const Reduction& r : all)
    if (r.reduce->operands().size() != 2) throw std::invalid_argument("codegen: variadic reduce");
  return all;
}

// Operand `operand` (0: the input, 1: the init value) of every reduction at `idx`: their
// statements written into the kernel, their names returned in the reductions' order.
std::vector<std::string> ReductionEmitter::EmitOperands(const std::vector<Reduction>& all, size_t operand, const Index& idx) {
  kernel_.expr.BeginBody();
  std::vector<std::string> values;
  for (const Reduction& r : all) values.push_back(kernel_.expr.Value(*r.reduce->operand(operand), idx));
  kernel_.body << kernel_.expr.body.str();
  return values;
}

// One loop nest over the reduction's input; a sibling reduction (kernel_merging.h) has the same
// loops and gets an accumulator of its own (suffixed) in the same body.
void ReductionEmitter::Emit(const Instruction& reduce, const std::string& out) {
  std::vector<Reduction> all = KernelReductions(reduce, out);
  const auto& real_dims = reduce.operand(0)->shape().dims;
  std::vector<bool> reduced(real_dims.size(), false);
  for (int64_t d : reduce.attrs().dimensions) reduced[d] = true;
  if (size_t leading = RowReduceLeading(reduce)) {
    EmitRowReduce(all, leading);
    return;
  }
  // Trailing reduced dimensions that the input reads only in row-major order run as one loop,
  // as loop kernels merge theirs (MergedInnerDimensions). Batch norm's per-channel sums over
  // (N, H, W) then sum H*W contiguous elements into partial accumulators, which vectorizes: in
  // isolation, a channel sum of [16, 64, 16, 16] (ReLU's mask applied) took 88 us instead of 290
  // on an EPYC Milan. The loops run over `in_dims`; `real` takes an index of those apart into
  // the input's own. Siblings share the loops: dimensions merge where every input allows it.
  size_t trailing = real_dims.size();
  while (trailing > 0 && reduced[trailing - 1]) --trailing;
  size_t merged = trailing;
  for (const Reduction& r : all) merged = std::max(merged, kernel_.MergedInnerDimensions(*r.reduce->operand(0), trailing));
  for (const Reduction& r : all)
    if (merged < real_dims.size() && kernel_.MergedInnerDimensions(*r.reduce->operand(0), merged) != merged)
      merged = real_dims.size();
  std::vector<int64_t> in_dims(real_dims.begin(), real_dims.begin() + static_cast<std::ptrdiff_t>(merged));
  std::vector<int64_t> merged_dims(real_dims.begin() + static_cast<std::ptrdiff_t>(merged), real_dims.end());
  if (!merged_dims.empty()) {
    int64_t extent = 1;
    for (int64_t d : merged_dims) extent *= d;
    in_dims.push_back(extent);
    reduced.resize(in_dims.size());
    TXLA_COUNTER("KernelReducedLoopsMerged", 1);
  }
  auto real = [&](const Index& idx) {
    if (merged_dims.empty()) return idx;
    Index out(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(merged));
    Index parts = DelinearizeExpr(idx[merged], merged_dims);
    out.insert(out.end(), parts.begin(), parts.end());
    return out;
  };
  kernel_.body << "  {\n";
  Index out_idx, full(in_dims.size());
  for (size_t k = 0; k < in_dims.size(); ++k) {
    if (reduced[k]) continue;
    std::string v = "o" + std::to_string(k);
    if (out_idx.empty() && kernel_.parallel)  // the first kept dimension
      kernel_.body << "    for (int64_t " << v << " = lo; " << v << " < hi; ++" << v << ")\n";
    else
      kernel_.body << "    for (int64_t " << v << " = 0; " << v << " < " << in_dims[k] << "; ++" << v << ")\n";
    out_idx.push_back(IndexExpr::Var(v, in_dims[k]));
    full[k] = out_idx.back();
  }
  kernel_.body << "    {\n";
  const std::vector<std::string> inits = EmitOperands(all, 1, {});
  for (size_t s = 0; s < all.size(); ++s)
    kernel_.body << "      " << AccumulatorType(*all[s].reduce) << " acc" << all[s].suffix << " = " << inits[s] << ";\n";
  // Reducing the contiguous last dimension: kPartials accumulators, each taking every
  // kPartials-th element, so the loop vectorizes (a single running total is one long chain of
  // dependent adds); they are combined into the total at the end, as eager's vectorized
  // reductions do.
  size_t last = in_dims.empty() ? 0 : in_dims.size() - 1;
  bool partials = !in_dims.empty() && reduced[last] && in_dims[last] >= 2 * kPartials;
  std::vector<std::string> identities;
  for (size_t s = 0; s < all.size(); ++s) {
    identities.push_back(ReductionIdentity(*all[s].reduce, inits[s]));
    partials &= !identities.back().empty();
  }
  if (partials) {
    TXLA_COUNTER("KernelReductionsWithPartials", 1);
    for (size_t s = 0; s < all.size(); ++s) {
      const std::string part = "part" + all[s].suffix;
      kernel_.body << "      " << AccumulatorType(*all[s].reduce) << " " << part << "[" << kPartials << "];\n      for (int j = 0; j < "
           << kPartials << "; ++j) " << part << "[j] = " << identities[s] << ";\n";
    }
  }
  for (size_t k = 0; k < in_dims.size(); ++k) {
    if (!reduced[k] || (partials && k == last)) continue;
    std::string v = "r" + std::to_string(k);
    kernel_.body << "      for (int64_t " << v << " = 0; " << v << " < " << in_dims[k] << "; ++" << v << ")\n";
    full[k] = IndexExpr::Var(v, in_dims[k]);
  }
  // Every reduction's value at `at`, then each combined into its slot ("acc" or a partial).
  auto accumulate = [&](const Index& at, const std::string& slot_prefix, const std::string& slot_index) {
    const std::vector<std::string> values = EmitOperands(all, 0, real(at));
    for (size_t s = 0; s < all.size(); ++s) {
      std::string slot = slot_prefix + all[s].suffix + slot_index;
      kernel_.body << "        " << slot << " = " << Combiner(*all[s].reduce, slot, values[s]) << ";\n";
    }
  };
  kernel_.body << "      {\n";
  if (!partials) {
    accumulate(full, "acc", "");
  } else {
    int64_t n = in_dims[last], whole = n - n % kPartials;
    std::string v = "r" + std::to_string(last);
    // A body that loads masks, bytes or 16-bit floats next to 4-byte values: GCC sizes its
    // vectors by the narrowest type (64 bytes a vector at -mprefer-vector-width=512), more
    // lanes than a block of kPartials has, and left such blocks scalar once the body held
    // more than a few operations (attention's masked exp-sum through torch.compile: 1.2 ms
    // instead of 0.13 for 32x64x64 on one Zen 4 core). Staged, the body runs as a plain loop
    // of kStageElements into an array the partials then take block by block, in the same
    // order: the same sums.
    bool staged = false;  // any reduction of the kernel's shared loop loading narrow elements
    for (size_t s = 0; n >= kStageElements && !staged && s < all.size(); ++s) {
      std::set<const Instruction*> seen;
      staged = kernel_.LoadsNarrowElements(*all[s].reduce->operand(0), &seen);
    }
    const int64_t staged_end = staged ? n - n % kStageElements : 0;
    if (staged) {
      TXLA_COUNTER("KernelReductionsStaged", 1);
      kernel_.body << "      for (int64_t c = 0; c < " << staged_end << "; c += " << kStageElements << ") {\n";
      for (const Reduction& r : all)
        kernel_.body << "      " << CType(r.reduce->operand(0)->shape().type) << " stage" << r.suffix << "["
             << kStageElements << "];\n";
      kernel_.body << "      for (int64_t " << v << " = c; " << v << " < c + " << kStageElements << "; ++" << v << ") {\n";
      full[last] = IndexExpr::Var(v, 0, staged_end);
      const std::vector<std::string> values = EmitOperands(all, 0, real(full));
      for (size_t s = 0; s < all.size(); ++s)
        kernel_.body << "        stage" << all[s].suffix << "[" << v << " - c] = " << values[s] << ";\n";
      kernel_.body << "      }\n";
      for (const Reduction& r : all) {
        const std::string part = "part" + r.suffix + "[j]";
        kernel_.body << "      for (int64_t b = 0; b < " << kStageElements << "; b += " << kPartials << ")\n"
             << UnrolledWhole(kPartials) << "      for (int j = 0; j < " << kPartials << "; ++j) " << part << " = "
             << Combiner(*r.reduce, part, "stage" + r.suffix + "[b + j]") << ";\n";
      }
      kernel_.body << "      }\n";
    }
    if (staged_end < whole) {
      kernel_.body << "      for (int64_t b = " << staged_end << "; b < " << whole << "; b += " << kPartials << ")\n"
           << UnrolledWhole(kPartials) << "      for (int64_t " << v << " = b; " << v << " < b + " << kPartials << "; ++" << v << ") {\n";
      full[last] = IndexExpr::Var(v, staged_end, whole);
      accumulate(full, "part", "[" + v + " - b]");
      kernel_.body << "      }\n";
    }
    if (whole < n) {
      kernel_.body << "      for (int64_t " << v << " = " << whole << "; " << v << " < " << n << "; ++" << v << ") {\n";
      full[last] = IndexExpr::Var(v, whole, n);
      accumulate(full, "acc", "");
      kernel_.body << "      }\n";
    }
  }
  kernel_.body << "      }\n";
  // The partials fold pairwise, halves at a time (vector operations), into the total: a row of
  // 64 (attention's softmax) spent as long on 16 dependent scalar combines as on its 4 vector
  // steps.
  if (partials)
    for (const Reduction& r : all) {
      const std::string part = "part" + r.suffix;
      for (int64_t half = kPartials / 2; half >= 1; half /= 2)
        kernel_.body << "      for (int j = 0; j < " << half << "; ++j) " << part << "[j] = "
             << Combiner(*r.reduce, part + "[j]", part + "[j + " + std::to_string(half) + "]") << ";\n";
      kernel_.body << "      acc" << r.suffix << " = " << Combiner(*r.reduce, "acc" + r.suffix, part + "[0]") << ";\n";
    }
  for (const Reduction& r : all)
    kernel_.body << "      " << r.out << "[" << Linear(out_idx, r.reduce->shape().dims) << "] = "
         << Stored(r.reduce->shape().type, "(" + std::string(CType(r.reduce->shape().type)) + ")acc" + r.suffix) << ";\n";
  kernel_.body << "    }\n  }\n";
}


// What partial accumulators start from: the combiner's identity, or the init value itself
// where combining it twice changes nothing (max, min, and, or). Empty: no partials.
std::string ReductionEmitter::ReductionIdentity(const Instruction& reduce, const std::string& init) {
  switch (reduce.attrs().called.at(0)->root()->opcode()) {
    case Opcode::kAdd: return "0";
    case Opcode::kMultiply: return "1";
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr: return init;
    default: return "";
  }
}

// Sums and products of f32 accumulate in double: a running f32 sum loses ~n ulps over n terms,
// which is enough to decide near ties (relu's mask after batch norm) the other way than eager
// PyTorch (whose vectorized sums keep many partial sums) and to turn ResNet's gradients.
std::string ReductionEmitter::AccumulatorType(const Instruction& reduce) {
  Opcode combiner = reduce.attrs().called.at(0)->root()->opcode();
  bool sum_or_product = combiner == Opcode::kAdd || combiner == Opcode::kMultiply;
  return sum_or_product ? WideType(reduce.shape().type) : CType(reduce.shape().type);
}

// acc[o...] = init; for r...: for o...: acc[o...] = combine(acc[o...], input[r..., o...]);
// out = acc, with acc a row of accumulators on the stack.
// Reducing leading dimensions (a sum over the batch) accumulates whole output rows, so the
// inner loop walks memory contiguously instead of striding down a column: the number of
// leading reduced dimensions when a reduction has that form, else 0.
size_t ReductionEmitter::RowReduceLeading(const Instruction& reduce) {
  const auto& in_dims = reduce.operand(0)->shape().dims;
  std::vector<bool> reduced(in_dims.size(), false);
  for (int64_t d : reduce.attrs().dimensions) reduced[d] = true;
  size_t leading = 0;
  while (leading < in_dims.size() && reduced[leading]) ++leading;
  bool rows = leading > 0 && leading < in_dims.size();
  for (size_t k = leading; k < in_dims.size(); ++k) rows &= !reduced[k];
  // The row of wider accumulators lives on the stack: bounded.
  rows &= reduce.shape().element_count() <= kMaxAccumulatorRow;
  return rows ? leading : 0;
}

int64_t ReductionEmitter::ParallelExtent(const Instruction& reduce) const {
  const hlo::Shape& shape = reduce.operand(0)->shape();
  if (shape.rank() == 0 || shape.element_count() < kParallelElements) return 0;
  if (size_t leading = RowReduceLeading(reduce)) {
    // Rows of accumulators split by their first kept dimension: each thread owns a slice. A
    // single kept dimension is split in whole blocks of kRowBlock: the inner loop keeps a
    // constant trip count, which the compiler needs to vectorize it at -O2.
    // Each thread then reads a narrow slice of every row, a strided pattern the prefetchers
    // follow badly: on an EPYC Milan the split ran 1.1-5x slower than one thread streaming
    // whole rows at every size measured (64k to 4M elements; LayerNorm and bias gradients are
    // 65k-262k), so only very large reductions are split.
    if (shape.element_count() < kParallelRowReduceElements) return 0;
    int64_t kept = shape.dims[leading];
    if (leading + 1 == shape.dims.size()) {
      if (kept % kRowBlock != 0) return 0;
      kept /= kRowBlock;
    }
    return kept;
  }
  // The general reduction's outermost loop runs over the first kept dimension: split it.
  const auto& reduced = reduce.attrs().dimensions;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) return shape.dims[d];
  return 0;
}

void ReductionEmitter::EmitRowReduce(const std::vector<Reduction>& all, size_t leading) {
  const Instruction& reduce = *all[0].reduce;
  const Instruction& input = *reduce.operand(0);
  const auto& in_dims = input.shape().dims;
  const auto& out_dims = reduce.shape().dims;
  const int64_t count = reduce.shape().element_count();
  // In parallel, this thread owns rows [lo, hi) of the first kept dimension: a contiguous
  // slice of the accumulators and of the output.
  const bool blocks = kernel_.parallel && leading + 1 == in_dims.size();  // see ParallelExtent
  const int64_t inner = blocks ? kRowBlock : count / in_dims[leading];
  if (kernel_.parallel) TXLA_COUNTER("KernelRowReductionsInParallel", 1);
  std::string scale = inner == 1 ? "" : " * " + std::to_string(inner);
  std::string first = kernel_.parallel ? "lo" + scale : "0";
  std::string past = kernel_.parallel ? "hi" + scale : std::to_string(count);
  kernel_.body << "  {\n";
  const std::vector<std::string> inits = EmitOperands(all, 1, {});
  for (size_t s = 0; s < all.size(); ++s) {
    const std::string acc = "acc" + all[s].suffix;
    kernel_.body << "    " << AccumulatorType(*all[s].reduce) << " " << acc << "[" << count << "];\n";
    kernel_.body << "    for (int64_t o = " << first << "; o < " << past << "; ++o) " << acc << "[o] = " << inits[s] << ";\n";
  }
  Index full(in_dims.size()), out_idx;
  for (size_t k = 0; k < leading; ++k) {
    std::string v = "r" + std::to_string(k);
    full[k] = IndexExpr::Var(v, in_dims[k]);
    kernel_.body << "    for (int64_t " << v << " = 0; " << v << " < " << in_dims[k] << "; ++" << v << ")\n";
  }
  for (size_t k = leading; k < in_dims.size(); ++k) {
    std::string v = "o" + std::to_string(k);
    full[k] = IndexExpr::Var(v, in_dims[k]);
    if (k == leading && blocks) {
      // The block's columns count from 0: a trip count the compiler sees is constant.
      full[k] = IndexExpr::Var("b", 0, in_dims[k] / kRowBlock) * kRowBlock + IndexExpr::Var("j", kRowBlock);
      kernel_.body << "    for (int64_t b = lo; b < hi; ++b)\n    for (int64_t j = 0; j < " << kRowBlock << "; ++j)\n";
    } else if (k == leading && kernel_.parallel) {
      kernel_.body << "    for (int64_t " << v << " = lo; " << v << " < hi; ++" << v << ")\n";
    } else {
      kernel_.body << "    for (int64_t " << v << " = 0; " << v << " < " << in_dims[k] << "; ++" << v << ")\n";
    }
    out_idx.push_back(full[k]);
  }
  kernel_.body << "    {\n";
  const std::vector<std::string> values = EmitOperands(all, 0, full);
  for (size_t s = 0; s < all.size(); ++s) {
    std::string slot = "acc" + all[s].suffix + "[" + Linear(out_idx, out_dims) + "]";
    kernel_.body << "      " << slot << " = " << Combiner(*all[s].reduce, slot, values[s]) << ";\n";
  }
  kernel_.body << "    }\n";
  for (const Reduction& r : all) {
    ElementType t = r.reduce->shape().type;
    kernel_.body << "    for (int64_t o = " << first << "; o < " << past << "; ++o) " << r.out << "[o] = "
         << Stored(t, "(" + std::string(CType(t)) + ")acc" + r.suffix + "[o]") << ";\n";
  }
  kernel_.body << "  }\n";
}

// scatter: copy the operand, then combine each update into the position its index names.
void EmitScatter(StepWriter& steps, const Instruction& i) {
  if (!steps.Materialized(i)) throw std::invalid_argument("codegen: " + i.name() + " has no buffer");
  const hlo::Shape& updates = i.operand(2)->shape();
  std::string type = CType(i.shape().type), fn = "k_" + Sanitize(i.name());
  std::string operand = steps.Operand(i, 0), indices = steps.Operand(i, 1), values = steps.Operand(i, 2);
  int64_t d = i.attrs().dimensions.at(0);
  std::ostringstream body;
  body << "  for (int64_t o = 0; o < " << i.shape().element_count() << "; ++o) out[o] = operand[o];\n";
  Index q;
  for (int64_t k = 0; k < updates.rank(); ++k) {
    q.push_back(IndexExpr::Var("q" + std::to_string(k), updates.dims[k]));
    body << "  for (int64_t q" << k << " = 0; q" << k << " < " << updates.dims[k] << "; ++q" << k << ")\n";
  }
  std::string j = i.attrs().index == 0 ? "indices[" + (updates.rank() ? q[d].str() : std::string("0")) + "]"
                                       : "indices[" + Linear(q, updates.dims) + "]";
  Index target = q;
  int64_t target_size = i.shape().dims.empty() ? 1 : i.shape().dims[d];
  if (updates.rank()) target[d] = IndexExpr::Opaque("j", 0, target_size - 1);
  std::string slot = "out[" + Linear(target, i.shape().dims) + "]";
  std::string value = "updates[" + Linear(q, updates.dims) + "]";
  const Instruction* combiner = i.attrs().called.at(0)->root();
  std::string combined = combiner->opcode() == Opcode::kParameter ? value : Combiner(i, slot, value);
  body << "  {\n    const int64_t j = " << CheckedIndex(j, target_size, i.name())
       << ";\n    " << slot << " = " << combined << ";\n  }\n";
  StepWriter::KernelNames names =
      steps.AddKernel(i.name(), "TXLA_KERNEL void " + fn + "(" + type + "* __restrict__ out, const " + type +
                              "* __restrict__ operand, const int64_t* __restrict__ indices, const " + type +
                              "* __restrict__ updates)",
                body.str());
  steps.code() << "  " << names.at(fn) << "(" << BufferName(i) << ", " << operand << ", " << indices << ", " << values << ");\n";
}

// Scans (every txla.cum* target) along dimensions={d}, one line at a time, as ATen's CPU
// kernels compute them (f32 in a double accumulator): txla.cumsum / txla.cumprod (running
// totals), txla.cumlogsumexp (a running log-sum-exp), and txla.cummax_indices /
// txla.cummin_indices (where the running extremum was last taken: a later equal value or any NaN
// takes over; the values are a gather of these indices).
void EmitScan(StepWriter& steps, const Instruction& i, const std::vector<int64_t>& lines) {
  using hlo::CustomCallTarget;
  const CustomCallTarget target = i.attrs().custom_call_target;
  const hlo::Shape& s = i.shape();
  const hlo::Shape& xs = i.operand(0)->shape();
  const int64_t outer = lines[0], length = lines[1], inner = lines[2];
  std::string type = CType(s.type), x_type = CType(xs.type), fn = "k_" + Sanitize(i.name());
  std::string acc_type = WideType(s.type);
  std::string init, step;
  if (target == CustomCallTarget::kCumsum) {
    init = acc_type + " acc = 0;", step = "acc = acc + x[at]; out[at] = (" + type + ")acc;";
  } else if (target == CustomCallTarget::kCumprod) {
    init = acc_type + " acc = 1;", step = "acc = acc * x[at]; out[at] = (" + type + ")acc;";
  } else if (target == CustomCallTarget::kCumlogsumexp) {
    // ATen's _log_add_exp_helper: NaN spreads; equal infinities stay as they are.
    init = acc_type + " acc = -__builtin_inf();";
    step = "{ const " + acc_type + " v = x[at];\n"
           "          const " + acc_type + " lo = __builtin_isnan(acc) ? acc : (acc < v ? acc : v);\n"
           "          const " + acc_type + " hi = __builtin_isnan(acc) ? acc : (v < acc ? acc : v);\n"
           "          acc = (lo != hi || __builtin_isfinite(lo)) ? txla_log1p(txla_exp(lo - hi)) + hi : v;\n"
           "          out[at] = (" + type + ")acc; }";
  } else if (target == CustomCallTarget::kCummaxIndices || target == CustomCallTarget::kCumminIndices) {
    std::string takes = target == CustomCallTarget::kCummaxIndices ? "txla_scan_max_takes" : "txla_scan_min_takes";
    // The first element starts the line (read in the loop: a line of length 0 reads nothing).
    init = x_type + " best = 0; int64_t where = 0;";
    step = "if (k == 0 || " + takes + "(x[at], best)) { best = x[at]; where = k; }"
           " out[at] = where;";
  } else {
    throw std::invalid_argument("codegen: " + i.name() + " is not a scan");
  }
  std::ostringstream body;
  body << "  for (int64_t o = 0; o < " << outer << "; ++o)\n    for (int64_t i = 0; i < " << inner << "; ++i) {\n"
       << "      " << init << "\n"
       << "      for (int64_t k = 0; k < " << length << "; ++k) {\n"
       << "        const int64_t at = (o * " << length << " + k) * " << inner << " + i;\n"
       << "        " << step << "\n      }\n    }\n";
  StepWriter::KernelNames names = steps.AddKernel(
      i.name(), "TXLA_KERNEL void " + fn + "(" + type + "* __restrict__ out, const " + x_type + "* __restrict__ x)",
      body.str());
  steps.code() << "  " << names.at(fn) << "(" << BufferName(i) << ", " << steps.Operand(i, 0) << ");\n";
}

}  // namespace txla::compiler::emitter
