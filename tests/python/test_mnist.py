"""The seeds' MNIST network trains on the xla device exactly as on the CPU."""
import copy

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from conftest import CounterDelta, counter
from mnist_model import MNIST


OPTIMIZERS = {
    'sgd': lambda p: torch.optim.SGD(p, lr=0.01),
    'sgd_momentum': lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.5),
    'adam': lambda p: torch.optim.Adam(p, lr=0.001),
}


@pytest.mark.parametrize('name', sorted(OPTIMIZERS))
def test_training_matches_cpu(name, dev):
    torch.manual_seed(0)
    cpu_model = MNIST().train()
    xla_model = copy.deepcopy(cpu_model).to(dev)
    cpu_opt = OPTIMIZERS[name](cpu_model.parameters())
    xla_opt = OPTIMIZERS[name](xla_model.parameters())
    batches = [(torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(6)]
    compiles = []
    interpreted_before = counter('InterpretedGraph')
    for data, target in batches:
        cpu_opt.zero_grad()
        loss = F.nll_loss(cpu_model(data), target)
        loss.backward()
        cpu_opt.step()
        with CounterDelta('UncachedCompile') as d:
            xla_opt.zero_grad()
            xla_loss = F.nll_loss(xla_model(data.to(dev)), target.to(dev))
            xla_loss.backward()
            xla_opt.step()
            xm.mark_step()
        compiles.append(d['UncachedCompile'])
        assert abs(xla_loss.item() - loss.item()) < 1e-4
    # The step graph settles after the optimizer state exists: no compiles after that.
    assert compiles[-3:] == [0, 0, 0], compiles
    xla_state = xla_model.state_dict()
    for key, value in cpu_model.state_dict().items():
        # Convolutions sum in another order than eager's oneDNN (im2col + GEMM): float32
        # rounding, grown over six steps, reaches ~1e-5 on the smallest weights.
        torch.testing.assert_close(xla_state[key].cpu(), value, rtol=1e-4, atol=5e-5)
    # ...and the whole step ran as native code, not on the interpreter.
    assert counter('InterpretedGraph') == interpreted_before


def test_optimizer_step_with_barrier(dev):
    torch.manual_seed(0)
    model = MNIST().train().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    losses = []
    data, target = torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))
    for _ in range(8):
        opt.zero_grad()
        loss = F.nll_loss(model(data.to(dev)), target.to(dev))
        loss.backward()
        with CounterDelta('MarkStep') as d:
            xm.optimizer_step(opt, barrier=True)
        assert d['MarkStep'] == 1
        losses.append(loss.item())
    assert losses[-1] < losses[0]  # it learns the fixed batch
