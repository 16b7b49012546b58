"""Saving and loading large models (`import torch_xla.utils.serialization as xser`).

`save` streams: each tensor is moved to the CPU and written to a file of its own, one at a time,
so host memory holds one tensor's copy at a time whatever the model's size. `path` itself holds
the data's structure with references to those files, which live in a directory beside it
(`<path>.tensors-<id>`). Nothing at `path` is ever half-written: the tensors go to a directory
named aside, then the structure to a temporary file that replaces `path` in one rename; a process
that dies midway leaves the previous save (if any) whole. `load` restores the data with tensors
on the CPU; it also reads PyTorch/XLA's layout (`<path>.tensors/tensor_<n>.pt`).
"""
import gc
import glob
import os
import shutil
import uuid

import torch

import torch_xla
from torch_xla.core import xla_model as xm

_FORMAT = 'torch_xla_cpp.serialization/1'


class TensorReference:
    """Stands for the tensor saved as `tensor_<tid>.pt` in the save's tensor directory."""

    def __init__(self, tid):
        self.tid = tid


def save(data, path, master_only=True, global_master=False):
    """Writes `data` (nested dicts/lists/tuples of tensors and other picklable values) to `path`,
    one tensor at a time. With `master_only`, only the master ordinal writes (the local one, or
    the global one with `global_master`)."""
    if master_only and not xm.is_master_ordinal(local=not global_master):
        return
    path = os.fspath(path)
    leaves = []
    xm._map_tensors(data, leaves.append)
    pending = [t for t in leaves if t.device.type == 'xla']
    if pending:  # one graph computes every pending value, instead of one graph per tensor read
        torch_xla._XLAC._xla_sync_multi(pending, devices=[], wait=True)
    name = f'{os.path.basename(path)}.tensors-{uuid.uuid4().hex[:12]}'
    final_dir = os.path.join(os.path.dirname(path) or '.', name)
    partial_dir = final_dir + '.partial'
    os.makedirs(partial_dir)
    count = [0]

    def write(tensor):
        tid = count[0]
        count[0] += 1
        host = tensor.detach()
        host = host.cpu() if host.device.type != 'cpu' else host
        if host.untyped_storage().nbytes() > host.numel() * host.element_size():
            host = host.clone()  # a view: save its elements, not its base's whole storage
        torch.save(host, os.path.join(partial_dir, f'tensor_{tid}.pt'))
        del host
        # torch.save leaves a reference cycle that holds the tensor it saved until the next
        # garbage collection: without this, every host copy of the model stayed alive at once.
        gc.collect(0)
        return TensorReference(tid)

    try:
        structure = xm._map_tensors(data, write)
        os.rename(partial_dir, final_dir)
        xm._save_atomically({'format': _FORMAT, 'tensors': name, 'data': structure}, path)
    except BaseException:  # `path` was not replaced: it still names the previous save, if any
        shutil.rmtree(partial_dir, ignore_errors=True)
        shutil.rmtree(final_dir, ignore_errors=True)
        raise
    # Tensor directories of earlier saves to this path are no longer referenced.
    for old in glob.glob(glob.escape(path) + '.tensors-*'):
        if os.path.abspath(old) != os.path.abspath(final_dir):
            shutil.rmtree(old, ignore_errors=True)


def load(path, weights_only=True):
    """Loads what `save` wrote; tensors come back on the CPU (move them with .to(device)).
    `weights_only` as torch.load's: data holding classes of your own (namedtuples, ...) needs
    False, for files you trust."""
    path = os.fspath(path)
    with torch.serialization.safe_globals([TensorReference]):
        obj = torch.load(path, weights_only=weights_only)
    if isinstance(obj, dict) and obj.get('format') == _FORMAT:
        tensors_dir, data = os.path.join(os.path.dirname(path) or '.', obj['tensors']), obj['data']
    else:  # PyTorch/XLA's layout
        tensors_dir, data = path + '.tensors', obj
    return xm._map_tensors(data, lambda ref: torch.load(os.path.join(tensors_dir, f'tensor_{ref.tid}.pt'),
                                                       weights_only=True),
                           leaf=lambda x: isinstance(x, TensorReference))
