// Buffer donation as PyTorch/XLA has it. A graph's run may write an output over an input buffer
// that nothing else holds (native_executable.cc decides when the run starts): the old value of a
// tensor updated in place, and an input the user asked to donate (_set_buffer_donation), whose
// tensors let go of it at the barrier and become placeholders. A sync that keeps the updated
// inputs (_xla_sync_multi(..., sync_xla_data=False)) donates only the user's, and those only when
// _xla_set_enable_alias_with_buffer_donor_config(True).
#pragma once

#include <memory>
#include <vector>

#include "graph/post_order.h"
#include "runtime/executable.h"
#include "tensor/lazy_tensor.h"

namespace txla::graph {

void SetAliasWithBufferDonorConfig(bool enabled);
bool AliasWithBufferDonorConfig();

// Asks that the tensor's device data be donated to the next run that reads it (or withdraws the
// request). False, and nothing asked, when the tensor has no device data (a pending value), or when a
// donation is asked of a read-only buffer (a number's shared buffer, runtime/scalar_cache.h).
bool SetBufferDonation(const LazyTensorPtr& tensor, bool donate);
bool BufferDonationRequested(const LazyTensorPtr& tensor);

// What a sync's run may take over, settled before the run is submitted: the tensors holding an
// input the user donated let go of it; `kept` holds the inputs this sync keeps (hand it to the
// run, to be released after it).
struct InputDonation {
  std::vector<runtime::BufferPtr> kept;
};
InputDonation DonateInputs(const GraphCut& cut, int device, bool donate_updated_inputs);

// A sync's inputs, watched until its tensors and graph are let go of (RetireGraph): then the
// inputs only the run holds are the ones it may take over. PyTorch/XLA compiles a graph again for
// each set of donated inputs (ours serves any set: the run chooses) and samples
// InputOutputAliasCount per compile: Record samples, for each graph and set of donatable inputs
// first seen, how many outputs `executable` would write over them.
class AliasCount {
 public:
  explicit AliasCount(const GraphCut& cut);
  void Record(const runtime::Executable& executable) const;

 private:
  ir::hash_t graph_;
  std::vector<std::weak_ptr<runtime::Buffer>> inputs_;
};

}  // namespace txla::graph
