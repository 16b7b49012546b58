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
    """Batch normalization over the batch of every replica (inputs of 2 to 5 dimensions, channels
    in dimension 1): the mean and variance are those of the replicas' batches together, through
    differentiable all-reduces, so each replica's output and gradients are those of BatchNorm on
    the whole batch. Running statistics are kept as BatchNorm keeps them (the unbiased variance of
    the whole batch); in eval mode they normalize."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = torch.nn.Parameter(torch.ones(num_features))
        self.bias = torch.nn.Parameter(torch.zeros(num_features))
        self.register_buffer('running_mean', torch.zeros(num_features))
        self.register_buffer('running_var', torch.ones(num_features))

    def forward(self, batch: torch.Tensor) -> torch.Tensor:
        if not 2 <= batch.dim() <= 5 or batch.shape[1] != self.num_features:
            raise ValueError(f'SyncBatchNorm({self.num_features}) takes inputs of 2 to 5 dimensions with '
                             f'{self.num_features} channels in dimension 1; got {tuple(batch.shape)}')
        dims = [0] + list(range(2, batch.dim()))
        shape = [1, self.num_features] + [1] * (batch.dim() - 2)
        if self.training:
            world = xm.xrt_world_size()
            mean = AllReduceSumLayer.apply(batch.mean(dims)) / world
            square = AllReduceSumLayer.apply((batch * batch).mean(dims)) / world
            var = square - mean * mean
            count = batch.numel() // self.num_features * world
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * (count / max(count - 1, 1)))
        else:
            mean, var = self.running_mean, self.running_var
        normalized = (batch - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        return normalized * self.weight.view(shape) + self.bias.view(shape)

    def extra_repr(self) -> str:
        return f'{self.num_features}, eps={self.eps}'


class AllReduceSumLayer(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, groups=None):
        ctx.groups = groups
        return xm.all_reduce(xm.REDUCE_SUM, x, groups=groups)

    @staticmethod
    def backward(ctx, grad_output):
        return xm.all_reduce(xm.REDUCE_SUM, grad_output, groups=ctx.groups), None
