"""Eager mode (PyTorch/XLA's): every op is compiled and run as it is called, each as a graph of
its own (cached per op signature), instead of at the next barrier. Errors surface at the op
that caused them; each op's times are its own metrics (EagerOpCompileTime, EagerOpExecuteTime).
torch.compile still traces whole graphs. XLA_USE_EAGER_DEBUG_MODE=1 turns it on at start."""
import contextlib

import torch_xla


def eager_mode(enable: bool):
    """Turns eager mode on or off for the process."""
    torch_xla._XLAC._set_use_eager_mode(bool(enable))


def is_eager_mode() -> bool:
    return torch_xla._XLAC._get_use_eager_mode()


@contextlib.contextmanager
def eager_mode_context(enable: bool):
    """Eager mode on or off inside the block; yields the mode it replaced."""
    saved = is_eager_mode()
    eager_mode(enable)
    try:
        yield saved
    finally:
        eager_mode(saved)
