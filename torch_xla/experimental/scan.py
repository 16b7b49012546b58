"""`scan(fn, init, xs)`: apply `fn` over the leading dimension of `xs` while carrying state, as
PyTorch/XLA's `torch_xla.experimental.scan` (and `jax.lax.scan`) do.

Here the iterations are traced one after another into the lazy graph: the values and gradients
are exactly those of the Python loop, but the graph, and its compile time, grow with the number
of iterations. PyTorch/XLA compiles `fn` once into an XLA while loop; that loop form (a graph of
constant size) is not built yet, so `partition_fn` (what the loop saves for the backward) has
nothing to choose and is accepted unused, and no traced computation is cached
(`_SCAN_COMPUTATION_CACHE` stays empty)."""
from typing import Callable, Optional, Sequence, TypeVar
from weakref import WeakKeyDictionary

import torch
from torch.utils._pytree import PyTree, tree_flatten, tree_iter, tree_map, tree_unflatten

Carry = TypeVar('Carry')
X = TypeVar('X')
Y = TypeVar('Y')

# PyTorch/XLA's cache of traced `fn`s (by function, then input signature). Iterations are traced
# anew here, so it stays empty.
_SCAN_COMPUTATION_CACHE = WeakKeyDictionary()


def _length(xs) -> int:
    length = None
    for leaf in tree_iter(xs):
        if length is None:
            length = len(leaf)
        elif len(leaf) != length:
            raise ValueError(f'The leaves of the `xs` input PyTree must have the same leading dimension size. '
                             f'Got {length} and {len(leaf)}')
    if length is None:
        raise ValueError(f'`xs` {xs} is an empty PyTree.')
    return length


def _stack(*ys):
    if not ys or ys[0] is None:
        if any(y is not None for y in ys):
            raise ValueError('`fn` returned None for an output in some iterations and a tensor in others')
        return None
    return torch.stack(ys)


def scan(fn: Callable, init: Carry, xs: X, partition_fn=None, is_fn_pure: bool = False):
    """(carry, ys): `carry` as the last call of fn(carry, x) returned it, for x each slice of
    `xs` along its leading dimension (a PyTree of tensors: every leaf sliced alike), and `ys`
    the calls' outputs stacked along a new leading dimension (Nones stay None)."""
    if not callable(fn):
        raise ValueError(f'`fn` {fn} must be callable.')
    length = _length(xs)
    carry, ys = init, []
    for i in range(length):
        carry, y = fn(carry, tree_map(lambda x: x[i], xs))
        ys.append(y)
    if not ys:
        return carry, None
    return carry, tree_map(_stack, *ys, is_leaf=lambda v: v is None)


def value_and_grad_partitioned(fn, init, xs, partition_fn=None, is_fn_pure: bool = False):
    raise NotImplementedError('torch_xla.experimental.scan.value_and_grad_partitioned traces `fn` with AOTAutograd '
                              'into a compiled loop body, which this build does not do yet: scan traces each '
                              'iteration into the graph instead')


def tree_flatten_none(pytree: PyTree):
    """(leaves, unflatten): the tree's leaves without its Nones, and the function that rebuilds
    the tree, Nones in place, from such leaves."""
    flat, spec = tree_flatten(pytree)
    nones = [i for i, v in enumerate(flat) if v is None]
    kept = [v for v in flat if v is not None]

    def unflatten(leaves: Sequence[Optional[torch.Tensor]]):
        full = list(leaves)
        for i in nones:
            full.insert(i, None)
        return tree_unflatten(full, spec)

    return kept, unflatten
