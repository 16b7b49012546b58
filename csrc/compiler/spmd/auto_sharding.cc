#include "compiler/spmd/auto_sharding.h"

#include <algorithm>
#include <numeric>

#include "compiler/spmd/sharding_propagation.h"
#include "compiler/spmd/spmd_partitioner.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "runtime/element_type.h"

namespace txla::compiler::spmd {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Parameters smaller than this stay whole: splitting them saves nothing worth a search.
constexpr int64_t kMinBytes = 4096;
// At most this many parameters are searched (largest first); the rest stay whole.
constexpr size_t kMaxSearched = 32;
// A byte moved by a collective costs as much as this many multiply-adds of local work (a copy
// through memory against a vectorized loop).
constexpr double kByteCost = 4.0;

int64_t Bytes(const hlo::Shape& s) {
  return s.is_tuple ? 0 : s.element_count() * static_cast<int64_t>(runtime::ByteWidth(s.type));
}

// The layouts a value of `dims` may take: whole; one dimension split over all devices; over one
// mesh axis (the other axes replicating it).
std::vector<hlo::Sharding> Candidates(const std::vector<int64_t>& dims, int64_t devices,
                                      const std::vector<int64_t>& mesh) {
  std::vector<hlo::Sharding> out = {hlo::Sharding::Replicated()};
  std::vector<int64_t> all(devices);
  std::iota(all.begin(), all.end(), 0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d = 0; d < rank; ++d) {
    if (dims[d] < devices) continue;
    std::vector<int64_t> tiles(rank, 1);
    tiles[d] = devices;
    out.push_back(hlo::Sharding::Tiled(tiles, all));
  }
  if (mesh.size() < 2) return out;
  // Mesh axis k: device ids laid out as the mesh (row-major), axis k first in the tile order.
  int64_t stride = devices;
  for (size_t k = 0; k < mesh.size(); ++k) {
    stride /= mesh[k];
    const int64_t size = mesh[k];
    std::vector<int64_t> order;  // devices grouped by their coordinate on axis k
    for (int64_t c = 0; c < size; ++c)
      for (int64_t id = 0; id < devices; ++id)
        if ((id / stride) % size == c) order.push_back(id);
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] < size) continue;
      std::vector<int64_t> tiles(rank, 1);
      tiles[d] = size;
      tiles.push_back(devices / size);
      out.push_back(hlo::Sharding::Tiled(tiles, order, /*last_tile_dim_replicate=*/true));
    }
  }
  return out;
}

// A dot's multiply-adds: its result's elements times the contracted size.
double LocalWork(const Instruction& i) {
  if (i.shape().is_tuple) return 0;
  const double out = static_cast<double>(i.shape().element_count());
  if (i.opcode() == Opcode::kDot) {
    double k = 1;
    for (int64_t c : i.attrs().dot.lhs_contracting) k *= static_cast<double>(i.operand(0)->shape().dims[c]);
    return out * k;
  }
  if (i.opcode() == Opcode::kConvolution && i.operands().size() > 1) {
    const hlo::Shape& w = i.operand(1)->shape();
    return out * static_cast<double>(w.element_count()) / std::max<int64_t>(1, w.dims.empty() ? 1 : w.dims[0]);
  }
  if (i.opcode() == Opcode::kParameter || i.opcode() == Opcode::kConstant || i.opcode() == Opcode::kTuple) return 0;
  return out;
}

}  // namespace

double AutoSharding::Cost(const hlo::Module& module) const {
  std::unique_ptr<hlo::Module> copy = hlo::ParseModule(hlo::ToText(module));
  ShardingPropagation(devices_).Run(*copy);
  SpmdPartitioner partitioner(devices_);
  partitioner.Run(*copy);
  double cost = 0;
  for (const Instruction* i : copy->entry()->instructions()) cost += LocalWork(*i);
  for (const auto& r : partitioner.inserted()) cost += kByteCost * static_cast<double>(r.bytes);
  return cost;
}

bool AutoSharding::Run(hlo::Module& module) {
  std::vector<Instruction*> open;
  for (Instruction* p : module.entry()->parameters())
    if (!p->attrs().sharding && !p->shape().is_tuple) open.push_back(p);
  if (open.empty()) return false;
  for (Instruction* p : open) p->mutable_attrs().sharding = hlo::Sharding::Replicated();
  std::stable_sort(open.begin(), open.end(),
                   [](const Instruction* a, const Instruction* b) { return Bytes(a->shape()) > Bytes(b->shape()); });
  double best = Cost(module);
  for (size_t k = 0; k < open.size() && k < kMaxSearched; ++k) {
    Instruction* p = open[k];
    if (Bytes(p->shape()) < kMinBytes) break;
    hlo::Sharding chosen = *p->attrs().sharding;
    for (const hlo::Sharding& candidate : Candidates(p->shape().dims, devices_, mesh_)) {
      if (candidate == chosen) continue;
      p->mutable_attrs().sharding = candidate;
      const double cost = Cost(module);
      if (cost < best) {
        best = cost;
        chosen = candidate;
      }
    }
    p->mutable_attrs().sharding = chosen;
  }
  return true;
}

}  // namespace txla::compiler::spmd
