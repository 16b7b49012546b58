"""The metrics API of torch_xla.debug.metrics and the report text format."""
import re

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from conftest import CounterDelta, run_python


def _run_a_step(dev):
    y = torch.randn(4, 4).to(dev) @ torch.randn(4, 4).to(dev)
    xm.mark_step(wait=True)  # graphs run asynchronously; metrics land when they finish
    return y


def test_report_has_the_documented_shape(dev):
    _run_a_step(dev)
    report = met.metrics_report()
    assert report == torch_xla._XLAC._xla_metrics_report()
    block = re.search(r'Metric: CompileTime\n(  .*\n)+', report).group(0)
    assert re.search(r'  TotalSamples: \d+\n', block)
    assert re.search(r'  Accumulator: [0-9hmsu.]+s?\n', block)
    assert re.search(r'  Percentiles: 1%=.*; 50%=.*; 99%=.*\n', block)
    for name in ('ExecuteTime', 'TransferToDeviceTime'):
        assert f'Metric: {name}\n' in report
    assert re.search(r'Counter: MarkStep\n  Value: \d+\n', report)
    assert re.search(r'Counter: CreateXlaTensor\n  Value: \d+\n', report)


def test_counters_and_metrics_accessors(dev):
    _run_a_step(dev)
    names = met.counter_names()
    assert 'MarkStep' in names and 'UncachedCompile' in names or 'CachedCompile' in names
    assert met.counter_value('MarkStep') >= 1
    assert met.counter_value('NoSuchCounter') is None
    assert 'ExecuteTime' in met.metric_names()
    total, accumulator, samples = met.metric_data('ExecuteTime')
    assert total >= 1 and accumulator > 0 and len(samples) >= 1
    assert all(len(s) == 2 for s in samples)
    assert met.metric_data('NoSuchMetric') is None


def test_clearing_leaves_empty_entries_out(dev):
    _run_a_step(dev)
    met.clear_counters()
    assert 'MarkStep' not in met.counter_names()
    assert 'Counter: MarkStep' not in met.metrics_report()
    _run_a_step(dev)
    assert met.counter_value('MarkStep') == 1
    met.clear_metrics()
    assert 'ExecuteTime' not in met.metric_names()
    _run_a_step(dev)
    met.clear_all()
    assert met.counter_names() == [] and met.metric_names() == []


def test_short_report_and_fallback_list(dev):
    _run_a_step(dev)
    torch.nonzero(torch.ones(3).to(dev))
    short = met.short_metrics_report(['MarkStep', 'aten::nonzero'], ['ExecuteTime'])
    assert 'Metric: ExecuteTime' in short and 'Counter: MarkStep' in short
    assert 'Counter: aten::nonzero' in short
    assert 'CompileTime' not in short
    assert 'aten::nonzero' in met.executed_fallback_ops()


def test_a_number_used_by_many_ops_is_one_device_buffer(dev):
    # PyTorch/XLA's device-data cache: an optimizer's lr or beta, passed to every parameter's ops,
    # is put on the device once. The value is odd enough that no earlier test cached it.
    xs = [torch.randn(8).to(dev) for _ in range(6)]
    want = [x.cpu() * 0.123457 for x in xs]
    with CounterDelta('DeviceDataCacheMiss', 'CreateDataHandles') as d:
        ys = [x * 0.123457 for x in xs]
    assert d['DeviceDataCacheMiss'] == 1 and d['CreateDataHandles'] == 1
    xm.mark_step()
    for y, w in zip(ys, want):
        torch.testing.assert_close(y.cpu(), w)


def test_a_number_is_transferred_once_then_shared(dev):
    # As PyTorch/XLA counts it: the first use of a value writes it to the device (one transfer),
    # later uses share that buffer and transfer nothing.
    xs = [torch.randn(1, 3).to(dev) for _ in range(3)]
    xm.mark_step()
    transfers = lambda: (met.metric_data('TransferToDeviceTime') or (0,))[0]  # noqa: E731
    before = transfers()
    xs[0].addcdiv_(xs[1], xs[2], value=0.9876543)
    xm.mark_step()
    assert transfers() == before + 1
    xs[0].addcdiv_(xs[1], xs[2], value=0.9876543)
    xs[0].addcdiv_(xs[1], xs[2], value=0.9876543)
    xm.mark_step()
    assert transfers() == before + 1


def test_a_numbers_shared_buffer_is_never_donated(dev):
    # torch.tensor(3.25) is the same buffer wherever 3.25 is a number on the device: donating it
    # would clobber the others, so the request is refused; an in-place update makes a new value.
    a = torch.tensor(3.25, device=dev)
    b = torch.tensor(3.25, device=dev)
    assert torch_xla._XLAC._set_buffer_donation(a, True) is False
    assert torch_xla._XLAC._get_buffer_donation(a) is False
    a.add_(1.0)
    c = b * 2
    xm.mark_step()
    assert a.item() == 4.25 and b.item() == 3.25 and c.item() == 6.5
    big = torch.zeros(4).to(dev)  # tensors with data of their own still can be donated
    assert torch_xla._XLAC._set_buffer_donation(big, True) is True


def test_the_number_cache_can_be_switched_off():
    script = """
import torch, torch_xla, torch_xla.debug.metrics as met
dev = torch_xla.device()
xs = [torch.randn(8).to(dev) for _ in range(4)]
ys = [x * 0.3 for x in xs]
print(met.counter_value('DeviceDataCacheMiss'))
"""
    assert run_python(script, XLA_DEVICE_DATA_CACHE_SIZE='0').strip() == '4'
    assert run_python(script).strip() == '1'


def test_tracing_reads_and_graph_sizes_are_measured(dev):
    met.clear_all()
    t = torch.tensor(156, device=dev)
    u = t + 100
    assert met.metric_data('LazyTracing')[0] >= 2  # the copy onto the device and the add
    if u:  # a value read into Python: counted as PyTorch/XLA counts it, with the CPU fallbacks
        pass
    assert met.counter_value('aten::_local_scalar_dense') == 1
    assert 'aten::_local_scalar_dense' in met.short_metrics_report()
    assert 'aten::_local_scalar_dense' in met.executed_fallback_ops()
    assert met.metric_data('TensorsGraphSize')[2][-1][1] == 3  # two device data and the add
    for name in ('UnwrapXlaData', 'WrapXlaData', 'DeviceLockWait'):
        assert met.metric_data(name)[0] >= 1, name
