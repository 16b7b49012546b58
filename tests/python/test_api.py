"""PyTorch/XLA's small helpers that scripts and its test utilities import: same names, same
behaviour."""
import textwrap

import pytest
import torch

import torch_xla
import torch_xla.core.xla_env_vars as xenv
import torch_xla.core.xla_model as xm
from conftest import run_python
from torch_xla.utils.utils import as_list, getenv_as


def test_is_xla_tensor(dev):
    assert xm.is_xla_tensor(torch.zeros(2, device=dev))
    assert not xm.is_xla_tensor(torch.zeros(2))


def test_getenv_as(monkeypatch):
    monkeypatch.setenv('TXLA_TEST_INT', '7')
    monkeypatch.setenv('TXLA_TEST_BOOL', '0')
    monkeypatch.delenv('TXLA_TEST_UNSET', raising=False)
    assert getenv_as('TXLA_TEST_INT', int) == 7
    assert getenv_as('TXLA_TEST_BOOL', bool, True) is False
    assert getenv_as('TXLA_TEST_UNSET', str, 'fallback') == 'fallback'
    assert getenv_as('TXLA_TEST_UNSET', int) is None


def test_as_list():
    assert as_list(3) == [3]
    assert as_list([1, 2]) == [1, 2]
    assert as_list((1,)) == (1,)


def test_env_var_names_are_their_own_values():
    names = [n for n in dir(xenv) if n.isupper()]
    assert 'PJRT_DEVICE' in names and 'XLA_IR_DEBUG' in names
    assert all(getattr(xenv, n) == n for n in names)


def test_device_count_and_step(dev):
    import torch_xla
    import torch_xla.debug.metrics as met
    assert torch_xla.device_count() == len(torch_xla.devices()) >= 1
    before = met.counter_value('MarkStep') or 0
    with torch_xla.step():
        y = torch.ones(3, device=dev) * 2
    assert (met.counter_value('MarkStep') or 0) - before == 2  # on entry and at the end
    assert not torch_xla._XLAC._xla_has_pending_ir(y)  # the block's graph ran at its end
    assert y.cpu().tolist() == [2.0, 2.0, 2.0]


def test_get_xla_tensors_hlo_shows_the_lowered_graph(dev):
    import torch_xla
    x = torch.randn(4, 3).to(dev)
    y = (x.exp() * 2).sum(1)
    text = torch_xla._XLAC._get_xla_tensors_hlo([y])
    assert text.startswith('HloModule') and 'exponential(' in text and 'reduce(' in text, text
    assert torch_xla._XLAC._xla_has_pending_ir(y)  # looking does not run anything
    torch.testing.assert_close(y.cpu(), (x.cpu().exp() * 2).sum(1))


def test_get_xla_tensors_text_and_dot_show_the_pending_ir(dev):
    import torch_xla
    x = torch.randn(4, 3).to(dev)
    y = (x.exp() * 2).sum(1)
    text = torch_xla._XLAC._get_xla_tensors_text([y])
    assert text.startswith('IR {') and 'aten::exp' in text and 'aten::sum' in text and 'ROOT=0' in text, text
    dot = torch_xla._XLAC._get_xla_tensors_dot([y])
    assert dot.startswith('digraph G {') and 'aten::exp' in dot and ' -> ' in dot, dot
    assert torch_xla._XLAC._xla_has_pending_ir(y)  # looking does not run anything


def test_run_multiprocess_collects_each_replicas_result(monkeypatch):
    import os
    import sys
    from torch_xla._internal import pjrt
    here = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.setenv('CPU_NUM_DEVICES', '2')
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([here, os.environ.get('PYTHONPATH', '')]))
    sys.path.insert(0, here)
    import dist_workers
    results = pjrt.run_multiprocess(dist_workers.ordinal_and_sum, 10)
    assert results == {0: (0, [3.0, 3.0]), 1: (10, [3.0, 3.0])}


def test_set_device_type(monkeypatch):
    import pytest
    import torch_xla.runtime as xr
    monkeypatch.delenv('PJRT_DEVICE', raising=False)
    xr.set_device_type('cpu')
    assert xr.device_type() == 'CPU'
    with pytest.raises(RuntimeError, match="cannot become 'TPU'"):  # the runtime has started
        xr.set_device_type('TPU')


@pytest.fixture
def device_rng_state():
    yield
    torch_xla._XLAC._xla_forget_rng_seed('xla:0')  # torch.manual_seed governs the device again


def test_device_rng_state_round_trip(dev, device_rng_state):
    xm.set_rng_state(1234)
    assert xm.get_rng_state() == 1234
    a = torch.rand(50, device=dev).cpu()
    state = xm.get_rng_state()
    assert state != 1234  # each draw advances it
    b = torch.rand(50, device=dev).cpu()
    xm.set_rng_state(state)
    torch.testing.assert_close(torch.rand(50, device=dev).cpu(), b, rtol=0, atol=0)
    torch_xla.manual_seed(1234)
    torch.testing.assert_close(torch.rand(50, device=dev).cpu(), a, rtol=0, atol=0)
    assert not torch.equal(a, b)
    # The device's own state is independent of torch's CPU generator from now on.
    torch.manual_seed(0)
    c = torch.rand(50, device=dev).cpu()
    torch.manual_seed(0)
    assert not torch.equal(torch.rand(50, device=dev).cpu(), c)


def test_mat_mul_precision_settings():
    import torch_xla.backends
    for p in ('default', 'high', 'highest'):
        torch_xla.backends.set_mat_mul_precision(p)
        assert torch_xla.backends.get_mat_mul_precision() == p
        torch_xla._XLAC._xla_set_mat_mul_precision(p)
    with pytest.raises(ValueError, match='highest'):
        torch_xla.backends.set_mat_mul_precision('fast')
    torch_xla.backends.set_mat_mul_precision('highest')


def test_deprecated_xm_names_warn_once_and_work(dev):
    import warnings
    xm._warned.discard('torch_xla.core.xla_model.mark_step')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        xm.mark_step()
        xm.mark_step()
        assert xm.xla_device() == torch.device('xla', 0)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert sum('mark_step is deprecated: use torch_xla.sync' in m for m in messages) == 1


def test_modules_scripts_import_exist_and_say_what_is_missing(dev):
    import torch_xla.core.functions as xf
    import torch_xla.experimental as xe
    assert not xe.is_eager_mode()  # eager mode itself: test_eager_mode.py
    with pytest.raises(ValueError, match='SyncBatchNorm'):
        xf.SyncBatchNorm(8)(torch.zeros(2, 3, device=dev))  # 3 channels given to an 8-channel layer
    # One replica: the differentiable all-reduce is the identity, its gradient too.
    x = torch.randn(5, device=dev, requires_grad=True)
    y = xf.all_reduce(xm.REDUCE_SUM, x * 2)
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), torch.full((5,), 2.))


def test_an_unknown_device_type_fails_the_runtime_start_for_good():
    out = run_python(textwrap.dedent('''
        import os, torch_xla
        for device in ('DUMMY_DEVICE', 'CPU'):  # the first answer stays the answer
            os.environ['PJRT_DEVICE'] = device
            try:
                torch_xla._XLAC._init_computation_client()
                print('started')
            except RuntimeError as e:
                print(e)
    '''))
    lines = out.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith('No PjRtPlugin registered for: DUMMY_DEVICE.') for line in lines)
    assert 'PJRT_DEVICE' in lines[0]
