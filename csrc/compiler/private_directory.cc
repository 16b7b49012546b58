#include "compiler/private_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

namespace txla::compiler {

void EnsurePrivateDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create directory " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0)
    throw std::runtime_error("cannot inspect directory " + path + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    throw std::runtime_error(path + " is not a directory (a symlink or a file): refusing to load code from it");
  if (st.st_uid != getuid())
    throw std::runtime_error(path + " belongs to user " + std::to_string(st.st_uid) + ", not to this user (" +
                             std::to_string(getuid()) + "): refusing to load code from it");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw std::runtime_error(path + " is writable by other users (mode " + mode +
                             "): refusing to load code from it; make it 0700");
  }
}

namespace {

struct FileEntry {
  std::string path;
  uint64_t bytes;
  time_t modified;
};

std::vector<FileEntry> ListFiles(const std::string& dir) {
  std::vector<FileEntry> files;
  DIR* d = opendir(dir.c_str());
  if (!d) return files;
  while (dirent* e = readdir(d)) {
    std::string path = dir + "/" + e->d_name;
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      files.push_back({e->d_name, static_cast<uint64_t>(st.st_size), st.st_mtime});
  }
  closedir(d);
  return files;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void RemoveFilesOlderThan(const std::string& dir, const std::vector<std::string>& prefixes, int64_t max_age_seconds) {
  const time_t now = std::time(nullptr);
  for (const FileEntry& f : ListFiles(dir)) {
    if (now - f.modified <= max_age_seconds) continue;
    for (const std::string& prefix : prefixes) {
      if (f.path.rfind(prefix, 0) != 0) continue;
      std::remove((dir + "/" + f.path).c_str());
      break;
    }
  }
}

bool TouchIfOlderThan(const std::string& path, int64_t seconds) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && std::time(nullptr) - st.st_mtime <= seconds) return false;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  futimens(fd, nullptr);
  close(fd);
  return true;
}

int64_t CapDirectorySize(const std::string& dir, const std::string& suffix, uint64_t cap_bytes) {
  std::vector<FileEntry> files = ListFiles(dir);
  files.erase(std::remove_if(files.begin(), files.end(), [&](const FileEntry& f) { return !EndsWith(f.path, suffix); }),
              files.end());
  uint64_t total = 0;
  for (const FileEntry& f : files) total += f.bytes;
  if (total <= cap_bytes) return 0;
  std::sort(files.begin(), files.end(), [](const FileEntry& a, const FileEntry& b) { return a.modified < b.modified; });
  int64_t removed = 0;
  for (const FileEntry& f : files) {
    if (total <= cap_bytes) break;
    if (std::remove((dir + "/" + f.path).c_str()) == 0) {
      total -= f.bytes;
      ++removed;
    }
  }
  return removed;
}

}  // namespace txla::compiler
