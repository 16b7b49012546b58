// The scalar C++ expression of an instruction at a loop index, for the kernel being emitted.
// Values become statements of the loop body (`const T vN = ...;`, memoized per index), loads
// name the buffers they read, small array constants become tables declared once per kernel, and
// a fused computation's parameters and the producers computed inside the kernel resolve to the
// instructions they stand for. The loop and reduction emitters set a kernel's context here and
// read back what its expressions left: the body, the buffers used, the tables, the split a
// concatenation asks for.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/buffer_assignment.h"
#include "compiler/codegen/index_expr.h"
#include "compiler/codegen/program_builder.h"
#include "hlo/instruction.h"

namespace txla::compiler::emitter {

using hlo::Instruction;
using Index = std::vector<IndexExpr>;

// The name generated code gives an instruction's buffer.
inline std::string BufferName(const Instruction& i) { return "b_" + Sanitize(i.name()); }
// Whether the plan gives `i` memory of its own (a parameter, an output, a temporary or an alias).
bool IsMaterialized(const BufferPlan& plan, const Instruction& i);
// `acc` combined with `v` by the reduction's computation, as source.
std::string Combiner(const Instruction& reduce, const std::string& acc, const std::string& v);
// An index read from data, checked: one outside [0, size) is reported (support->index_error)
// and replaced by 0.
std::string CheckedIndex(const std::string& j, int64_t size, const std::string& site);
// One position of a window at output index `idx`: where it reads (clamped into the input), the
// condition that it lies in the input (empty when the index ranges prove it always does), and
// whether it lies in the padding for every output.
struct WindowRead {
  Index at;
  std::string inside;
  bool never = false;
};
WindowRead ReadWindowPosition(const std::vector<hlo::WindowDim>& window, const Index& idx,
                              const std::vector<int64_t>& pos, const std::vector<int64_t>& in_dims);
// The next window position, last dimension fastest.
void NextWindowPosition(const std::vector<hlo::WindowDim>& window, std::vector<int64_t>* pos);

class ExpressionEmitter {
 public:
  explicit ExpressionEmitter(const BufferPlan& plan) : plan_(plan) {}

  // A new kernel: no buffers used, no tables, value names from v0 (identical kernels then read
  // the same), `output` the instruction it writes (computed, never loaded).
  void BeginKernel(const Instruction* output);
  // A new loop body: no statements, nothing memoized.
  void BeginBody();
  // A fresh value name.
  std::string NewVar() { return "v" + std::to_string(next_var_++); }

  // The value of `i` at multi-index `idx`: a value name, a literal or a load.
  std::string Value(const Instruction& i, const Index& idx);
  // An element of a buffer (a predicate is read as a byte compared with 0).
  std::string Load(const Instruction& buffer, const std::string& index);

  // The kernel's context, set by the loop emitter: a fused computation's parameter -> the
  // instruction it stands for; a producer computed inside the kernel -> its fused root.
  std::map<const Instruction*, const Instruction*> fusion_params;
  std::map<const Instruction*, const Instruction*> inlined;
  const Instruction* current_output = nullptr;
  // Whether the loop being emitted may split at a concatenation's boundaries, and where one
  // asked it to (split_dim -1: none).
  bool may_split = false;
  int64_t split_dim = -1;
  std::vector<int64_t> split_points;
  static constexpr size_t kMaxSplitParts = 8;

  // What the expressions left: the body's statements, the buffers read (in order of first use),
  // the kernel's constant tables.
  std::ostringstream body;
  std::vector<const Instruction*> used;
  std::ostringstream tables;

 private:
  std::string Compute(const Instruction& i, const Index& idx);
  // A window's reduction at one output index: an accumulator and a loop per windowed dimension,
  // in the body; positions in the padding are skipped (they hold the init value).
  std::string ReduceWindow(const Instruction& i, const Index& idx);
  bool Materialized(const Instruction& i) const;

  const BufferPlan& plan_;
  std::map<std::string, std::string> memo_;  // "name@index" -> value name
  int next_var_ = 0;
  std::set<std::string> declared_tables_;
};

}  // namespace txla::compiler::emitter
