"""PyTorch/XLA's training helpers: gradient checkpointing (recomputation with the same random
numbers), checkpoint_module and the nn.Linear patch, the model comparator, the builder's type
names. Values and gradients against the plain computation."""
import pytest
import torch

import torch_xla
import torch_xla.core.xla_builder as xb
import torch_xla.core.xla_model as xm
import torch_xla.debug.model_comparator as mc
from torch_xla.distributed.fsdp import apply_xla_patch_to_nn_linear, checkpoint_module
from torch_xla.utils.checkpoint import checkpoint


def _block(x, w):
    return torch.nn.functional.dropout(torch.tanh(x @ w), p=0.5, training=True)


def test_checkpoint_recomputes_with_the_same_random_numbers(dev):
    x0, w0 = torch.randn(16, 8), torch.randn(8, 8)

    def grads(use_checkpoint):
        xm.set_rng_state(123, dev)
        x = x0.to(dev).requires_grad_()
        w = w0.to(dev).requires_grad_()
        y = checkpoint(_block, x, w) if use_checkpoint else _block(x, w)
        (y * y).sum().backward()
        torch_xla.sync()
        return y.detach().cpu(), x.grad.cpu(), w.grad.cpu()

    plain, checkpointed = grads(False), grads(True)
    assert (plain[0] == 0).any()  # dropout dropped something: a different mask would show
    for a, b in zip(plain, checkpointed):
        torch.testing.assert_close(b, a)


def test_checkpoint_refuses_what_it_cannot_do(dev):
    x = torch.randn(3, device=dev, requires_grad=True)
    with pytest.raises(NotImplementedError, match='reentrant'):
        checkpoint(torch.sin, x, use_reentrant=False)
    with pytest.raises(ValueError, match='keyword arguments'):
        checkpoint(torch.sin, x, foo=1)


class _Net(torch.nn.Module):

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(6, 5), torch.nn.Linear(5, 3)

    def forward(self, x, scale=1.0):
        return self.b(torch.relu(self.a(x))) * scale


def test_checkpoint_module_and_the_linear_patch_match_the_plain_module(dev):
    torch.manual_seed(0)
    ref = _Net()
    x0 = torch.randn(4, 6)
    expected = ref(x0, scale=2.0)
    expected.sum().backward()
    for wrap in (checkpoint_module, lambda m: apply_xla_patch_to_nn_linear(checkpoint_module(m))):
        net = _Net()
        net.load_state_dict(ref.state_dict())
        net = wrap(net.to(dev))
        x = x0.to(dev).requires_grad_()
        out = net(x, scale=2.0)
        out.sum().backward()
        torch.testing.assert_close(out.cpu(), expected.detach())
        for p, q in zip(net.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-5, atol=1e-6)
        ref.zero_grad()
        expected = ref(x0, scale=2.0)
        expected.sum().backward()


def test_the_model_comparator_reports_what_differs(dev, tmp_path):
    def run(where, shift):
        mc.configure(str(tmp_path / where))
        x = torch.arange(6.0).reshape(2, 3).to(dev)
        mc.save('input', x)
        mc.save('output', torch.exp(x) + shift)
        mc.save('output', torch.exp(x) * 2, step=1)
        mc.configure(None)

    for where in ('a', 'b', 'c'):
        (tmp_path / where).mkdir()
    run('a', 0.0)
    run('b', 0.0)
    run('c', 1.0)
    assert mc.compare(str(tmp_path / 'a'), str(tmp_path / 'b')) == ''
    report = mc.compare(str(tmp_path / 'a'), str(tmp_path / 'c'))
    assert 'output.0' in report and 'input' not in report and 'step-1' not in report


def test_builder_type_names_round_trip():
    for name in xb._XLA_PT_TYPE_MAP:
        assert xb.Op.from_torch_type(xb.Op.to_torch_type(name)) == name
    with pytest.raises(NotImplementedError, match='XLA computations from Python'):
        xb.Op.scalar(None, 1, dtype=xb.Type.S32)


def test_a_step_closure_from_a_backward_hook_runs_at_the_next_barrier(dev):
    # Backward hooks run on autograd's worker thread; the closure still waits for this barrier.
    seen = []
    x = torch.randn(4, device=dev, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: xm.add_step_closure(lambda t: seen.append(t.cpu()), args=(g, )))
    y.sum().backward()
    assert seen == []
    torch_xla.sync()
    assert len(seen) == 1 and torch.equal(seen[0], torch.ones(4))
