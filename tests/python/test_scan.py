"""torch_xla.experimental.scan and scan_layers against the Python loop they stand for: values and
gradients, PyTrees with Nones, and the errors PyTorch/XLA raises."""
import pytest
import torch

import torch_xla
from torch_xla.experimental.scan import scan, tree_flatten_none
from torch_xla.experimental.scan_layers import scan_layers


def _loop(fn, init, xs):
    carry, ys = init, []
    for i in range(xs.shape[0]):
        carry, y = fn(carry, xs[i])
        ys.append(y)
    return carry, torch.stack(ys)


def step(carry, x):
    h = torch.tanh(carry @ x + carry)
    return h, (h * 2).sum(1)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_scan_matches_the_loop_in_values_and_gradients(dev, dtype):
    torch.manual_seed(0)
    init, xs = torch.randn(3, 4, dtype=dtype), torch.randn(5, 4, 4, dtype=dtype)
    results = []
    for run, device in ((_loop, 'cpu'), (scan, dev)):
        i = init.detach().clone().to(device).requires_grad_()
        x = xs.detach().clone().to(device).requires_grad_()
        carry, ys = run(step, i, x)
        (carry.sum() + ys.sum()).backward()
        torch_xla.sync()
        results.append([t.detach().cpu() for t in (carry, ys, i.grad, x.grad)])
    for expected, got in zip(*results):
        torch.testing.assert_close(got, expected)


def test_scan_pytrees_with_none_outputs(dev):
    init = {'a': torch.zeros(2, device=dev)}
    xs = (torch.ones(3, 2, device=dev), torch.arange(3.0, device=dev))

    def fn(carry, x):
        row, k = x
        return {'a': carry['a'] + row * k}, (None, carry['a'].sum())

    carry, (nothing, sums) = scan(fn, init, xs)
    assert nothing is None
    torch.testing.assert_close(carry['a'].cpu(), torch.full((2, ), 3.0))
    torch.testing.assert_close(sums.cpu(), torch.tensor([0.0, 0.0, 2.0]))


def test_scan_refuses_what_pytorch_xla_refuses(dev):
    with pytest.raises(ValueError, match='callable'):
        scan(42, torch.zeros(1), torch.zeros(2, 1))
    with pytest.raises(ValueError, match='same leading dimension'):
        scan(lambda c, x: (c, x), torch.zeros(1), (torch.zeros(2, 1), torch.zeros(3, 1)))
    with pytest.raises(ValueError, match='empty'):
        scan(lambda c, x: (c, x), torch.zeros(1), ())


def test_tree_flatten_none_drops_and_restores_nones():
    flat, unflatten = tree_flatten_none(((1, 2), (None, 3), None))
    assert tuple(flat) == (1, 2, 3)
    assert unflatten(flat) == ((1, 2), (None, 3), None)


def test_scan_layers_applies_the_layers_in_order(dev):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(6, 6) for _ in range(3)]
    x = torch.randn(2, 6)
    expected = x
    for layer in layers:
        expected = layer(expected)
    got = scan_layers([layer.to(dev) for layer in layers], x.to(dev))
    torch.testing.assert_close(got.cpu(), expected.detach())
    with pytest.raises(ValueError, match='one type'):
        scan_layers([torch.nn.Linear(6, 6), torch.nn.ReLU()], x)


def test_fori_loop_applies_the_body_upper_minus_lower_times(dev):
    from torch_xla.experimental.fori_loop import fori_loop
    upper, out = fori_loop(torch.tensor(2), torch.tensor(7), lambda x: x * 2, torch.tensor(1, device=dev))
    assert int(upper) == 7 and out.item() == 32
    a, b = fori_loop(0, 3, lambda a, b: (a + b, b), torch.ones(2, device=dev), torch.full((2, ), 2.0, device=dev))
    torch.testing.assert_close(a.cpu(), torch.full((2, ), 7.0))


def test_gradient_accumulation_matches_the_loop_it_stands_for(dev):
    from torch_xla.experimental.gradient_accumulation import gradient_accumulation
    torch.manual_seed(0)
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    grads, losses = [], []
    for device in ('cpu', dev):
        torch.manual_seed(1)
        model = torch.nn.Linear(3, 2).to(device)
        xd, yd = x.to(device), y.to(device)

        def step(row, target, count):
            return torch.nn.functional.mse_loss(model(row), target), count + 1

        if device == 'cpu':
            total, count = torch.tensor(0.0), torch.tensor(0)
            for i in range(4):
                loss, count = step(xd[i:i + 1], yd[i:i + 1], count)
                (loss / 4).backward()
                total += (loss / 4).detach()
        else:
            total, count = gradient_accumulation(step, (xd, yd), model, torch.tensor(0, device=dev))
            torch_xla.sync()
        assert int(count) == 4
        losses.append(total.cpu())
        grads.append([p.grad.cpu() for p in model.parameters()])
    torch.testing.assert_close(losses[1], losses[0])
    for a, b in zip(*grads):
        torch.testing.assert_close(b, a)
    with pytest.raises(ValueError, match='empty'):
        gradient_accumulation(lambda: None, [], torch.nn.Linear(1, 1))

    def mutating(row, target, count):
        count += 1
        return row.sum(), count

    with pytest.raises(AssertionError, match='in place'):
        gradient_accumulation(mutating, (x.to(dev), y.to(dev)), torch.nn.Linear(3, 2), torch.tensor(0, device=dev))
