#include "graph/checked_execution.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <sstream>
#include <unordered_map>

#include "compiler/compile.h"
#include "debug/config.h"
#include "graph/interpreter.h"
#include "lower/lowering.h"
#include "metrics/metrics.h"
#include "tensor/bridge.h"

namespace txla::graph {
namespace {

// How far apart two results may be: exact for integers and booleans; for floating point, relative
// to the element and to the largest magnitude of the reference (so a sum that cancels to ~0 is
// not flagged for rounding), at the precision of the type. NaN must meet NaN, Inf the same Inf.
struct Difference {
  bool differs = false;
  double max_error = 0;
  int64_t at = -1;  // flat index of the worst element
};

Difference Compare(const at::Tensor& got, const at::Tensor& want) {
  Difference d;
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type()) {
    d.differs = true;
    return d;
  }
  if (want.numel() == 0) return d;
  if (!at::isFloatingType(want.scalar_type())) {
    at::Tensor ne = got.ne(want).reshape(-1);
    if (ne.any().item<bool>()) {
      d.differs = true;
      d.at = ne.nonzero()[0].item<int64_t>();
    }
    return d;
  }
  at::Tensor g = got.to(at::kDouble).reshape(-1), w = want.to(at::kDouble).reshape(-1);
  const double rtol = want.scalar_type() == at::kDouble ? 1e-9 : 1e-3;
  at::Tensor finite = w.isfinite();
  double scale = finite.any().item<bool>() ? w.masked_select(finite).abs().max().item<double>() : 0.0;
  // Non-finite reference elements must be matched exactly (NaN with NaN, +Inf with +Inf).
  at::Tensor special_bad = (~finite) & ~((g.isnan() & w.isnan()) | (g == w));
  at::Tensor err = (g - w).abs().masked_fill(~finite, 0);
  at::Tensor bad = (err > rtol * (w.abs() + scale)) | special_bad | (finite & ~g.isfinite());
  if (bad.any().item<bool>()) {
    d.differs = true;
    d.at = bad.nonzero()[0].item<int64_t>();
  }
  d.max_error = err.max().item<double>();
  return d;
}

std::string Describe(const ir::Node& node) {
  std::ostringstream ss;
  ss << node.OpName() << "(";
  for (size_t i = 0; i < node.operands().size(); ++i)
    ss << (i ? ", " : "") << node.operands()[i].shape().ToString();
  ss << ")";
  std::string attrs = node.AttrString();
  if (!attrs.empty()) ss << ", " << attrs;
  ss << " -> ";
  for (size_t i = 0; i < node.shapes().size(); ++i) ss << (i ? ", " : "") << node.shapes()[i].ToString();
  if (!node.frames().empty()) ss << "\n  created at:\n" << node.frames();
  else ss << "\n  (XLA_IR_DEBUG=1 shows the Python frames that created it)";
  return ss.str();
}

std::string ElementText(const at::Tensor& t, int64_t flat) {
  if (flat < 0 || flat >= t.numel()) return "?";
  std::ostringstream ss;
  ss << t.reshape(-1)[flat].item();
  return ss.str();
}

}  // namespace

bool CheckedExecutionEnabled() { return debug::GetConfig().check_graphs; }

namespace {

// Every output of the graph's op nodes, in post-order.
std::vector<ir::Value> NodeValues(const GraphCut& cut) {
  std::unordered_map<const ir::Node*, ir::NodePtr> owner;
  for (const ir::Value& root : cut.roots) owner[root.node.get()] = root.node;
  for (const ir::Node* node : cut.nodes)
    for (const ir::Value& v : node->operands()) owner[v.node.get()] = v.node;
  std::vector<ir::Value> values;
  for (const ir::Node* node : cut.nodes) {
    if (node->kind() != ir::NodeKind::kOp) continue;
    for (uint32_t k = 0; k < node->shapes().size(); ++k)
      if (node->shape(k).dtype != c10::ScalarType::Undefined) values.push_back({owner.at(node), k});
  }
  return values;
}

// Compiles and runs the graph of `values` (natively or on the interpreter); results per value.
std::vector<at::Tensor> RunValues(const std::vector<ir::Value>& values, bool native, int device,
                                  std::string* dump_path = nullptr) {
  std::vector<size_t> index;
  GraphCut probe = CutGraph(values, &index);
  std::shared_ptr<runtime::Executable> program =
      native ? compiler::Compile(lower::LowerGraph(probe), nullptr, /*graph_hash=*/0)
             : BuildInterpreterProgram(probe);
  if (dump_path) *dump_path = program->dump_path();
  std::vector<runtime::BufferPtr> buffers = program->Execute(probe.parameters, device);
  std::vector<at::Tensor> out;
  for (size_t i : index) out.push_back(BufferAsTensor(buffers[i]));
  return out;
}

// Whether the compiled graph of `values` agrees with `reference`, value by value.
bool AgreesWith(const std::vector<ir::Value>& values, const std::vector<at::Tensor>& reference, int device) {
  std::vector<at::Tensor> got = RunValues(values, /*native=*/true, device);
  for (size_t i = 0; i < got.size(); ++i)
    if (Compare(got[i], reference[i]).differs) return false;
  return true;
}

// When every node is right once materialized, the fault depends on which values stay in
// temporaries or are fused away. Bisect on how many node values (in post-order) are made outputs
// besides the graph's roots: the smallest prefix that makes the graph right ends with the value
// whose computation goes wrong when it is not materialized.
std::string BisectMaterialization(const GraphCut& cut, const std::vector<ir::Value>& nodes, int device) {
  std::vector<ir::Value> all = cut.roots;
  all.insert(all.end(), nodes.begin(), nodes.end());
  std::vector<at::Tensor> reference = RunValues(all, /*native=*/false, device);
  auto right_with = [&](size_t prefix) {
    std::vector<ir::Value> values(all.begin(), all.begin() + static_cast<int64_t>(cut.roots.size() + prefix));
    std::vector<at::Tensor> want(reference.begin(), reference.begin() + static_cast<int64_t>(values.size()));
    return AgreesWith(values, want, device);
  };
  if (right_with(0) || !right_with(nodes.size())) return "";  // not reproducible this way
  size_t lo = 0, hi = nodes.size();  // wrong with lo, right with hi
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    (right_with(mid) ? hi : lo) = mid;
  }
  const ir::Value& culprit = nodes[hi - 1];
  std::ostringstream ss;
  ss << "the graph computes the right values once output " << culprit.index << " of "
     << Describe(*culprit.node) << "\n  is materialized (an output of its own): its value goes wrong "
     << "when it stays a temporary or is fused into its users (buffer assignment, fusion or the emitter)";
  return ss.str();
}

}  // namespace

std::string LocalizeMismatch(const GraphCut& cut, int device) {
  // Every output of every op node becomes a root of a probe graph, so that each is materialized,
  // compiled and on the interpreter.
  std::vector<ir::Value> probe_values = NodeValues(cut);
  std::string probe_dump;
  std::vector<at::Tensor> probe = RunValues(probe_values, /*native=*/true, device, &probe_dump);
  std::vector<at::Tensor> reference = RunValues(probe_values, /*native=*/false, device);

  std::unordered_map<const ir::Node*, std::vector<size_t>> position;  // by node, per output
  for (size_t i = 0; i < probe_values.size(); ++i) {
    auto& outs = position[probe_values[i].node.get()];
    outs.resize(probe_values[i].node->shapes().size(), SIZE_MAX);
    outs[probe_values[i].index] = i;
  }
  auto value_of = [&](const ir::Value& v, const std::vector<at::Tensor>& values) -> at::Tensor {
    const ir::Node* n = v.node.get();
    if (n->kind() == ir::NodeKind::kDeviceData) return BufferAsTensor(n->data());
    if (n->kind() == ir::NodeKind::kConstant) return ReplayNode(*n, {}).at(0);
    return values.at(position.at(n).at(v.index));
  };
  // 1. A node that computes a different value than ATen from the same operand values: miscompiled.
  for (const ir::Node* node : cut.nodes) {
    if (node->kind() != ir::NodeKind::kOp) continue;
    std::vector<at::Tensor> operands;
    for (const ir::Value& v : node->operands()) operands.push_back(value_of(v, probe));
    std::vector<at::Tensor> expected = ReplayNode(*node, operands);
    for (size_t k = 0; k < expected.size(); ++k) {
      if (!expected[k].defined()) continue;
      const at::Tensor& got = probe.at(position.at(node).at(k));
      Difference d = Compare(got, expected[k]);
      if (!d.differs) continue;
      std::ostringstream ss;
      ss << "the first node whose compiled value differs from ATen's on the same inputs is output " << k
         << " of " << Describe(*node) << "\n  element " << d.at << ": compiled " << ElementText(got, d.at)
         << ", ATen " << ElementText(expected[k], d.at) << " (largest difference " << d.max_error << ")"
         << "\n  probe graph (every node an output): " << probe_dump;
      return ss.str();
    }
  }
  // 2. Every node is right on its inputs, yet values part: rounding differences that some node
  // turned into a large one (a comparison, relu's mask or a max flipping on a near tie). Name
  // the first node whose value parts from ATen's, with its operands at that element.
  for (size_t i = 0; i < probe_values.size(); ++i) {
    Difference d = Compare(probe[i], reference[i]);
    if (!d.differs) continue;
    const ir::Node& node = *probe_values[i].node;
    std::ostringstream ss;
    ss << "every node computes ATen's value from its inputs (to rounding), but rounding differences "
       << "grow into a real one at output " << probe_values[i].index << " of " << Describe(node)
       << "\n  element " << d.at << ": compiled " << ElementText(probe[i], d.at) << ", ATen "
       << ElementText(reference[i], d.at);
    for (size_t k = 0; k < node.operands().size(); ++k) {
      const ir::Value& v = node.operands()[k];
      if (v.shape().sizes != node.shape(probe_values[i].index).sizes) continue;
      ss << "\n  operand " << k << " (" << v.node->OpName() << ") there: compiled "
         << ElementText(value_of(v, probe), d.at) << ", ATen " << ElementText(value_of(v, reference), d.at);
    }
    ss << "\n  (a near tie decided the other way: compare how accurately the operands are computed)"
       << "\n  probe graph (every node an output): " << probe_dump;
    return ss.str();
  }
  // 3. Right when everything is materialized: buffer assignment or fusion.
  return BisectMaterialization(cut, probe_values, device);
}

std::string CheckCompiledGraph(const GraphCut& cut, const runtime::Executable& executable,
                               const std::vector<runtime::BufferPtr>& compiled,
                               std::vector<runtime::BufferPtr>* reference, int device) {
  TXLA_COUNTER("CheckedGraphs", 1);
  *reference = BuildInterpreterProgram(cut)->Execute(cut.parameters, device);
  std::ostringstream report;
  for (size_t i = 0; i < compiled.size(); ++i) {
    at::Tensor got = BufferAsTensor(compiled[i]), want = BufferAsTensor((*reference)[i]);
    Difference d = Compare(got, want);
    if (!d.differs) continue;
    report << "TXLA_CHECK_GRAPHS: graph output " << i << " (" << ir::Shape(want.scalar_type(), want.sizes()).ToString()
           << ", computed by " << cut.roots[i].node->OpName() << ") differs from the interpreter: element "
           << d.at << " is " << ElementText(got, d.at) << ", expected " << ElementText(want, d.at)
           << "\n  compiled graph: " << executable.dump_path() << "\n";
    break;
  }
  if (report.tellp() == 0) return "";
  TXLA_COUNTER("CheckedGraphMismatch", 1);
  std::string where;
  try {
    where = LocalizeMismatch(cut, device);
  } catch (const std::exception& e) {
    where = std::string("bisecting failed: ") + e.what();
  }
  if (where.empty())
    where = "every node computes the same value when compiled on its own: the fault is in how the "
            "graph above was fused or given buffers (compare it with TXLA_DISABLE_PASSES=fusion)";
  report << "  " << where << "\n  the interpreter's results are kept.";
  return report.str();
}

}  // namespace txla::graph
