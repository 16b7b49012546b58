"""Helpers PyTorch/XLA training scripts import: progress lines and an optional TensorBoard writer
(a no-op when no log directory is given or TensorBoard is not installed)."""
import time
from datetime import datetime

import torch_xla.core.xla_model as xm


def now(format='%H:%M:%S'):
    return datetime.now().strftime(format)


def print_training_update(device, step, loss, rate, global_rate, epoch=None, summary_writer=None):
    update = ['Training', f'Device={xm.xla_real_devices([str(device)])[0]}', f'Epoch={epoch}' if epoch is not None else None,
              f'Step={step}', f'Loss={_value(loss):.5f}', f'Rate={rate:.2f}', f'GlobalRate={global_rate:.2f}',
              f'Time={now()}']
    print('|', ' '.join(u for u in update if u), flush=True)
    if summary_writer is not None:
        write_to_summary(summary_writer, step, dict_to_write={'loss': _value(loss)})


def print_test_update(device, accuracy, epoch=None, step=None):
    update = ['Test', f'Device={xm.xla_real_devices([str(device)])[0]}', f'Step={step}' if step is not None else None,
              f'Epoch={epoch}' if epoch is not None else None, f'Accuracy={accuracy:.2f}', f'Time={now()}']
    print('|', ' '.join(u for u in update if u), flush=True)


def _value(x):
    return x.item() if hasattr(x, 'item') else float(x)


class _NullWriter:
    def add_scalar(self, *args, **kwargs):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def get_summary_writer(logdir):
    if not logdir:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception:  # TensorBoard is not installed: keep the script running
        return _NullWriter()
    return SummaryWriter(log_dir=logdir)


def write_to_summary(summary_writer, global_step=None, dict_to_write={}, write_xla_metrics=False):
    if summary_writer is None:
        return
    for k, v in dict_to_write.items():
        summary_writer.add_scalar(k, _value(v), global_step)


def close_summary_writer(summary_writer):
    if summary_writer is not None:
        summary_writer.flush()
        summary_writer.close()


def mp_test(func):
    """Runs a test function in a process of its own (a fresh runtime: process-wide switches it
    sets do not leak); the test fails when that process does not exit cleanly."""
    import functools
    import multiprocessing
    import unittest

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        proc = multiprocessing.get_context('fork').Process(target=func, args=args, kwargs=kwargs)
        proc.start()
        proc.join()
        if args and isinstance(args[0], unittest.TestCase):
            args[0].assertEqual(proc.exitcode, 0, f'{func.__name__} failed in its own process')
        elif proc.exitcode != 0:
            raise RuntimeError(f'{func.__name__} failed in its own process (exit code {proc.exitcode})')

    return wrapper
