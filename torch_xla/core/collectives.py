"""Collectives between replicas (one process per device), on torch.distributed's Gloo backend.

A collective is a barrier for its inputs: their pending graphs run, the values travel through
Gloo as host tensors, and the results come back as device data. In-place forms (a list of
tensors) update the tensors' values, as in PyTorch/XLA.
"""
import os

import torch
import torch.distributed as dist

REDUCE_SUM, REDUCE_MUL, REDUCE_MIN, REDUCE_MAX = 'sum', 'mul', 'min', 'max'
_OPS = {
    REDUCE_SUM: dist.ReduceOp.SUM,
    REDUCE_MUL: dist.ReduceOp.PRODUCT,
    REDUCE_MIN: dist.ReduceOp.MIN,
    REDUCE_MAX: dist.ReduceOp.MAX,
}


def world_size():
    return int(os.environ.get('WORLD_SIZE', '1'))


def ensure_process_group():
    """The Gloo group of this job, joined on first use from the usual environment variables
    (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE)."""
    if not dist.is_initialized():
        dist.init_process_group('gloo', init_method='env://', rank=int(os.environ.get('RANK', '0')),
                                world_size=world_size())
    return dist.group.WORLD


_GROUPS = {}  # replica groups -> this process's group, created once per job


def _group(groups):
    ensure_process_group()
    if not groups:
        return dist.group.WORLD
    key = tuple(tuple(sorted(g)) for g in groups)
    if key not in _GROUPS:
        rank = dist.get_rank()
        if sum(rank in g for g in key) != 1:
            raise ValueError(f'replica {rank} must be in exactly one of the groups {groups}')
        # Every process creates every group, in the same order (torch.distributed requires it).
        for g in key:
            pg = dist.new_group(ranks=list(g))
            if rank in g:
                _GROUPS[key] = pg
    return _GROUPS[key]


def _op(reduce_type):
    if reduce_type not in _OPS:
        raise ValueError(f'reduce_type must be one of {sorted(_OPS)}, not {reduce_type!r}')
    return _OPS[reduce_type]


def all_reduce(reduce_type, inputs, scale=1.0, groups=None):
    op = _op(reduce_type)
    single = isinstance(inputs, torch.Tensor)
    tensors = [inputs] if single else list(inputs)
    results = [t.detach().cpu() for t in tensors]
    if world_size() > 1 or groups:
        group = _group(groups)
        for h in results:
            dist.all_reduce(h, op=op, group=group)
    if scale != 1.0:
        results = [r * scale for r in results]
    device_results = [r.to(t.device) for r, t in zip(results, tensors)]
    if single:
        return device_results[0]
    for t, r in zip(tensors, device_results):
        t.data.copy_(r) if t.requires_grad else t.copy_(r)
    return inputs


def all_gather(value, dim=0, groups=None):
    if world_size() == 1 and not groups:
        return value.clone()
    group = _group(groups)
    host = value.detach().cpu().contiguous()
    parts = [torch.empty_like(host) for _ in range(dist.get_world_size(group))]
    dist.all_gather(parts, host, group=group)
    return torch.cat(parts, dim=dim).to(value.device)


def reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count, groups=None):
    """All-reduce, then each replica keeps its shard of `scatter_dim` (shard_count shards)."""
    group = _group(groups) if (world_size() > 1 or groups) else None
    size = dist.get_world_size(group) if group is not None else 1
    if shard_count != size:
        raise ValueError(f'shard_count ({shard_count}) must equal the number of replicas ({size})')
    reduced = all_reduce(reduce_type, input, scale=scale, groups=groups)
    rank = dist.get_rank(group) if size > 1 else 0
    return torch.chunk(reduced, shard_count, dim=scatter_dim)[rank].contiguous()


def broadcast(tensors, src=0):
    if world_size() == 1:
        return
    ensure_process_group()
    for t in tensors:
        host = t.detach().cpu()
        dist.broadcast(host, src=src)
        t.data.copy_(host.to(t.device))


def gather_objects(obj):
    """Every replica's `obj`, in rank order."""
    if world_size() == 1:
        return [obj]
    ensure_process_group()
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out
