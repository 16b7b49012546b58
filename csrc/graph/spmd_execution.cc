#include "graph/spmd_execution.h"

#include <exception>
#include <thread>

#include "compiler/compile.h"
#include "compiler/spmd/all_reduce_combiner.h"
#include "compiler/spmd/auto_sharding.h"
#include "compiler/spmd/sharding_propagation.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "compiler/spmd/tile_map.h"
#include "debug/config.h"
#include "ir/op_names.h"
#include "ir/op_table.h"
#include "metrics/metrics.h"
#include "runtime/collectives.h"
#include "runtime/device.h"
#include "runtime/shards.h"

namespace txla::graph {
namespace {

using compiler::spmd::TileMap;

// Every process's devices (a mesh spans them); this process runs runtime::LocalSpmdDevices().
int64_t SpmdDevices() { return runtime::SpmdDeviceCount(); }

// A parameter's piece for `device`: its piece when split, else the whole buffer (every device
// reads the one copy: device memory is host memory) or, when the program wants it split (a
// layout auto-sharding chose), the device's tile cut from it.
runtime::BufferPtr PieceFor(const runtime::BufferPtr& p, const hlo::Sharding& wanted, int device) {
  if (p->shards()) return p->shards()->pieces.at(device);
  const std::vector<int64_t>& full = p->dims();
  const TileMap map = TileMap::Of(wanted, static_cast<int64_t>(full.size()), SpmdDevices());
  if (map.replicated()) return p;
  p->WaitReady();
  const std::vector<int64_t> local = compiler::spmd::LocalDims(full, map.tiles);
  const std::vector<int64_t> at = compiler::spmd::ShardOffsets(map, full).at(device);
  auto piece = std::make_shared<runtime::Buffer>(p->type(), local, device);
  runtime::CutPiece(static_cast<int64_t>(runtime::ByteWidth(p->type())), p->data(), full, at, piece->data(), local);
  return piece;
}

class SpmdExecutable final : public runtime::Executable {
 public:
  SpmdExecutable(std::shared_ptr<runtime::Executable> local, std::vector<hlo::Sharding> parameters,
                 std::vector<hlo::Sharding> outputs, std::vector<std::vector<int64_t>> output_dims)
      : local_(std::move(local)),
        parameters_(std::move(parameters)),
        outputs_(std::move(outputs)),
        output_dims_(std::move(output_dims)) {}

  std::vector<runtime::BufferPtr> Execute(const std::vector<runtime::BufferPtr>& parameters, int device) override {
    const int n = static_cast<int>(SpmdDevices());
    std::vector<std::vector<runtime::BufferPtr>> results(n);
    std::vector<std::exception_ptr> errors(n);
    auto run = [&](int d) {
      try {
        results[d] = local_->Execute(Pieces(parameters, d), d);
      } catch (...) {
        errors[d] = std::current_exception();
        // The others may be waiting for this device in a collective.
        runtime::GetCollectiveBackend()->Abort("device " + std::to_string(d) + " failed");
      }
    };
    TXLA_COUNTER("ExecuteReplicated", 1);  // PyTorch/XLA's name for a run on every device
    TXLA_TIMED("ExecuteReplicatedTime");
    const std::vector<int> local = runtime::LocalSpmdDevices();
    std::vector<std::thread> others;
    for (size_t k = 1; k < local.size(); ++k) others.emplace_back(run, local[k]);
    run(local[0]);
    for (std::thread& t : others) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    return Outputs(results);
  }

  // Queued on each local device's execution queue; the devices' queues run their SPMD programs
  // in the same (submission) order, so their collectives meet. Outputs are the devices' pending
  // pieces, ready when their runs end.
  std::vector<runtime::BufferPtr> Submit(const std::vector<runtime::BufferPtr>& parameters, int /*device*/,
                                         std::shared_ptr<runtime::Readiness> start, bool ends_step,
                                         std::shared_ptr<void> release_after_run) override {
    const int n = static_cast<int>(SpmdDevices());
    const std::vector<int> local = runtime::LocalSpmdDevices();
    std::vector<std::vector<runtime::BufferPtr>> pieces(n);
    for (int d : local) pieces[d] = Pieces(parameters, d);
    std::vector<std::vector<runtime::BufferPtr>> results(n);
    for (int d : local) {
      results[d] = local_->Submit(pieces[d], d, start, ends_step, d == local[0] ? release_after_run : nullptr);
      if (results[d].empty()) return {};  // not queueable (the first device's answer is every device's)
    }
    TXLA_COUNTER("ExecuteReplicated", 1);
    return Outputs(results);
  }
  std::string kind() const override { return local_->kind(); }
  std::string dump_path() const override { return local_->dump_path(); }
  Footprint footprint() const override { return local_->footprint(); }

 private:
  // The graph's outputs from every local device's results: split values keep each device's
  // piece (none for other processes' devices), replicated ones the first local device's copy.
  std::vector<runtime::BufferPtr> Outputs(const std::vector<std::vector<runtime::BufferPtr>>& results) const {
    const int n = static_cast<int>(SpmdDevices());
    const int first = runtime::FirstLocalSpmdDevice();
    std::vector<runtime::BufferPtr> out;
    for (size_t o = 0; o < outputs_.size(); ++o) {
      const hlo::Sharding& s = outputs_[o];
      const auto& full = output_dims_[o];
      if (s.kind == hlo::Sharding::Kind::kManual) {  // each device's own piece, of the pieces' shape
        runtime::Buffer::Shards pieces;
        for (int d = 0; d < n; ++d) pieces.pieces.push_back(results[d].empty() ? nullptr : results[d][o]);
        pieces.offsets.assign(n, std::vector<int64_t>(full.size(), 0));
        pieces.sharding = s.ToString();
        out.push_back(std::make_shared<runtime::Buffer>(results[first][o]->type(), full, 0, std::move(pieces)));
        continue;
      }
      const TileMap map = TileMap::Of(s, static_cast<int64_t>(full.size()), n);
      if (map.replicated()) {
        out.push_back(results[first][o]);
        continue;
      }
      std::vector<runtime::BufferPtr> pieces;  // none for the devices of other processes
      for (int d = 0; d < n; ++d) pieces.push_back(results[d].empty() ? nullptr : results[d][o]);
      out.push_back(SplitBuffer(results[first][o]->type(), full, s, std::move(pieces)));
    }
    return out;
  }

  std::vector<runtime::BufferPtr> Pieces(const std::vector<runtime::BufferPtr>& parameters, int d) const {
    std::vector<runtime::BufferPtr> mine;
    mine.reserve(parameters.size());
    for (size_t k = 0; k < parameters.size(); ++k) mine.push_back(PieceFor(parameters[k], parameters_.at(k), d));
    return mine;
  }

  std::shared_ptr<runtime::Executable> local_;
  std::vector<hlo::Sharding> parameters_;  // the layouts the program reads its parameters in
  std::vector<hlo::Sharding> outputs_;
  std::vector<std::vector<int64_t>> output_dims_;
};

class WholeUnderSpmd final : public runtime::Executable {
 public:
  explicit WholeUnderSpmd(std::shared_ptr<runtime::Executable> whole) : whole_(std::move(whole)) {}
  std::vector<runtime::BufferPtr> Execute(const std::vector<runtime::BufferPtr>& parameters, int device) override {
    std::vector<runtime::BufferPtr> gathered;
    for (const runtime::BufferPtr& p : parameters) {
      if (!p->shards()) {
        gathered.push_back(p);
        continue;
      }
      auto whole = std::make_shared<runtime::Buffer>(p->type(), p->dims(), device);
      p->Assemble(whole->data());
      gathered.push_back(whole);
    }
    TXLA_COUNTER("SpmdUnpartitionedGraph", 1);
    return whole_->Execute(gathered, device);
  }
  std::string kind() const override { return whole_->kind(); }
  std::string dump_path() const override { return whole_->dump_path(); }
  Footprint footprint() const override { return whole_->footprint(); }

 private:
  std::shared_ptr<runtime::Executable> whole_;
};

}  // namespace

ir::Value AnnotateSharding(const ir::Value& value, const std::string& sharding) {
  static const ir::OpInfo* op = ir::FindOp(ir::op::txla_custom_sharding);
  std::vector<ir::Arg> args(2);
  args[0].kind = ir::Arg::Kind::kTensor;
  args[0].operand = 0;
  args[1].value = c10::IValue(sharding);
  return ir::Value{ir::Node::Op(op, {value}, std::move(args), {value.shape()}), 0};
}

namespace {

ir::Value ManualRegionBoundary(const char* name, const ir::Value& value, const std::string& sharding,
                               const std::vector<int64_t>& dims) {
  const ir::OpInfo* op = ir::FindOp(name);
  std::vector<ir::Arg> args(3);
  args[0].kind = ir::Arg::Kind::kTensor;
  args[0].operand = 0;
  args[1].value = c10::IValue(sharding);
  args[2].value = c10::IValue(dims);
  return ir::Value{ir::Node::Op(op, {value}, std::move(args), {ir::Shape(value.shape().dtype, dims)}), 0};
}

}  // namespace

ir::Value FullToShardShape(const ir::Value& value, const std::string& sharding, const std::vector<int64_t>& piece) {
  return ManualRegionBoundary(ir::op::txla_spmd_full_to_shard_shape, value, sharding, piece);
}

ir::Value ShardToFullShape(const ir::Value& value, const std::string& sharding, const std::vector<int64_t>& full) {
  return ManualRegionBoundary(ir::op::txla_spmd_shard_to_full_shape, value, sharding, full);
}

ir::Value ValueInItsLayout(LazyTensor& t) {
  ir::Value value = t.GetIrValue();
  if (t.sharding().empty() || !t.pending()) return value;
  const std::string* annotated = ir::ShardingAnnotation(value);
  return annotated && *annotated == t.sharding() ? value : AnnotateSharding(value, t.sharding());
}

void AnnotateShardedTensors(const std::vector<LazyTensorPtr>& pending) {
  for (const LazyTensorPtr& t : pending) {
    ir::Value value = ValueInItsLayout(*t);
    if (value.node != t->pending().node) t->SetIrValue(std::move(value));
  }
}

void MarkSpmdResults(const std::vector<LazyTensorPtr>& computed) {
  for (const LazyTensorPtr& t : computed) t->MarkSpmdResult();
}

runtime::BufferPtr SplitBuffer(runtime::ElementType type, const std::vector<int64_t>& full,
                               const hlo::Sharding& sharding, std::vector<runtime::BufferPtr> pieces) {
  runtime::Buffer::Shards shards;
  shards.offsets = compiler::spmd::ShardOffsets(
      TileMap::Of(sharding, static_cast<int64_t>(full.size()), static_cast<int64_t>(pieces.size())), full);
  shards.pieces = std::move(pieces);
  shards.sharding = sharding.ToString();
  return std::make_shared<runtime::Buffer>(type, full, 0, std::move(shards));
}

void AnnotateParameterShardings(hlo::Module& module, const GraphCut& cut) {
  const bool auto_sharding = runtime::AutoShardingEnabled();
  for (hlo::Instruction* p : module.entry()->parameters()) {
    const auto& buffer = cut.parameters.at(p->attrs().parameter_number);
    if (buffer->shards()) p->mutable_attrs().sharding = hlo::Sharding::Parse(buffer->shards()->sharding);
    else if (!auto_sharding) p->mutable_attrs().sharding = hlo::Sharding::Replicated();
    // else: auto-sharding chooses (a whole buffer is cut to the layout it picks)
  }
}

namespace {

// The mesh axes XLA_AUTO_SPMD_MESH gives auto-sharding ("2,2"; empty: all devices in one).
std::vector<int64_t> AutoShardingMesh() {
  std::vector<int64_t> mesh;
  const std::string text = debug::ReloadConfig().auto_spmd_mesh;  // scripts set it around a compile
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string axis = text.substr(at, end - at);
    if (!axis.empty()) mesh.push_back(std::stoll(axis));
    at = end + 1;
  }
  int64_t product = 1;
  for (int64_t a : mesh) product *= a;
  if (!mesh.empty() && product != SpmdDevices())
    throw std::invalid_argument("XLA_AUTO_SPMD_MESH=" + text + " has " + std::to_string(product) +
                                " devices; there are " + std::to_string(SpmdDevices()));
  return mesh;
}

}  // namespace

ir::hash_t ShardingKey(const GraphCut& cut) {
  ir::hash_t h = ir::HashString("spmd");
  for (const runtime::BufferPtr& p : cut.parameters)
    h = ir::Mix(h, p->shards() ? ir::HashString(p->shards()->sharding) : 0);
  if (runtime::AutoShardingEnabled()) h = ir::Mix(h, ir::HashString("auto:" + debug::ReloadConfig().auto_spmd_mesh));
  return h;
}

namespace {
thread_local std::string last_partition_report;
}

const std::string& LastPartitionReport() { return last_partition_report; }

void PartitionSpmd(hlo::Module& module, const GraphCut& cut, std::vector<hlo::Sharding>* output_shardings,
                   std::vector<std::vector<int64_t>>* output_dims, std::vector<hlo::Sharding>* parameter_shardings) {
  const int64_t n = SpmdDevices();
  AnnotateParameterShardings(module, cut);
  if (runtime::AutoShardingEnabled()) compiler::spmd::AutoSharding(n, AutoShardingMesh()).Run(module);
  if (parameter_shardings)
    for (const hlo::Instruction* p : module.entry()->parameters())
      parameter_shardings->push_back(p->attrs().sharding.value_or(hlo::Sharding::Replicated()));
  compiler::spmd::ShardingPropagation(n).Run(module);
  for (const hlo::Instruction* o : module.entry()->root()->operands()) {
    if (output_shardings) output_shardings->push_back(o->attrs().sharding.value_or(hlo::Sharding::Replicated()));
    if (output_dims) output_dims->push_back(o->shape().dims);
  }
  compiler::spmd::SpmdPartitioner partitioner(n);
  partitioner.Run(module);
  last_partition_report.clear();
  for (const auto& r : partitioner.inserted()) {
    metrics::GetCounter("SpmdReshard:" + r.kind)->Add(1);
    metrics::GetCounter("SpmdReshardBytes:" + r.kind)->Add(r.bytes);
    last_partition_report += r.kind + " of " + std::to_string(r.bytes) + " bytes per device: " + r.why + "\n";
  }
  if (compiler::PassEnabled("all-reduce-combiner")) compiler::spmd::AllReduceCombiner().Run(module);
}

std::shared_ptr<runtime::Executable> CompileSpmd(std::unique_ptr<hlo::Module> module, const GraphCut& cut) {
  std::vector<hlo::Sharding> parameters, outputs;
  std::vector<std::vector<int64_t>> output_dims;
  if (runtime::AutoShardingEnabled()) TXLA_COUNTER("CompileWithAutoSharding", 1);  // PyTorch/XLA's name
  PartitionSpmd(*module, cut, &outputs, &output_dims, &parameters);
  auto local = compiler::Compile(std::move(module));
  return std::make_shared<SpmdExecutable>(std::move(local), std::move(parameters), std::move(outputs),
                                          std::move(output_dims));
}

std::shared_ptr<runtime::Executable> RunWholeUnderSpmd(std::shared_ptr<runtime::Executable> whole) {
  return std::make_shared<WholeUnderSpmd>(std::move(whole));
}

}  // namespace txla::graph
