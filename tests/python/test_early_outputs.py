"""Early outputs (compiler/passes/early_outputs.h): a graph's scalar results (the loss a loop reads
every step) are computed before the rest of the graph and handed out as soon as their kernel ran,
while the backward pass and the optimizer's update still run; the counter OutputsReadyEarly
counts each release. A value is never released when a kernel before it reported an error, and a
released value stays readable when a later kernel of its run fails."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
from conftest import CounterDelta

ROWS = 4


def mlp(dtype):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)).to(dtype)


def train(model, device, steps, dtype, read_each_step=True):
    """Losses and final parameters of `steps` SGD-momentum steps, the loss read every step."""
    torch.manual_seed(1)
    data = [(torch.randn(16, 20, dtype=dtype), torch.randint(0, 5, (16,))) for _ in range(steps)]
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for x, y in data:
        opt.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        if device != 'cpu':
            torch_xla.sync()
        losses.append(loss.item() if read_each_step else loss)
    losses = [float(v) for v in losses]
    return losses, [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_training_loss_is_released_once_a_step_and_matches_eager(dtype, dev):
    steps = 4
    eager_losses, eager_params = train(mlp(dtype), 'cpu', steps, dtype)
    with CounterDelta('OutputsReadyEarly') as d:
        losses, params = train(mlp(dtype), dev, steps, dtype)
    # One release a step: the loss, before its step's backward and update ran.
    assert d['OutputsReadyEarly'] == steps
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.tensor(losses, dtype=torch.float64),
                               torch.tensor(eager_losses, dtype=torch.float64), **tol)
    for p, q in zip(params, eager_params):
        torch.testing.assert_close(p, q, **tol)


def test_pipelined_steps_read_after_the_loop_match_eager(dev):
    steps = 5
    eager_losses, eager_params = train(mlp(torch.float32), 'cpu', steps, torch.float32)
    losses, params = train(mlp(torch.float32), dev, steps, torch.float32, read_each_step=False)
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(eager_losses), rtol=1e-5, atol=1e-6)
    for p, q in zip(params, eager_params):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_several_scalars_are_each_released(dev):
    x = torch.randn(64, 64)
    xd = x.to(dev)
    with CounterDelta('OutputsReadyEarly') as d:
        total, largest = xd.sum(), xd.abs().max()
        product = xd @ xd  # a kernel after both: they are released before it runs
        torch_xla.sync()
        assert total.item() == pytest.approx(x.sum().item(), rel=1e-5, abs=1e-4)
        assert largest.item() == x.abs().max().item()
        torch.testing.assert_close(product.cpu(), x @ x, rtol=1e-4, atol=1e-4)
    assert d['OutputsReadyEarly'] == 2


def test_a_scalar_whose_kernel_runs_last_is_not_counted(dev):
    x = torch.randn(8, 8).to(dev)
    with CounterDelta('OutputsReadyEarly') as d:
        total = (x * 2).sum()
        torch_xla.sync()
        total.item()
    assert d['OutputsReadyEarly'] == 0


def test_a_scalar_after_a_failed_index_is_not_released(dev):
    x = torch.randn(ROWS, 3).to(dev)
    y = torch.randn(64, 64).to(dev)
    with CounterDelta('OutputsReadyEarly', 'FailedExecution') as d:
        picked = torch.index_select(x, 0, torch.tensor([1, ROWS + 2]).to(dev))
        total = picked.sum()  # reads the clamped index: never handed out
        product = y @ y
        torch_xla.sync()
        with pytest.raises(RuntimeError, match='index 6 is out of bounds'):
            total.item()
        with pytest.raises(RuntimeError, match='index 6 is out of bounds'):
            product.cpu()
    assert d['OutputsReadyEarly'] == 0
    assert d['FailedExecution'] == 1


def test_a_released_scalar_keeps_its_value_when_a_later_kernel_fails(dev):
    x = torch.randn(ROWS, 3)
    xd = x.to(dev)
    with CounterDelta('OutputsReadyEarly', 'FailedExecution') as d:
        total = xd.sum()
        bad = torch.index_select(xd * 2, 0, torch.tensor([ROWS + 1]).to(dev))
        torch_xla.sync()
        assert total.item() == pytest.approx(x.sum().item(), rel=1e-6, abs=1e-6)
        with pytest.raises(RuntimeError, match='index 5 is out of bounds') as info:
            bad.cpu()
        assert 'graph_' in str(info.value)
    assert d['OutputsReadyEarly'] == 1
    assert d['FailedExecution'] == 1
    # The device goes on.
    torch.testing.assert_close((xd + 1).cpu(), x + 1)


SWITCHED_OFF = r'''
import torch, torch.nn.functional as F, torch_xla, torch_xla.debug.metrics as met
dev = torch_xla.device()
torch.manual_seed(0)
w = torch.randn(20, 5, requires_grad=True)
wd = w.detach().to(dev).requires_grad_()
x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
loss = F.cross_entropy(x.to(dev) @ wd, y.to(dev))
loss.backward()
torch_xla.sync()
expected = F.cross_entropy(x @ w, y)
expected.backward()
assert abs(loss.item() - expected.item()) < 1e-5
assert torch.allclose(wd.grad.cpu(), w.grad, atol=1e-6)
print('released', met.counter_value('OutputsReadyEarly') or 0)
'''


def test_disabling_the_pass_keeps_every_output_until_the_run_ends():
    env = dict(os.environ, TXLA_DISABLE_PASSES='early-outputs')
    run = subprocess.run([sys.executable, '-c', SWITCHED_OFF], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert 'released 0' in run.stdout
    run = subprocess.run([sys.executable, '-c', SWITCHED_OFF], env=dict(os.environ), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert 'released 1' in run.stdout


def slow_scalar_then_more_work(xd, w):
    """A scalar behind ~24 products of 512x512 (tens of milliseconds: the host is waiting on it
    when it is released), then a product that runs after the release."""
    h = xd
    for _ in range(24):
        h = torch.tanh(h @ w)
    return h.sum(), h @ w


@pytest.mark.parametrize('host_waits', [True, False])
def test_a_host_thread_waiting_on_a_released_value_is_left_a_core(dev, host_waits):
    # The release wakes the host to trace the next step: the run's later parallel regions leave it
    # a core (HostWokenByEarlyOutput), or both cores stay busy and it waits for the run to end. A
    # value released with nobody waiting on it wakes no one.
    torch.manual_seed(0)
    x, w = torch.randn(512, 512), torch.randn(512, 512) / 24
    xd, wd = x.to(dev), w.to(dev)
    with CounterDelta('OutputsReadyEarly', 'HostWokenByEarlyOutput') as d:
        total, rest = slow_scalar_then_more_work(xd, wd)
        torch_xla.sync()
        if not host_waits:
            xm.wait_device_ops()  # the run ends before anything reads it
        value = total.item()  # waiting, blocks: the scalar's producers take far longer than this call
    assert d['OutputsReadyEarly'] == 1 and d['HostWokenByEarlyOutput'] == int(host_waits)
    expected_total, expected_rest = slow_scalar_then_more_work(x, w)
    assert value == pytest.approx(expected_total.item(), rel=1e-4, abs=1e-2)
    torch.testing.assert_close(rest.cpu(), expected_rest, rtol=1e-4, atol=1e-4)
