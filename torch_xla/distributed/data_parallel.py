"""Threaded data parallelism (PyTorch/XLA's `torch_xla.distributed.data_parallel`).

`DataParallel(network, device_ids)` keeps one copy of the network per device of this process;
calling it with `(loop_fn, loader)` runs `loop_fn(model, device_loader, device, context)` in one
thread per device, each on its own share of the loader's batches (its `ParallelLoader`'s
per-device loader, which yields the batches). As in PyTorch/XLA 2.9, `device_ids=[]` hands the loop
`enumerate(loader)` instead: `(step, batch)` pairs. Inside, `xm.optimizer_step(optimizer)` all-reduces the gradients
across the devices: the replicas meet in memory inside their compiled graphs. `device_ids=[]`
runs the network on plain CPU PyTorch in the calling thread.
"""
import copy
import threading

import torch

import torch_xla
import torch_xla.core.xla_model as xm
from torch_xla.core import collectives as _collectives
from torch_xla.distributed import parallel_loader as pl


class Context:
    """Per-device state that lives across calls (an optimizer, a tracker)."""

    def __init__(self, device):
        self.device = device

    def getattr_or(self, name, defval):
        value = getattr(self, name, None)
        if value is None:
            value = defval() if callable(defval) else defval
            setattr(self, name, value)
        return value


class DataParallel:

    def __init__(self, network, device_ids=None):
        if device_ids is None:
            device_ids = xm.get_xla_supported_devices()
        self._device_ids = [str(d) for d in device_ids]
        module = network if isinstance(network, torch.nn.Module) else network()
        self._native_run = not self._device_ids
        if self._native_run:  # no xla devices: the network as it is, on CPU
            self._models = [module]
            self._contexts = [Context(torch.device('cpu'))]
            return
        for d in self._device_ids:
            if torch.device(d).type != 'xla':
                raise ValueError(f'DataParallel device_ids must be xla devices, got {d!r}')
        self._models = [copy.deepcopy(module).to(torch.device(d)) for d in self._device_ids]
        self._contexts = [Context(torch.device(d)) for d in self._device_ids]

    @property
    def models(self):
        return self._models

    def __call__(self, loop_fn, loader, fixed_batch_size=False, batchdim=0):
        """Runs `loop_fn` on every device's share of `loader`; returns their results in device
        order. An exception in any replica ends all of them and is raised here."""
        if self._native_run:
            return [loop_fn(self._models[0], enumerate(loader), torch.device('cpu'), self._contexts[0])]
        if _collectives.world_size() > 1:
            raise NotImplementedError(
                'DataParallel threads inside a multi-process job (WORLD_SIZE > 1) are not supported: '
                'replicate with processes (xmp.spawn) or with threads, not both')
        xm.wait_device_ops()
        replication = _collectives.Replication(self._device_ids)
        torch_xla._XLAC._xla_use_in_process_transport(self._device_ids)
        para_loader = pl.ParallelLoader(loader, self._device_ids, batchdim=batchdim)
        results = [None] * len(self._device_ids)
        errors = []

        def run(index):
            device = self._device_ids[index]
            try:
                xm.set_replication(device, replication)
                results[index] = loop_fn(self._models[index], para_loader.per_device_loader(device),
                                         torch.device(device), self._contexts[index])
                xm.wait_device_ops([device])
            except BaseException as e:  # noqa: B902  re-raised by the caller
                errors.append(e)
                # The other replicas may be waiting for this one in a collective or a rendezvous.
                replication.abort()
                torch_xla._XLAC._xla_abort_collectives(f'replica {index} ({device}) failed: {e}')
            finally:
                xm.set_replication(None, None)

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(self._device_ids))]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            para_loader.close()
            torch_xla._XLAC._xla_reset_collective_transport()
        if errors:
            # The first failure: a replica records its error before aborting the others, so the
            # errors the abort causes come after it.
            raise errors[0]
        return results
