"""Callbacks when a tensor's value has been computed (PyTorch/XLA's
torch_xla.experimental.callback): graphs run asynchronously, and these wait for the tensor's run
on a thread of their own instead of the caller's."""
import threading

import torch

import torch_xla


def on_ready_callback(tensor: torch.Tensor, callback):
    """Calls callback(tensor) on another thread once `tensor`'s value is on the device (a pending
    value is submitted to run first). The callback runs also when the run failed: reading the
    tensor then raises the run's error."""
    torch_xla._XLAC._xla_sync_multi([tensor], [], False)

    def wait():
        try:
            torch_xla._XLAC._txla_wait_ready(tensor)
        except RuntimeError:
            pass  # the tensor's read raises it
        callback(tensor)

    threading.Thread(target=wait, name='xla on_ready_callback', daemon=True).start()


def on_ready_event(tensor: torch.Tensor) -> threading.Event:
    """A threading.Event set once `tensor`'s value is on the device."""
    event = threading.Event()
    on_ready_callback(tensor, lambda _: event.set())
    return event
