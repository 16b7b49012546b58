#include "hlo/sharding.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>

namespace txla::hlo {
namespace {

// A reader over one sharding's text.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  [[noreturn]] void Fail(const std::string& why) const {
    throw std::invalid_argument("sharding " + std::string(text_) + ": " + why);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(std::string_view s) {
    SkipSpace();
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  void Expect(std::string_view s) {
    if (!Accept(s)) Fail("expected '" + std::string(s) + "'");
  }
  int64_t Int() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) Fail("expected a number");
    return std::stoll(std::string(text_.substr(start, pos_ - start)));
  }
  // [a,b,...]
  std::vector<int64_t> Bracketed() {
    Expect("[");
    std::vector<int64_t> out;
    if (Accept("]")) return out;
    do out.push_back(Int());
    while (Accept(","));
    Expect("]");
    return out;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<int64_t>());
}

// XLA's iota tile assignment: 0..n-1 laid out as `reshape`, transposed by `perm`, row-major.
std::vector<int64_t> IotaDevices(const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm) {
  const int64_t n = Product(reshape);
  const size_t rank = reshape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * reshape[k];
  std::vector<int64_t> out_dims(rank);
  for (size_t k = 0; k < rank; ++k) out_dims[k] = reshape[perm[k]];
  std::vector<int64_t> devices(static_cast<size_t>(n));
  std::vector<int64_t> index(rank, 0);  // in the transposed layout
  for (int64_t i = 0; i < n; ++i) {
    int64_t source = 0;
    for (size_t k = 0; k < rank; ++k) source += index[k] * strides[perm[k]];
    devices[static_cast<size_t>(i)] = source;
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < out_dims[k]) break;
      index[k] = 0;
    }
  }
  return devices;
}

}  // namespace

Sharding Sharding::Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices, bool last_tile_dim_replicate) {
  std::string text = "devices=[";
  for (size_t k = 0; k < tile_dims.size(); ++k) text += (k ? "," : "") + std::to_string(tile_dims[k]);
  text += "]";
  if (tile_dims.empty()) throw std::invalid_argument("sharding " + text + ": a tiled sharding needs tile dimensions");
  for (int64_t d : tile_dims)
    if (d < 1) throw std::invalid_argument("sharding " + text + ": a tile dimension must be at least 1");
  if (last_tile_dim_replicate && tile_dims.size() < 2)
    throw std::invalid_argument("sharding " + text + ": last_tile_dim_replicate needs a dimension besides the replicas'");
  const int64_t n = Product(tile_dims);
  std::vector<int64_t> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(static_cast<size_t>(n));
  std::iota(expected.begin(), expected.end(), 0);
  if (sorted != expected)
    throw std::invalid_argument("sharding " + text + ": the devices must be each of 0.." + std::to_string(n - 1) +
                                " once, " + std::to_string(devices.size()) + " given");
  return {Kind::kTiled, std::move(tile_dims), std::move(devices), last_tile_dim_replicate};
}

std::vector<int64_t> Sharding::TilesPerDimension(int64_t rank) const {
  if (kind != Kind::kTiled) return std::vector<int64_t>(static_cast<size_t>(rank), 1);
  std::vector<int64_t> tiles(tile_dims.begin(), tile_dims.end() - (last_tile_dim_replicate ? 1 : 0));
  if (static_cast<int64_t>(tiles.size()) != rank)
    throw std::invalid_argument("sharding " + ToString() + " tiles " + std::to_string(tiles.size()) +
                                " dimensions, the value has " + std::to_string(rank));
  return tiles;
}

std::string Sharding::ToString() const {
  switch (kind) {
    case Kind::kReplicated: return "{replicated}";
    case Kind::kManual: return "{manual}";
    case Kind::kMaximal: return "{maximal device=" + std::to_string(devices.at(0)) + "}";
    case Kind::kTiled: break;
  }
  std::string s = "{devices=[";
  for (size_t k = 0; k < tile_dims.size(); ++k) s += (k ? "," : "") + std::to_string(tile_dims[k]);
  s += "]";
  for (size_t k = 0; k < devices.size(); ++k) s += (k ? "," : "") + std::to_string(devices[k]);
  if (last_tile_dim_replicate) s += " last_tile_dim_replicate";
  return s + "}";
}

Sharding Sharding::Parse(std::string_view text) {
  Reader r(text);
  r.Expect("{");
  Sharding s;
  if (r.Accept("replicated")) {
    s = Replicated();
  } else if (r.Accept("manual")) {
    s = Manual();
  } else if (r.Accept("maximal")) {
    r.Expect("device");
    r.Expect("=");
    s = Maximal(r.Int());
  } else if (r.Accept("devices")) {
    r.Expect("=");
    std::vector<int64_t> tile_dims = r.Bracketed();
    std::vector<int64_t> devices;
    if (r.Accept("<=")) {
      std::vector<int64_t> reshape = r.Bracketed();
      std::vector<int64_t> perm(reshape.size());
      std::iota(perm.begin(), perm.end(), 0);
      if (r.Accept("T")) {
        r.Expect("(");
        perm.clear();
        do perm.push_back(r.Int());
        while (r.Accept(","));
        r.Expect(")");
        std::vector<int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (size_t k = 0; k < sorted.size(); ++k)
          if (sorted[k] != static_cast<int64_t>(k) || sorted.size() != reshape.size())
            r.Fail("the transpose is not a permutation of the iota's dimensions");
      }
      devices = IotaDevices(reshape, perm);
    } else {
      do devices.push_back(r.Int());
      while (r.Accept(","));
    }
    bool replicate = false;
    if (r.Accept("last_tile_dim_replicate")) replicate = true;
    else if (r.Accept("last_tile_dims")) r.Fail("subgroup shardings (last_tile_dims) are not supported yet");
    s = Tiled(std::move(tile_dims), std::move(devices), replicate);
  } else if (r.Accept("{")) {
    r.Fail("tuple shardings are not supported yet");
  } else {
    r.Fail("expected replicated, maximal, manual or devices=");
  }
  r.Expect("}");
  if (!r.AtEnd()) r.Fail("unexpected text after the sharding");
  return s;
}

}  // namespace txla::hlo
