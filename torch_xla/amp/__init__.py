"""Automatic mixed precision on the xla device (`torch_xla.amp`, as PyTorch/XLA spells it)."""
import torch

from torch_xla.amp import _ops  # noqa: F401  (GradScaler's ops, lazily on the device)


class autocast(torch.amp.autocast_mode.autocast):
    """`torch.autocast('xla', ...)` taking the device as PyTorch/XLA's does: matmuls, linear
    layers and convolutions in `dtype` (bfloat16 by default), reductions and losses in float32."""

    def __init__(self, device=None, enabled=True, dtype=None, cache_enabled=True):
        super().__init__('xla', enabled=enabled, dtype=torch.bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


from torch_xla.amp.grad_scaler import GradScaler  # noqa: E402
from torch_xla.amp import syncfree  # noqa: E402,F401

__all__ = ['autocast', 'GradScaler', 'syncfree']
