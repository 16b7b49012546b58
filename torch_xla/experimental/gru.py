"""`torch_xla.experimental.gru.GRU`: PyTorch/XLA's GRU, which `import torch_xla` makes `nn.GRU`
(the original stays as `nn.GRU._orig`), as PyTorch/XLA 2.9 does.

PyTorch/XLA writes it with `scan` so that the sequence compiles as one loop instead of one step
per element. Here `nn.GRU`'s own forward already does: `aten::gru` on the xla device is one
recurrent-layer call per layer (txla.gru_layer, a loop over the sequence) with its backward, so
this class only keeps PyTorch/XLA's contract: unidirectional, no projection; a bidirectional GRU
is created as the original class."""
import logging

import torch.nn as nn


class GRU(nn.GRU):
    """A unidirectional nn.GRU; `GRU(..., bidirectional=True)` gives the original nn.GRU."""

    def __new__(cls, *args, **kwargs):
        if kwargs.get('bidirectional', False) or (len(args) > 6 and args[6]):
            logging.warning('torch_xla.experimental.gru.GRU is unidirectional: a bidirectional GRU is the '
                            'original nn.GRU')
            original = getattr(nn.GRU, '_orig', None) or nn.GRU
            return original(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        if kwargs.get('proj_size', 0):
            raise ValueError('torch_xla.experimental.gru.GRU has no projection (proj_size)')
        super().__init__(*args, **kwargs)


def _patch_nn_gru():
    """nn.GRU becomes this GRU, the original kept as nn.GRU._orig (once)."""
    if getattr(nn.GRU, '_orig', None) is None:
        GRU._orig = nn.GRU
        nn.GRU = GRU
