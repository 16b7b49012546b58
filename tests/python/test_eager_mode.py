"""Eager mode (torch_xla.experimental.eager_mode, XLA_USE_EAGER_DEBUG_MODE): every op compiled
and run as it is called, each its own cached graph; torch.compile still traces whole graphs.
Checked through the EagerOp* metrics and against eager CPU."""
import os
import subprocess
import sys

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from torch_xla.experimental import eager_mode_context, is_eager_mode

from conftest import CounterDelta


def samples(name):
    data = met.metric_data(name)
    return data[0] if data else 0


def test_each_op_runs_when_called_and_matches_cpu(dev):
    a, b = torch.randn(6, 5), torch.randn(5, 4)
    with eager_mode_context(True):
        x, y = a.to(dev), b.to(dev)
        before, lazy_before = samples('EagerOpExecuteTime'), samples('ExecuteTime')
        z = torch.relu(x @ y)
        xm.wait_device_ops()  # the runs are queued: their times are recorded when they end
        ran = samples('EagerOpExecuteTime') - before
        assert not torch_xla._XLAC._xla_has_pending_ir(z)  # already computed
    assert ran >= 2  # the product, then the relu
    assert samples('ExecuteTime') == lazy_before  # no lazy graph ran
    torch.testing.assert_close(z.cpu(), torch.relu(a @ b))


def test_an_op_signature_compiles_once(dev):
    with eager_mode_context(True):
        x, y = torch.randn(5, 7).to(dev), torch.randn(5, 7).to(dev)
        torch.logsumexp(x, 0)
        compiled = samples('EagerOpCompileTime')
        r = torch.logsumexp(y, 0)
        assert samples('EagerOpCompileTime') == compiled
    torch.testing.assert_close(r.cpu(), torch.logsumexp(y.cpu(), 0))


def test_in_place_updates_and_random_ops_run_at_once(dev):
    with eager_mode_context(True):
        torch.manual_seed(3)
        t = torch.randn(4, 4, device=dev)
        u = torch.randn(4, 4, device=dev)
        expected = t.cpu() * 5
        t *= 5
        assert not torch_xla._XLAC._xla_has_pending_ir(t)
    torch.testing.assert_close(t.cpu(), expected)
    assert not torch.equal(t.cpu(), u.cpu() * 5)  # two draws, not one seed twice


def test_torch_compile_still_traces_one_graph(dev):
    def f(a):
        return (a * 2 + 1).relu().sum(0)

    x = torch.randn(8, 3)
    with eager_mode_context(True):
        compiled = torch.compile(f, backend='openxla')
        with CounterDelta('DynamoLazyGraph', 'DynamoExtractCompiledGraph') as d:
            got = compiled(x.to(dev))
            got_again = compiled(x.to(dev) * 1)
    assert d['DynamoExtractCompiledGraph'] == 1 and d['DynamoLazyGraph'] == 0
    torch.testing.assert_close(got.cpu(), f(x))
    torch.testing.assert_close(got_again.cpu(), f(x))


def test_the_mode_is_restored_and_read_from_the_environment():
    assert not is_eager_mode()
    with eager_mode_context(True) as previous:
        assert is_eager_mode() and previous is False
    assert not is_eager_mode()
    env = dict(os.environ, XLA_USE_EAGER_DEBUG_MODE='1')
    out = subprocess.run([sys.executable, '-c', 'import torch_xla; print(torch_xla.experimental.is_eager_mode())'],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == 'True', out.stderr[-2000:]
