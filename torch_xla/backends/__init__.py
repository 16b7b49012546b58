"""torch_xla.backends: settings of the xla backend, as torch.backends.* are for PyTorch's.

`set_mat_mul_precision` sets the precision of float32 matmuls and convolutions. TPUs trade
precision for speed with it. On this CPU backend:
  'highest' (the setting until one is made): every product and sum in float32, rounded as eager
            rounds them;
  'high', 'default': convolutions may run algorithms that round differently (oneDNN's Winograd
            kernels for 3x3 stride-1 convolutions on AVX-512 CPUs, ~2e-6 of the largest output
            from the exact result against ~3e-7 for direct sums).
PyTorch's own switches allow the same: `torch.set_float32_matmul_precision('high' | 'medium')`
and `torch.backends.mkldnn.conv.fp32_precision = 'tf32'`. A graph records the setting it was
traced under: a change compiles it again.
"""
import logging
from typing import Final, Literal

import torch_xla

logger = logging.getLogger(__name__)
_WARNING_MESSAGE: Final[str] = (
    'Setting mat mul precision multiple times is not '
    'recommended. If you need to do so, please empirically '
    'verify that the precision setting is behaving as expected.')

__all__ = ['set_mat_mul_precision', 'get_mat_mul_precision']

_DEFAULT: Final = 'default'
_HIGH: Final = 'high'
_HIGHEST: Final = 'highest'


def set_mat_mul_precision(precision: Literal['default', 'high', 'highest']) -> None:
    """'default', 'high' or 'highest' (see the module's docstring for what each computes)."""
    if precision not in (_DEFAULT, _HIGH, _HIGHEST):
        raise ValueError(f'Invalid precision: {precision}. '
                         f'Must be one of {_DEFAULT}, {_HIGH}, {_HIGHEST}.')
    logger.warning(_WARNING_MESSAGE)
    torch_xla._XLAC._xla_set_mat_mul_precision(precision)


def get_mat_mul_precision() -> Literal['default', 'high', 'highest']:
    return torch_xla._XLAC._xla_get_mat_mul_precision()
