"""Parameters that modules share stay shared when the model moves to an xla device.

`nn.Module._apply` (behind `.to()`, `.float()`, `.to_empty()`, ...) keeps a parameter's identity
only when it can swap the converted data into the old tensor (`param.data = new`). That
needs `torch._has_compatible_shallow_copy_type(old, new)`, which PyTorch grants only among
its dense backends (CPU, CUDA, ...). A CPU tensor moving to xla fails it, so `_apply` wraps the
converted data in a new `Parameter` once per module that holds it. A weight two modules hold
(a language model's token embedding tied to its output head: GPT-2, BERT, T5, Whisper) then
becomes two parameters. The head's gradient no longer reaches the embedding, and the optimizer
trains two copies. Nothing raises: the model silently trains a different model. PyTorch/XLA
has the same behaviour and asks its users to tie the weights again after the move
(TROUBLESHOOTING.md, "XLA Tensor Quirks"). On CPU or CUDA no user has to.

So the outermost `_apply` notes which module slots hold one parameter object. If a conversion
onto or off an xla device left those slots with different objects, it gives every slot the
object the first one got (with its converted gradient), which is what the `.data` path gives
on CUDA.
"""
import threading

import torch

_state = threading.local()


def _shared_parameter_slots(module):
    """(parameter, [(module, name), ...]) per parameter object that more than one slot holds."""
    slots = {}
    for m in module.modules():  # a submodule held twice is listed once
        for name, param in m._parameters.items():
            if param is not None:
                slots.setdefault(id(param), (param, []))[1].append((m, name))
    return [(param, group) for param, group in slots.values() if len(group) > 1]


def _retie(groups):
    """`groups` as they were before the conversion: slots of one parameter that a move onto or
    off xla left holding different ones get the first slot's."""
    for before, group in groups:
        first_module, first_name = group[0]
        kept = first_module._parameters[first_name]
        if kept is None or 'xla' not in (before.device.type, kept.device.type):
            continue
        for module, name in group[1:]:
            module._parameters[name] = kept


def install():
    original = torch.nn.Module._apply
    if getattr(original, '_txla_keeps_shared_parameters', False):
        return

    def _apply(self, fn, recurse=True):
        if getattr(_state, 'inside', False) or not recurse:
            return original(self, fn, recurse)
        groups = _shared_parameter_slots(self)
        if not groups:
            return original(self, fn, recurse)
        _state.inside = True
        try:
            result = original(self, fn, recurse)
        finally:
            _state.inside = False
        _retie(groups)
        return result

    _apply._txla_keeps_shared_parameters = True
    _apply.__doc__ = original.__doc__
    torch.nn.Module._apply = _apply
