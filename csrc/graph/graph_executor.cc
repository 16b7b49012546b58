#include "graph/graph_executor.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <future>
#include <mutex>
#include <unordered_set>

#include "compiler/compile.h"
#include "compiler/content_hash.h"
#include "debug/config.h"
#include "debug/frames.h"
#include "graph/buffer_donation.h"
#include "graph/checked_execution.h"
#include "graph/compile_cache.h"
#include "graph/debug_analysis.h"
#include "graph/deferred_views.h"
#include "graph/executor_internal.h"
#include "graph/graph_dump.h"
#include "graph/graph_retirement.h"
#include "graph/interpreter.h"
#include "graph/post_order.h"
#include "graph/spmd_execution.h"
#include "ir/ir_dump.h"
#include "hlo/instruction.h"
#include "lower/lowering.h"
#include "metrics/metrics.h"
#include "runtime/collectives.h"
#include "runtime/device.h"
#include "runtime/execution_queue.h"
#include "runtime/host_activity.h"
#include "tensor/bridge.h"
#include "tensor/registry.h"

namespace txla::graph {
namespace {

CompileCache& Cache() {
  static CompileCache* cache =
      new CompileCache(static_cast<size_t>(debug::GetConfig().compilation_cache_size));
  return *cache;
}

std::atomic<uint64_t> execution_epoch{0};
std::atomic<uint64_t> step_epoch{0};  // barriers (MarkStep) so far

// Native code when every op lowers and codegen handles the module; otherwise the whole graph
// runs on the interpreter, counted (InterpretedGraph, and the reason) so it is never silent.
std::shared_ptr<runtime::Executable> CompileWhole(const GraphCut& cut, bool op_by_op);

// Under SPMD the graph is partitioned over every device; a graph that cannot be (an op without
// lowering or codegen) runs whole on device 0 from gathered inputs, counted.
std::shared_ptr<runtime::Executable> Compile(const GraphCut& cut, bool op_by_op) {
  if (!runtime::SpmdEnabled()) return CompileWhole(cut, op_by_op);
  if (op_by_op || !lower::FirstUnloweredOp(cut).empty()) return RunWholeUnderSpmd(CompileWhole(cut, op_by_op));
  std::unique_ptr<hlo::Module> module;
  try {
    metrics::TraceSpan span("compile", "LowerGraph");
    module = lower::LowerGraph(cut);
  } catch (const std::exception&) {  // a form a rule does not handle: counted where it runs whole
    return RunWholeUnderSpmd(CompileWhole(cut, op_by_op));
  }
  try {
    return CompileSpmd(std::move(module), cut);
  } catch (const compiler::Unsupported& e) {
    metrics::GetCounter(std::string("NoCodegen:") + e.what())->Add(1);
    return RunWholeUnderSpmd(BuildInterpreterProgram(cut));
  } catch (const compiler::BuildError& e) {
    TORCH_CHECK(false, "compiling the xla graph failed (the tensors keep their pending values): ", e.what());
  } catch (const std::invalid_argument& e) {  // what the program asks cannot be partitioned
    TORCH_CHECK(false, "this SPMD program cannot be partitioned (the tensors keep their pending values): ", e.what());
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "internal compiler error in an SPMD program (the tensors keep their pending values): ",
                e.what());
  }
}

std::shared_ptr<runtime::Executable> CompileWhole(const GraphCut& cut, bool op_by_op) {
  if (op_by_op) {
    TXLA_COUNTER("OpByOpGraph", 1);
    return BuildInterpreterProgram(cut);
  }
  std::string missing = lower::FirstUnloweredOp(cut);
  if (!missing.empty()) {
    TXLA_COUNTER("InterpretedGraph", 1);
    metrics::GetCounter("NoLowering:" + missing)->Add(1);
    return BuildInterpreterProgram(cut);
  }
  try {
    if (auto cached = compiler::LoadCachedGraph(cut.hash)) return cached;
  } catch (const std::exception&) {
    // An entry that does not load: compile the graph as if there were none.
    metrics::GetCounter("PersistentCacheError")->Add(1);
  }
  std::unique_ptr<hlo::Module> module;
  try {
    metrics::TraceSpan span("compile", "LowerGraph");
    module = lower::LowerGraph(cut);
  } catch (const lower::NotLowered& e) {
    // A form of an op its rule does not handle: the interpreter runs it correctly.
    TXLA_COUNTER("InterpretedGraph", 1);
    metrics::GetCounter(std::string("NoLowering:") + e.what())->Add(1);
    return BuildInterpreterProgram(cut);
  } catch (const std::exception& e) {
    // A rule that failed: a bug, counted apart so tests catch it; the interpreter keeps the
    // program correct meanwhile.
    TXLA_COUNTER("InterpretedGraph", 1);
    metrics::GetCounter(std::string("LoweringError:") + e.what())->Add(1);
    return BuildInterpreterProgram(cut);
  }
  try {
    return compiler::Compile(std::move(module), nullptr, cut.hash);
  } catch (const compiler::Unsupported& e) {
    TXLA_COUNTER("InterpretedGraph", 1);
    metrics::GetCounter(std::string("NoCodegen:") + e.what())->Add(1);
    return BuildInterpreterProgram(cut);
  } catch (const compiler::BuildError& e) {
    TORCH_CHECK(false, "compiling the xla graph failed (the tensors keep their pending values): ",
                e.what());
  } catch (const std::exception& e) {
    // The verifier or a pass rejected the module: a compiler bug, reported, never hidden.
    TORCH_CHECK(false, "internal compiler error (the tensors keep their pending values; "
                "SYNC_TENSORS_OPBYOP=1 runs graphs on the interpreter): ", e.what());
  }
}

// Compiles in flight, by cache key: a second sync that needs a graph being compiled waits for
// that compile (and gets its executable or its error) instead of compiling it again.
struct InFlight {
  std::mutex mu;
  std::map<ir::hash_t, std::shared_future<std::shared_ptr<runtime::Executable>>> compiles;
};
InFlight& CompilesInFlight() {
  static InFlight in_flight;
  return in_flight;
}

// A run of this device that failed since the last barrier, raised here: a loop that never reads
// a value stops at the next step instead of computing on failed buffers forever.
void RaiseUnreportedFailure(int device) {
  std::string failure;
  for (runtime::ExecutionQueue* q : runtime::QueuesOf(device)) {
    std::string mine = q->TakeUnreportedFailure();
    if (failure.empty()) failure = std::move(mine);
  }
  TORCH_CHECK(failure.empty(), "a graph that ran on xla:", device,
              " failed (tensors it computed raise this error when read): ", failure);
}

}  // namespace

// One sync at a time per device. Devices sync independently: a graph waiting in a collective for
// another device's graph must not keep that device from submitting it.
std::mutex& DeviceSyncMutex(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<std::mutex>> per_device;
  std::lock_guard<std::mutex> lock(mu);
  auto& m = per_device[device];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

uint64_t ExecutionEpoch() { return execution_epoch.load(); }
uint64_t StepEpoch() { return step_epoch.load(); }
void AdvanceExecutionEpoch() { execution_epoch.fetch_add(1); }

namespace {
std::atomic<bool> execution_allowed{true};
}

void SetExecutionAllowed(bool allowed) { execution_allowed.store(allowed); }
bool ExecutionAllowed() { return execution_allowed.load(); }

// Runs without the graph lock: one device's compile (seconds of C++ compiler) must not hold up
// another device's barrier, whose graph may be cached.
ir::hash_t CompileCacheKey(const GraphCut& cut, bool op_by_op) {
  // Switches that change the generated code are part of the key: turning a pass off for a
  // graph already compiled must compile it again.
  ir::hash_t key = ir::Mix(ir::Mix(cut.hash, op_by_op), ir::HashString(debug::GetConfig().CodegenKey()));
  if (runtime::SpmdEnabled()) key = ir::Mix(key, ShardingKey(cut));
  return key;
}

std::shared_ptr<runtime::Executable> GetOrCompile(const GraphCut& cut, bool op_by_op, bool* compiled) {
  if (compiled) *compiled = false;
  const ir::hash_t key = CompileCacheKey(cut, op_by_op);
  if (auto cached = Cache().Get(key)) {
    TXLA_COUNTER("CachedCompile", 1);
    return cached;
  }
  std::promise<std::shared_ptr<runtime::Executable>> promise;
  {
    InFlight& in_flight = CompilesInFlight();
    std::unique_lock<std::mutex> lock(in_flight.mu);
    auto it = in_flight.compiles.find(key);
    if (it != in_flight.compiles.end()) {
      auto compiling = it->second;
      lock.unlock();
      TXLA_COUNTER("CachedCompile", 1);
      return compiling.get();  // rethrows the compile's error
    }
    if (auto cached = Cache().Get(key)) {  // finished between the lookup and the lock
      TXLA_COUNTER("CachedCompile", 1);
      return cached;
    }
    in_flight.compiles.emplace(key, promise.get_future().share());
  }
  auto finish = [&](auto&& settle) {
    InFlight& in_flight = CompilesInFlight();
    std::lock_guard<std::mutex> lock(in_flight.mu);
    settle();
    in_flight.compiles.erase(key);
  };
  TXLA_COUNTER("UncachedCompile", 1);
  TXLA_COUNTER("CreateCompileHandles", 1);  // PyTorch/XLA's name: one compiled program made
  if (compiled) *compiled = true;
  std::shared_ptr<runtime::Executable> executable;
  try {
    metrics::ScopedTimer timer(metrics::CompileTimeMetric());
    executable = Compile(cut, op_by_op);
  } catch (...) {
    finish([&] { promise.set_exception(std::current_exception()); });
    throw;
  }
  Cache().Put(key, executable);
  finish([&] { promise.set_value(executable); });
  return executable;
}

namespace {

// A value read computes what it needs; the live tensors among those intermediates are outputs
// of its graph too (their values are computed anyway), so they stop being pending. Otherwise a
// loop that reads a value every iteration without a barrier (transformers' generate checks
// for finished sequences every token) traces each iteration on top of the last: the KV cache,
// the tokens so far, stay pending, and every read's graph recomputes them all, larger each time
// (a compile per token, work growing with the square of the length). Adds them to `pending` and
// `values`; true if it added any.
bool AddLiveIntermediates(const GraphCut& cut, int device, std::vector<LazyTensorPtr>* pending,
                          std::vector<ir::Value>* values) {
  std::unordered_set<const ir::Node*> nodes(cut.nodes.begin(), cut.nodes.end());
  std::unordered_set<const LazyTensor*> read(pending->size());
  for (const LazyTensorPtr& t : *pending) read.insert(t.get());
  bool added = false;
  for (const LazyTensorPtr& t : registry::PendingTensors(device)) {
    if (read.count(t.get())) continue;
    const ir::Value value = t->pending();
    if (!value.node || !nodes.count(value.node.get())) continue;
    pending->push_back(t);
    values->push_back(value);
    added = true;
  }
  if (added) TXLA_COUNTER("ReadMaterializedLiveIntermediates", 1);
  return added;
}

// The run's results become the synced tensors' data (PyTorch/XLA times it as WrapXlaData).
void WrapResults(const std::vector<LazyTensorPtr>& pending, const std::vector<runtime::BufferPtr>& results,
                 const std::vector<size_t>& root_index) {
  TXLA_TIMED("WrapXlaData");
  for (size_t i = 0; i < pending.size(); ++i) pending[i]->SetData(results[root_index[i]]);
}

}  // namespace

void SyncTensors(const std::vector<LazyTensorPtr>& tensors, bool for_read, bool ends_step,
                 bool donate_updated_inputs) {
  auto first = std::find_if(tensors.begin(), tensors.end(), [](const LazyTensorPtr& t) { return t != nullptr; });
  if (first == tensors.end()) return;
  metrics::TraceSpan span("host", for_read ? "SyncTensors (value read)" : "SyncTensors");
  // The Python frames for the debugging tools, taken before any lock: taking them needs the GIL,
  // which a thread waiting for these locks may hold.
  std::vector<debug::Frame> frames;
  if (analysis::Level() > 0 || !debug::GetConfig().save_tensors_file.empty()) frames = debug::CurrentFrameList();
  std::unique_lock<std::mutex> device_lock(DeviceSyncMutex((*first)->device()), std::defer_lock);
  {
    TXLA_TIMED("DeviceLockWait");  // another thread's sync of this device (PyTorch/XLA's name)
    device_lock.lock();
  }
  if (!for_read) RaiseUnreportedFailure((*first)->device());
  std::vector<LazyTensorPtr> pending;
  pending.reserve(tensors.size());
  for (const LazyTensorPtr& t : tensors)
    if (t && t->pending()) pending.push_back(t);
  std::vector<DeferredView> deferred;
  if (ends_step) deferred = TakeDeferredViews(&pending);
  if (pending.empty()) return;
  // torch_xla.compile(fn, full_graph=True): fn must trace as one graph, run when it returns.
  TORCH_CHECK(ExecutionAllowed(), "Unexpected execution happens inside the compiled function, exiting "
              "(torch_xla.compile(full_graph=True): a value was read, or a graph cut, before the function returned)");
  if (runtime::SpmdEnabled()) AnnotateShardedTensors(pending);
  runtime::HostBarrierScope barrier;
  std::vector<ir::Value> values;
  values.reserve(pending.size());
  for (const LazyTensorPtr& t : pending) values.push_back(t->pending());
  int device = pending.front()->device();
  std::vector<size_t> root_index;
  GraphCut cut;
  std::shared_ptr<runtime::Executable> executable;
  {
    metrics::TraceSpan cut_span("host", "CutGraph");
    std::lock_guard<std::mutex> lock(GraphWalkMutex());
    cut = CutGraph(values, &root_index);
    if (for_read && !ends_step && AddLiveIntermediates(cut, device, &pending, &values))
      cut = CutGraph(values, &root_index);
    DumpGraphIfRequested(cut, frames);
  }
  for (const runtime::BufferPtr& parameter : cut.parameters) parameter->CheckNotPlaceholder();
  static metrics::Metric* const graph_size = metrics::GetMetric("TensorsGraphSize", metrics::MetricUnit::kNumber);
  graph_size->AddSample(static_cast<double>(cut.nodes.size()));
  // The seeds' debugging modes: run every node on its own (the interpreter) when values are
  // read (GET_TENSORS_OPBYOP) or at barriers (SYNC_TENSORS_OPBYOP).
  const debug::Config& config = debug::GetConfig();
  bool compiled = false;
  executable = GetOrCompile(cut, for_read ? config.get_tensors_opbyop : config.sync_tensors_opbyop, &compiled);
  InputDonation donation = DonateInputs(cut, device, donate_updated_inputs);
  const AliasCount alias_count(cut);
  // Eager mode's per-op graphs are not analysed (as in PyTorch/XLA): one report per op says nothing.
  if (analysis::Level() > 0 && !metrics::InEagerOp())
    analysis::OnGraph(cut, pending.size(), device, compiled, frames, executable->footprint());
  if (span.recording()) {
    span.Arg("graph", compiler::Hex(cut.hash));
    span.Arg("cache", compiled ? "compiled" : "hit");
  }
  std::vector<runtime::BufferPtr> results;
  AdvanceExecutionEpoch();
  const bool checked = CheckedExecutionEnabled() && executable->kind() == "native";
  // A value read whose inputs are all written already (a model's Python code reading its batch's
  // attention mask mid-step, as transformers' `padding_mask.all()`) runs now, on this thread,
  // beside the queued steps. Behind them, the host would wait for the previous step to end
  // before tracing the rest of this one, and host and device would take turns instead of
  // overlapping. Queued runs donate no buffer a tensor still holds, so its inputs stay intact.
  // Not once collectives are set up: a queued run's collectives and the host's own (a process
  // group's, in program order) would then interleave differently on each replica.
  const bool beside_queue = for_read && !ends_step && !checked && runtime::AsyncExecution() &&
                            runtime::SingleReplicaCollectives() &&
                            std::all_of(cut.parameters.begin(), cut.parameters.end(),
                                        [](const runtime::BufferPtr& p) { return p->IsReady(); });
  if (runtime::AsyncExecution() && !checked && !beside_queue) {
    // The run starts once this sync has let go of the graph's buffers (and the tensors of their
    // old values), so a parameter only the run still holds can be donated to an output. The
    // graph's nodes are freed after the run, on the queue's thread.
    struct Gate {
      std::shared_ptr<runtime::Readiness> readiness = std::make_shared<runtime::Readiness>();
      ~Gate() { readiness->MarkReady(); }
    } gate;
    auto retired = std::make_shared<RetiredGraph>();
    retired->kept_inputs = std::move(donation.kept);
    results = executable->Submit(cut.parameters, device, gate.readiness, ends_step, retired);
    if (!results.empty()) {
      WrapResults(pending, results, root_index);
      if (runtime::SpmdEnabled()) MarkSpmdResults(pending);
      RebaseDeferredViews(deferred);
      RetireGraph(&cut, &values, &deferred, retired.get());
      alias_count.Record(*executable);
      retired.reset();
      return;  // ~Gate opens the run
    }
  }
  // On this thread: synchronously (the inputs may still be being written by queued work), or a
  // read beside the queue.
  if (beside_queue) TXLA_COUNTER("ReadRanBesideQueuedSteps", 1);
  else runtime::DrainQueuesOf(device);
  {
    // Library calls set their thread's OpenMP team (oneDNN's, to one thread): on the user's
    // thread that would change torch.get_num_threads() for eager ops (and dynamo's guards).
    struct KeepThreadCount {
      int threads = at::get_num_threads();
      ~KeepThreadCount() {
        if (at::get_num_threads() != threads) at::set_num_threads(threads);
      }
    } keep_thread_count;
    metrics::ScopedTimer timer(metrics::ExecuteTimeMetric());
    try {
      results = executable->Execute(cut.parameters, device);
    } catch (const std::exception& e) {
      if (!beside_queue) throw;
      // As a queued run's failure: the tensors hold buffers that raise it when read, and this
      // read raises it now (so no barrier does again).
      auto failed = std::make_shared<runtime::Readiness>();
      failed->MarkFailed(e.what());
      for (const LazyTensorPtr& t : pending) {
        auto buffer = std::make_shared<runtime::Buffer>(ir::ToElementType(t->shape().dtype), t->shape().sizes,
                                                        device, runtime::Buffer::Deferred{});
        buffer->set_readiness(failed);
        t->SetData(buffer);
      }
      RebaseDeferredViews(deferred);
      return;
    }
  }
  if (checked) {
    std::vector<runtime::BufferPtr> reference;
    std::string report = CheckCompiledGraph(cut, *executable, results, &reference, device);
    if (!report.empty()) {
      std::fprintf(stderr, "%s\n", report.c_str());
      results = std::move(reference);
    }
  }
  WrapResults(pending, results, root_index);
  if (runtime::SpmdEnabled()) MarkSpmdResults(pending);
  RebaseDeferredViews(deferred);
  alias_count.Record(*executable);  // a run on this thread donates nothing
}

void MarkStep(const std::vector<int>& devices, bool wait) {
  TXLA_COUNTER("MarkStep", 1);
  metrics::TraceSpan span("host", "MarkStep");
  step_epoch.fetch_add(1);
  for (int device : devices) SyncTensors(registry::PendingTensors(device), /*for_read=*/false, /*ends_step=*/true);
  if (wait || !runtime::AsyncExecution())
    for (int device : devices) WaitDeviceOps(device);
  analysis::OnStepEnd();
}

void WaitDeviceOps(int device) {
  runtime::DrainQueuesOf(device);
  RaiseUnreportedFailure(device);
}

at::Tensor ToHost(const LazyTensorPtr& tensor, const char* reader) {
  analysis::ScopedSyncKind reading(analysis::SyncKind::kRead, reader);
  AdvanceExecutionEpoch();
  if (tensor->pending()) SyncTensors({tensor}, /*for_read=*/true);
  tensor->CheckHasValue();
  // Stored in another type under a numeric mode (XLA_USE_BF16, ...): handed back in its own.
  at::Tensor host = TransferFromDevice(tensor->data());
  return host.scalar_type() == tensor->dtype() ? host : host.to(tensor->dtype());
}

std::mutex& GraphWalkMutex() {
  static std::mutex mu;
  return mu;
}

size_t CompileCacheSize() { return Cache().size(); }

}  // namespace txla::graph
