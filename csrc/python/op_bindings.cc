#include "python/op_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tensor/bridge.h"

namespace py = pybind11;

namespace txla::python {
namespace {

using Dims = std::vector<int64_t>;

// The dimensions of a rank-`rank` operand that are neither batch nor contracting, in order.
Dims FreeDims(int64_t rank, const Dims& batch, const Dims& contract) {
  std::set<int64_t> used(batch.begin(), batch.end());
  used.insert(contract.begin(), contract.end());
  Dims free;
  for (int64_t d = 0; d < rank; ++d)
    if (!used.count(d)) free.push_back(d);
  return free;
}

int64_t Product(const at::Tensor& t, const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.size(d);
  return n;
}

Dims Wrapped(const Dims& dims, int64_t rank) {
  Dims out;
  for (int64_t d : dims) out.push_back(c10::maybe_wrap_dim(d, rank));
  return out;
}

// XLA's DotGeneral: the result's dimensions are the batch ones, then lhs's free ones, then rhs's.
at::Tensor DotGeneral(const at::Tensor& lhs, const at::Tensor& rhs, Dims lhs_contract, Dims rhs_contract,
                      Dims lhs_batch, Dims rhs_batch, std::optional<at::ScalarType> preferred) {
  TORCH_CHECK(IsXlaTensor(lhs) && IsXlaTensor(rhs), "_xla_dot_general: both operands must be xla tensors");
  lhs_contract = Wrapped(lhs_contract, lhs.dim());
  rhs_contract = Wrapped(rhs_contract, rhs.dim());
  lhs_batch = Wrapped(lhs_batch, lhs.dim());
  rhs_batch = Wrapped(rhs_batch, rhs.dim());
  TORCH_CHECK(lhs_contract.size() == rhs_contract.size() && lhs_batch.size() == rhs_batch.size(),
              "_xla_dot_general: lhs and rhs must have as many contracting and batch dimensions");
  for (size_t k = 0; k < lhs_contract.size(); ++k)
    TORCH_CHECK(lhs.size(lhs_contract[k]) == rhs.size(rhs_contract[k]), "_xla_dot_general: contracting dimension ",
                k, " is ", lhs.size(lhs_contract[k]), " in lhs and ", rhs.size(rhs_contract[k]), " in rhs");
  for (size_t k = 0; k < lhs_batch.size(); ++k)
    TORCH_CHECK(lhs.size(lhs_batch[k]) == rhs.size(rhs_batch[k]), "_xla_dot_general: batch dimension ", k, " is ",
                lhs.size(lhs_batch[k]), " in lhs and ", rhs.size(rhs_batch[k]), " in rhs");
  const Dims lhs_free = FreeDims(lhs.dim(), lhs_batch, lhs_contract);
  const Dims rhs_free = FreeDims(rhs.dim(), rhs_batch, rhs_contract);
  auto concat = [](std::initializer_list<const Dims*> parts) {
    Dims out;
    for (const Dims* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  const int64_t batch = Product(lhs, lhs_batch), m = Product(lhs, lhs_free), k = Product(lhs, lhs_contract),
                n = Product(rhs, rhs_free);
  at::Tensor a = lhs.permute(concat({&lhs_batch, &lhs_free, &lhs_contract})).reshape({batch, m, k});
  at::Tensor b = rhs.permute(concat({&rhs_batch, &rhs_contract, &rhs_free})).reshape({batch, k, n});
  const at::ScalarType type = preferred.value_or(at::promote_types(lhs.scalar_type(), rhs.scalar_type()));
  at::Tensor out = at::bmm(a.to(type), b.to(type));
  Dims sizes;
  for (int64_t d : lhs_batch) sizes.push_back(lhs.size(d));
  for (int64_t d : lhs_free) sizes.push_back(lhs.size(d));
  for (int64_t d : rhs_free) sizes.push_back(rhs.size(d));
  return out.reshape(sizes);
}

}  // namespace

void RegisterOpBindings(py::module& m) {
  // dim_vectors: ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), the second pair
  // possibly empty, as PyTorch/XLA takes them.
  m.def("_xla_dot_general", [](const at::Tensor& lhs, const at::Tensor& rhs, py::tuple dim_vectors,
                               std::optional<at::ScalarType> preferred_element_type) {
    TORCH_CHECK(dim_vectors.size() >= 1, "_xla_dot_general: dim_vectors needs the contracting dimensions");
    auto pair = [](py::handle h) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(h);
      if (t.size() == 0) return std::make_pair(Dims{}, Dims{});
      TORCH_CHECK(t.size() == 2, "_xla_dot_general: each dimension pair has an lhs and an rhs list");
      return std::make_pair(t[0].cast<Dims>(), t[1].cast<Dims>());
    };
    auto [lc, rc] = pair(dim_vectors[0]);
    Dims lb, rb;
    if (dim_vectors.size() > 1) std::tie(lb, rb) = pair(dim_vectors[1]);
    return DotGeneral(lhs, rhs, lc, rc, lb, rb, preferred_element_type);
  }, py::arg("lhs"), py::arg("rhs"), py::arg("dim_vectors"), py::arg("preferred_element_type") = py::none());
}

}  // namespace txla::python
