"""F.linear on the device: one recorded op forward (txla::linear) and one backward
(txla::linear_backward), not ATen's composite (t, view, mm, view, add); values and gradients
against eager, and ATen's composite, with its checks, where the fused op does not apply."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from conftest import CounterDelta

TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12),
             torch.bfloat16: dict(rtol=2e-2, atol=5e-2)}


def _linear(device, x, w, b, needs=(True, True, True)):
    ins = [t.detach().to(device).requires_grad_(need) if t is not None else None for t, need in zip((x, w, b), needs)]
    with CounterDelta() as counts:
        y = F.linear(*ins)
        weights = torch.linspace(-1, 1, y.numel(), dtype=torch.float32).reshape(y.shape).to(y.dtype)
        (y * weights.to(device)).sum().backward()
        if device != 'cpu':
            xm.mark_step()
    grads = [t.grad.cpu() if t is not None and t.requires_grad else None for t in ins]
    return [y.detach().cpu()] + grads, counts.delta


def _check(got, want, dtype):
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            torch.testing.assert_close(g, w, **TOLERANCE[dtype])


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize('shape', [(2, 4, 6), (3, 6), (6,), (2, 3, 2, 6)])
@pytest.mark.parametrize('bias', [True, False])
def test_linear_is_one_op_each_way(dev, dtype, shape, bias):
    torch.manual_seed(0)
    x, w = torch.randn(*shape).to(dtype), torch.randn(5, 6).to(dtype)
    b = torch.randn(5).to(dtype) if bias else None
    want, _ = _linear('cpu', x, w, b)
    got, counts = _linear(dev, x, w, b)
    assert counts.get('xla::linear') == 1 and counts.get('xla::linear_backward') == 1, counts
    assert not any(k.startswith('aten::') for k in counts) and 'InterpretedGraph' not in counts, counts
    assert 'xla::mm' not in counts and 'xla::t_copy' not in counts, counts
    _check(got, want, dtype)


@pytest.mark.parametrize('needs', [(False, True, True), (True, False, False), (False, False, True)])
def test_linear_gradients_of_some_inputs(dev, needs):
    torch.manual_seed(0)
    x, w, b = torch.randn(3, 4, 6), torch.randn(5, 6), torch.randn(5)
    want, _ = _linear('cpu', x, w, b, needs)
    got, counts = _linear(dev, x, w, b, needs)
    assert counts.get('xla::linear_backward') == 1, counts
    _check(got, want, torch.float32)


def test_linear_of_a_transposed_input_and_an_empty_batch(dev):
    torch.manual_seed(0)
    x = torch.randn(6, 3, 4).transpose(0, 2)  # [4, 3, 6], not contiguous
    w, b = torch.randn(5, 6), torch.randn(5)
    want, _ = _linear('cpu', x, w, b)
    got, _ = _linear(dev, x, w, b)
    _check(got, want, torch.float32)
    want, _ = _linear('cpu', torch.randn(0, 6), w, b)
    got, counts = _linear(dev, torch.randn(0, 6), w, b)
    assert 'InterpretedGraph' not in counts
    _check(got, want, torch.float32)


def test_linear_differentiated_twice(dev):
    torch.manual_seed(0)
    x0, w0 = torch.randn(3, 6), torch.randn(5, 6)
    results = []
    for device in ('cpu', dev):
        x = x0.clone().to(device).requires_grad_()
        w = w0.clone().to(device).requires_grad_()
        y = torch.tanh(F.linear(x, w)).sum()
        gx, = torch.autograd.grad(y, x, create_graph=True)
        (gx * gx).sum().backward()
        results.append([gx.detach().cpu(), w.grad.cpu()])
    _check(results[1], results[0], torch.float32)


def test_linear_without_grad(dev):
    torch.manual_seed(0)
    layer = nn.Linear(6, 5)
    x = torch.randn(4, 6)
    want = layer(x).detach()
    layer_x = layer.to(dev)
    with CounterDelta() as counts, torch.no_grad():
        got = layer_x(x.to(dev)).cpu()
    assert counts['xla::linear'] == 1 and 'xla::linear_backward' not in counts.delta, counts.delta
    torch.testing.assert_close(got, want, **TOLERANCE[torch.float32])


def test_bad_linear_arguments_raise_eagers_errors(dev):
    x, w = torch.randn(3, 6, device=dev), torch.randn(5, 4, device=dev)
    with pytest.raises(RuntimeError, match='cannot (be multiplied|matrix-multiply)'):
        F.linear(x, w)
    with pytest.raises(RuntimeError):
        F.linear(x, torch.randn(5, 6))  # a CPU weight


def test_linear_through_torch_compile(dev):
    torch.manual_seed(0)
    layer = nn.Linear(6, 5)
    x = torch.randn(2, 3, 6)
    layer(x).sum().backward()
    want = [p.grad.clone() for p in layer.parameters()]
    layer_x = layer.to(dev)
    layer_x.zero_grad()
    torch.compile(layer_x, backend='openxla')(x.to(dev)).sum().backward()
    xm.mark_step()
    for p, g in zip(layer_x.parameters(), want):
        torch.testing.assert_close(p.grad.cpu(), g, **TOLERANCE[torch.float32])
