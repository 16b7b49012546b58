"""Random ops: seeded from torch's default generator when traced, so torch.manual_seed makes them
reproducible and re-running a graph (to read another tensor) reproduces the same draws."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm


def _draw(dev, seed):
    torch.manual_seed(seed)
    return torch.randn(64, device=dev).cpu()


def test_manual_seed_reproduces_draws(dev):
    assert torch.equal(_draw(dev, 7), _draw(dev, 7))
    assert not torch.equal(_draw(dev, 7), _draw(dev, 8))


def test_normal_uniform_random_distributions(dev):
    torch.manual_seed(0)
    n = torch.randn(20000, device=dev)
    u = torch.rand(20000, device=dev)
    r = torch.empty(20000, device=dev).random_(0, 10)
    r_any = torch.empty(1000, dtype=torch.int32, device=dev).random_()
    text = torch_xla._XLAC._get_xla_tensors_text([n, u, r, r_any])
    for op in ('aten::normal_functional', 'aten::uniform', 'aten::random.from', 'aten::random('):
        assert op in text
    n, u, r, r_any = n.cpu(), u.cpu(), r.cpu(), r_any.cpu()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    assert set(r.long().unique().tolist()) == set(range(10))
    assert (r_any >= 0).all()


def test_bernoulli(dev):
    torch.manual_seed(0)
    b = torch.bernoulli(torch.empty(20000, device=dev), 0.3)
    assert 'aten::bernoulli.p' in torch_xla._XLAC._get_xla_tensors_text([b])
    b = b.cpu()
    assert set(b.unique().tolist()) <= {0., 1.}
    assert abs(b.mean() - 0.3) < 0.02


def test_bernoulli_with_tensor_probabilities(dev):
    # torch.bernoulli(p) and bernoulli_(p) with a tensor of probabilities (broadcast to self),
    # into float and integer tensors: each element is 1 with its own probability.
    torch.manual_seed(0)
    p = torch.linspace(0, 1, 50).repeat(400, 1)  # every column its own probability
    a = torch.bernoulli(p.to(dev))
    b = torch.empty(400, 50, device=dev).bernoulli_(p.to(dev))
    c = torch.empty(400, 50, device=dev, dtype=torch.int64).bernoulli_(p[0].to(dev))
    text = torch_xla._XLAC._get_xla_tensors_text([a, b, c])
    assert 'aten::bernoulli(' in text and text.count('aten::bernoulli.Tensor(') == 2
    for draws in (a.cpu(), b.cpu(), c.cpu()):
        assert set(draws.unique().tolist()) <= {0, 1}
        rate = draws.double().mean(0)
        assert (rate - p[0].double()).abs().max() < 0.1, rate  # 400 draws a column: 4.5 sigma
        assert rate[0] == 0 and rate[-1] == 1  # p = 0 never, p = 1 always
    assert c.dtype == torch.int64
    assert not (a.cpu() == b.cpu()).all()  # independent draws


def test_randperm_is_recorded_and_uniform(dev):
    # randperm on the device: a permutation of the requested dtype, each of the 3! orders about
    # equally often, a new one per call; eager's errors for n and the dtype.
    import collections
    torch.manual_seed(0)
    r = torch.randperm(50, device=dev)
    assert 'aten::randperm(' in torch_xla._XLAC._get_xla_tensors_text([r])
    assert sorted(r.cpu().tolist()) == list(range(50))
    f = torch.randperm(7, device=dev, dtype=torch.float32, generator=torch.Generator().manual_seed(1)).cpu()
    assert f.dtype == torch.float32 and sorted(f.tolist()) == list(range(7))
    assert torch.randperm(0, device=dev).cpu().shape == (0,)
    counts = collections.Counter(tuple(torch.randperm(3, device=dev).cpu().tolist()) for _ in range(600))
    assert len(counts) == 6 and min(counts.values()) > 60, counts  # 100 expected, 4 sigma below
    with pytest.raises(RuntimeError, match='negative dimension'):
        torch.randperm(-1, device=dev)
    with pytest.raises(RuntimeError, match='without overflow'):
        torch.randperm(300, dtype=torch.uint8, device=dev)


def _check_dropout(x, y, grad):
    xs, ys, gs = x.detach().cpu(), y.detach().cpu(), grad.cpu()
    kept = ys != 0
    torch.testing.assert_close(ys[kept], xs[kept] / 0.75)
    assert abs((~kept).float().mean() - 0.25) < 0.02
    torch.testing.assert_close(gs, kept.float() / 0.75)


def test_dropout_values_and_gradient(dev):
    # F.dropout on a non-CUDA device is bernoulli_ and a multiply in PyTorch 1.13.
    torch.manual_seed(0)
    x = torch.rand(200, 50).add(0.5).to(dev).requires_grad_()
    y = F.dropout(x, p=0.25, training=True)
    assert 'aten::bernoulli.p' in torch_xla._XLAC._get_xla_tensors_text([y])
    y.sum().backward()
    _check_dropout(x, y, x.grad)


def test_native_dropout_and_its_backward(dev):
    torch.manual_seed(0)
    x = torch.rand(200, 50).add(0.5).to(dev).requires_grad_()
    y, mask = torch.native_dropout(x, 0.25, True)
    assert 'aten::native_dropout' in torch_xla._XLAC._get_xla_tensors_text([y])
    assert mask.dtype == torch.bool
    y.sum().backward()
    assert 'aten::native_dropout_backward' in torch_xla._XLAC._get_xla_tensors_text([x.grad])
    _check_dropout(x, y, x.grad)
    torch.testing.assert_close(mask.cpu(), y.detach().cpu() != 0)


def test_rerunning_a_graph_reproduces_its_draws(dev):
    a = torch.rand(100, device=dev)
    b = a * 2
    b_host = b.cpu()   # runs the graph of b (which includes the draw of a)
    a_host = a.cpu()   # runs the draw again, for a: same seed, same values
    torch.testing.assert_close(b_host, a_host * 2)


def test_cached_random_graph_draws_new_values(dev):
    xm.mark_step()
    first = torch.rand(16, device=dev)
    xm.mark_step()
    second = torch.rand(16, device=dev)
    xm.mark_step()
    assert not torch.equal(first.cpu(), second.cpu())


def test_interpreter_replays_dropout_without_touching_the_default_generator(xla_env):
    """The interpreter replays dropout from a private generator seeded with the node's seed: the
    user's generator is as tracing left it, and the values are a real dropout."""
    import torch_xla.core.xla_model as xm
    xla_env(SYNC_TENSORS_OPBYOP='1')
    dev = xm.xla_device()
    torch.manual_seed(5)
    x = torch.ones(1000, device=dev)
    y = torch.nn.functional.dropout(x, 0.5, training=True)
    traced = torch.get_rng_state()
    xm.mark_step()
    xm.wait_device_ops()
    assert torch.equal(torch.get_rng_state(), traced)
    kept = (y.cpu() != 0)
    assert 350 < int(kept.sum()) < 650  # really dropped about half
    torch.testing.assert_close(y.cpu()[kept], torch.full((int(kept.sum()),), 2.0))
    assert torch.equal(y.cpu(), y.cpu())  # re-reading redraws nothing
