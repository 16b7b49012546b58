#include "compiler/donor_matching.h"

#include <algorithm>

namespace txla::compiler {
namespace {

// Flat arrays, not maps and sets: this runs before every graph's kernels, on its critical path,
// for each of a training step's hundreds of outputs.
struct Matching {
  std::vector<int64_t> begin;    // output -> its first usable parameter in `choices`
  std::vector<int64_t> choices;  // every output's usable parameters, in plan order
  std::vector<int64_t> served;   // parameter -> the output it serves, or -1
  std::vector<int64_t> visited;  // parameter -> the search that last visited it, or -1
  std::vector<int64_t>& donor_of;

  // Finds `out` a parameter, moving an output that holds one to another of its choices.
  bool Serve(int64_t out, int64_t search) {
    for (int64_t c = begin[out]; c < begin[out + 1]; ++c) {
      int64_t param = choices[c];
      if (visited[param] == search) continue;
      visited[param] = search;
      int64_t holder = served[param];
      if (holder < 0 || Serve(holder, search)) {
        served[param] = out;
        donor_of[out] = param;
        return true;
      }
    }
    return false;
  }
};

}  // namespace

std::vector<int64_t> MatchDonors(const std::vector<std::pair<int64_t, int64_t>>& candidates,
                                 size_t outputs, const std::function<bool(int64_t, int64_t)>& usable) {
  std::vector<int64_t> donor_of(outputs, -1);
  Matching m{std::vector<int64_t>(outputs + 1, 0), {}, {}, {}, donor_of};
  std::vector<std::pair<int64_t, int64_t>> kept;
  kept.reserve(candidates.size());
  int64_t params = 0;
  for (auto [out, param] : candidates) {
    if (out < 0 || static_cast<size_t>(out) >= outputs || param < 0 || !usable(out, param)) continue;
    kept.emplace_back(out, param);
    ++m.begin[out + 1];
    params = std::max(params, param + 1);
  }
  for (size_t k = 0; k < outputs; ++k) m.begin[k + 1] += m.begin[k];
  m.choices.resize(kept.size());
  std::vector<int64_t> fill(m.begin.begin(), m.begin.end() - 1);
  for (auto [out, param] : kept) m.choices[fill[out]++] = param;  // stable: plan order per output
  m.served.assign(params, -1);
  m.visited.assign(params, -1);
  // Most outputs have one candidate that no other output wants: a free choice, taken first; only
  // the outputs left without one search for a chain of moves.
  std::vector<int64_t> unserved;
  for (size_t out = 0; out < outputs; ++out) {
    bool taken = false;
    for (int64_t c = m.begin[out]; c < m.begin[out + 1] && !taken; ++c) {
      int64_t param = m.choices[c];
      if (m.served[param] < 0) {
        m.served[param] = static_cast<int64_t>(out);
        donor_of[out] = param;
        taken = true;
      }
    }
    if (!taken && m.begin[out] < m.begin[out + 1]) unserved.push_back(static_cast<int64_t>(out));
  }
  for (int64_t out : unserved) m.Serve(out, out);
  return donor_of;
}

}  // namespace txla::compiler
