"""Same module as torch_xla.core.dynamo_bridge, under PyTorch/XLA 2.9's other name for it, with
the helpers PyTorch/XLA's bridge exports."""
import contextlib

import torch_xla
from torch_xla.core.dynamo_bridge import CompiledGraph, extract_compiled_graph  # noqa: F401


@contextlib.contextmanager
def alias_with_buffer_donor_config(should_alias: bool = True):
    """While inside, the buffers marked for donation (`_set_buffer_donation`,
    `torch.ops.xla.dynamo_set_buffer_donor_`) are donated to the graphs that run; yields the
    setting it replaced, which it restores on leaving. (Donation is decided per run here, so the
    graph hash does not change with it.)"""
    saved = torch_xla._XLAC._xla_get_enable_alias_with_buffer_donor_config()
    torch_xla._XLAC._xla_set_enable_alias_with_buffer_donor_config(should_alias)
    try:
        yield saved
    finally:
        torch_xla._XLAC._xla_set_enable_alias_with_buffer_donor_config(saved)


class NoneRemover:
    """Takes the Nones out of a list or tuple (an AOT autograd backward graph returns None for
    inputs without gradients) and puts them back at the same places later."""

    def __init__(self):
        self.none_poslist = []

    def remove_nones(self, value_list):
        """`value_list` without its Nones (a list is changed in place); their positions are kept."""
        if not isinstance(value_list, (list, tuple)):
            raise TypeError('value_list must be a list or a tuple.')
        self.none_poslist = [i for i, v in enumerate(value_list) if v is None]
        kept = [v for v in value_list if v is not None]
        if isinstance(value_list, tuple):
            return tuple(kept)
        value_list[:] = kept
        return value_list

    def add_nones(self, value_list):
        """`value_list` with Nones back at the positions removed (a list is changed in place)."""
        if not isinstance(value_list, (list, tuple)):
            raise TypeError('value_list must be a list or a tuple.')
        values = list(value_list)
        for pos in self.none_poslist:
            values.insert(pos, None)
        if isinstance(value_list, tuple):
            return tuple(values)
        value_list[:] = values
        return value_list
