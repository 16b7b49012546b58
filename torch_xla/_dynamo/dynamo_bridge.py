"""Same module as torch_xla.core.dynamo_bridge, under PyTorch/XLA 2.9's other name for it, with
the helpers PyTorch/XLA's bridge exports."""
from torch_xla.core.dynamo_bridge import CompiledGraph, extract_compiled_graph  # noqa: F401


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
