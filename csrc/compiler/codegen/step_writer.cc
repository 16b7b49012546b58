#include "compiler/codegen/step_writer.h"

#include <set>
#include <stdexcept>

#include "compiler/codegen/expression_emitter.h"
#include "debug/config.h"

namespace txla::compiler::emitter {

using hlo::Instruction;
using hlo::Opcode;

bool StepWriter::Materialized(const Instruction& i) const { return IsMaterialized(plan_, i); }

std::string StepWriter::Operand(const Instruction& i, size_t k) const {
  const Instruction& op = *i.operand(k);
  if (!Materialized(op))
    throw std::invalid_argument("codegen: operand " + op.name() + " of " + i.name() + " is not in memory");
  return BufferName(op);
}

std::string StepWriter::Geometry(const std::string& name, const std::vector<int64_t>& fields) {
  std::string table = "g_" + Sanitize(name);
  tables_ << "  static const int64_t " << table << "[] = {";
  for (size_t k = 0; k < fields.size(); ++k) tables_ << (k ? ", " : "") << fields[k] << "LL";
  tables_ << "};\n";
  return table;
}

StepWriter::KernelNames StepWriter::AddKernel(const std::string& name, const std::string& signature,
                                              const std::string& body, const std::string& after,
                                              const std::string& prototype_extra) {
  KernelRegistry::Added kernel = kernels_.Add(name, SourceComment(name), signature, body, after, prototype_extra);
  prototypes_ += kernel.prototypes;
  return kernel.names;
}

void StepWriter::EmitKernelCall(const std::string& name, const std::vector<KernelBuffer>& buffers,
                                const std::string& body, int64_t parallel_extent, CallForm form) {
  std::string fn = "k_" + Sanitize(name);
  // Restrict holds in practice even where the output may be written over a donated parameter:
  // buffer assignment donates only a parameter the kernel reads at each element's own index
  // (ReadAtOwnIndexOnly), so every element is read before it is written, in any order the
  // compiler picks. Without restrict, such kernels (every optimizer update) reloaded their
  // scalars per element and did not vectorize: AdamW's update ran at 3.4 ns per element.
  const char* restrict = "* __restrict__ ";
  std::string signature = "TXLA_KERNEL void " + fn + "(", call_args;
  for (size_t k = 0; k < buffers.size(); ++k) {
    signature += std::string(k ? ", " : "") + (buffers[k].output ? "" : "const ") + buffers[k].type + restrict +
                 buffers[k].buffer;
    call_args += (k ? ", " : "") + buffers[k].buffer;
  }
  const bool ranged = form == CallForm::kFlat || parallel_extent > 0;
  if (ranged) signature += ", int64_t lo, int64_t hi";
  signature += ")";
  // Every kernel has a trampoline that takes its buffers as an array: the runtime calls it
  // straight from the graph's program (graph_program.h), or its threads call it on a range
  // (support->parallel_for). A kernel without a range ignores lo and hi.
  std::string tramp = "t_" + Sanitize(name), casts;
  for (size_t k = 0; k < buffers.size(); ++k)
    casts += std::string(k ? ", " : "") + "(" + (buffers[k].output ? "" : "const ") + buffers[k].type + "*)a[" +
             std::to_string(k) + "]";
  // Exported, unmangled: the runtime finds it by name (graph_program.h's ProgramText).
  std::string tramp_signature = "extern \"C\" void " + tramp + "(void* p, int64_t lo, int64_t hi)";
  std::string trampoline = tramp_signature + " { void* const* a = (void* const*)p; " + fn + "(" + casts +
                           (ranged ? ", lo, hi" : "") + "); }\n";
  KernelNames names = AddKernel(name, signature, body, trampoline, tramp_signature + ";\n");
  std::string array;
  for (size_t k = 0; k < buffers.size(); ++k) array += std::string(k ? ", " : "") + "(void*)" + buffers[k].buffer;
  call_ = KernelCall{};
  call_.trampoline = names.at(tramp);
  for (const KernelBuffer& b : buffers) call_.buffers.push_back(b.buffer);
  std::ostringstream text;
  if (!ranged) {
    text << "  " << names.at(fn) << "(" << call_args << ");\n";
  } else if (form == CallForm::kFlat && parallel_extent < kParallelElements) {
    text << "  " << names.at(fn) << "(" << call_args << ", 0, " << parallel_extent << ");\n";
    call_.extent = parallel_extent;
  } else {
    text << "  { void* c[] = {" << array << "}; support->parallel_for(&" << call_.trampoline << ", c, "
         << parallel_extent << "); }\n";
    call_.extent = parallel_extent;
    call_.parallel = true;
  }
  call_.text = text.str();
  code_ << call_.text;
}

void StepWriter::BeginStep() {
  code_.str("");
  tables_.str("");
  prototypes_.clear();
  call_ = KernelCall{};
}

bool StepWriter::FinishStep(const std::string& name, const std::vector<int64_t>& ready) {
  std::string chunk = code_.str();
  if (chunk.empty()) return false;
  if (!profile_ && chunk == call_.text) {
    program_.AddEntry(name, call_.parallel ? StepKind::kParallel : StepKind::kKernel, call_.trampoline, call_.extent,
                      call_.buffers, ready);
    return true;
  }
  if (profile_)
    chunk = "  { const int64_t t = support->kernel_begin();\n" + chunk + "  support->kernel_end(\"" + name + "\", t); }\n";
  AddStep(name, chunk, ready);
  return true;
}

void StepWriter::AddStep(const std::string& name, const std::string& chunk, const std::vector<int64_t>& ready) {
  kernels_.AddText(program_.AddStep(name, prototypes_, tables_.str() + chunk, ready));
}

// The metadata of the instruction's fused instructions, as comment lines before its kernel.
std::string StepWriter::SourceComment(const std::string& name) const {
  if (!debug::GetConfig().hlo_debug) return "";
  const Instruction* i = nullptr;
  for (const Instruction* candidate : module_.entry()->instructions())
    if (candidate->name() == name) i = candidate;
  if (!i) return "";
  std::vector<const Instruction*> parts{i};
  if (i->opcode() == Opcode::kFusion)
    for (const Instruction* f : i->attrs().called.at(0)->instructions()) parts.push_back(f);
  std::set<std::string> seen;
  std::string out;
  for (const Instruction* p : parts) {
    const hlo::Attributes::Metadata& m = p->attrs().metadata;
    if (m.empty()) continue;
    std::string line = m.op_type + (m.source_file.empty() ? "" : " at " + m.source_file + ":" + std::to_string(m.source_line));
    if (seen.insert(line).second) out += "// computes " + line + "\n";
  }
  return out;
}

}  // namespace txla::compiler::emitter
