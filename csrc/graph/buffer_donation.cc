#include "graph/buffer_donation.h"

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "metrics/metrics.h"
#include "tensor/registry.h"

namespace txla::graph {
namespace {

std::atomic<bool> alias_with_buffer_donor_config{false};

}  // namespace

void SetAliasWithBufferDonorConfig(bool enabled) { alias_with_buffer_donor_config.store(enabled); }
bool AliasWithBufferDonorConfig() { return alias_with_buffer_donor_config.load(); }

bool SetBufferDonation(const LazyTensorPtr& tensor, bool donate) {
  const runtime::BufferPtr& data = tensor->data();  // none while pending (or a placeholder)
  if (!data || (donate && data->read_only())) return false;
  data->set_donation_requested(donate);
  TXLA_COUNTER("XlaSetBufferDonation", 1);
  return true;
}

bool BufferDonationRequested(const LazyTensorPtr& tensor) {
  return tensor->on_device() && tensor->data()->donation_requested();
}

InputDonation DonateInputs(const GraphCut& cut, int device, bool donate_updated_inputs) {
  const bool user_donations = donate_updated_inputs || AliasWithBufferDonorConfig();
  std::unordered_set<const runtime::Buffer*> donated;
  if (user_donations)
    for (const runtime::BufferPtr& input : cut.parameters)
      if (input->donation_requested()) donated.insert(input.get());
  if (!donated.empty()) {
    for (const LazyTensorPtr& holder : registry::TensorsHoldingData(device, donated)) holder->DonateData();
    for (const runtime::BufferPtr& input : cut.parameters) input->set_donation_requested(false);
  }
  InputDonation donation;
  if (!donate_updated_inputs)
    for (const runtime::BufferPtr& input : cut.parameters)
      if (!donated.count(input.get())) donation.kept.push_back(input);
  return donation;
}

AliasCount::AliasCount(const GraphCut& cut)
    : graph_(cut.hash), inputs_(cut.parameters.begin(), cut.parameters.end()) {}

void AliasCount::Record(const runtime::Executable& executable) const {
  std::vector<bool> donatable(inputs_.size());
  ir::hash_t pattern = graph_;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    // One owner: the run's list of its inputs. (An input a queued run is still to write has no
    // memory yet: it will have when this run starts.)
    if (inputs_[k].use_count() == 1) {
      runtime::BufferPtr input = inputs_[k].lock();
      donatable[k] = input && input->OwnsStorage();
    }
    pattern = ir::Mix(pattern, donatable[k]);
  }
  static std::mutex mu;
  static std::unordered_set<ir::hash_t> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert(pattern).second) return;
  }
  static metrics::Metric* aliases = metrics::GetMetric("InputOutputAliasCount", metrics::MetricUnit::kNumber);
  aliases->AddSample(static_cast<double>(executable.CountDonations(donatable)));
}

}  // namespace txla::graph
