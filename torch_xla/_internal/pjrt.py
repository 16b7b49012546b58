"""PyTorch/XLA's multi-process runners (`torch_xla._internal.pjrt`), which its own tests and
utilities use: run a function once per device and collect what each returned."""
import torch.multiprocessing as mp

from torch_xla.distributed import xla_multiprocessing as xmp


def _run_and_report(index, fn, args, kwargs, results):
    import torch_xla.runtime as xr
    try:
        value = fn(*args, **kwargs)
    except Exception as e:  # noqa: B902  the parent raises it; the replica still fails the job
        try:
            results.put((_FAILED, e))
        except Exception:  # noqa: B902  an exception that does not pickle: the job's report says it
            pass
        raise
    results.put((xr.global_ordinal(), value))


_FAILED = 'failed'


def run_multiprocess(fn, *args, start_method='spawn', **kwargs):
    """Runs fn(*args, **kwargs) in one process per local device (CPU_NUM_DEVICES), each with its
    device as xla:0, and returns {global ordinal: return value}. Return values cross processes by
    pickling: return CPU values. A replica's error ends the job and is raised here as the replica
    raised it (as PyTorch/XLA's runner re-raises it), from the job's report."""
    results = mp.get_context(start_method).SimpleQueue()
    try:
        xmp.spawn(_run_and_report, args=(fn, args, kwargs, results), start_method=start_method)
    except Exception as job_error:  # noqa: B902
        while not results.empty():
            ordinal, value = results.get()
            if ordinal == _FAILED:
                raise value from job_error
        raise
    collected = {}
    while not results.empty():
        ordinal, value = results.get()
        collected[ordinal] = value
    return dict(sorted(collected.items()))


def spawn(fn, nprocs=None, start_method='spawn', args=()):
    """fn(index, *args) in one process per device: xmp.spawn under PyTorch/XLA's internal name."""
    return xmp.spawn(fn, args=args, nprocs=nprocs, start_method=start_method)


def spawn_threads(fn, args=()):
    raise NotImplementedError(
        'torch_xla._internal.pjrt.spawn_threads is not implemented yet: use '
        'torch_xla.distributed.data_parallel.DataParallel for one thread per device')
