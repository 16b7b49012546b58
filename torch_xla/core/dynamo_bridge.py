"""torch.compile(model, backend='openxla' / 'openxla_eval'): the bridge dynamo calls.

torch's own `torch._dynamo.backends.torchxla` registers both backends and calls
`extract_compiled_graph(fx_graph, args)` on a graph's first run ('openxla' goes through
AOTAutograd first, so forward and backward arrive as two graphs). The first call with a given input
signature runs the FX graph once on the lazy device; the C++ side (`_xla_dynamo_end_trace`) turns
what was recorded into a captured graph, compiled through the same cache as `mark_step`. A call
either hands the inputs' buffers to that graph (no op dispatch, no IR, no graph hash) or joins
the caller's lazy graph: the C++ side makes the recorded ops again over the inputs
(DynamoInlinedCapturedGraph). It joins when an input is still pending (the backward graph's loss
gradient), and on the graph's first call of a step (between barriers).

Inputs the graph updates in place (BatchNorm running stats, optimizer state) get their new values
written back; random ops draw a fresh seed per call from torch's default generator. An output that
is a transpose of an input (AOT autograd saves a Linear layer's transposed weight for the backward
graph) is returned as that view of the input instead of a computed copy; the graph it is then
handed to reads the input's data with the transpose inside it (counter DynamoTransposedInputs). A graph that
cannot be replayed (an input on another device, an output that is not an xla tensor, or an op that
ran on the CPU while it was traced) runs lazily on every call instead, and says so once.
"""
import contextlib
import io
import sys
import warnings

import torch
from torch.utils import _pytree as pytree

import torch_xla
from torch_xla import _XLAC
from torch_xla._dynamo import config as _config
from torch_xla.core import collectives as _collectives


def extract_compiled_graph(model: torch.fx.GraphModule, example_args):
    """The callable dynamo runs in place of `model` (PyTorch/XLA's entry point, same name)."""
    _XLAC._xla_counter_add('DynamoExtractCompiledGraph', 1)
    return CompiledGraph(model)


class _Lazy:
    """A signature whose graph is not replayable: run the FX graph on the lazy device each call."""

    def __init__(self, reason):
        self.reason = reason


_TRANSPOSES = (torch.ops.aten.t.default, torch.ops.aten.transpose.int, torch.ops.aten.permute.default)


def _transposed_inputs(gm):
    """{flattened output position: (argument index, view op, its other arguments)} for the outputs
    the FX graph computes as a transpose of one of its arguments."""
    arg_index = {n: k for k, n in enumerate(n for n in gm.graph.nodes if n.op == 'placeholder')}
    output = next(n for n in gm.graph.nodes if n.op == 'output')
    found = {}
    for pos, node in enumerate(pytree.tree_flatten(output.args[0])[0]):
        if (isinstance(node, torch.fx.Node) and node.op == 'call_function' and node.target in _TRANSPOSES
                and not node.kwargs and node.args and node.args[0] in arg_index):
            found[pos] = (arg_index[node.args[0]], node.target, tuple(node.args[1:]))
    return found


class CompiledGraph:
    """One FX graph, with a captured graph per input signature (shapes, dtypes, Python numbers)."""

    def __init__(self, gm):
        self._gm = gm
        self._by_scalars = {}  # non-tensor arguments -> [(captured graph or _Lazy, output template)]
        # Any callable traces (assume_pure's functions too); FX graphs also tell their views.
        self._views = _transposed_inputs(gm) if isinstance(gm, torch.fx.GraphModule) else {}

    def __call__(self, *args):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        scalars = tuple(a for a in args if not isinstance(a, torch.Tensor))
        entries = self._by_scalars.setdefault(scalars, [])
        for graph, template in entries:
            if isinstance(graph, _Lazy):
                if self._signature(tensors) == template:
                    return self._run_lazily(args)
                continue
            if _config.skip_input_data_check and any(t.device.type == 'xla' and _XLAC._xla_has_pending_ir(t)
                                                      for t in tensors):
                # The user promised device data (PyTorch/XLA's switch): a pending input is an error.
                raise RuntimeError('input data to dynamo graph can not be a pending ir (torch_xla._dynamo.'
                                   'config.skip_input_data_check is set)')
            outputs = graph(tensors, _config.join_lazy_graph)
            if outputs is not None:
                return template.assemble(outputs, args)
        return self._trace(args, tensors, entries, stand_ins=_config.join_lazy_graph)

    @staticmethod
    def _signature(tensors):
        return tuple((t.device, t.dtype, tuple(t.shape)) for t in tensors)

    def _run_lazily(self, args):
        _XLAC._xla_counter_add('DynamoLazyRun', 1)
        with torch.no_grad():
            return self._gm(*args)

    def _trace(self, args, tensors, entries, stand_ins):
        try:
            start = _XLAC._xla_dynamo_begin_trace(tensors, stand_ins)
        except RuntimeError as e:
            return self._give_up(entries, tensors, str(e), args)
        # Pending inputs are traced as stand-ins (device data of their shape): the trace runs on
        # those, and its graph takes the pending values when it first runs.
        traced = _XLAC._xla_dynamo_trace_inputs(start)
        on_stand_ins = any(s is not t for s, t in zip(traced, tensors))
        traced = iter(traced)
        trace_args = [next(traced) if isinstance(a, torch.Tensor) else a for a in args]
        # On stand-ins an error is not the user's (it is traced again): what the trace writes to
        # stderr (the FX graph's error report, printed before it raises) is held, and passed on
        # only when the trace succeeds.
        held = io.StringIO() if on_stand_ins else None
        # A collective's ordering token from outside would tie the trace to that graph; the trace's
        # own last token is a value the capture replaces. Collectives run in order across graphs.
        devices = {str(t.device) for t in tensors}
        _collectives.forget_tokens(devices)
        try:
            # In eager mode too the trace records one graph (its ops do not run one by one).
            with torch.no_grad(), _XLAC._suspend_eager_mode(), \
                    contextlib.redirect_stderr(held) if held else contextlib.nullcontext():
                result = self._gm(*trace_args)
            if held and held.getvalue():
                sys.stderr.write(held.getvalue())
        except Exception:
            # A stand-in's zeros can fail where the real value would not (a distribution of
            # zeros): trace again on the materialized inputs, which raise only eager's errors.
            if _XLAC._xla_dynamo_abandon_trace(start):
                return self._trace(args, tensors, entries, stand_ins=False)
            raise
        finally:
            _collectives.forget_tokens(devices)
        leaves, spec = pytree.tree_flatten(result)
        views = {pos: view for pos, view in self._views.items()
                 if isinstance(leaves[pos], torch.Tensor) and isinstance(args[view[0]], torch.Tensor)}
        template = _OutputTemplate(leaves, spec, views)
        graph = _XLAC._xla_dynamo_end_trace(start, template.computed(leaves))
        if isinstance(graph, str) and _XLAC._xla_dynamo_abandon_trace(start):
            # The trace ran part of itself on a stand-in's zeros: its result is not this call's.
            return self._trace(args, tensors, entries, stand_ins=False)
        if isinstance(graph, str):
            # What the trace computed is the lazy result of this call.
            self._give_up(entries, tensors, graph, None)
            return result
        entries.insert(0, (graph, template))
        return template.assemble(graph(tensors, _config.join_lazy_graph), args)

    def _give_up(self, entries, tensors, reason, args):
        entries.append((_Lazy(reason), self._signature(tensors)))
        _XLAC._xla_counter_add('DynamoLazyGraph', 1)
        warnings.warn(f'torch.compile(backend="openxla"): this graph runs lazily on every call, '
                      f'traced again each time, because {reason}')
        return self._run_lazily(args) if args is not None else None


class _OutputTemplate:
    """The FX graph's output structure with its tensors left out, filled in per run: the captured
    graph's outputs, and `views` (_transposed_inputs) made from the run's arguments."""

    def __init__(self, leaves, spec, views):
        self._tensor_slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor) and i not in views]
        self._leaves = [None if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        self._views = list(views.items())
        self._spec = spec
        # The common shapes (a tuple or list of leaves) are rebuilt without pytree.
        self._flat_type = spec.type if spec.type in (tuple, list) and all(
            c.num_leaves == 1 and c.type is None for c in spec.children_specs) else None

    def computed(self, leaves):
        """The leaves the captured graph computes, in the order assemble takes them."""
        return [leaves[slot] for slot in self._tensor_slots]

    def assemble(self, tensors, args):
        if len(self._tensor_slots) == len(self._leaves):
            leaves = tensors
        else:
            leaves = list(self._leaves)
            for slot, t in zip(self._tensor_slots, tensors):
                leaves[slot] = t
            for slot, (arg, op, rest) in self._views:
                leaves[slot] = op(args[arg], *rest)
        if self._flat_type is not None:
            return self._flat_type(leaves)
        return pytree.tree_unflatten(leaves, self._spec)
