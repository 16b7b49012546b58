#include "compiler/codegen/loop_invariants.h"

#include <cctype>
#include <sstream>
#include <unordered_set>

namespace txla::compiler::emitter {
namespace {

bool IdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "      const float v12 = (v3 * buf1[i0]);" -> ("v12", "(v3 * buf1[i0])"); false for any other line.
bool ParseStatement(const std::string& line, std::string* var, std::string* expr) {
  size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos || line.compare(start, 6, "const ") != 0) return false;
  size_t eq = line.find(" = ", start);
  if (eq == std::string::npos || line.empty() || line.back() != ';') return false;
  size_t name_start = line.rfind(' ', eq - 1);
  if (name_start == std::string::npos || name_start < start + 6) return false;
  *var = line.substr(name_start + 1, eq - name_start - 1);
  if (var->size() < 2 || (*var)[0] != 'v') return false;
  for (size_t k = 1; k < var->size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>((*var)[k]))) return false;
  *expr = line.substr(eq + 3, line.size() - eq - 4);
  return true;
}

// Whether `expr` names `inner_var` or one of `varying` as a whole identifier.
bool Reads(const std::string& expr, const std::string& inner_var, const std::unordered_set<std::string>& varying) {
  for (size_t k = 0; k < expr.size();) {
    if (!IdentifierChar(expr[k]) || (k > 0 && IdentifierChar(expr[k - 1]))) {
      ++k;
      continue;
    }
    size_t end = k;
    while (end < expr.size() && IdentifierChar(expr[end])) ++end;
    // A number's digits and suffixes ("1.5e+00f") are not identifiers that matter here.
    if (!std::isdigit(static_cast<unsigned char>(expr[k]))) {
      std::string token = expr.substr(k, end - k);
      if (token == inner_var || varying.count(token)) return true;
    }
    k = end;
  }
  return false;
}

}  // namespace

SplitLoopBody HoistLoopInvariants(const std::string& statements, const std::string& inner_var) {
  SplitLoopBody split;
  std::unordered_set<std::string> varying;
  std::istringstream lines(statements);
  std::string line, var, expr;
  bool stopped = false;
  while (std::getline(lines, line)) {
    if (!stopped && !ParseStatement(line, &var, &expr)) stopped = true;
    if (stopped || Reads(expr, inner_var, varying)) {
      if (!stopped) varying.insert(var);
      split.varying += line + "\n";
    } else {
      split.invariant += line + "\n";
    }
  }
  return split;
}

}  // namespace txla::compiler::emitter
