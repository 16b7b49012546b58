// The on-disk compilation cache: built kernel libraries keyed by everything that decides their
// code, shared by every process pointed at the same directory.
//
// Key: a fingerprint of the generated source (which is the optimized HLO, printed as code, plus
// the support-table ABI in its prelude), the kernel compiler's command line and binary (path,
// size, modification time: never run to ask its version), the CPU's model and features, and the
// project version. An entry is one file, "<key>.txla": a header naming the key, the payload
// size and checksum, then the shared object. Entries are written to a temporary name and renamed
// into place, so a reader sees a whole entry or none, however many processes share the
// directory. An entry that is truncated, corrupt or for another key is counted
// (PersistentCacheError), never loaded, and replaced by a fresh build unless the cache is
// read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace txla::compiler {

// Enables the cache in `directory` (created if missing). Also read once from the environment:
// XLA_PERSISTENT_CACHE_PATH, XLA_PERSISTENT_CACHE_READ_ONLY=1.
void InitializePersistentCache(const std::string& directory, bool readonly);
bool PersistentCacheEnabled();
// When the cache is enabled, computes the environment part of its keys (which hashes this build
// of the compiler, a few MB) on a background thread, off the first step's critical path: a
// process served by a warm cache then waits for it less. Called at import.
void PrefetchPersistentCacheKeys();

std::string PersistentCacheKey(const std::string& source);
// A loadable copy of the cached library for `key` (in the process's work directory), or nullopt
// on a miss or a bad entry (counted).
std::optional<std::string> PersistentCacheLookup(const std::string& key);
// Stores a built library under `key` (nothing when read-only). Failures to write are counted,
// not raised: the cache is an optimization.
void PersistentCacheStore(const std::string& key, const std::string& library_path);

// Graph entries ("<key>.graph") let a new process skip lowering and code generation too: they
// map a lazy-IR graph hash (with the environment and compiler switches) to the library's key and
// what the runtime needs to run it (see compile.cc for the format).
std::string PersistentCacheGraphKey(uint64_t graph_hash);
std::optional<std::string> PersistentCacheGetGraph(const std::string& graph_key);
void PersistentCachePutGraph(const std::string& graph_key, const std::string& description);

}  // namespace txla::compiler
