"""Helpers for restoring optimizer state with distributed checkpointing."""
import torch
from torch.utils._pytree import tree_map

import torch_xla
import torch_xla.core.xla_model as xm


def prime_optimizer(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """Creates `optimizer`'s state by a step with zero gradients, so that a checkpoint can be
    loaded into it in place (optimizer state exists only after a first step).

    The step changes the parameters and state: call it only just before restoring them."""
    torch_xla.sync()
    xm.wait_device_ops()

    def zero_grad(x):
        if isinstance(x, torch.Tensor) and x.requires_grad:
            x.grad = torch.zeros_like(x, requires_grad=False)
            sharding = torch_xla._XLAC._get_xla_op_sharding(x)
            if sharding:  # the gradient laid out as its parameter
                torch_xla._XLAC._xla_mark_sharding(x.grad, sharding)

    tree_map(zero_grad, optimizer.param_groups)
    optimizer.step()
    torch_xla.sync()
    xm.wait_device_ops()
    return optimizer
