"""torch.distributed._functional_collectives on xla tensors: graph collectives.

`funcol.all_reduce(t, 'sum', group)` and friends call `torch.ops._c10d_functional.*`, whose kernels
for the xla device are registered here, above functionalization (AutogradXLA), where they record
this project's graph collectives (torch_xla.core.collectives) as xm.all_reduce does: no barrier,
no host round trip, and traceable by dynamo (an FX graph that calls them replays them from its
captured graph). `wait_tensor` has nothing to wait for: a collective's result is a lazy value
like any other. Groups are torch.distributed groups over every process of the job; a subgroup or
all_to_all_single raises NotImplementedError naming what is missing.
"""
import torch
import torch.distributed as dist
from torch._subclasses.fake_tensor import is_fake

from torch_xla.core import collectives as _collectives

_REDUCE_OPS = {
    'sum': _collectives.REDUCE_SUM,
    'avg': _collectives.REDUCE_SUM,
    'product': _collectives.REDUCE_MUL,
    'min': _collectives.REDUCE_MIN,
    'max': _collectives.REDUCE_MAX,
}


def _reduce_type(reduce_op):
    op = str(reduce_op).lower()
    if op not in _REDUCE_OPS:
        raise NotImplementedError(f'functional collectives on xla tensors: reduce op {reduce_op!r} '
                                  f'(supported: {", ".join(_REDUCE_OPS)})')
    return _REDUCE_OPS[op]


def _group_size(group_name):
    """The number of processes in the group, which must be every process of the job."""
    pg = dist.distributed_c10d._resolve_process_group(group_name)
    ranks = dist.get_process_group_ranks(pg)
    world = _collectives.replica_count()
    if sorted(ranks) != list(range(world)):
        raise NotImplementedError(
            f'functional collectives on xla tensors over a subgroup (ranks {ranks} of {world}); '
            'use a group of every process, or xm.all_reduce(..., groups=[[...], ...])')
    return world


def _scale_for(reduce_op, size):
    return 1.0 / size if str(reduce_op).lower() == 'avg' else 1.0


def all_reduce(input, reduce_op, group_name):
    size = _group_size(group_name)
    return _collectives.all_reduce(_reduce_type(reduce_op), input, scale=_scale_for(reduce_op, size))


def all_reduce_(input, reduce_op, group_name):
    with torch.no_grad():
        input.copy_(all_reduce(input, reduce_op, group_name))
    return input


def all_gather_into_tensor(input, group_size, group_name):
    size = _group_size(group_name)
    if group_size != size:
        raise ValueError(f'all_gather_into_tensor: group_size {group_size}, but the group has {size}')
    return _collectives.all_gather(input, dim=0)


def reduce_scatter_tensor(input, reduce_op, group_size, group_name):
    size = _group_size(group_name)
    if group_size != size:
        raise ValueError(f'reduce_scatter_tensor: group_size {group_size}, but the group has {size}')
    if input.dim() == 0 or input.shape[0] % size:
        raise ValueError(f'reduce_scatter_tensor: dimension 0 of {tuple(input.shape)} does not '
                         f'split into {size} shards')
    return _collectives.reduce_scatter(_reduce_type(reduce_op), input, _scale_for(reduce_op, size),
                                       0, size, groups=[list(range(size))])


def broadcast(input, src, group_name):
    _group_size(group_name)
    mine = _collectives.replica_index() == src
    contribution = input.detach() if mine else torch.zeros_like(input)
    return _collectives.all_reduce(_collectives.REDUCE_SUM, contribution)


def all_reduce_coalesced(inputs, reduce_op, group_name):
    return [all_reduce(t, reduce_op, group_name) for t in inputs]


def all_gather_into_tensor_coalesced(inputs, group_size, group_name):
    return [all_gather_into_tensor(t, group_size, group_name) for t in inputs]


def reduce_scatter_tensor_coalesced(inputs, reduce_op, group_size, group_name):
    return [reduce_scatter_tensor(t, reduce_op, group_size, group_name) for t in inputs]


def wait_tensor(tensor):
    return tensor


def all_to_all_single(input, output_split_sizes, input_split_sizes, group_name):
    raise NotImplementedError('_c10d_functional.all_to_all_single on xla tensors')


_KERNELS = [all_reduce, all_reduce_, all_gather_into_tensor, reduce_scatter_tensor, broadcast,
            all_reduce_coalesced, all_gather_into_tensor_coalesced,
            reduce_scatter_tensor_coalesced, wait_tensor, all_to_all_single]


def _first_tensor(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
            return a[0]
    return None


def _kernel(op, fn):
    @torch._dynamo.disable  # runs eagerly (lazily) even when called from a frame dynamo compiles
    def kernel(*args):
        t = _first_tensor(args)
        # Fake xla tensors (dynamo and AOTAutograd propagating shapes) reach this key too: they
        # take torch's own shape kernels below autograd.
        if torch._C._meta_in_tls_dispatch_include() or (t is not None and is_fake(t)):
            with torch._C._AutoDispatchBelowAutograd():
                return op(*args)
        return fn(*args)
    return kernel


def _register():
    lib = torch.library.Library('_c10d_functional', 'IMPL')
    for fn in _KERNELS:
        packet = getattr(torch.ops._c10d_functional, fn.__name__, None)
        if packet is not None:
            lib.impl(fn.__name__, _kernel(packet.default, fn), 'AutogradXLA')
    return lib


_library = _register()
