#include "compiler/codegen/kernel_naming.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "compiler/content_hash.h"

namespace txla::compiler {
namespace {

// Where the hash goes in a kernel-level name until the hash is known ('@' is no identifier char).
constexpr char kHashMark = '@';
constexpr char kSeparator = '\x01';  // between pieces in the hashed text

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The canonical name of `id` (with kHashMark for the hash), or "" when it is no emitter name.
class Renamer {
 public:
  explicit Renamer(NamingScope scope) : scope_(scope) {}
  std::string Canonical(const std::string& id) {
    auto it = renamed_.find(id);
    if (it != renamed_.end()) return it->second;
    std::string name;
    // A step names kernels by their final names: only its own name is renamed after its content.
    static const std::vector<const char*> kKernelLevel = {"k_", "t_"};
    static const std::vector<const char*> kStepLevel = {"s_"};
    for (const char* prefix : scope_ == NamingScope::kKernel ? kKernelLevel : kStepLevel) {
      if (StartsWith(id, prefix)) {
        int n = kernel_level_[prefix]++;
        name = std::string(prefix) + kHashMark + (n ? "_" + std::to_string(n) : "");
        kernel_level_ids_.push_back(id);
        break;
      }
    }
    if (name.empty() && StartsWith(id, "b_")) name = "buf" + std::to_string(buffers_++);
    if (name.empty() && StartsWith(id, scope_ == NamingScope::kKernel ? "c_" : "g_"))
      name = "tab" + std::to_string(tables_++);
    if (name.empty()) return "";
    renamed_[id] = name;
    return name;
  }
  const std::vector<std::string>& kernel_level_ids() const { return kernel_level_ids_; }
  const std::string& Renamed(const std::string& id) const { return renamed_.at(id); }

 private:
  NamingScope scope_;
  std::map<std::string, std::string> renamed_;
  std::map<std::string, int> kernel_level_;
  std::vector<std::string> kernel_level_ids_;
  int buffers_ = 0, tables_ = 0;
};

// Calls visit(identifier) for each identifier of `text` outside string and character literals
// and numbers, and builds the text again with what it returns in their place.
template <typename Visit>
std::string MapIdentifiers(const std::string& text, Visit visit) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text, i, j - i);
      i = j;
    } else if (IsIdentStart(c)) {
      size_t j = i;
      while (j < text.size() && IsIdentChar(text[j])) ++j;
      out += visit(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // A number with its suffixes and exponent (1.5e+00f, 512ULL): never an identifier.
      size_t j = i;
      while (j < text.size() && (IsIdentChar(text[j]) || text[j] == '.' ||
                                 ((text[j] == '+' || text[j] == '-') && (text[j - 1] == 'e' || text[j - 1] == 'E'))))
        ++j;
      out.append(text, i, j - i);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// `text` with every emitter name renamed; string and character literals copied untouched.
std::string Rename(const std::string& text, Renamer& renamer) {
  return MapIdentifiers(text, [&](const std::string& id) {
    std::string canonical = renamer.Canonical(id);
    return canonical.empty() ? id : canonical;
  });
}

std::string FillHash(std::string text, const std::string& hash) {
  std::string out;
  out.reserve(text.size() + 32);
  for (char c : text) {
    if (c == kHashMark) out += hash;
    else out += c;
  }
  return out;
}

}  // namespace

NamedKernel NameByContent(const std::vector<std::string>& pieces, NamingScope scope) {
  Renamer renamer(scope);
  std::vector<std::string> canonical;
  std::string all;
  for (const std::string& piece : pieces) {
    canonical.push_back(Rename(piece, renamer));
    all += canonical.back();
    all += kSeparator;
  }
  NamedKernel named;
  named.hash = ContentHash(all);
  for (const std::string& piece : canonical) named.pieces.push_back(FillHash(piece, named.hash));
  for (const std::string& id : renamer.kernel_level_ids()) named.names[id] = FillHash(renamer.Renamed(id), named.hash);
  return named;
}

std::vector<std::string> BufferIdentifiers(const std::string& text) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  MapIdentifiers(text, [&](const std::string& id) {
    if (StartsWith(id, "b_") && seen.insert(id).second) ids.push_back(id);
    return id;
  });
  return ids;
}

}  // namespace txla::compiler
