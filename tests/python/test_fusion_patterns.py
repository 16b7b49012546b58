"""Fused patterns three ways: compiled native code == the op-by-op interpreter == eager CPU, for
chains, broadcasts, reductions along each axis, softmax, layer norm, GELU and a conv block, in
values and gradients. The counters prove which path each run took."""
import os

import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
from conftest import CounterDelta


def _chain(x):
    return torch.tanh(x * 1.5 + 0.25).exp() - x.abs().sqrt()


def _broadcast(x):
    return (x - x.mean(-1, keepdim=True)) / (x.amax(0) + 2.0)


def _reduce_axes(x):
    return x.sum(0).sum() + x.sum(1).mean() + x.pow(2).sum(2).max() + x.amax((0, 2)).sum()


def _softmax(x):
    return F.softmax(x, dim=-1) * F.log_softmax(x, dim=1)


def _layer_norm(x):
    return F.layer_norm(x, x.shape[-1:])


def _gelu(x):
    return F.gelu(x) + F.gelu(x, approximate='tanh')


def _conv_block(x):
    w = torch.linspace(-1, 1, 6 * 3 * 9, dtype=x.dtype, device=x.device).reshape(6, 3, 3, 3)
    y = F.conv2d(x, w, padding=1)
    y = F.batch_norm(y, None, None, training=True)
    return F.max_pool2d(F.relu(y), 2)


PATTERNS = {
    'chain': (_chain, (4, 5, 6)),
    'broadcast': (_broadcast, (4, 5, 6)),
    'reduce_axes': (_reduce_axes, (4, 5, 6)),
    'softmax': (_softmax, (3, 4, 7)),
    'layer_norm': (_layer_norm, (4, 5, 8)),
    'gelu': (_gelu, (4, 5, 6)),
    'conv_block': (_conv_block, (2, 3, 8, 8)),
}


def _run(fn, x, dev):
    leaf = x.clone().to(dev).requires_grad_()
    out = fn(leaf)
    (out * torch.linspace(0.5, 1.5, out.numel(), dtype=x.dtype).reshape(out.shape).to(dev)).sum().backward()
    xm.mark_step()
    return out.cpu(), leaf.grad.cpu()


@pytest.mark.parametrize('name', sorted(PATTERNS))
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_compiled_equals_interpreter_equals_eager(name, dtype, dev, xla_env):
    fn, shape = PATTERNS[name]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3), dtype=dtype)
    leaf = x.clone().requires_grad_()
    eager_out = fn(leaf)
    (eager_out * torch.linspace(0.5, 1.5, eager_out.numel(), dtype=dtype).reshape(eager_out.shape)).sum().backward()

    with CounterDelta('InterpretedGraph', 'OpByOpGraph', 'UncachedCompile', 'CachedCompile') as compiled_run:
        compiled = _run(fn, x, dev)
    assert compiled_run['InterpretedGraph'] == 0 and compiled_run['OpByOpGraph'] == 0
    assert compiled_run['UncachedCompile'] + compiled_run['CachedCompile'] > 0

    xla_env(SYNC_TENSORS_OPBYOP='1', GET_TENSORS_OPBYOP='1')
    with CounterDelta('OpByOpGraph') as interpreted_run:
        interpreted = _run(fn, x, dev)
    assert interpreted_run['OpByOpGraph'] > 0

    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-9)
    for c, i, e in zip(compiled, interpreted, (eager_out.detach(), leaf.grad)):
        torch.testing.assert_close(i, e, **tol)
        torch.testing.assert_close(c, e, **tol)
        torch.testing.assert_close(c, i, **tol)
