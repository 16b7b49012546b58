"""PyTorch/XLA's registry of ops written with its Python XLA builder (torch_xla.core.xla_builder):
`register(name, opfn)` gives a callable that applies `opfn` to xla tensors. Its builder
operations record into the lazy graph, so the op compiles with the program around it; it has no
autograd (as in PyTorch/XLA)."""
import torch

from torch_xla.core import xla_builder as xb


class Op(object):
    """An op made with the builder: called with xla tensors (and opfn's keyword arguments), it
    returns a tensor, or a tuple of them for a tuple result."""

    def __init__(self, name, opfn):
        self.name = name
        self.opfn = xb.Op.wrap_function(opfn)

    def __call__(self, *args, **kwargs):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        builder = xb.Builder(self.name, tensors[0].device if tensors else None)
        ops = [xb.Op(a, builder) if isinstance(a, torch.Tensor) else a for a in args]
        result = self.opfn(*ops, **kwargs)
        return xb._results(result)


def register(name, opfn):
    return Op(name, opfn)
