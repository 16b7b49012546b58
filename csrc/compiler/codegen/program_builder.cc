#include "compiler/codegen/program_builder.h"

#include <cctype>
#include <stdexcept>

#include "compiler/codegen/cpp_emitter.h"
#include "compiler/codegen/kernel_naming.h"

namespace txla::compiler::emitter {

std::string Sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

const ProgramBuilder::BufferRef& ProgramBuilder::Buffer(const std::string& step, const std::string& id) const {
  auto ref = buffers_.find(id);
  if (ref == buffers_.end()) throw std::invalid_argument("codegen: " + step + " names " + id + ", which has no buffer");
  return ref->second;
}

std::string ProgramBuilder::AddStep(const std::string& name, const std::string& prototypes, const std::string& body,
                                    const std::vector<int64_t>& ready) {
  std::vector<std::string> ids = BufferIdentifiers(body);
  std::ostringstream fn;
  fn << "extern \"C\" void s_" << Sanitize(name) << "(const TxlaSupport* support, void* const* a) {\n";
  for (size_t k = 0; k < ids.size(); ++k) {
    const BufferRef& ref = Buffer(name, ids[k]);
    std::string type = (ref.read_only ? "const " : "") + ref.type + "*";
    fn << "  " << type << " " << ids[k] << " = (" << type << ")a[" << k << "];\n";
  }
  fn << body << "}\n";
  NamedKernel step = NameByContent({prototypes, fn.str()}, NamingScope::kStep);
  AddEntry(name, StepKind::kStep, step.names.at("s_" + Sanitize(name)), 0, ids, ready);
  if (!emitted_steps_.insert(step.hash).second) return "";
  return kKernelBegin + step.hash + " " + name + "\n" + step.pieces[0] + step.pieces[1] + kKernelEnd;
}

void ProgramBuilder::AddEntry(const std::string& name, StepKind kind, const std::string& function, int64_t extent,
                              const std::vector<std::string>& buffers, const std::vector<int64_t>& ready) {
  for (int64_t k : ready) listing_ << "//   release output " << k << "\n";
  listing_ << "//   " << name << ": "
           << (kind == StepKind::kStep ? "step " : kind == StepKind::kKernel ? "kernel " : "parallel ") << function
           << "(";
  for (size_t k = 0; k < buffers.size(); ++k) listing_ << (k ? ", " : "") << buffers[k];
  listing_ << ")";
  if (kind != StepKind::kStep) listing_ << " on [0, " << extent << ")";
  listing_ << "\n";
  auto [index, added] = function_index_.emplace(function, static_cast<int64_t>(functions_order_.size()));
  if (added) functions_order_.push_back(function);
  step_words_.push_back(static_cast<int64_t>(ready.size()));
  step_words_.insert(step_words_.end(), ready.begin(), ready.end());
  step_words_.push_back(static_cast<int64_t>(kind));
  step_words_.push_back(index->second);
  step_words_.push_back(extent);
  step_words_.push_back(static_cast<int64_t>(buffers.size()));
  for (const std::string& id : buffers) {
    auto [slot, fresh] = slot_index_.emplace(id, static_cast<int64_t>(slot_index_.size()));
    if (fresh) {
      const BufferRef& ref = Buffer(name, id);
      slot_words_.push_back(static_cast<int64_t>(ref.kind));
      slot_words_.push_back(ref.value);
    }
    step_words_.push_back(slot->second);
  }
  ++steps_;
}

std::string ProgramBuilder::Listing() const {
  ProgramText program;
  program.words = {kProgramFormat, static_cast<int64_t>(functions_order_.size()),
                   static_cast<int64_t>(slot_index_.size())};
  program.words.insert(program.words.end(), slot_words_.begin(), slot_words_.end());
  program.words.push_back(steps_);
  program.words.insert(program.words.end(), step_words_.begin(), step_words_.end());
  program.functions = functions_order_;
  return "// The graph's program (compiler/graph_program.h): what it runs, in order,\n" + listing_.str() +
         "// and the same as the runtime reads it (no compiler does):\n" + FormatProgram(program);
}

}  // namespace txla::compiler::emitter
