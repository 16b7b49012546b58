"""The metrics API of torch_xla.debug.metrics and the report text format."""
import re

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met


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
