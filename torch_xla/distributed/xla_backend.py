"""The 'xla' torch.distributed backend: `dist.init_process_group('xla', init_method='xla://')`.

Its collectives on xla tensors (DistributedDataParallel's gradient buckets among them) are the
graph collectives of torch_xla.core.collectives: recorded lazily into the step's graph and run
inside it, so DDP's all-reduces cost no barrier and no host round trip. Host tensors (what
`all_gather_object` and friends send) go through a Gloo group on the same store. 'xla://'
rendezvous reads the launcher's RANK and WORLD_SIZE and MASTER_ADDR / MASTER_PORT (localhost and
12355 when unset, as PyTorch/XLA's), so a single process needs no launcher.

A group of some of the ranks (`dist.new_group(ranks)`) runs its collectives over replica groups
that tile the world, as XLA's collectives need every replica in some group: the ranks alone and
every other rank alone, the whole world, or with `pg_options={'xla_pg_options': {'spmd': True}}`
the rectangular mesh the ranks are a row or column of (`{'mesh': [[...], ...]}` gives it).
"""
import logging
import threading
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, _create_work_from_future

import torch_xla
import torch_xla.runtime as xr
from torch_xla._internal import config
from torch_xla.core import collectives as _collectives

_REDUCE_TYPES = {
    dist.ReduceOp.SUM: _collectives.REDUCE_SUM,
    dist.ReduceOp.PRODUCT: _collectives.REDUCE_MUL,
    dist.ReduceOp.MIN: _collectives.REDUCE_MIN,
    dist.ReduceOp.MAX: _collectives.REDUCE_MAX,
}
_DEFAULT_PORT = 12355


def _done(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _on_host(tensors):
    return any(t.device.type != 'xla' for t in tensors)


def _reduce_type(opts):
    op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
    for key, name in _REDUCE_TYPES.items():
        if op == key:
            return name
    if op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        raise NotImplementedError(f"the 'xla' backend does not support reduce op {op}")
    raise ValueError(f'invalid reduce op {op}')


class ProcessGroupXla(ProcessGroup):
    """A process group whose collectives on xla tensors are graph collectives among its ranks
    (`_mesh`: the replica groups they run over; empty: the whole world)."""

    def __init__(self, prefix_store, rank, size, timeout):
        super().__init__(rank, size)
        self.prefix_store = prefix_store
        self.timeout = timeout
        self._mesh = []
        self._gloo_group = None
        self._gloo_lock = threading.Lock()

    def getBackendName(self):
        return 'xla'

    # A ProcessGroup written in Python has no C++ backends to keep its name (torch 2.x keeps group
    # names there); functional collectives and _resolve_process_group look groups up by it.
    def _set_group_name(self, name):
        self._group_name = name

    @property
    def group_name(self):
        return self._group_name

    def _gloo(self):
        with self._gloo_lock:
            if self._gloo_group is None:
                if self.prefix_store is None:
                    raise RuntimeError("this 'xla' process group has no store: it moves xla tensors only")
                self._gloo_group = dist.ProcessGroupGloo(self.prefix_store, self.rank(), self.size(),
                                                         self.timeout)
            return self._gloo_group

    def _host(self, name, opts, *args):
        collective = getattr(self._gloo(), name)
        return collective(*args, opts) if opts is not None else collective(*args)

    def _scope(self):
        """The replica groups this group's collectives run over, checked against the world's replicas."""
        world = dist.group.WORLD.size() if isinstance(dist.group.WORLD, ProcessGroupXla) else self.size()
        return {'groups': self._mesh or None, 'replicas': world}

    def _group_size(self):
        return len(self._mesh[0]) if self._mesh else self.size()

    def allreduce(self, tensors, opts=None):
        if _on_host(tensors):
            return self._host('allreduce', opts, tensors)
        _collectives.all_reduce(_reduce_type(opts), tensors, **self._scope())
        return _done(tensors)

    def allreduce_coalesced(self, *args):
        raise NotImplementedError("the 'xla' backend has no allreduce_coalesced: all_reduce a list instead")

    def broadcast(self, tensors, opts=None):
        if _on_host(tensors):
            return self._host('broadcast', opts, tensors)
        root = opts.rootRank if opts is not None else 0  # the group's rank
        src = dist.get_global_rank(self, root) if self is not dist.group.WORLD else root
        _collectives.broadcast(tensors, src=src, me=xr.global_ordinal(), **self._scope())
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        if _on_host(input_tensors):
            return self._host('allgather', opts, output_tensors, input_tensors)
        for outs, t in zip(output_tensors, input_tensors):
            gathered = _collectives.all_gather(t.reshape((1, ) + tuple(t.shape)), dim=0, **self._scope())
            with torch.no_grad():
                for r, out in enumerate(outs):
                    out.copy_(gathered[r])
        return _done([t for outs in output_tensors for t in outs])

    def allgather_coalesced(self, output_tensors, input_tensors, opts=None):
        return self.allgather(output_tensors, input_tensors, opts)

    def _allgather_base(self, output, input, opts=None):
        if _on_host([output, input]):
            return self._host('_allgather_base', opts, output, input)
        t = input.reshape(1) if input.dim() == 0 else input
        gathered = _collectives.all_gather(t, dim=0, **self._scope())
        if gathered.shape != output.shape:
            stacked = gathered.reshape((-1, ) + tuple(t.shape))
            if stacked.shape != output.shape:
                raise ValueError(f'all_gather_into_tensor: input {tuple(input.shape)} and output '
                                 f'{tuple(output.shape)} are neither stacked nor concatenated')
            gathered = stacked
        with torch.no_grad():
            output.copy_(gathered)
        return _done([output])

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        reduce_type = _reduce_type(opts)
        for out, ins in zip(output_tensors, input_tensors):
            if _on_host([out] + list(ins)):
                raise RuntimeError("the 'xla' backend reduce-scatters xla tensors only")
            for i, t in enumerate(ins[1:]):
                if t.shape != ins[0].shape:
                    raise ValueError(f"input {i + 1}'s shape is different from input 0: {t.shape} vs {ins[0].shape}")
            shard = _collectives.reduce_scatter(reduce_type, torch.cat(list(ins)), 1.0, 0, len(ins), **self._scope())
            with torch.no_grad():
                out.copy_(shard.reshape(out.shape))
        return _done(output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):
        count = self._group_size()
        shard = _collectives.reduce_scatter(_reduce_type(opts), input, 1.0, 0, count, **self._scope())
        with torch.no_grad():
            output.copy_(shard.reshape(output.shape))
        return _done(output)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        """dist.all_to_all: input i goes to rank i; output j comes from rank j."""
        count = len(input_tensors)
        stacked = torch.stack([t.detach() for t in input_tensors])
        result = _collectives.all_to_all(stacked, 0, 0, count, **self._scope())
        with torch.no_grad():
            for out, piece in zip(output_tensors, result.chunk(count)):
                out.copy_(piece.squeeze(0))
        return _done(output_tensors)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        """dist.all_to_all_single with equal splits along dimension 0."""
        if output_split_sizes or input_split_sizes:
            raise NotImplementedError("the 'xla' backend's all_to_all_single takes equal splits only")
        count = self._group_size()
        result = _collectives.all_to_all(input.detach(), 0, 0, count, **self._scope())
        with torch.no_grad():
            output.copy_(result)
        return _done(output)

    def barrier(self, opts=None):
        if self.prefix_store is not None and self.size() > 1:
            self._host('barrier', opts).wait()
        return _done([])

    def recv_anysource(self, *args):
        raise NotImplementedError("the 'xla' backend has no recv_anysource")

    def monitored_barrier(self, *args):
        raise NotImplementedError("the 'xla' backend has no monitored_barrier")

    def Options(self, *args):
        raise NotImplementedError("the 'xla' backend has no Options")


def _refuse_under_spmd():
    # Under SPMD one process drives every device and the compiler places the collectives.
    assert not xr.is_spmd(), ("the 'xla' process-group backend is not supported with SPMD: the "
                              "compiler partitions the program and inserts its collectives")


def _create_xla_process_group(prefix_store, rank, size, timeout):
    _refuse_under_spmd()
    return ProcessGroupXla(prefix_store, rank, size, timeout)


_store = None
_store_lock = threading.Lock()


def _xla_rendezvous_handler(url, timeout=timedelta(minutes=30), **kwargs):
    _refuse_under_spmd()
    global _store
    rank, world = config.RANK.get(), config.WORLD_SIZE.get()
    with _store_lock:
        if _store is None:
            port = config.MASTER_PORT.get()
            _store = dist.TCPStore(config.MASTER_ADDR.get(), _DEFAULT_PORT if port is None else port, world,
                                   is_master=rank == 0, timeout=timeout)
    yield (_store, rank, world)


# -------------------------------------------------------------------------------------------
# dist.new_group: the replica groups a group of some ranks runs its collectives over.
# -------------------------------------------------------------------------------------------
_original_new_group = dist.new_group


def _infer_mesh(ranks, world):
    """The rectangular mesh of `world` ranks that `ranks` (evenly spaced) is a row or a column of:
    [1, 5, 9] of 12 is a column of [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]."""
    n = len(ranks)
    if world % n != 0:
        raise ValueError(f"a slice of {n} ranks is not a side of a rectangle of {world} ranks")
    start, step = ranks[0], ranks[1] - ranks[0]
    if ranks != list(range(start, start + step * n, step)):
        raise ValueError(f'the ranks {ranks} are not evenly spaced')
    slices = world // n
    if step == 1:  # a row
        if start % n != 0 or start >= world:
            raise ValueError(f'the row {ranks} does not start a row of {n} among {world} ranks')
        mesh = [list(range(i * n, (i + 1) * n)) for i in range(slices)]
    else:  # a column
        if start >= slices or step != slices:
            raise ValueError(f'the column {ranks} is not a column of {slices} rows among {world} ranks')
        mesh = [list(range(i, i + n * step, step)) for i in range(slices)]
    assert ranks in mesh
    return mesh


def new_xla_process_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    options = pg_options.get('xla_pg_options', {}) if isinstance(pg_options, dict) else {}
    if timeout is not None:
        kwargs['timeout'] = timeout
    pg = _original_new_group(ranks=ranks, backend=backend, pg_options=pg_options, **kwargs)
    if isinstance(pg, ProcessGroupXla) and ranks is not None:
        world = dist.group.WORLD
        if not isinstance(world, ProcessGroupXla):
            raise RuntimeError("the 'xla' backend needs the default process group to be an 'xla' one")
        ranks = list(ranks)
        if ranks == list(range(world.size())):
            pg._mesh = [ranks]
        elif len(ranks) == 1:
            if ranks[0] not in range(world.size()):
                raise ValueError(f'rank {ranks[0]} is out of range: the world has {world.size()} ranks')
            pg._mesh = [[r] for r in range(world.size())]
        elif options.get('mesh') is not None:
            pg._mesh = options['mesh']
        elif options.get('spmd', False):
            pg._mesh = _infer_mesh(ranks, world.size())
        else:
            pg._mesh = [ranks]
    return pg


dist.new_group = new_xla_process_group

try:
    dist.Backend.register_backend('xla', _create_xla_process_group, devices='xla')
except (RuntimeError, ValueError, AttributeError):
    pass  # already registered (imported twice)
try:
    dist.register_rendezvous_handler('xla', _xla_rendezvous_handler)
except (RuntimeError, ValueError):
    pass
