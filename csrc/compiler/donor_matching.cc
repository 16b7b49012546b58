#include "compiler/donor_matching.h"

#include <map>
#include <set>

namespace txla::compiler {

std::vector<int64_t> MatchDonors(const std::vector<std::pair<int64_t, int64_t>>& candidates,
                                 size_t outputs, const std::function<bool(int64_t, int64_t)>& usable) {
  std::vector<int64_t> donor_of(outputs, -1);
  std::map<int64_t, std::vector<int64_t>> choices;  // output -> usable parameters, in plan order
  for (auto [out, param] : candidates)
    if (out >= 0 && static_cast<size_t>(out) < outputs && usable(out, param)) choices[out].push_back(param);
  std::map<int64_t, int64_t> served;  // parameter -> the output it serves
  std::set<int64_t> visited;
  // Finds `out` a parameter, moving an output that holds one to another of its choices.
  std::function<bool(int64_t)> serve = [&](int64_t out) {
    for (int64_t param : choices[out]) {
      if (!visited.insert(param).second) continue;
      auto holder = served.find(param);
      if (holder == served.end() || serve(holder->second)) {
        served[param] = out;
        donor_of[out] = param;
        return true;
      }
    }
    return false;
  };
  for (const auto& [out, unused] : choices) {
    visited.clear();
    serve(out);
  }
  return donor_of;
}

}  // namespace txla::compiler
