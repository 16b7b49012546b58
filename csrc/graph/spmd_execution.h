// Running a graph as one SPMD program over every device (runtime::SpmdEnabled()).
//
// The graph is lowered whole; its parameters carry the shardings of the buffers they read (a
// buffer split over devices says how), the user's annotations are `Sharding` custom calls, and
// the compiler's SPMD passes (compiler/spmd) propagate shardings and partition it into the
// program each device runs on its tiles. That program is compiled once; the executable runs it on
// all devices at once, each on its own thread with its pieces of the inputs, and hands back each
// result whole (replicated) or split (a runtime::Buffer of pieces).
#pragma once

#include <memory>

#include "graph/post_order.h"
#include "hlo/instruction.h"
#include "runtime/executable.h"
#include "tensor/lazy_tensor.h"

namespace txla::graph {

// `value` annotated with `sharding` (XLA syntax): a txla::custom_sharding node, which lowers to a
// `Sharding` custom call.
ir::Value AnnotateSharding(const ir::Value& value, const std::string& sharding);
// Entering a manual region: each device's piece of `value` (laid out as the tiled `sharding`),
// a value of the piece's dimensions `piece`; leaving one: the pieces as the whole value of
// dimensions `full` laid out as `sharding`.
ir::Value FullToShardShape(const ir::Value& value, const std::string& sharding, const std::vector<int64_t>& piece);
ir::Value ShardToFullShape(const ir::Value& value, const std::string& sharding, const std::vector<int64_t>& full);
// The tensor's value as a graph computes it: annotated with the sharding the user gave the
// tensor, when it is pending and not annotated so already.
ir::Value ValueInItsLayout(LazyTensor& t);
// Each pending tensor the user sharded gets its value annotated (once), so the graph computes
// it in that layout and it keeps its sharding across updates.
void AnnotateShardedTensors(const std::vector<LazyTensorPtr>& pending);

// The tensors an SPMD program just computed (their sharding reads "{replicated}" when whole).
void MarkSpmdResults(const std::vector<LazyTensorPtr>& computed);

// A value split over the devices as the tiled `sharding` says, from each device's piece (device
// order): a runtime::Buffer of pieces that knows where each starts in the whole.
runtime::BufferPtr SplitBuffer(runtime::ElementType type, const std::vector<int64_t>& full,
                               const hlo::Sharding& sharding, std::vector<runtime::BufferPtr> pieces);

// Gives each entry parameter the sharding of the buffer it reads (none: replicated, or, with
// auto-sharding on, none yet).
void AnnotateParameterShardings(hlo::Module& module, const GraphCut& cut);
// The parameters' shardings, mixed into the compile cache's key: the same graph over inputs split
// differently is a different program.
ir::hash_t ShardingKey(const GraphCut& cut);
// Propagates and partitions `module` (the cut, lowered) into the program each device runs;
// `outputs` (if given) receives the global results' shardings and dimensions.
// With auto-sharding on, the compiler first chooses layouts for the parameters the user left
// unsharded; `parameter_shardings` (if given) receives the layouts the program reads them in.
void PartitionSpmd(hlo::Module& module, const GraphCut& cut, std::vector<hlo::Sharding>* output_shardings = nullptr,
                   std::vector<std::vector<int64_t>>* output_dims = nullptr,
                   std::vector<hlo::Sharding>* parameter_shardings = nullptr);
// What the last partitioning on this thread inserted, one line per resharding with what needed
// it ("" when nothing was): the debugging tool's explanation of a compiled SPMD graph.
const std::string& LastPartitionReport();
// Propagates, partitions and compiles `module` (the cut, lowered); throws as compiler::Compile.
std::shared_ptr<runtime::Executable> CompileSpmd(std::unique_ptr<hlo::Module> module, const GraphCut& cut);
// An executable of the whole graph (the interpreter's) run on device 0 with its inputs gathered
// whole; its results are replicated. The fallback when the graph cannot be partitioned.
std::shared_ptr<runtime::Executable> RunWholeUnderSpmd(std::shared_ptr<runtime::Executable> whole);

}  // namespace txla::graph
