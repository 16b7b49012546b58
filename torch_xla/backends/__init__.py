"""torch_xla.backends: settings of the xla backend, as torch.backends.* are for PyTorch's.

On this CPU backend every precision setting computes float32 matmuls and convolutions in float32
(TPUs trade precision for speed with it); the setting is kept and read back so that scripts which
set it run unchanged.
"""
import torch_xla

__all__ = ['set_mat_mul_precision', 'get_mat_mul_precision']


def set_mat_mul_precision(precision):
    """'default', 'high' or 'highest'."""
    if precision not in ('default', 'high', 'highest'):
        raise ValueError(f"precision must be 'default', 'high' or 'highest', not {precision!r}")
    torch_xla._XLAC._xla_set_mat_mul_precision(precision)


def get_mat_mul_precision():
    return torch_xla._XLAC._xla_get_mat_mul_precision()
