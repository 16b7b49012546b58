#include "compiler/spmd/tile_map.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace txla::compiler::spmd {

TileMap TileMap::Replicated(int64_t rank, int64_t devices) {
  TileMap m;
  m.tiles.assign(rank, 1);
  m.coords.assign(devices, std::vector<int64_t>(rank, 0));
  return m;
}

TileMap TileMap::Of(const hlo::Sharding& sharding, int64_t rank, int64_t devices) {
  if (sharding.kind != hlo::Sharding::Kind::kTiled) return Replicated(rank, devices);
  TileMap m;
  m.tiles = sharding.TilesPerDimension(rank);
  m.coords.assign(devices, std::vector<int64_t>(rank, 0));
  const std::vector<int64_t>& dims = sharding.tile_dims;
  std::vector<int64_t> at(dims.size(), 0);
  std::vector<bool> seen(devices, false);
  for (int64_t device : sharding.devices) {
    if (device < 0 || device >= devices || seen[device])
      throw std::invalid_argument("sharding " + sharding.ToString() + " names device " + std::to_string(device) +
                                  " of a mesh of " + std::to_string(devices));
    seen[device] = true;
    m.coords[device].assign(at.begin(), at.begin() + rank);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {  // row-major increment
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
  if (static_cast<int64_t>(sharding.devices.size()) != devices)
    throw std::invalid_argument("sharding " + sharding.ToString() + " places " +
                                std::to_string(sharding.devices.size()) + " devices, the mesh has " +
                                std::to_string(devices));
  return m;
}

bool TileMap::replicated() const {
  return std::all_of(tiles.begin(), tiles.end(), [](int64_t t) { return t == 1; });
}

std::optional<hlo::Sharding> TileMap::ToSharding() const {
  if (replicated()) return hlo::Sharding::Replicated();
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders;  // row-major order of coords
  for (int64_t d = 0; d < devices(); ++d) holders[coords[d]].push_back(d);
  const size_t group = holders.begin()->second.size();
  int64_t count = 1;
  for (int64_t t : tiles) count *= t;
  if (static_cast<int64_t>(holders.size()) != count) return std::nullopt;
  std::vector<int64_t> order;
  for (const auto& [at, devs] : holders) {
    if (devs.size() != group) return std::nullopt;
    order.insert(order.end(), devs.begin(), devs.end());
  }
  std::vector<int64_t> dims = tiles;
  if (group > 1) dims.push_back(static_cast<int64_t>(group));
  return hlo::Sharding::Tiled(dims, order, group > 1);
}

TileMap Project(const TileMap& from, const std::vector<int64_t>& pick) {
  TileMap m;
  for (int64_t p : pick) m.tiles.push_back(p < 0 ? 1 : from.tiles[p]);
  m.coords.resize(from.devices());
  for (int64_t d = 0; d < from.devices(); ++d)
    for (int64_t p : pick) m.coords[d].push_back(p < 0 ? 0 : from.coords[d][p]);
  return m;
}

std::vector<int64_t> LocalDims(const std::vector<int64_t>& full, const std::vector<int64_t>& tiles) {
  std::vector<int64_t> local(full.size());
  for (size_t d = 0; d < full.size(); ++d) local[d] = (full[d] + tiles[d] - 1) / tiles[d];
  return local;
}

bool Even(const std::vector<int64_t>& full, const std::vector<int64_t>& tiles) {
  for (size_t d = 0; d < full.size(); ++d)
    if (full[d] % tiles[d] != 0) return false;
  return true;
}

std::vector<std::vector<int64_t>> ShardOffsets(const TileMap& map, const std::vector<int64_t>& full) {
  const std::vector<int64_t> local = LocalDims(full, map.tiles);
  std::vector<std::vector<int64_t>> offsets(map.devices(), std::vector<int64_t>(full.size()));
  for (int64_t dev = 0; dev < map.devices(); ++dev)
    for (size_t d = 0; d < full.size(); ++d) offsets[dev][d] = map.coords[dev][d] * local[d];
  return offsets;
}

std::vector<std::vector<int64_t>> GroupDevices(int64_t devices, const std::vector<std::vector<int64_t>>& key,
                                               const std::vector<std::vector<int64_t>>& dup) {
  // (key, occurrence of dup within key) -> members
  std::map<std::pair<std::vector<int64_t>, int64_t>, std::vector<int64_t>> groups;
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, int64_t> seen;
  for (int64_t d = 0; d < devices; ++d) {
    int64_t occurrence = seen[{key[d], dup[d]}]++;
    groups[{key[d], occurrence}].push_back(d);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto& [k, members] : groups) out.push_back(members);
  std::sort(out.begin(), out.end());
  return out;
}

runtime::Layout LayoutOf(const TileMap& map, const std::vector<int64_t>& full) {
  return {LocalDims(full, map.tiles), ShardOffsets(map, full)};
}

}  // namespace txla::compiler::spmd
