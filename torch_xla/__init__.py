"""torch_xla: PyTorch on a lazy `xla` device, implemented in C++ (see README.md).

Importing the package loads the C++ core (`torch_xla._XLAC`), which registers the `xla` device
with PyTorch's dispatcher.
"""
import torch as _torch


def _check_torch_version():
    try:
        from ._build_info import TORCH_VERSION as built_for
    except ImportError:
        return  # not built yet: importing _XLAC says so
    if built_for != _torch.__version__:
        raise ImportError(
            f'torch_xla was built for torch {built_for}, but this environment has torch '
            f'{_torch.__version__} ({_torch.__file__}): install torch {built_for}, or rebuild '
            f'torch_xla against this torch (scripts/setup.sh, or pip install --no-build-isolation .)')


_check_torch_version()


def _point_at_mkl():
    # PyPI's mkl wheel (a dependency) puts libmkl_rt.so.2 under the environment's lib/; the C++
    # core loads it from TXLA_MKL_LIBRARY for float32 GEMMs (csrc/compiler/library/mkl_blas.h).
    from ._internal import config
    if config.TXLA_MKL_LIBRARY.is_set():
        return
    try:
        from importlib.metadata import PackageNotFoundError, files
        found = [f for f in (files('mkl') or []) if f.name == 'libmkl_rt.so.2']
    except PackageNotFoundError:
        return
    if found:
        config.TXLA_MKL_LIBRARY.set(found[0].locate().resolve())


_point_at_mkl()

from . import _XLAC  # noqa: F401,E402  (registers the xla device kernels)
from . import _torch113 as _torch113

_torch113.install()

from ._internal import shared_parameters as _shared_parameters  # noqa: E402

_shared_parameters.install()

from ._internal import foreach_default as _foreach_default  # noqa: E402

_foreach_default.install()

from ._internal import patched_functions as _patched_functions  # noqa: E402

_patched_functions.install()

# torch.distributed._functional_collectives on xla tensors record graph collectives.
from .distributed import functional_collectives as _functional_collectives  # noqa: E402,F401

# `torch_xla.experimental.eager_mode(...)` works after `import torch_xla`, as in PyTorch/XLA.
from . import experimental  # noqa: E402,F401
# nn.GRU is PyTorch/XLA's GRU once torch_xla is imported (nn.GRU._orig is the original).
from . import amp as _amp  # noqa: E402,F401  (GradScaler's ops run lazily on the device)
from .experimental import gru as _gru  # noqa: E402
_gru._patch_nn_gru()

__version__ = "0.1.0"


def _wait_for_device_work():
    # Graphs run asynchronously after mark_step; let queued work finish before the interpreter
    # tears down the modules it may still be writing buffers for.
    try:
        _XLAC._xla_wait_device_ops([])
    except Exception:
        pass


import atexit as _atexit  # noqa: E402

_atexit.register(_wait_for_device_work)


def device(index=None):
    """The current process's xla device, as `torch.device('xla', index)`."""
    from .core import xla_model as _xm
    return _xm._xla_device(index)


def sync(wait=False, reset_scope=True):
    """The barrier: executes the pending graph of every live xla tensor (same as xm.mark_step);
    inside an xp.Trace region it raises, unless reset_scope=False."""
    from .core import xla_model as _xm
    _xm._mark_step(wait=wait, reset_scope=reset_scope)


def manual_seed(seed, device=None):
    """Seeds the random state of `device` (default: the current one), as xm.set_rng_state."""
    from .core import xla_model as _xm
    _xm.set_rng_state(seed, device)


def devices():
    return [_torch.device(d) for d in _XLAC._xla_get_all_devices()]


def real_devices():
    """The runtime's own names of this process's devices ('CPU:0', ...)."""
    return _XLAC._xla_real_devices([str(d) for d in devices()])


def device_count():
    """How many xla devices this process has (CPU_NUM_DEVICES)."""
    return len(_XLAC._xla_get_all_devices())


import contextlib as _contextlib  # noqa: E402


@_contextlib.contextmanager
def step():
    """One training step as a block: pending work from before runs first, and the block's graph
    is cut and run when it ends (also when it raises), as PyTorch/XLA's `torch_xla.step()`."""
    sync()
    try:
        yield
    finally:
        sync()


def compile(f=None, full_graph=False, name=None, max_different_graphs=None, custom_compile_options=None):
    """`fn` traced lazily as one graph per call, run when it returns, eager mode off inside (as
    PyTorch/XLA's `torch_xla.compile`): `compile(fn)`, `@compile`, or `with compile():`. Work
    pending before the call runs first. With `full_graph=True` a graph break inside (a value read
    on the host) raises instead of running part of the function. With `max_different_graphs=N`
    a call that traces an N+1st different graph of `fn` raises, naming where it departs from the
    graphs seen (_internal/graph_limit.py). `custom_compile_options` is accepted and not used:
    this compiler has no XLA flags to override."""

    if name is None and f is not None:
        name = getattr(f, '__name__', None) or str(f)

    @_contextlib.contextmanager
    def _compiled():
        eager = _XLAC._get_use_eager_mode()
        allowed = _XLAC._get_allow_execution()
        outer_name = _XLAC._get_current_graph_name()  # PT_XLA_DEBUG shows it as Graph Name
        _XLAC._set_use_eager_mode(False)
        try:
            if name is not None:
                _XLAC._set_current_graph_name(name + '_clear_pending')
            sync()  # what was pending before the function is not its graph
            if name is not None:
                _XLAC._set_current_graph_name(name)
            _XLAC._set_allow_execution(not full_graph)
            limited = max_different_graphs is not None and f is not None
            if limited:
                _XLAC._xla_op_log_begin()
            try:
                yield
            finally:
                _XLAC._set_allow_execution(allowed)
                ops = _XLAC._xla_op_log_end() if limited else None
            if limited:
                from ._internal import graph_limit
                graph_limit.check(f, ops, max_different_graphs)
            sync()
        finally:
            _XLAC._set_use_eager_mode(eager)
            _XLAC._set_current_graph_name(outer_name)

    if f is None:
        return _compiled()

    import functools

    @functools.wraps(f)
    def run(*args, **kwargs):
        with _compiled():
            return f(*args, **kwargs)

    return run


def launch(fn, args=(), start_method='spawn', debug_single_process=False):
    """Runs fn(index, *args) once per device, each in its own process (one process, index 0,
    with debug_single_process)."""
    from torch_xla.distributed import xla_multiprocessing as xmp
    if debug_single_process:
        fn(0, *args)
        return
    xmp.spawn(fn, args=args, nprocs=None, start_method=start_method)
