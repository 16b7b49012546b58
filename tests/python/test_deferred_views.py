"""Transposed views a barrier leaves pending (csrc/graph/deferred_views.h): a layer computing
`x @ w.t() + b` has the weight gradient `mm(...).t()` with the GEMM kept alive as its base, and a barrier computes
one of the two and leaves the other as a transpose of its new data. Values must be those of
eager wherever the deferred tensor is read or used later."""
import copy

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm

from conftest import CounterDelta, MatMulLinear, counter


def _model_pair(dtype=torch.float32):
    torch.manual_seed(0)
    model = torch.nn.Sequential(MatMulLinear(7, 5), torch.nn.ReLU(), MatMulLinear(5, 3)).to(dtype)
    return model, copy.deepcopy(model)


def _step(model, opt, x, y):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_linear_training_matches_eager_with_weight_gradients_deferred(dev, dtype):
    cpu_model, model = _model_pair(dtype)
    model = model.to(dev)
    cpu_opt = torch.optim.SGD(cpu_model.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-6)
    compiles = []
    for step in range(4):
        x, y = torch.randn(4, 7, dtype=dtype), torch.randn(4, 3, dtype=dtype)
        _step(cpu_model, cpu_opt, x, y)
        with CounterDelta('DeferredTransposedViews') as d:
            _step(model, opt, x.to(dev), y.to(dev))
            xm.mark_step()
        assert d['DeferredTransposedViews'] >= 2  # both weights' gradient pairs
        compiles.append(counter('UncachedCompile'))
    assert compiles[-1] == compiles[1]  # the steady step compiles once
    for p, q in zip(model.parameters(), cpu_model.parameters()):
        torch.testing.assert_close(p.cpu(), q, **tol)
        torch.testing.assert_close(p.grad.cpu(), q.grad, **tol)  # a deferred tensor, read


def test_gradients_accumulate_and_update_in_place_across_barriers(dev):
    cpu_model, model = _model_pair()
    model = model.to(dev)
    for _ in range(3):  # no zero_grad: .grad += each step's gradient, through the deferred view
        x = torch.randn(2, 7)
        cpu_model(x).sum().backward()
        model(x.to(dev)).sum().backward()
        xm.mark_step()
    for p, q in zip(model.parameters(), cpu_model.parameters()):
        p.grad.mul_(0.5)
        q.grad.mul_(0.5)
    xm.mark_step()
    doubled = [p.grad * 2 for p in model.parameters()]  # used by a later graph
    xm.mark_step()
    for p, q, d in zip(model.parameters(), cpu_model.parameters(), doubled):
        torch.testing.assert_close(p.grad.cpu(), q.grad)
        torch.testing.assert_close(d.cpu(), q.grad * 2)


def test_transposes_of_device_data_and_of_results_stay_pending_until_used(dev):
    a = torch.randn(3, 4)
    c = torch.randn(4, 6)
    xa, xc = a.to(dev), c.to(dev)
    xm.mark_step()
    t = xa.t()  # a transpose of device data
    b = xa @ xc
    p = b.permute(1, 0)  # not its own inverse: the permute stays pending on b's data
    tt = torch.transpose(b, 0, 1)
    with CounterDelta('DeferredTransposedViews', 'ExecuteTime') as d:
        xm.mark_step()
    assert d['DeferredTransposedViews'] >= 2
    assert torch_xla._XLAC._get_xla_tensors_text([t]).count('aten::t_copy') == 1  # still pending
    torch.testing.assert_close(t.cpu(), a.t())
    torch.testing.assert_close(b.cpu(), a @ c)
    torch.testing.assert_close(p.cpu(), (a @ c).permute(1, 0))
    torch.testing.assert_close(tt.cpu(), (a @ c).t())
    torch.testing.assert_close((p + 1).cpu(), (a @ c).t() + 1)
    # The barrier's graph wrote one of b and its transpose; the other is a transpose of it.
    torch.testing.assert_close(b.t().contiguous().cpu(), tt.cpu())


def test_nan_and_inf_survive_a_deferred_transpose(dev):
    w = torch.tensor([[float('nan'), 1.0], [float('inf'), -2.0], [0.0, 3.0]])
    x = w.to(dev)
    y = x * 2
    yt = y.t()
    xm.mark_step()
    torch.testing.assert_close(yt.cpu(), (w * 2).t(), equal_nan=True)
    torch.testing.assert_close(y.cpu(), w * 2, equal_nan=True)
