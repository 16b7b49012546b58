// Loop kernels: a fusion's loop nest over its output, its split across threads, and its call.
#include "compiler/codegen/loop_emitter.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/codegen/loop_invariants.h"
#include "debug/config.h"
#include "metrics/metrics.h"

namespace txla::compiler::emitter {

void LoopEmitter::Emit(const Instruction& i) {
  if (!steps_.Materialized(i)) throw std::invalid_argument("codegen: " + i.name() + " has no buffer");
  const Instruction* root = &i;
  kernel_.expr.fusion_params.clear();
  kernel_.expr.inlined.clear();
  kernel_.extra_outputs.clear();
  kernel_.sibling_reductions.clear();
  auto map_fusion = [&](const Instruction& fusion) {
    const hlo::Computation* fused = fusion.attrs().called.at(0);
    for (const Instruction* p : fused->parameters())
      kernel_.expr.fusion_params[p] = fusion.operand(p->attrs().parameter_number);
    return fused->root();
  };
  if (i.opcode() == Opcode::kFusion) root = map_fusion(i);
  auto extra = steps_.plan().merged.extra_outputs.find(&i);
  if (extra != steps_.plan().merged.extra_outputs.end()) {
    for (const Instruction* written : extra->second) {
      // A reduction's kernel also computes its sibling (another accumulator in its loops); a
      // loop kernel computes the producers it reads.
      if (root->opcode() == Opcode::kReduce) kernel_.sibling_reductions.push_back(map_fusion(*written));
      else kernel_.expr.inlined[written] = map_fusion(*written);
      kernel_.extra_outputs.push_back(written);
    }
  }
  // Every output empty: nothing to compute, and no kernel (a reduction's row arithmetic would
  // divide by the empty dimension: the sum over dim 0 of a [3, 0] tensor was a SIGFPE).
  auto empty = [](const Instruction* x) { return x->shape().element_count() == 0; };
  if (empty(&i) && std::all_of(kernel_.extra_outputs.begin(), kernel_.extra_outputs.end(), empty)) return;
  // The loop nest becomes a function of its own whose buffers are __restrict__ parameters:
  // nothing aliases, so the compiler hoists scalar loads and vectorizes without checks.
  kernel_.body.str("");
  kernel_.expr.BeginKernel(&i);
  // A probe emits only a flat candidate; the real pass the candidates it chose.
  const bool flat = probing_flat_ ? Flat(*root) : flat_kernels_.count(&i) > 0;
  if (probing_flat_ && !flat) return;
  kernel_.parallel = !flat && Parallelizable(*root);
  const std::string out = BufferName(i);
  if (root->opcode() == Opcode::kReduce) reductions_.Emit(*root, out);
  else if (flat) EmitFlatLoop(*root, out);
  else EmitLoop(*root, out);
  std::vector<StepWriter::KernelBuffer> buffers = {{StorageType(i.shape().type), out, true}};
  for (const Instruction* e : kernel_.extra_outputs) buffers.push_back({StorageType(e->shape().type), BufferName(*e), true});
  for (const Instruction* b : kernel_.expr.used) buffers.push_back({StorageType(b->shape().type), BufferName(*b), false});
  const std::string body = kernel_.expr.tables.str() + kernel_.body.str();
  if (flat) steps_.EmitKernelCall(i.name(), buffers, body, i.shape().element_count(), StepWriter::CallForm::kFlat);
  else steps_.EmitKernelCall(i.name(), buffers, body, kernel_.parallel ? kernel_.parallel_extent : 0);
}

// A loop kernel whose every read is at its own row-major offset or of a scalar (an optimizer's
// update, an activation's gradient) is one loop over its elements, whatever its shape: such
// kernels for different shapes are the same code and take their length as an argument.
bool LoopEmitter::Flat(const Instruction& root) const {
  size_t rank = root.shape().rank();
  if (root.opcode() == Opcode::kReduce || rank == 0 || root.shape().element_count() == 0) return false;
  std::vector<int64_t> identity(rank);
  for (size_t d = 0; d < rank; ++d) identity[d] = static_cast<int64_t>(d);
  if (!kernel_.ReadsMergeable(root, identity, 0, rank)) return false;
  for (const auto& [producer, fused_root] : kernel_.expr.inlined)
    if (!kernel_.ReadsMergeable(*fused_root, identity, 0, rank)) return false;
  return true;
}

// A flat kernel with a runtime length takes the C++ compiler about twice as long as the same
// loop with a constant one (its vectorized loop gets a shorter vector epilogue and a scalar
// one: ~6 against ~3.3 ms a kernel), so a loop is flat only where that buys sharing: where
// kernels of two or more lengths in this graph become one (an optimizer's update of parameters
// of many shapes). Found by emitting each candidate flat, by itself, and comparing the kernels.
std::set<const Instruction*> LoopEmitter::FlatKernelsOfManyLengths() {
  if (debug::GetConfig().flat_kernels == 0) return {};
  struct Users {
    std::set<int64_t> lengths;
    std::vector<const Instruction*> instructions;
  };
  std::map<std::string, Users> by_kernel;
  for (const Instruction* i : steps_.module().entry()->instructions()) {
    if (i->opcode() != Opcode::kFusion && !hlo::IsElementwise(i->opcode())) continue;
    if (!HasCodeOfItsOwn(steps_.plan(), *i)) continue;
    StepWriter probe_steps(steps_.module(), steps_.plan(), steps_.profile());
    LoopEmitter probe(probe_steps, /*probing_flat=*/true);
    probe.Emit(*i);
    if (probe_steps.kernels().hashes().size() != 1) continue;
    Users& users = by_kernel[*probe_steps.kernels().hashes().begin()];
    users.lengths.insert(i->shape().element_count());
    users.instructions.push_back(i);
  }
  std::set<const Instruction*> flat;
  for (const auto& [hash, users] : by_kernel)
    if (users.lengths.size() >= 2 || debug::GetConfig().flat_kernels > 1)
      flat.insert(users.instructions.begin(), users.instructions.end());
  return flat;
}

// for (i0 = lo; i0 < hi; ++i0) out[i0] = value; the caller passes [lo, hi) of the elements.
void LoopEmitter::EmitFlatLoop(const Instruction& root, const std::string& out) {
  if (!probing_flat_) {
    TXLA_COUNTER("KernelsFlat", 1);
    if (root.shape().rank() > 1) TXLA_COUNTER("KernelLoopsMerged", 1);
  }
  // The variable's range is the whole output, as every call's [lo, hi) lies in it; the reads
  // recombine into the variable itself, so the body never spells the length.
  Index idx = DelinearizeExpr(IndexExpr::Var("i0", root.shape().element_count()), root.shape().dims);
  kernel_.expr.may_split = false;
  std::string invariant;
  std::string body = LoopBody(root, out, idx, "i0", "  ", "i0", &invariant);
  std::string loop = "  for (int64_t i0 = lo; i0 < hi; ++i0)\n" + body;
  kernel_.body << (invariant.empty() ? loop : "  {\n" + invariant + loop + "  }\n");
}

bool LoopEmitter::Parallelizable(const Instruction& root) {
  if (root.opcode() == Opcode::kReduce) {
    kernel_.parallel_extent = reductions_.ParallelExtent(root);
    return kernel_.parallel_extent >= 2;
  }
  const hlo::Shape& shape = root.shape();
  if (shape.rank() == 0 || shape.element_count() < kParallelElements) return false;
  size_t rank = shape.dims.size();
  bool tiled = rank >= 2 && kernel_.KernelTransposesLastDimension(root) && shape.dims[rank - 1] > kTile &&
               shape.dims[rank - 2] > kTile;
  // A 2-D transpose's outer loop is a loop over rows of tiles: the threads split those.
  kernel_.parallel_extent = tiled && rank == 2 ? (shape.dims[0] + kTile - 1) / kTile : shape.dims[0];
  return kernel_.parallel_extent >= 2;
}

// for (i0..) for (i1..) { out[linear] = value; }
// A concatenation along a loop's own variable splits that loop at the parts' boundaries: each
// piece then reads one part, without clamps or selects.
void LoopEmitter::EmitLoop(const Instruction& root, const std::string& out) {
  const auto& dims = root.shape().dims;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t d : dims) ranges.emplace_back(0, d);
  kernel_.expr.split_dim = -1;
  kernel_.expr.split_points.clear();
  nest_walked_down_columns_ = false;
  std::string whole = LoopNest(root, out, ranges, /*may_split=*/true);
  if (kernel_.expr.split_dim < 0) {
    // A tiled nest is emitted again with tile indices (below), which a concatenation's split
    // cannot read: the first pass found no split.
    kernel_.body << (nest_has_tile_indices_ ? LoopNest(root, out, ranges, /*may_split=*/false) : whole);
    if (nest_has_tile_indices_) TXLA_COUNTER("KernelTileIndices", 1);
    if (nest_walked_down_columns_) TXLA_COUNTER("KernelTilesWalkedDownColumns", 1);
    return;
  }
  TXLA_COUNTER("KernelLoopsSplitAtConcatenate", 1);
  std::vector<int64_t> points = kernel_.expr.split_points;
  int64_t dim = kernel_.expr.split_dim;
  points.insert(points.begin(), 0);
  points.push_back(dims[dim]);
  for (size_t p = 0; p + 1 < points.size(); ++p) {
    if (points[p] == points[p + 1]) continue;
    ranges[dim] = {points[p], points[p + 1]};
    kernel_.body << LoopNest(root, out, ranges, /*may_split=*/false);
    if (nest_has_tile_indices_) TXLA_COUNTER("KernelTileIndices", 1);
  }
  if (nest_walked_down_columns_) TXLA_COUNTER("KernelTilesWalkedDownColumns", 1);
}

// One loop nest over `ranges` of the output's dimensions.
std::string LoopEmitter::LoopNest(const Instruction& root, const std::string& out,
                                  const std::vector<std::pair<int64_t, int64_t>>& ranges, bool may_split) {
  const auto& dims = root.shape().dims;
  std::ostringstream nest;
  Index idx;
  std::string indent = "  ";
  nest << indent << "{\n";
  std::vector<std::string> loops;  // the for lines, outermost first
  std::string inner_var;           // the innermost loop's variable
  // A kernel that transposes its last dimension reads one of its inputs down columns: walking
  // the last two dimensions in square tiles keeps both the reads and the writes in cache.
  size_t rank = dims.size();
  bool tiled = rank >= 2 && kernel_.KernelTransposesLastDimension(root) && dims[rank - 1] > kTile && dims[rank - 2] > kTile;
  size_t merged = rank;
  if (!tiled) {
    // Only whole dimensions merge, never the one the threads split.
    size_t first = kernel_.parallel ? 1 : 0;
    for (size_t k = first; k < rank; ++k)
      if (ranges[k] != std::make_pair(int64_t{0}, dims[k])) first = k + 1;
    merged = kernel_.MergedInnerDimensions(root, first);
  }
  for (size_t k = 0; k < rank; ++k) {
    std::string v = "i" + std::to_string(k);
    auto [begin, end] = ranges[k];
    if (k == merged) {
      std::vector<int64_t> inner(dims.begin() + static_cast<std::ptrdiff_t>(k), dims.end());
      int64_t extent = 1;
      for (int64_t d : inner) extent *= d;
      Index parts = DelinearizeExpr(IndexExpr::Var(v, extent), inner);
      idx.insert(idx.end(), parts.begin(), parts.end());
      TXLA_COUNTER("KernelLoopsMerged", 1);
      loops.push_back(indent + "  for (int64_t " + v + " = 0; " + v + " < " + std::to_string(extent) + "; ++" + v + ")\n");
      inner_var = v;
      break;
    }
    idx.push_back(IndexExpr::Var(v, begin, end));
    inner_var = v;
    if (tiled && k + 2 >= rank) continue;
    if (k == 0 && kernel_.parallel) {
      std::string b = begin == 0 ? "lo" : "(lo > " + std::to_string(begin) + " ? lo : " + std::to_string(begin) + ")";
      std::string e = end == dims[0] ? "hi" : "(hi < " + std::to_string(end) + " ? hi : " + std::to_string(end) + ")";
      loops.push_back(indent + "  for (int64_t " + v + " = " + b + "; " + v + " < " + e + "; ++" + v + ")\n");
    } else {
      loops.push_back(indent + "  for (int64_t " + v + " = " + std::to_string(begin) + "; " + v + " < " +
                      std::to_string(end) + "; ++" + v + ")\n");
    }
  }
  nest_has_tile_indices_ = false;
  if (tiled) {
    // Within a tile, the innermost loop runs along the output's rows (reading the transposed
    // input's rows) when that input is all the kernel reads: see ReadsOnlyThroughTransposedRows.
    const bool down_columns = kernel_.ReadsOnlyThroughTransposedRows(root);
    nest_walked_down_columns_ |= down_columns;
    const std::vector<size_t> inner_order =
        down_columns ? std::vector<size_t>{rank - 1, rank - 2} : std::vector<size_t>{rank - 2, rank - 1};
    const std::string tile = std::to_string(kTile);
    // Whole tiles (both ranges' ends on tile boundaries, so every thread's rows of tiles too):
    // the index is tile * kTile + offset, an offset the innermost loop runs over 0..kTile-1 (a
    // constant trip count, which the vectorizer needs), and what depends on the tile alone (a
    // concatenation's '% 32' and '/ 32' of the position, in the attention backward's
    // concatenation of the q, k and v gradients) is simplified into per-tile values computed
    // before the loop. Not in the first pass over a kernel, whose concatenations may split it
    // (a split needs a plain loop variable).
    const bool whole_tiles = ranges[rank - 2].first % kTile == 0 && ranges[rank - 2].second % kTile == 0 &&
                             ranges[rank - 1].first % kTile == 0 && ranges[rank - 1].second % kTile == 0;
    if (whole_tiles) nest_has_tile_indices_ = true;
    if (whole_tiles && !may_split) {
      for (size_t k = rank - 2; k < rank; ++k) {
        std::string i = "i" + std::to_string(k), t = "t" + std::to_string(k);
        int64_t first = ranges[k].first / kTile, past = ranges[k].second / kTile;
        idx[k] = IndexExpr::Var(t, first, past) * kTile + IndexExpr::Var(i, 0, kTile);
        std::string b = std::to_string(first), e = std::to_string(past);
        if (k == 0 && kernel_.parallel) {  // this thread's rows of tiles: [lo, hi)
          b = first == 0 ? "lo" : "(lo > " + b + " ? lo : " + b + ")";
          e = "(hi < " + e + " ? hi : " + e + ")";
        }
        loops.push_back(indent + "  for (int64_t " + t + " = " + b + "; " + t + " < " + e + "; ++" + t + ")\n");
      }
      for (size_t k : inner_order) {
        std::string i = "i" + std::to_string(k);
        loops.push_back(indent + "  for (int64_t " + i + " = 0; " + i + " < " + tile + "; ++" + i + ")\n");
        inner_var = i;
      }
    } else {
      std::vector<std::string> begin(rank), end(rank);
      for (size_t k = rank - 2; k < rank; ++k) {
        begin[k] = std::to_string(ranges[k].first);
        end[k] = std::to_string(ranges[k].second);
        if (k == 0 && kernel_.parallel) {  // this thread's rows of tiles: [lo * kTile, hi * kTile)
          std::string l = "lo * " + tile, h = "hi * " + tile;
          begin[k] = "(" + l + " > " + begin[k] + " ? " + l + " : " + begin[k] + ")";
          end[k] = "(" + h + " < " + end[k] + " ? " + h + " : " + end[k] + ")";
        }
        std::string t = "t" + std::to_string(k);
        loops.push_back(indent + "  for (int64_t " + t + " = " + begin[k] + "; " + t + " < " + end[k] + "; " + t +
                        " += " + tile + ")\n");
      }
      for (size_t k : inner_order) {
        std::string i = "i" + std::to_string(k), t = "t" + std::to_string(k);
        loops.push_back(indent + "  for (int64_t " + i + " = " + t + "; " + i + " < (" + t + " + " + tile + " < " +
                        end[k] + " ? " + t + " + " + tile + " : " + end[k] + "); ++" + i + ")\n");
        inner_var = i;
      }
    }
  }
  kernel_.expr.may_split = may_split;
  std::string invariant;
  std::string body = LoopBody(root, out, idx, Linear(idx, dims), indent, inner_var, &invariant);
  // Values that do not change along the innermost loop are computed before it (loop_invariants.h).
  if (!invariant.empty() && loops.size() >= 2) TXLA_COUNTER("KernelLoopInvariantsHoisted", 1);
  for (size_t k = 0; k < loops.size(); ++k) {
    if (k + 1 == loops.size() && !invariant.empty()) nest << indent << "  {\n" << invariant;
    nest << loops[k];
  }
  nest << body;
  if (!loops.empty() && !invariant.empty()) nest << indent << "  }\n";
  nest << indent << "}\n";
  return nest.str();
}

// The innermost loop's body: the root's value and the producers' it also writes, at `idx`
// (row-major `offset`), stored.
std::string LoopEmitter::LoopBody(const Instruction& root, const std::string& out, const Index& idx,
                                  const std::string& offset, const std::string& indent,
                                  const std::string& inner_var, std::string* invariant) {
  kernel_.expr.BeginBody();
  std::string value = kernel_.expr.Value(root, idx);
  // The producers this kernel also writes, at the same index (their values are mostly
  // computed already: the root reads them).
  std::vector<std::string> extra_values;
  for (const Instruction* e : kernel_.extra_outputs) extra_values.push_back(kernel_.expr.Value(*kernel_.expr.inlined.at(e), idx));
  kernel_.expr.may_split = false;
  // Every value is computed before any is stored: an output may be written over a donated
  // parameter that this index still reads (buffer_assignment.h, donations).
  SplitLoopBody split = inner_var.empty() ? SplitLoopBody{"", kernel_.expr.body.str()} : HoistLoopInvariants(kernel_.expr.body.str(), inner_var);
  *invariant = split.invariant;
  std::ostringstream text;
  text << indent << "  {\n" << split.varying << indent << "    " << out << "[" << offset
       << "] = " << Stored(root.shape().type, value) << ";\n";
  for (size_t k = 0; k < kernel_.extra_outputs.size(); ++k)
    text << indent << "    " << BufferName(*kernel_.extra_outputs[k]) << "[" << offset
         << "] = " << Stored(kernel_.extra_outputs[k]->shape().type, extra_values[k]) << ";\n";
  text << indent << "  }\n";
  return text.str();
}

}  // namespace txla::compiler::emitter
