"""`assume_pure(fn)` / `assume_pure_torch(fn)`: a function promised pure (its outputs depend only
on its tensor arguments, and it changes nothing) is traced once per input signature and replayed
afterwards without running its Python again, as PyTorch/XLA's torch_xla.experimental.assume_pure
does. The replay is the torch.compile bridge's captured graph (torch_xla.core.dynamo_bridge):
the same ops over the new arguments, joined to the caller's lazy graph or run at once.

A call that needs gradients (grad mode on and an argument requiring grad) runs `fn` as is, so
autograd records it: the captured graph has no backward here."""
import functools
import threading
from weakref import WeakKeyDictionary

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from torch_xla.core.dynamo_bridge import CompiledGraph

# fn -> {argument structure: CompiledGraph}: what use_cache=True keeps across decorations.
_XLA_COMPUTATION_CACHE = WeakKeyDictionary()
_tracing = threading.local()


def _needs_grad(leaves):
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in leaves)


def assume_pure_torch(fn=None, *, use_cache: bool = False):
    """`fn` traced once per argument structure and input signature, then replayed. With
    `use_cache` the traces are kept per function across decorations (a loop that decorates the
    same function anew each step still traces once)."""
    if fn is None:
        return functools.partial(assume_pure_torch, use_cache=use_cache)
    graphs = _XLA_COMPUTATION_CACHE.setdefault(fn, {}) if use_cache else {}

    @functools.wraps(fn)
    def pure(*args, **kwargs):
        leaves, spec = tree_flatten((args, kwargs))
        if getattr(_tracing, 'active', False) or _needs_grad(leaves):
            return fn(*args, **kwargs)  # inside another pure function's trace, or for autograd
        graph = graphs.get(spec)
        if graph is None:

            def flat(*flat_leaves):
                call_args, call_kwargs = tree_unflatten(list(flat_leaves), spec)
                _tracing.active = True
                try:
                    return fn(*call_args, **call_kwargs)
                finally:
                    _tracing.active = False

            graph = graphs[spec] = CompiledGraph(flat)
        return graph(*leaves)

    return pure


assume_pure = assume_pure_torch
