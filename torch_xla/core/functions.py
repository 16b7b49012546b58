"""Differentiable collectives (PyTorch/XLA's torch_xla.core.functions): their gradients are the
matching collectives of the incoming gradients."""
import torch

import torch_xla.core.xla_model as xm


class AllReduce(torch.autograd.Function):

    @staticmethod
    def forward(ctx, input, reduce_type, scale, groups):
        ctx.reduce_type, ctx.scale, ctx.groups = reduce_type, scale, groups
        return xm.all_reduce(reduce_type, input, scale=scale, groups=groups)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.reduce_type != xm.REDUCE_SUM:
            raise NotImplementedError(f'the gradient of all_reduce({ctx.reduce_type!r}); '
                                      'only sum is differentiable')
        return xm.all_reduce(xm.REDUCE_SUM, grad_output, scale=ctx.scale, groups=ctx.groups), None, None, None


def all_reduce(reduce_type, value, scale=1.0, groups=None):
    """xm.all_reduce of one tensor, differentiable (sum)."""
    return AllReduce.apply(value, reduce_type, scale, groups)


class AllGather(torch.autograd.Function):

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        ctx.ordinal = xm.get_ordinal()
        ctx.world_size = xm.xrt_world_size()
        return xm.all_gather(input, dim=dim)

    @staticmethod
    def backward(ctx, grad_output):
        # Every replica's output feeds its own loss: the input's gradient sums them, shard by shard.
        summed = xm.all_reduce(xm.REDUCE_SUM, grad_output)
        return summed.chunk(ctx.world_size, dim=ctx.dim)[ctx.ordinal].contiguous(), None


def all_gather(value, dim=0):
    """xm.all_gather, differentiable."""
    return AllGather.apply(value, dim)


def distributed_mm(w, x, split=1):
    raise NotImplementedError('torch_xla.core.functions.distributed_mm')


class SyncBatchNorm(torch.nn.Module):

    def __init__(self, *args, **kwargs):
        raise NotImplementedError('torch_xla.core.functions.SyncBatchNorm')


class AllReduceSumLayer(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, groups=None):
        ctx.groups = groups
        return xm.all_reduce(xm.REDUCE_SUM, x, groups=groups)

    @staticmethod
    def backward(ctx, grad_output):
        return xm.all_reduce(xm.REDUCE_SUM, grad_output, groups=ctx.groups), None
