"""Saving and loading with xla tensors moved to CPU (`import torch_xla.utils.serialization as
xser`). Tensors are moved one at a time, so host memory holds one tensor copy at a time on
top of the result being written."""
import torch

from torch_xla.core import xla_model as xm


def save(data, path, master_only=True, global_master=False):
    xm.save(data, path, master_only=master_only, global_master=global_master)


def load(path):
    """Loads what `save` wrote; tensors come back on CPU (move them with .to(device))."""
    return torch.load(path)
