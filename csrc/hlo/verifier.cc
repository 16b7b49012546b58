#include "hlo/verifier.h"

#include <set>
#include <stdexcept>
#include <unordered_set>

#include "hlo/shape_inference.h"

namespace txla::hlo {
namespace {

void VerifyComputation(const Computation& c) {
  if (c.root() == nullptr) throw std::invalid_argument("computation " + c.name() + " has no root");
  std::unordered_set<const Instruction*> defined;
  std::set<int64_t> params;
  for (const Instruction* i : c.instructions()) {
    for (const Instruction* op : i->operands()) {
      if (!defined.count(op))
        throw std::invalid_argument(i->name() + " uses " + op->name() +
                                    " before its definition or from another computation");
    }
    if (i->opcode() == Opcode::kParameter && !params.insert(i->attrs().parameter_number).second)
      throw std::invalid_argument("parameter number " + std::to_string(i->attrs().parameter_number) +
                                  " appears twice in " + c.name());
    Shape inferred = InferShape(*i);
    if (inferred != i->shape())
      throw std::invalid_argument(i->name() + " is declared " + i->shape().ToString() +
                                  " but its operands give " + inferred.ToString());
    defined.insert(i);
  }
  if (!defined.count(c.root())) throw std::invalid_argument("root of " + c.name() + " is not in it");
  int64_t expect = 0;
  for (int64_t n : params) {
    if (n != expect++)
      throw std::invalid_argument("parameters of " + c.name() + " are not numbered 0..n-1");
  }
}

}  // namespace

void Verify(const Module& module) {
  if (module.entry() == nullptr) throw std::invalid_argument("module " + module.name() + " has no entry");
  for (const Computation* c : module.computations()) VerifyComputation(*c);
}

}  // namespace txla::hlo
