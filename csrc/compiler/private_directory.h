// Directories the compiler writes code into and loads code from (the work directory, the
// persistent cache): whatever is in them gets dlopen'ed, so they must be this user's alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace txla::compiler {

// Creates `path` (mode 0700) when missing, then checks that it is a directory (not a symlink)
// owned by this user and writable by no one else. Throws std::runtime_error naming the path and
// what is wrong.
void EnsurePrivateDirectory(const std::string& path);

// Removes the regular files in `dir` whose names start with one of `prefixes` and that were last
// modified more than `max_age_seconds` ago, in one pass over the directory. Errors are ignored
// (another process may be cleaning too).
void RemoveFilesOlderThan(const std::string& dir, const std::vector<std::string>& prefixes, int64_t max_age_seconds);

// True when the file at `path` is missing or was last modified more than `seconds` ago, and then
// creates it or sets its time to now: a periodic task shared by the processes using a directory
// runs when this says so. Two processes may both be told yes in a race; the tasks must tolerate it.
bool TouchIfOlderThan(const std::string& path, int64_t seconds);

// Removes the least recently modified regular files in `dir` whose names end with `suffix` until
// those files total at most `cap_bytes`; returns how many were removed.
int64_t CapDirectorySize(const std::string& dir, const std::string& suffix, uint64_t cap_bytes);

}  // namespace txla::compiler
