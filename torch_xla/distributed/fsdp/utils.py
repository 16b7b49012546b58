"""Module helpers FSDP users apply (PyTorch/XLA's torch_xla.distributed.fsdp.utils)."""
from types import MethodType

import torch

from torch_xla.distributed.spmd.xla_sharding import xla_patched_nn_linear_forward
from torch_xla.utils.checkpoint import checkpoint


def checkpoint_module(module: torch.nn.Module) -> torch.nn.Module:
    """Wraps `module.forward` in gradient checkpointing (torch_xla.utils.checkpoint): its
    activations are recomputed in the backward pass instead of kept. Keyword arguments are
    passed through; a call with no input needing a gradient runs plainly."""
    assert isinstance(module, torch.nn.Module)

    def forward_packed(m, num_args, num_kwargs, *packed):
        args, rest = packed[:num_args], packed[num_args:]
        kwargs = dict(zip(rest[:num_kwargs], rest[num_kwargs:]))
        return m._xla_checkpointed_forward_original(*args, **kwargs)

    def forward_with_checkpoint(m, *args, **kwargs):
        packed = args + tuple(kwargs.keys()) + tuple(kwargs.values())
        if any(isinstance(t, torch.Tensor) and t.requires_grad for t in packed):
            return checkpoint(m._xla_checkpointed_forward_no_kwargs, len(args), len(kwargs), *packed)
        return m._xla_checkpointed_forward_original(*args, **kwargs)

    module._xla_checkpointed_forward_original = module.forward
    module._xla_checkpointed_forward_no_kwargs = MethodType(forward_packed, module)
    module.forward = MethodType(forward_with_checkpoint, module)
    return module


def apply_xla_patch_to_nn_linear(module: torch.nn.Module, patched_function=xla_patched_nn_linear_forward):
    """Makes every nn.Linear inside `module` (itself included) compute through
    `patched_function` (XLAPatchedLinear: its backward reads the weight parameter itself, not a
    transposed copy, so a sharded or freed-and-regathered weight is the one used). Linears whose
    forward was already replaced are left alone; checkpointed ones are patched inside."""

    def patch(m, attribute):
        forward = getattr(m, attribute, None)
        if forward is None or getattr(forward, '__func__', None) is not torch.nn.Linear.forward:
            return
        m._nn_linear_forward_original = forward
        setattr(m, attribute, MethodType(patched_function, m))

    for m in module.modules():
        if isinstance(m, torch.nn.Linear):
            patch(m, 'forward')
            patch(m, '_xla_checkpointed_forward_original')
    return module
