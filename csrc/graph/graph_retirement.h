// What a barrier's sync leaves behind once its tensors hold their new values: the graph it ran.
#pragma once

#include <memory>
#include <vector>

#include "graph/deferred_views.h"
#include "graph/post_order.h"

namespace txla::graph {

// The nodes of a submitted run's graph, handed to the run (NativeExecutable::Submit) so that
// they are freed on the device's queue after it: a step's thousands of nodes took a millisecond
// of the host's barrier to free, now overlapped with the host's next trace.
struct RetiredGraph {
  std::vector<ir::Value> roots;
  std::vector<ir::NodePtr> transposes;  // of the deferred views, now rebased
  std::vector<runtime::BufferPtr> kept_inputs;  // inputs the run must not write over (buffer_donation.h)
};

// Moves `cut`'s roots and the deferred views' old nodes into `retired` (the tensors of `deferred`
// are let go of here, on the caller's thread). First, each device-data node nothing outside this
// graph can reach drops its buffer: the run, which starts once the caller opens its gate, then
// sees that nothing else holds it and donates it to an output, as when the graph was freed first.
// `values` (the values the sync read) is emptied. Takes the graph-walk lock (cut_index).
void RetireGraph(GraphCut* cut, std::vector<ir::Value>* values, std::vector<DeferredView>* deferred,
                 RetiredGraph* retired);

}  // namespace txla::graph
