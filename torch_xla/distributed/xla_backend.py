"""The 'xla' torch.distributed backend: `dist.init_process_group('xla', init_method='xla://')`.

Its collectives take xla tensors (DistributedDataParallel's gradient buckets among them): the
values go to the host, travel through a Gloo process group built on the same store, and come
back as device data. 'xla://' rendezvous reads the launcher's MASTER_ADDR, MASTER_PORT, RANK
and WORLD_SIZE, as env:// does.
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, _create_work_from_future


def _done(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _call(collective, opts, *args):
    """The Gloo collective with the caller's options, or its defaults when none came."""
    return collective(*args, opts) if opts is not None else collective(*args)


def _through_host(tensors, collective):
    """Runs `collective` on host copies of `tensors`, then writes the results back in place."""
    host = [t.detach().cpu() for t in tensors]
    collective(host).wait()
    for t, h in zip(tensors, host):
        t.copy_(h.to(t.device))
    return tensors


class ProcessGroupXla(ProcessGroup):

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self):
        return 'xla'

    def allreduce(self, tensors, opts=None):
        return _done(_through_host(tensors, lambda host: _call(self._gloo.allreduce, opts, host)))

    def broadcast(self, tensors, opts=None):
        return _done(_through_host(tensors, lambda host: _call(self._gloo.broadcast, opts, host)))

    def allgather(self, output_tensors, input_tensors, opts=None):
        host_in = [t.detach().cpu() for t in input_tensors]
        host_out = [[t.detach().cpu() for t in outs] for outs in output_tensors]
        _call(self._gloo.allgather, opts, host_out, host_in).wait()
        for outs, hosts in zip(output_tensors, host_out):
            for t, h in zip(outs, hosts):
                t.copy_(h.to(t.device))
        return _done(output_tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        # Gloo has no reduce-scatter: all-reduce every input, keep this rank's part.
        for out, ins in zip(output_tensors, input_tensors):
            host = [t.detach().cpu() for t in ins]
            for h in host:
                self._gloo.allreduce([h]).wait()
            out.copy_(host[self.rank()].to(out.device))
        return _done(output_tensors)

    def barrier(self, opts=None):
        _call(self._gloo.barrier, opts).wait()
        return _done([])


def _create_xla_process_group(store, rank, size, timeout):
    return ProcessGroupXla(store, rank, size, timeout)


def _xla_rendezvous_handler(url, timeout=timedelta(minutes=30), **kwargs):
    rank = int(os.environ.get('RANK', '0'))
    world_size = int(os.environ.get('WORLD_SIZE', '1'))
    return dist.rendezvous('env://', rank, world_size, timeout=timeout)


try:
    dist.Backend.register_backend('xla', _create_xla_process_group)
except (RuntimeError, ValueError, AttributeError):
    pass  # already registered (imported twice)
try:
    dist.register_rendezvous_handler('xla', _xla_rendezvous_handler)
except (RuntimeError, ValueError):
    pass
