// Which donated parameter each output of a run takes over (native_executable.h, Run).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace txla::compiler {

// Gives each output at most one donor and each donor at most one output, serving as many outputs
// as can be served (augmenting paths), among the plan's (output, parameter) candidates that
// `usable` accepts at run time. A greedy pass in the plan's order could let the first output take
// the only donor of another when it had a second choice. Returns, per output, the parameter it
// takes, or -1.
std::vector<int64_t> MatchDonors(const std::vector<std::pair<int64_t, int64_t>>& candidates,
                                 size_t outputs, const std::function<bool(int64_t, int64_t)>& usable);

}  // namespace txla::compiler
