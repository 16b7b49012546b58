"""Gradient (activation) checkpointing on xla tensors (PyTorch/XLA's torch_xla.utils.checkpoint):
`checkpoint(fn, *args)` keeps only `fn`'s inputs for the backward pass and runs `fn` again there
to get the gradient. Random ops draw the same numbers in the second run as in the first: the
device's RNG state (and the CPU's) is saved at the first run and restored for the second."""
import torch

import torch_xla.core.xla_model as xm


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == 'xla':
            return a.device
    return None


class CheckpointFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device = _device_of(args)
        if preserve_rng_state:
            ctx.cpu_state = torch.get_rng_state()
            ctx.xla_state = xm.get_rng_state(ctx.device) if ctx.device is not None else None
        ctx.tensor_slots = [k for k, a in enumerate(args) if isinstance(a, torch.Tensor)]
        ctx.others = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.save_for_backward(*[args[k] for k in ctx.tensor_slots])
        with torch.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not torch.autograd._is_checkpoint_valid():
            raise RuntimeError('checkpoint: .grad() is not supported through a checkpointed function; use '
                               '.backward()')
        args = list(ctx.others)
        for k, t in zip(ctx.tensor_slots, ctx.saved_tensors):
            detached = t.detach()
            detached.requires_grad_(t.requires_grad)
            args[k] = detached
        with torch.random.fork_rng(devices=[], enabled=ctx.preserve_rng_state):
            saved_xla = None
            if ctx.preserve_rng_state:
                torch.set_rng_state(ctx.cpu_state)
                if ctx.xla_state is not None:
                    saved_xla = xm.get_rng_state(ctx.device)
                    xm.set_rng_state(ctx.xla_state, ctx.device)
            try:
                with torch.enable_grad():
                    outputs = ctx.run_function(*args)
            finally:
                if saved_xla is not None:
                    xm.set_rng_state(saved_xla, ctx.device)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs, )
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, torch.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError('checkpoint: none of the outputs needs a gradient; no inputs need one either')
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, torch.Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=True, context_fn=None, preserve_rng_state=True, **kwargs):
    """`function(*args)`, whose intermediate values are not kept for the backward pass: it runs
    again there (same random numbers). Only the reentrant form exists (use_reentrant=True, the
    default); keyword arguments to `function` are not supported (as in torch's reentrant form)."""
    if kwargs:
        raise ValueError('checkpoint: keyword arguments to the checkpointed function are not supported: '
                         f'{sorted(kwargs)}')
    if not use_reentrant or context_fn is not None:
        raise NotImplementedError('torch_xla.utils.checkpoint: only the reentrant form (use_reentrant=True, no '
                                  'context_fn) is supported')
    return CheckpointFunction.apply(function, preserve_rng_state, *args)
