"""Counters and metrics of the xla device, as PyTorch/XLA's `torch_xla.debug.metrics`."""
import torch_xla


def counter_names():
    return torch_xla._XLAC._xla_counter_names()


def counter_value(name):
    """The counter's value, or None when it was never touched."""
    return torch_xla._XLAC._xla_counter_value(name)


def metric_names():
    return torch_xla._XLAC._xla_metric_names()


def metric_data(name):
    """(TotalSamples, Accumulator, [(timestamp_ns, value), ...]) or None."""
    return torch_xla._XLAC._xla_metric_data(name)


def metrics_report():
    return torch_xla._XLAC._xla_metrics_report()


def short_metrics_report(counter_names=None, metric_names=None):
    if counter_names is None:
        counter_names = ['CachedCompile', 'MarkStep']
    if metric_names is None:
        metric_names = ['CompileTime', 'ExecuteTime', 'TransferFromDeviceTime',
                        'TransferToDeviceTime']
    return torch_xla._XLAC._xla_short_metrics_report(list(counter_names), list(metric_names))


def clear_counters():
    torch_xla._XLAC._clear_xla_counters()


def clear_metrics():
    torch_xla._XLAC._clear_xla_metrics()


def clear_all():
    clear_counters()
    clear_metrics()


def executed_fallback_ops():
    """Names of ops that ran through the CPU fallback (counters that look like aten::name)."""
    return [n for n in counter_names() if n.startswith('aten::')]
