"""Automatic mixed precision on the xla device (`torch_xla.amp`, as PyTorch/XLA spells it)."""
import torch


class autocast(torch.amp.autocast_mode.autocast):
    """`torch.autocast('xla', ...)` taking the device as PyTorch/XLA's does: matmuls, linear
    layers and convolutions in `dtype` (bfloat16 by default), reductions and losses in float32."""

    def __init__(self, device=None, enabled=True, dtype=None, cache_enabled=True):
        super().__init__('xla', enabled=enabled, dtype=torch.bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


__all__ = ['autocast']
