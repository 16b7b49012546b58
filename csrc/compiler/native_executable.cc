#include "compiler/native_executable.h"

#include <algorithm>

#include <stdexcept>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "compiler/donor_matching.h"
#include "compiler/library/parallel.h"
#include "compiler/support.h"
#include "runtime/collectives.h"
#include "runtime/device.h"
#include "metrics/metrics.h"

namespace txla::compiler {

namespace {

std::vector<void*> Resolve(const NativeLibrary& library, const std::vector<std::string>& names) {
  std::vector<void*> addresses;
  addresses.reserve(names.size());
  for (const std::string& name : names) addresses.push_back(library.Symbol(name.c_str()));
  return addresses;
}

}  // namespace

NativeExecutable::NativeExecutable(std::unique_ptr<NativeLibrary> library, const ProgramText& program,
                                   std::vector<hlo::Shape> outputs, int64_t arena_bytes,
                                   std::vector<std::pair<int64_t, int64_t>> output_aliases,
                                   std::vector<std::pair<int64_t, int64_t>> parameter_outputs,
                                   std::vector<std::pair<int64_t, int64_t>> donations)
    : library_(std::move(library)),
      bind_(reinterpret_cast<void (*)(const TxlaSupport*)>(library_->Symbol("txla_bind"))),
      program_(program.words, Resolve(*library_, program.functions), library_->path()),
      outputs_(std::move(outputs)),
      arena_bytes_(arena_bytes),
      output_aliases_(std::move(output_aliases)),
      parameter_outputs_(std::move(parameter_outputs)),
      donations_(std::move(donations)) {
  for (auto [out, param] : parameter_outputs_) shared_.insert(out);
  for (auto [out, other] : output_aliases_) shared_.insert(out);
  for (int64_t k : program_.EarlyOutputs())
    if (!shared_.count(k)) early_outputs_.push_back(k);
}

std::vector<runtime::BufferPtr> NativeExecutable::AllocateOutputs(
    const std::vector<runtime::BufferPtr>& parameters, int device) const {
  std::vector<runtime::BufferPtr> results(outputs_.size());
  for (size_t k = 0; k < outputs_.size(); ++k) {
    // Memory comes when the run starts (Run), or from a donor: a queued step holds none.
    if (!shared_.count(static_cast<int64_t>(k)))
      results[k] = std::make_shared<runtime::Buffer>(outputs_[k].type, outputs_[k].dims, device,
                                                     runtime::Buffer::Deferred{});
  }
  for (auto [out, param] : parameter_outputs_) results[out] = parameters[param];
  for (auto [out, other] : output_aliases_) results[out] = results[other];
  return results;
}

template <typename Free>
std::vector<int64_t> NativeExecutable::Donors(Free free) const {
  return MatchDonors(donations_, outputs_.size(),
                     [&](int64_t out, int64_t param) { return !shared_.count(out) && free(param); });
}

int64_t NativeExecutable::CountDonations(const std::vector<bool>& donatable) const {
  const std::vector<int64_t> donors = Donors([&](int64_t param) {
    return static_cast<size_t>(param) < donatable.size() && donatable[param];
  });
  return std::count_if(donors.begin(), donors.end(), [](int64_t d) { return d >= 0; });
}

void NativeExecutable::Run(const std::vector<runtime::BufferPtr>& parameters,
                           const std::vector<runtime::BufferPtr>& outputs,
                           const std::vector<std::shared_ptr<runtime::Readiness>>* early) const {
  // A parameter nothing else holds any more (its tensor has moved on to a new value) is donated:
  // the output takes over its memory and the kernel updates it in place. Only an asynchronous
  // run can see this: the caller's graph and tensors are gone by then.
  std::vector<int64_t> donors = Donors([&](int64_t param) {
    const runtime::BufferPtr& donor = parameters[param];
    return donor.use_count() == 1 && donor->CanDonate();
  });
  for (size_t out = 0; out < donors.size(); ++out)
    if (donors[out] >= 0 && outputs[out]->AdoptStorage(*parameters[donors[out]]))
      TXLA_COUNTER("DonatedBuffers", 1);
  for (size_t k = 0; k < outputs.size(); ++k)
    if (!shared_.count(static_cast<int64_t>(k))) outputs[k]->Materialize();
  std::vector<const void*> params;
  params.reserve(parameters.size());
  for (const auto& p : parameters) params.push_back(p->data());
  std::vector<void*> outs(outputs.size(), nullptr);
  for (size_t k = 0; k < outputs.size(); ++k)
    if (!shared_.count(static_cast<int64_t>(k))) outs[k] = outputs[k]->data();
  size_t arena_bytes = static_cast<size_t>(std::max<int64_t>(arena_bytes_, 64));
  char* arena = static_cast<char*>(runtime::AllocateBlock(arena_bytes));
  RunErrors errors;
  {
    TXLA_TIMED("NativeRunTime");
    library::RunScope pool_awake;
    ScopedRunErrors scope(&errors);
    ScopedEarlyOutputs early_scope(early);
    const TxlaSupport* support = GetSupportTable();
    bind_(support);
    program_.Run(support, params.data(), outs.data(), arena);
  }
  runtime::FreeBlock(arena, arena_bytes);
  if (!errors.first.empty()) {
    TXLA_COUNTER("FailedExecution", 1);
    throw std::runtime_error(errors.first + " (graph " + dump_path() + ")");
  }
}

void NativeExecutable::WaitForInputs(const std::vector<runtime::BufferPtr>& parameters) const {
  // An input a failed run never wrote: this run fails with the original error (once, however
  // long the chain of runs that read failed outputs).
  for (const runtime::BufferPtr& p : parameters) {
    try {
      p->WaitReady();
    } catch (const runtime::ExecutionFailed& e) {
      throw runtime::ExecutionFailed(
          "an input of graph " + dump_path_ + " comes from a graph that failed: " + e.root(), e.root());
    }
  }
}

std::vector<runtime::BufferPtr> NativeExecutable::Execute(
    const std::vector<runtime::BufferPtr>& parameters, int device) {
  WaitForInputs(parameters);
  std::vector<runtime::BufferPtr> results = AllocateOutputs(parameters, device);
  runtime::ScopedExecutingDevice executing(device);
  Run(parameters, results);
  return results;
}

std::vector<runtime::BufferPtr> NativeExecutable::Submit(
    const std::vector<runtime::BufferPtr>& parameters, int device, std::shared_ptr<runtime::Readiness> start,
    bool ends_step, std::shared_ptr<void> release_after_run) {
  std::vector<runtime::BufferPtr> results = AllocateOutputs(parameters, device);
  auto done = std::make_shared<runtime::Readiness>();
  for (size_t k = 0; k < results.size(); ++k)
    if (!shared_.count(static_cast<int64_t>(k))) results[k]->set_readiness(done);
  // A scalar result (the loss) is readable once its kernel ran; until then, or if the run fails
  // first, it follows the run's readiness.
  std::vector<std::shared_ptr<runtime::Readiness>> early;
  if (!early_outputs_.empty()) {
    early.resize(results.size());
    for (int64_t k : early_outputs_) {
      early[k] = std::make_shared<runtime::Readiness>();
      done->AddFollower(early[k]);
      results[k]->set_readiness(early[k]);
    }
  }
  // The work keeps the executable, the inputs and the outputs alive until it has run.
  runtime::QueueFor(device).Submit(
      [self = shared_from_this(), parameters, results, start, device, early = std::move(early),
       release = std::move(release_after_run), eager = metrics::InEagerOp()]() mutable {
        // Freed here, after the run (or its failure), not later with the queue's lock held.
        struct ReleaseAfterRun {
          std::shared_ptr<void>& held;
          ~ReleaseAfterRun() { held.reset(); }
        } release_after_run{release};
        if (start) start->Wait();
        runtime::ScopedExecutingDevice executing(device);
        // The run's name is built only while a capture records it: this runs for every graph.
        metrics::TraceSpan span("execute", metrics::TracingActive() ? self->trace_name() : std::string());
        if (span.recording()) span.Arg("dump", self->dump_path());
        metrics::EagerOpScope kind(eager);
        // Under SPMD a run is one device's share of a replicated execution, which PyTorch/XLA
        // times once (ExecuteReplicatedTime): on the first device of this process.
        metrics::Metric* metric = metrics::ExecuteTimeMetric();
        if (runtime::SpmdEnabled())
          metric = device == runtime::FirstLocalSpmdDevice() ? metrics::GetMetric("ExecuteReplicatedTime") : nullptr;
        std::optional<metrics::ScopedTimer> timer;
        if (metric) timer.emplace(metric);
        try {
          self->WaitForInputs(parameters);
          self->Run(parameters, results, early.empty() ? nullptr : &early);
        } catch (const std::exception& e) {
          // Replicas waiting for this one in a collective fail instead of waiting for ever.
          if (!runtime::SingleReplicaCollectives())
            runtime::GetCollectiveBackend()->Abort("device " + std::to_string(device) + " failed: " + e.what());
          throw;
        }
      },
      done, ends_step);
  return results;
}

runtime::Executable::Footprint NativeExecutable::footprint() const {
  Footprint f;
  f.known = true;
  for (const auto& [output, parameter] : donations_)
    f.aliasable_input_bytes += outputs_.at(output).element_count() * static_cast<int64_t>(runtime::ByteWidth(outputs_[output].type));
  f.intermediate_bytes = arena_bytes_;
  std::error_code error;
  const auto size = std::filesystem::file_size(library_->path(), error);
  f.program_bytes = error ? 0 : static_cast<int64_t>(size);
  return f;
}

}  // namespace txla::compiler
