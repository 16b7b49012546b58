// A compiled graph, ready to run on a device: parameters in, results out, in the order the graph
// was cut. The interpreter and compiled native code both implement it.
#pragma once

#include <string>
#include <vector>

#include "runtime/buffer.h"

namespace txla::runtime {

class Executable {
 public:
  virtual ~Executable() = default;
  virtual std::vector<BufferPtr> Execute(const std::vector<BufferPtr>& parameters,
                                         int device) = 0;
  // Asynchronous form: returns the (not yet written) outputs at once and queues the run on the
  // device's execution queue. Executables that cannot pre-allocate their outputs return an
  // empty vector, and the caller runs Execute instead.
  // The queued run waits for `start` (when given) to be marked ready: the caller opens it once it
  // has let go of the graph, so the run can tell which inputs nothing else holds.
  // `ends_step`: the graph of a barrier (see ExecutionQueue::Submit).
  // `release_after_run`: what the caller hands over to be freed on the queue's thread once the
  // run is over (the graph's nodes: costly to free, needed by no one).
  virtual std::vector<BufferPtr> Submit(const std::vector<BufferPtr>& parameters, int device,
                                        std::shared_ptr<Readiness> start, bool ends_step,
                                        std::shared_ptr<void> release_after_run = nullptr) {
    return {};
  }
  // What the compiled program holds besides its inputs and outputs (the debugging tool's post
  // compilation analysis): the bytes of inputs it may write its outputs over, its scratch
  // memory and its code. `known` is false for executables that cannot tell.
  struct Footprint {
    bool known = false;
    int64_t aliasable_input_bytes = 0, intermediate_bytes = 0, program_bytes = 0;
  };
  virtual Footprint footprint() const { return {}; }
  // How many outputs a run would write over an input, when the inputs `donatable` says nothing
  // else holds are donated (the run's own choice, made again when it starts): PyTorch/XLA's
  // InputOutputAliasCount for the graph.
  virtual int64_t CountDonations(const std::vector<bool>& donatable) const { return 0; }
  // What ran it: "interpreter", "native", ...
  virtual std::string kind() const = 0;
  // Where its generated code and HLO were dumped ("" when nothing was): named in errors.
  virtual std::string dump_path() const { return ""; }
};

}  // namespace txla::runtime
