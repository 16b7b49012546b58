"""The 'xla' torch.distributed backend: `dist.init_process_group('xla', init_method='xla://')`.

Its collectives on xla tensors (DistributedDataParallel's gradient buckets among them) are the
graph collectives of torch_xla.core.collectives: recorded lazily into the step's graph and run
inside it, so DDP's all-reduces cost no barrier and no host round trip. Host tensors (what
`all_gather_object` and friends send) go through a Gloo group on the same store. 'xla://'
rendezvous reads the launcher's MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE, as env:// does.
"""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, _create_work_from_future

import torch_xla.runtime as xr
from torch_xla._internal import config
from torch_xla.core import collectives as _collectives

_REDUCE_TYPES = {
    dist.ReduceOp.SUM: _collectives.REDUCE_SUM,
    dist.ReduceOp.PRODUCT: _collectives.REDUCE_MUL,
    dist.ReduceOp.MIN: _collectives.REDUCE_MIN,
    dist.ReduceOp.MAX: _collectives.REDUCE_MAX,
}


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
    raise RuntimeError(f"the 'xla' backend does not support reduce op {op}")


class ProcessGroupXla(ProcessGroup):

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self):
        return 'xla'

    # A ProcessGroup written in Python has no C++ backends to keep its name (torch 2.x keeps group
    # names there); functional collectives and _resolve_process_group look groups up by it.
    def _set_group_name(self, name):
        self._group_name = name

    @property
    def group_name(self):
        return self._group_name

    def _host(self, name, opts, *args):
        collective = getattr(self._gloo, name)
        return collective(*args, opts) if opts is not None else collective(*args)

    def allreduce(self, tensors, opts=None):
        if _on_host(tensors):
            return self._host('allreduce', opts, tensors)
        _collectives.all_reduce(_reduce_type(opts), tensors)
        return _done(tensors)

    def broadcast(self, tensors, opts=None):
        if _on_host(tensors):
            return self._host('broadcast', opts, tensors)
        _collectives.broadcast(tensors, src=opts.rootRank if opts is not None else 0)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        if _on_host(input_tensors):
            return self._host('allgather', opts, output_tensors, input_tensors)
        for outs, t in zip(output_tensors, input_tensors):
            gathered = _collectives.all_gather(t.unsqueeze(0), dim=0)
            with torch.no_grad():
                for r, out in enumerate(outs):
                    out.copy_(gathered[r])
        return _done(output_tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        reduce_type = _reduce_type(opts)
        for out, ins in zip(output_tensors, input_tensors):
            if _on_host([out] + list(ins)):
                raise RuntimeError("the 'xla' backend reduce-scatters xla tensors only")
            shard = _collectives.reduce_scatter(reduce_type, torch.stack(list(ins)), 1.0, 0, len(ins))
            with torch.no_grad():
                out.copy_(shard[0])
        return _done(output_tensors)

    def barrier(self, opts=None):
        self._host('barrier', opts).wait()
        return _done([])


def _refuse_under_spmd():
    # Under SPMD one process drives every device and the compiler places the collectives.
    assert not xr.is_spmd(), ("the 'xla' process-group backend is not supported with SPMD: the "
                              "compiler partitions the program and inserts its collectives")


def _create_xla_process_group(store, rank, size, timeout):
    _refuse_under_spmd()
    return ProcessGroupXla(store, rank, size, timeout)


def _xla_rendezvous_handler(url, timeout=timedelta(minutes=30), **kwargs):
    _refuse_under_spmd()
    return dist.rendezvous('env://', config.RANK.get(), config.WORLD_SIZE.get(), timeout=timeout)


try:
    dist.Backend.register_backend('xla', _create_xla_process_group, devices='xla')
except (RuntimeError, ValueError, AttributeError):
    pass  # already registered (imported twice)
try:
    dist.register_rendezvous_handler('xla', _xla_rendezvous_handler)
except (RuntimeError, ValueError):
    pass
