"""Collectives between replicas.

On xla tensors a collective is an op of the graph (`txla::all_reduce`, `txla::all_gather`,
`txla::reduce_scatter`): recorded lazily like any other op, no barrier and no host round trip
here; the compiled graph runs it when execution reaches it, on a transport chosen per job:

- one replica (the default): every group has one member;
- the devices of this process (threaded `DataParallel`): replicas meet in memory;
- one replica per process (`xmp.spawn`, `torch_xla.launch`, several hosts): torch.distributed's
  Gloo, through process groups of their own. Every process creates them at the same point, and
  they are not the group host-side exchanges (`rendezvous`, `mesh_reduce`) use, so the two never
  interleave on one group.

Replica groups are lists of replica ids (global ordinals); None means one group of all replicas.
"""
import threading
from datetime import timedelta

import torch
import torch.distributed as dist

import torch_xla
from torch_xla._internal import config

REDUCE_SUM, REDUCE_MUL, REDUCE_MIN, REDUCE_MAX = 'sum', 'mul', 'min', 'max'
_KINDS = {REDUCE_SUM: 0, REDUCE_MUL: 1, REDUCE_MIN: 2, REDUCE_MAX: 3}  # runtime::ReduceKind

# Threaded data parallelism: each replica thread knows its device and its peers.
_replication = threading.local()


class Replication:
    """The devices of this process replicating one computation, one thread each."""

    def __init__(self, devices):
        self.devices = [torch.device(d) for d in devices]
        self._barrier = threading.Barrier(len(self.devices))
        self._slots = [None] * len(self.devices)

    def exchange(self, index, obj):
        """Every replica's `obj`, in replica order (a host-side meeting of the threads)."""
        self._slots[index] = obj
        self._barrier.wait()
        out = list(self._slots)
        self._barrier.wait()  # everyone has read before the slots are reused
        return out

    def abort(self):
        self._barrier.abort()


def set_replication(device, devices):
    """Makes the calling thread the replica of `device` among `devices` (None: no replication)."""
    if device is None:
        _replication.state = None
        return
    state = devices if isinstance(devices, Replication) else Replication(devices)
    _replication.state = state
    _replication.index = state.devices.index(torch.device(device))


def replication():
    """(Replication, index) of the calling thread, or (None, None)."""
    state = getattr(_replication, 'state', None)
    return (state, _replication.index) if state is not None else (None, None)


def world_size():
    return config.WORLD_SIZE.get()


def replica_count():
    state, _ = replication()
    return len(state.devices) if state is not None else world_size()


def replica_index():
    state, index = replication()
    return index if state is not None else config.RANK.get()


def collective_timeout():
    """How long a collective waits for the other replicas before failing (a replica that died or
    a host cut off): TXLA_COLLECTIVE_TIMEOUT_S seconds, 30 minutes by default as in torch."""
    return timedelta(seconds=config.TXLA_COLLECTIVE_TIMEOUT_S.get())


def ensure_process_group():
    """The Gloo group of this job, joined on first use from the usual environment variables
    (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE)."""
    if not dist.is_initialized():
        dist.init_process_group('gloo', init_method='env://', rank=config.RANK.get(),
                                world_size=world_size(), timeout=collective_timeout())
    return dist.group.WORLD


_graph_transport = {'world': None, 'groups': set()}


def _ensure_transport(groups):
    """The process-group transport of a multi-process job, and `groups` registered with it."""
    if replication()[0] is not None or world_size() == 1:
        return  # in-process replicas (set by DataParallel) or a single replica
    if _graph_transport['world'] is None:
        ensure_process_group()
        world = dist.new_group(ranks=list(range(world_size())), backend='gloo', timeout=collective_timeout())
        torch_xla._XLAC._xla_use_process_group_transport(world)
        _graph_transport['world'] = world
    key = tuple(tuple(g) for g in groups or ())
    if groups and key not in _graph_transport['groups']:
        rank = dist.get_rank()
        # Every process creates every group, in the same order (torch.distributed requires it).
        for g in key:
            pg = dist.new_group(ranks=sorted(g), backend='gloo', timeout=collective_timeout())
            if rank in g:
                torch_xla._XLAC._xla_add_process_group(list(g), pg)
        _graph_transport['groups'].add(key)


def _flat_groups(groups, explicit, replicas=None, caller_in_one=True):
    """(flat members, group size) for the ops; checked against the replicas there are (`replicas`:
    the world of the process group the caller speaks for) and, with `caller_in_one`, for the
    calling replica being in exactly one group."""
    count = replica_count() if replicas is None else replicas
    if not groups:
        if not explicit:
            return [], 0
        groups = [list(range(count))]
    groups = [[int(r) for r in g] for g in groups]
    size = len(groups[0])
    if size == 0 or any(len(g) != size for g in groups):
        raise ValueError(f'replica groups must be non-empty and of one size: {groups}')
    members = [r for g in groups for r in g]
    bad = [r for r in members if not 0 <= r < count]
    if bad:
        raise ValueError(f'replica groups {groups} name replicas {bad}; there are {count} replicas')
    me = replica_index()
    if caller_in_one and sum(me in g for g in groups) != 1:
        raise ValueError(f'replica {me} must be in exactly one of the replica groups {groups}')
    return members, size


# Per device: one element of the last collective traced there. The next collective takes it as
# its token, so a graph runs its collectives in the order they were traced on every replica. A
# barrier forgets them: each step's graph then starts its chain afresh and stays the same graph.
_tokens = {}


def _graph_collective(op, t, *args):
    """op(t, *args, token) with the device's ordering token; its result gives the next token."""
    device = str(t.device)
    result = op(t.detach(), *args, _tokens.get(device))
    if result.numel() > 0:
        _tokens[device] = result.detach().reshape(-1)[:1]
    return result


def forget_tokens(devices):
    for d in devices:
        _tokens.pop(str(torch.device(d)), None)


def _check_xla(name, tensors):
    for t in tensors:
        if not isinstance(t, torch.Tensor) or t.device.type != 'xla':
            where = t.device if isinstance(t, torch.Tensor) else type(t).__name__
            raise TypeError(f'xm.{name} takes xla tensors; got one on {where}')


def _kind(reduce_type):
    if reduce_type not in _KINDS:
        raise ValueError(f'reduce_type must be one of {sorted(_KINDS)}, not {reduce_type!r}')
    return _KINDS[reduce_type]


def _scaled(t, scale):
    if scale == 1.0:
        return t
    return t * scale if t.is_floating_point() else (t * scale).to(t.dtype)


def all_reduce(reduce_type, inputs, scale=1.0, groups=None, replicas=None):
    kind = _kind(reduce_type)
    single = isinstance(inputs, torch.Tensor)
    tensors = [inputs] if single else list(inputs)
    _check_xla('all_reduce', tensors)
    flat, size = _flat_groups(groups, explicit=False, replicas=replicas)
    _ensure_transport(groups)
    if single:
        return _scaled(_graph_collective(torch.ops.txla.all_reduce, inputs, kind, flat, size), scale)
    # A list travels as one collective per dtype and device (as XLA's tuple all-reduce does): one
    # transport round trip for all of a model's gradients instead of one per tensor.
    buckets = {}
    for i, t in enumerate(tensors):
        buckets.setdefault((t.dtype, str(t.device)), []).append(i)
    with torch.no_grad():
        for members in buckets.values():
            parts = [tensors[i].detach() for i in members]
            joined = torch.cat([p.reshape(-1) for p in parts])
            reduced = _scaled(_graph_collective(torch.ops.txla.all_reduce, joined, kind, flat, size), scale)
            for t, r in zip(parts, torch.split(reduced, [p.numel() for p in parts])):
                t.copy_(r.view(t.shape))
    return inputs


def all_gather(value, dim=0, groups=None, replicas=None):
    _check_xla('all_gather', [value])
    flat, size = _flat_groups(groups, explicit=True, replicas=replicas)
    _ensure_transport(groups)
    return _graph_collective(torch.ops.txla.all_gather, value, dim, flat, size)


def reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count, groups=None, replicas=None):
    """All-reduce, then each replica keeps its shard of `scatter_dim` (shard_count shards)."""
    kind = _kind(reduce_type)
    _check_xla('reduce_scatter', [input])
    flat, size = _flat_groups(groups, explicit=True, replicas=replicas)
    if shard_count != size:
        raise ValueError(f'shard_count ({shard_count}) must equal the replica group size ({size})')
    _ensure_transport(groups)
    return _scaled(_graph_collective(torch.ops.txla.reduce_scatter, input, kind, scatter_dim, flat, size), scale)


def all_to_all(value, split_dimension, concat_dimension, split_count, groups=None, replicas=None):
    """Each of the `split_count` replicas of a group sends the i-th piece of `value` (split along
    `split_dimension`) to its i-th member, and concatenates what it receives along
    `concat_dimension` in group order (XLA's all-to-all). Here it runs as an all-gather of the
    whole values, each replica keeping the pieces addressed to it: the result is exact, but every
    replica receives split_count times what an all-to-all would send it."""
    _check_xla('all_to_all', [value])
    flat, size = _flat_groups(groups, explicit=True, replicas=replicas)
    if split_count != size:
        raise ValueError(f'split_count ({split_count}) must equal the replica group size ({size})')
    if value.shape[split_dimension] % split_count:
        raise ValueError(f'all_to_all: dimension {split_dimension} (size {value.shape[split_dimension]}) does not '
                         f'split into {split_count} pieces')
    me = replica_index()
    group = next(flat[k:k + size] for k in range(0, len(flat), size) if me in flat[k:k + size])
    position = group.index(me)
    _ensure_transport(groups)
    everyone = _graph_collective(torch.ops.txla.all_gather, value.unsqueeze(0), 0, flat, size)
    pieces = [everyone[j].chunk(split_count, dim=split_dimension)[position] for j in range(size)]
    return torch.cat(pieces, dim=concat_dimension)


def _spmd_groups(groups):
    """(flat members, group size) of groups of SPMD device ids (a manual region's collectives:
    every device runs them, so no caller is checked)."""
    return _flat_groups(groups, explicit=True, replicas=torch_xla._XLAC._xla_spmd_device_count(),
                        caller_in_one=False)


def _require_manual(name, t):
    _check_xla(name, [t])
    if torch_xla._XLAC._get_xla_sharding_spec(t) != '{manual}':
        raise ValueError(f'{name} runs inside a manual-sharding region: give it a value of the region '
                         '(enable_manual_sharding), not one the partitioner lays out')


def spmd_all_reduce(reduce_type, input, scale, groups):
    """All-reduce among SPMD devices (groups of device ids) of each device's piece, inside a
    manual-sharding region (torch_xla._XLAC._xla_spmd_all_reduce)."""
    kind = _kind(reduce_type)
    _require_manual('_xla_spmd_all_reduce', input)
    flat, size = _spmd_groups(groups)
    return _scaled(torch.ops.txla.all_reduce(input, kind, flat, size, None), scale)


def spmd_reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count, groups):
    """Reduce-scatter among SPMD devices inside a manual-sharding region: each device keeps its
    group position's shard of `scatter_dim` (torch_xla._XLAC._xla_spmd_reduce_scatter)."""
    kind = _kind(reduce_type)
    _require_manual('_xla_spmd_reduce_scatter', input)
    flat, size = _spmd_groups(groups)
    if shard_count != size:
        raise ValueError(f'shard_count ({shard_count}) must equal the replica group size ({size})')
    scatter_dim = scatter_dim % input.dim() if input.dim() else scatter_dim
    return _scaled(torch.ops.txla.reduce_scatter(input, kind, scatter_dim, flat, size, None), scale)


def broadcast(tensors, src=0, groups=None, replicas=None, me=None):
    """Every replica takes replica `src`'s values (an all-reduce of them and zeros elsewhere);
    `me`: the caller's replica id (replica_index() by default)."""
    mine = (replica_index() if me is None else me) == src
    contributions = [t.detach() if mine else torch.zeros_like(t) for t in tensors]
    all_reduce(REDUCE_SUM, contributions, groups=groups, replicas=replicas)
    with torch.no_grad():
        for t, r in zip(tensors, contributions):
            t.copy_(r)


def gather_objects(obj):
    """Every replica's `obj`, in replica order (host side)."""
    state, index = replication()
    if state is not None:
        return state.exchange(index, obj)
    if world_size() == 1:
        return [obj]
    ensure_process_group()
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out
