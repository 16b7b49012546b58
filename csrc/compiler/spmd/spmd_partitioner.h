// Rewrites a global program whose instructions all carry shardings (after ShardingPropagation)
// into the program every device runs on its own tiles, as XLA's GSPMD partitioner does:
// parameters and results become each device's tile (padded where a dimension does not divide),
// an instruction runs locally when its op rule allows, partial results are combined by an
// all-reduce over the devices holding the same tile, and values are brought to the layout an
// instruction needs by an all-gather (txla.spmd_all_gather) or by cutting out this device's
// tile (txla.spmd_shard). Which device is running comes from the runtime, so one compiled
// program serves all devices. Each resharding inserted is counted (SpmdReshard:<kind>) with its
// bytes (SpmdReshardBytes:<kind>) when the program is partitioned.
#pragma once

#include <cstdint>

#include "compiler/passes/pass.h"

namespace txla::compiler::spmd {

class SpmdPartitioner : public Pass {
 public:
  explicit SpmdPartitioner(int64_t devices) : devices_(devices) {}
  std::string name() const override { return "spmd-partitioner"; }
  bool Run(hlo::Module& module) override;

  // What the partitioner inserted, by kind ("all-gather", "shard", "all-reduce"): how many,
  // and the bytes each device receives (all-gather: the whole value; all-reduce: its tile).
  struct Reshard {
    std::string kind;
    int64_t bytes = 0;
    std::string why;  // "operand 0 of %slice.3 (slice)": what needed it, for PT_XLA_DEBUG
  };
  const std::vector<Reshard>& inserted() const { return inserted_; }

 private:
  int64_t devices_;
  std::vector<Reshard> inserted_;
};

}  // namespace txla::compiler::spmd
