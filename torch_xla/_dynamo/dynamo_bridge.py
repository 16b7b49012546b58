"""Same module as torch_xla.core.dynamo_bridge, under PyTorch/XLA 2.9's other name for it, with
the helpers PyTorch/XLA's bridge exports."""
import contextlib

import torch

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


class GraphInputMatcher:
    """Puts a compiled graph's inputs in its parameter order for each call: the graph's device
    data (`_get_tensors_xla_device_data_node`) is either one of the call's arguments, taken from
    the call, or data the graph always reads (weights, constants), kept here. For
    `_run_cached_graph`."""

    def __init__(self, tensor_id_to_arg_idx, graph_input_tensor_ids, graph_input_xla_values, xla_args_tensor_id):
        self.tensor_id_to_arg_idx = tensor_id_to_arg_idx
        self.graph_input_tensor_ids = list(graph_input_tensor_ids)
        # An argument's data comes from each call, so it is not kept (None).
        self.graph_input_xla_values = [None if tensor_id in xla_args_tensor_id else value
                                       for tensor_id, value in zip(graph_input_tensor_ids, graph_input_xla_values)]
        self.arg_idxs = [tensor_id_to_arg_idx.get(tensor_id) for tensor_id in self.graph_input_tensor_ids]

    def __call__(self, args):
        inputs = []
        for kept, arg_idx, tensor_id in zip(self.graph_input_xla_values, self.arg_idxs, self.graph_input_tensor_ids):
            if arg_idx is not None:
                inputs.append(args[arg_idx])
            elif kept is not None:
                inputs.append(kept)
            else:
                raise RuntimeError(f'GraphInputMatcher: graph input (tensor id {tensor_id}) is an argument of the '
                                   f'traced call that this call does not pass')
        return inputs


def _counters(prefix=''):
    """{name: value} of the counters whose name starts with `prefix` (`aten::`: CPU fallbacks)."""
    names = torch_xla._XLAC._xla_counter_names()
    return {n: torch_xla._XLAC._xla_counter_value(n) or 0 for n in names if n.startswith(prefix)}


class UnsupportedNodesCollector(torch.fx.Interpreter):
    """Runs an FX graph node by node and collects the nodes whose ops ran on the CPU instead of the
    device (PyTorch/XLA's fallback counters `aten::*` grew), leaving the process's counters as they
    were before the run."""

    def __init__(self, module):
        super().__init__(module)
        self._unsupported_nodes = []

    def run(self, *args, **kwargs):
        saved = _counters()
        try:
            return super().run(*args, **kwargs)
        finally:
            torch_xla._XLAC._clear_xla_counters()
            for name, value in saved.items():
                torch_xla._XLAC._xla_increment_counter(name, value)

    def run_node(self, n):
        before = _counters('aten::')
        result = super().run_node(n)
        after = _counters('aten::')
        if any(value > before.get(name, 0) for name, value in after.items()):
            self._unsupported_nodes.append(n)
        return result

    def get_unsupported_nodes(self):
        return self._unsupported_nodes
