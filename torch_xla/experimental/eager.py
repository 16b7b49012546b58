"""Eager mode (PyTorch/XLA: compile and run every op as it is called). This project runs ops
lazily only; turning eager mode on raises, naming what is missing, and turning it off is the
state the device is always in."""
import contextlib


def eager_mode(enable: bool):
    if enable:
        raise NotImplementedError('torch_xla.experimental.eager_mode(True): ops run lazily on '
                                  'this device (torch_xla.sync() runs what is pending)')


def is_eager_mode() -> bool:
    return False


@contextlib.contextmanager
def eager_mode_context(enable: bool):
    eager_mode(enable)
    yield
