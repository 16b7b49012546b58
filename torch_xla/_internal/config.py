"""The environment variables the Python package reads, declared once: name, type, default, the
variable it falls back to, and what it does. The device's own switches (XLA_*, TXLA_*,
PT_XLA_DEBUG, ...) are C++'s, declared in csrc/debug/config.h and listed by
torch_xla._XLAC._xla_config(); `describe()` lists these the same way.

Every read goes to the environment when it is made: the launcher's variables (RANK, WORLD_SIZE,
LOCAL_RANK, ...) are set in a replica after torch_xla is imported, so no value is cached here.
Code asks `config.RANK.get()`, never os.environ.
"""
import os


class Variable:
    """One environment variable: `get()` is its value in `type`, or the fallback's, or `default`
    when neither is set; a value that does not parse raises ValueError naming the variable."""

    def __init__(self, name, type, default, doc, fallback=None):
        self.name, self.type, self.default, self.doc, self.fallback = name, type, default, doc, fallback

    def is_set(self):
        return bool(os.environ.get(self.name))

    def raw(self):
        value = os.environ.get(self.name)
        if not value and self.fallback is not None:
            value = os.environ.get(self.fallback)
        return value or None

    def get(self):
        value = self.raw()
        if value is None:
            return self.default
        try:
            return bool(int(value)) if self.type is bool else self.type(value)
        except ValueError:
            raise ValueError(f'{self.name}={value!r} is not a {self.type.__name__}: {self.doc}') from None

    def set(self, value):
        """For this process and the processes it starts."""
        os.environ[self.name] = str(value)


_ALL = []


def _declare(*args, **kwargs):
    variable = Variable(*args, **kwargs)
    _ALL.append(variable)
    return variable


PJRT_DEVICE = _declare('PJRT_DEVICE', str, None, "the device type; only 'CPU' exists here (unset: CPU)")
PJRT_SELECT_DEFAULT_DEVICE = _declare('PJRT_SELECT_DEFAULT_DEVICE', bool, True,
                                      'without PJRT_DEVICE, use the CPU device (0: no device type)')
CPU_NUM_DEVICES = _declare('CPU_NUM_DEVICES', int, 1,
                           'xla devices a process offers (the C++ side reads it too), and the '
                           'replicas xmp.spawn starts by default')
MODELCMP_SAVEDIR = _declare('MODELCMP_SAVEDIR', str, '', 'where torch_xla.debug.model_comparator saves when '
                            'configure() was not called (unset: saves do nothing)')
XLA_AUTO_SPMD = _declare('XLA_AUTO_SPMD', bool, False, 'SPMD with auto-sharding (as use_spmd(auto=True))')
XLA_USE_SPMD = _declare('XLA_USE_SPMD', bool, False,
                        'programs on xla:0 are partitioned over every device by their shardings '
                        '(torch_xla.runtime.use_spmd() sets it)')
RANK = _declare('RANK', int, 0, "this replica's index in the job (set by the launcher)")
LOCAL_RANK = _declare('LOCAL_RANK', int, 0, "this replica's index on its host (set by the launcher)")
WORLD_SIZE = _declare('WORLD_SIZE', int, 1, 'replicas in the job (set by the launcher)')
LOCAL_WORLD_SIZE = _declare('LOCAL_WORLD_SIZE', int, 1, 'replicas on this host (set by the launcher)')
XLA_NUM_HOSTS = _declare('XLA_NUM_HOSTS', int, 1, 'hosts of a multi-host job', fallback='NNODES')
XLA_HOST_RANK = _declare('XLA_HOST_RANK', int, 0, "this host's index in a multi-host job",
                         fallback='NODE_RANK')
MASTER_ADDR = _declare('MASTER_ADDR', str, '127.0.0.1', "the address of replica 0's rendezvous")
MASTER_PORT = _declare('MASTER_PORT', int, None,
                       "the port of replica 0's rendezvous (xmp.spawn picks a free one if unset)")
XLA_METRICS_FILE = _declare('XLA_METRICS_FILE', str, None, 'append the metrics report at every mark_step')
TXLA_COLLECTIVE_TIMEOUT_S = _declare(
    'TXLA_COLLECTIVE_TIMEOUT_S', float, 1800.0,
    'how long a multi-process collective waits for the other replicas before it fails')
TXLA_FOREACH_DEFAULT = _declare(
    'TXLA_FOREACH_DEFAULT', bool, True,
    "torch.optim's optimizers and clip_grad_norm_ take their foreach path for xla tensors, as for "
    "CUDA's (0: torch's per-tensor Python loop, as on PyTorch/XLA)")
TXLA_MKL_LIBRARY = _declare('TXLA_MKL_LIBRARY', str, None,
                            "MKL's libmkl_rt.so.2 for the C++ side; importing torch_xla sets it to "
                            'the installed PyPI mkl unless set')


def describe():
    """{name: (value, type, fallback, doc)} of every variable the Python package reads."""
    return {v.name: (v.raw(), v.type.__name__, v.fallback, v.doc) for v in _ALL}
