// Loop kernels: a fusion's loop nest over its output, its split across threads, and the kernel
// functions and trampolines it becomes.
#include "compiler/codegen/emitter.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_naming.h"
#include "compiler/codegen/loop_invariants.h"
#include "debug/config.h"
#include "metrics/metrics.h"

namespace txla::compiler::emitter {

void Emitter::EmitKernel(const Instruction& i) {
  // A view is read in its base's buffer; a merged producer is written by its consumer's loop.
  if (plan_.IsView(&i) || plan_.merged.writer.count(&i)) return;
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kTuple:
      return;
    case Opcode::kConstant:
      if (i.shape().IsScalar()) return;
      break;
    case Opcode::kDot:
      EmitDot(i);
      return;
    case Opcode::kConvolution:
    case Opcode::kCustomCall:
      EmitLibraryCall(i);
      return;
    case Opcode::kScatter:
      EmitScatter(i);
      return;
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
      EmitCollective(i);
      return;
    default:
      break;
  }
  if (!Materialized(i))
    throw std::invalid_argument("codegen: " + i.name() + " has no buffer");
  const Instruction* root = &i;
  expr_.fusion_params.clear();
  expr_.inlined.clear();
  extra_outputs_.clear();
  sibling_reductions_.clear();
  auto map_fusion = [&](const Instruction& fusion) {
    const hlo::Computation* fused = fusion.attrs().called.at(0);
    for (const Instruction* p : fused->parameters())
      expr_.fusion_params[p] = fusion.operand(p->attrs().parameter_number);
    return fused->root();
  };
  if (i.opcode() == Opcode::kFusion) root = map_fusion(i);
  auto extra = plan_.merged.extra_outputs.find(&i);
  if (extra != plan_.merged.extra_outputs.end()) {
    for (const Instruction* written : extra->second) {
      // A reduction's kernel also computes its sibling (another accumulator in its loops); a
      // loop kernel computes the producers it reads.
      if (root->opcode() == Opcode::kReduce) sibling_reductions_.push_back(map_fusion(*written));
      else expr_.inlined[written] = map_fusion(*written);
      extra_outputs_.push_back(written);
    }
  }
  // Every output empty: nothing to compute, and no kernel (a reduction's row arithmetic would
  // divide by the empty dimension: the sum over dim 0 of a [3, 0] tensor was a SIGFPE).
  auto empty = [](const Instruction* x) { return x->shape().element_count() == 0; };
  if (empty(&i) && std::all_of(extra_outputs_.begin(), extra_outputs_.end(), empty)) return;
  // The loop nest becomes a function of its own whose buffers are __restrict__ parameters:
  // nothing aliases, so the compiler hoists scalar loads and vectorizes without checks.
  std::ostringstream kernel;
  std::swap(kernel, out_);
  expr_.BeginKernel(&i);
  // A probe emits only a flat candidate; the real pass the candidates it chose.
  const bool flat = probing_flat_ ? Flat(*root) : flat_kernels_.count(&i) > 0;
  if (probing_flat_ && !flat) return;
  parallel_ = !flat && Parallelizable(*root);
  if (root->opcode() == Opcode::kReduce) EmitReduce(*root, Buffer(i));
  else if (flat) EmitFlatLoop(*root, Buffer(i));
  else EmitLoop(*root, Buffer(i));
  std::swap(kernel, out_);
  std::vector<KernelBuffer> buffers = {{StorageType(i.shape().type), Buffer(i), true}};
  for (const Instruction* e : extra_outputs_) buffers.push_back({StorageType(e->shape().type), Buffer(*e), true});
  for (const Instruction* b : expr_.used) buffers.push_back({StorageType(b->shape().type), Buffer(*b), false});
  if (flat) EmitKernelCall(i.name(), buffers, expr_.tables.str() + kernel.str(), i.shape().element_count(), CallForm::kFlat);
  else EmitKernelCall(i.name(), buffers, expr_.tables.str() + kernel.str(), parallel_ ? parallel_extent_ : 0);
}

void Emitter::EmitKernelCall(const std::string& name, const std::vector<KernelBuffer>& buffers,
                             const std::string& body, int64_t parallel_extent, CallForm form) {
  std::string fn = "k_" + Sanitize(name);
  // Restrict holds in practice even where the output may be written over a donated parameter:
  // buffer assignment donates only a parameter the kernel reads at each element's own index
  // (ReadAtOwnIndexOnly), so every element is read before it is written, in any order the
  // compiler picks. Without restrict, such kernels (every optimizer update) reloaded their
  // scalars per element and did not vectorize: AdamW's update ran at 3.4 ns per element.
  const char* restrict = "* __restrict__ ";
  std::string signature = "TXLA_KERNEL void " + fn + "(", call_args;
  for (size_t k = 0; k < buffers.size(); ++k) {
    signature += std::string(k ? ", " : "") + (buffers[k].output ? "" : "const ") + buffers[k].type + restrict +
                 buffers[k].buffer;
    call_args += (k ? ", " : "") + buffers[k].buffer;
  }
  const bool ranged = form == CallForm::kFlat || parallel_extent > 0;
  if (ranged) signature += ", int64_t lo, int64_t hi";
  signature += ")";
  // Every kernel has a trampoline that takes its buffers as an array: the runtime calls it
  // straight from the graph's program (graph_program.h), or its threads call it on a range
  // (support->parallel_for). A kernel without a range ignores lo and hi.
  std::string tramp = "t_" + Sanitize(name), casts;
  for (size_t k = 0; k < buffers.size(); ++k)
    casts += std::string(k ? ", " : "") + "(" + (buffers[k].output ? "" : "const ") + buffers[k].type + "*)a[" +
             std::to_string(k) + "]";
  // Exported, unmangled: the runtime finds it by name (graph_program.h's ProgramText).
  std::string tramp_signature = "extern \"C\" void " + tramp + "(void* p, int64_t lo, int64_t hi)";
  std::string trampoline = tramp_signature + " { void* const* a = (void* const*)p; " + fn + "(" + casts +
                           (ranged ? ", lo, hi" : "") + "); }\n";
  KernelNames names = AddKernel(name, signature, body, trampoline, tramp_signature + ";\n");
  std::string array;
  for (size_t k = 0; k < buffers.size(); ++k) array += std::string(k ? ", " : "") + "(void*)" + buffers[k].buffer;
  call_ = KernelCall{};
  call_.trampoline = names.at(tramp);
  for (const KernelBuffer& b : buffers) call_.buffers.push_back(b.buffer);
  std::ostringstream text;
  if (!ranged) {
    text << "  " << names.at(fn) << "(" << call_args << ");\n";
  } else if (form == CallForm::kFlat && parallel_extent < kParallelElements) {
    text << "  " << names.at(fn) << "(" << call_args << ", 0, " << parallel_extent << ");\n";
    call_.extent = parallel_extent;
  } else {
    text << "  { void* c[] = {" << array << "}; support->parallel_for(&" << call_.trampoline << ", c, "
         << parallel_extent << "); }\n";
    call_.extent = parallel_extent;
    call_.parallel = true;
  }
  call_.text = text.str();
  out_ << call_.text;
}

// A loop kernel whose every read is at its own row-major offset or of a scalar (an optimizer's
// update, an activation's gradient) is one loop over its elements, whatever its shape: such
// kernels for different shapes are the same code and take their length as an argument.
bool Emitter::Flat(const Instruction& root) {
  size_t rank = root.shape().rank();
  if (root.opcode() == Opcode::kReduce || rank == 0 || root.shape().element_count() == 0) return false;
  std::vector<int64_t> identity(rank);
  for (size_t d = 0; d < rank; ++d) identity[d] = static_cast<int64_t>(d);
  if (!ReadsMergeable(root, identity, 0, rank)) return false;
  for (const auto& [producer, fused_root] : expr_.inlined)
    if (!ReadsMergeable(*fused_root, identity, 0, rank)) return false;
  return true;
}

// A flat kernel with a runtime length takes the C++ compiler about twice as long as the same
// loop with a constant one (its vectorized loop gets a shorter vector epilogue and a scalar
// one: ~6 against ~3.3 ms a kernel), so a loop is flat only where that buys sharing: where
// kernels of two or more lengths in this graph become one (an optimizer's update of parameters
// of many shapes). Found by emitting each candidate flat, by itself, and comparing the kernels.
std::set<const Instruction*> Emitter::FlatKernelsOfManyLengths() {
  if (debug::GetConfig().flat_kernels == 0) return {};
  struct Users {
    std::set<int64_t> lengths;
    std::vector<const Instruction*> instructions;
  };
  std::map<std::string, Users> by_kernel;
  for (const Instruction* i : module_.entry()->instructions()) {
    if (i->opcode() != Opcode::kFusion && !hlo::IsElementwise(i->opcode())) continue;
    Emitter probe(module_, plan_, profile_);
    probe.probing_flat_ = true;
    probe.EmitKernel(*i);
    if (probe.kernels_.hashes().size() != 1) continue;
    Users& users = by_kernel[*probe.kernels_.hashes().begin()];
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
void Emitter::EmitFlatLoop(const Instruction& root, const std::string& out) {
  if (!probing_flat_) {
    TXLA_COUNTER("KernelsFlat", 1);
    if (root.shape().rank() > 1) TXLA_COUNTER("KernelLoopsMerged", 1);
  }
  // The variable's range is the whole output, as every call's [lo, hi) lies in it; the reads
  // recombine into the variable itself, so the body never spells the length.
  Index idx = DelinearizeExpr(IndexExpr::Var("i0", root.shape().element_count()), root.shape().dims);
  expr_.may_split = false;
  std::string invariant;
  std::string body = LoopBody(root, out, idx, "i0", "  ", "i0", &invariant);
  std::string loop = "  for (int64_t i0 = lo; i0 < hi; ++i0)\n" + body;
  out_ << (invariant.empty() ? loop : "  {\n" + invariant + loop + "  }\n");
}

bool Emitter::Parallelizable(const Instruction& root) {
  const hlo::Shape& shape = root.opcode() == Opcode::kReduce ? root.operand(0)->shape() : root.shape();
  if (shape.rank() == 0 || shape.element_count() < kParallelElements) return false;
  if (size_t leading = root.opcode() == Opcode::kReduce ? RowReduceLeading(root) : 0) {
    // Rows of accumulators split by their first kept dimension: each thread owns a slice. A
    // single kept dimension is split in whole blocks of kRowBlock: the inner loop keeps a
    // constant trip count, which the compiler needs to vectorize it at -O2.
    // Each thread then reads a narrow slice of every row, a strided pattern the prefetchers
    // follow badly: on an EPYC Milan the split ran 1.1-5x slower than one thread streaming
    // whole rows at every size measured (64k to 4M elements; LayerNorm and bias gradients are
    // 65k-262k), so only very large reductions are split.
    if (shape.element_count() < kParallelRowReduceElements) return false;
    int64_t kept = shape.dims[leading];
    if (leading + 1 == shape.dims.size()) {
      if (kept % kRowBlock != 0) return false;
      kept /= kRowBlock;
    }
    parallel_extent_ = kept;
    return parallel_extent_ >= 2;
  }
  if (root.opcode() == Opcode::kReduce) {
    // The general reduction's outermost loop runs over the first kept dimension: split it.
    const auto& reduced = root.attrs().dimensions;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
      parallel_extent_ = shape.dims[d];
      return parallel_extent_ >= 2;
    }
    return false;
  }
  size_t rank = shape.dims.size();
  bool tiled = rank >= 2 && KernelTransposesLastDimension(root) && shape.dims[rank - 1] > kTile &&
               shape.dims[rank - 2] > kTile;
  // A 2-D transpose's outer loop is a loop over rows of tiles: the threads split those.
  parallel_extent_ = tiled && rank == 2 ? (shape.dims[0] + kTile - 1) / kTile : shape.dims[0];
  return parallel_extent_ >= 2;
}

// for (i0..) for (i1..) { out[linear] = value; }
// A concatenation along a loop's own variable splits that loop at the parts' boundaries: each
// piece then reads one part, without clamps or selects.
void Emitter::EmitLoop(const Instruction& root, const std::string& out) {
  const auto& dims = root.shape().dims;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t d : dims) ranges.emplace_back(0, d);
  expr_.split_dim = -1;
  expr_.split_points.clear();
  nest_walked_down_columns_ = false;
  std::string whole = LoopNest(root, out, ranges, /*may_split=*/true);
  if (expr_.split_dim < 0) {
    // A tiled nest is emitted again with tile indices (below), which a concatenation's split
    // cannot read: the first pass found no split.
    out_ << (nest_has_tile_indices_ ? LoopNest(root, out, ranges, /*may_split=*/false) : whole);
    if (nest_has_tile_indices_) TXLA_COUNTER("KernelTileIndices", 1);
    if (nest_walked_down_columns_) TXLA_COUNTER("KernelTilesWalkedDownColumns", 1);
    return;
  }
  TXLA_COUNTER("KernelLoopsSplitAtConcatenate", 1);
  std::vector<int64_t> points = expr_.split_points;
  int64_t dim = expr_.split_dim;
  points.insert(points.begin(), 0);
  points.push_back(dims[dim]);
  for (size_t p = 0; p + 1 < points.size(); ++p) {
    if (points[p] == points[p + 1]) continue;
    ranges[dim] = {points[p], points[p + 1]};
    out_ << LoopNest(root, out, ranges, /*may_split=*/false);
    if (nest_has_tile_indices_) TXLA_COUNTER("KernelTileIndices", 1);
  }
  if (nest_walked_down_columns_) TXLA_COUNTER("KernelTilesWalkedDownColumns", 1);
}

// One loop nest over `ranges` of the output's dimensions.
std::string Emitter::LoopNest(const Instruction& root, const std::string& out,
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
  bool tiled = rank >= 2 && KernelTransposesLastDimension(root) && dims[rank - 1] > kTile && dims[rank - 2] > kTile;
  size_t merged = rank;
  if (!tiled) {
    // Only whole dimensions merge, never the one the threads split.
    size_t first = parallel_ ? 1 : 0;
    for (size_t k = first; k < rank; ++k)
      if (ranges[k] != std::make_pair(int64_t{0}, dims[k])) first = k + 1;
    merged = MergedInnerDimensions(root, first);
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
    if (k == 0 && parallel_) {
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
    const bool down_columns = ReadsOnlyThroughTransposedRows(root);
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
        if (k == 0 && parallel_) {  // this thread's rows of tiles: [lo, hi)
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
        if (k == 0 && parallel_) {  // this thread's rows of tiles: [lo * kTile, hi * kTile)
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
  expr_.may_split = may_split;
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
std::string Emitter::LoopBody(const Instruction& root, const std::string& out, const Index& idx,
                              const std::string& offset, const std::string& indent, const std::string& inner_var,
                              std::string* invariant) {
  expr_.BeginBody();
  std::string value = expr_.Value(root, idx);
  // The producers this kernel also writes, at the same index (their values are mostly
  // computed already: the root reads them).
  std::vector<std::string> extra_values;
  for (const Instruction* e : extra_outputs_) extra_values.push_back(expr_.Value(*expr_.inlined.at(e), idx));
  expr_.may_split = false;
  // Every value is computed before any is stored: an output may be written over a donated
  // parameter that this index still reads (buffer_assignment.h, donations).
  SplitLoopBody split = inner_var.empty() ? SplitLoopBody{"", expr_.body.str()} : HoistLoopInvariants(expr_.body.str(), inner_var);
  *invariant = split.invariant;
  std::ostringstream text;
  text << indent << "  {\n" << split.varying << indent << "    " << out << "[" << offset
       << "] = " << Stored(root.shape().type, value) << ";\n";
  for (size_t k = 0; k < extra_outputs_.size(); ++k)
    text << indent << "    " << Buffer(*extra_outputs_[k]) << "[" << offset
         << "] = " << Stored(extra_outputs_[k]->shape().type, extra_values[k]) << ";\n";
  text << indent << "  }\n";
  return text.str();
}

Emitter::KernelNames Emitter::AddKernel(const std::string& name, const std::string& signature, const std::string& body,
                                        const std::string& after, const std::string& prototype_extra) {
  KernelRegistry::Added kernel = kernels_.Add(name, SourceComment(name), signature, body, after, prototype_extra);
  step_prototypes_ += kernel.prototypes;
  return kernel.names;
}

// XLA_HLO_DEBUG: the lazy IR ops and user lines the instruction `name` computes (its fused
// instructions' metadata), as comment lines before its kernel.
std::string Emitter::SourceComment(const std::string& name) {
  if (!debug::GetConfig().hlo_debug) return "";
  const Instruction* i = nullptr;
  for (const Instruction* candidate : module_.entry()->instructions())
    if (candidate->name() == name) i = candidate;
  if (!i) return "";
  std::vector<const Instruction*> parts{i};
  if (i->opcode() == Opcode::kFusion)
    for (const Instruction* f : i->attrs().called.at(0)->instructions()) parts.push_back(f);
  std::set<std::string> seen;
  std::string out;
  for (const Instruction* p : parts) {
    const hlo::Attributes::Metadata& m = p->attrs().metadata;
    if (m.empty()) continue;
    std::string line = m.op_type + (m.source_file.empty() ? "" : " at " + m.source_file + ":" + std::to_string(m.source_line));
    if (seen.insert(line).second) out += "// computes " + line + "\n";
  }
  return out;
}

}  // namespace txla::compiler::emitter
