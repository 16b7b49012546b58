"""Loaders that feed devices in the background (PyTorch/XLA's ParallelLoader and MpDeviceLoader).

A loader thread pulls batches from the host loader; a transfer thread per device moves them to
the device, a few batches ahead, while the current step traces and runs. Iterating a per-device
loader issues a barrier (xm.mark_step) every `batches_per_execution` batches, and one at the end.
"""
import queue
import threading
import time

import torch

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

_END = object()


class PerDeviceLoader:

    def __init__(self, loader, device):
        self._loader = loader
        self._device = device
        self._mark_step_batch_count = loader.batches_per_execution - 1
        self._batches_yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        return self.next()

    def __len__(self):
        return self._loader.per_device_samples()

    def next(self):
        item = self._loader.next_item(self._device)
        if item is _END:
            xm._mark_step()  # the last step's graph
            raise StopIteration
        # Asking for the next batch ends the step that used the previous ones.
        if self._mark_step_batch_count <= self._batches_yielded:
            self._batches_yielded = 0
            xm._mark_step()
        else:
            self._batches_yielded += 1
        return item


class ParallelLoader:
    """Wraps a host loader for `devices`; `per_device_loader(device)` iterates one device's share
    (batches go to the devices in turn)."""

    def __init__(self, cpu_loader, devices, batchdim=0, batches_per_execution=1,
                 loader_prefetch_size=8, device_prefetch_size=4, host_to_device_transfer_threads=1,
                 input_sharding=None):
        self._cpu_loader = cpu_loader
        self._devices = [torch.device(d) if isinstance(d, str) else d for d in devices]
        self._batchdim = batchdim
        # SPMD: each batch tensor it fits is laid out over the devices as this ShardingSpec says.
        self._input_sharding = input_sharding
        self.batches_per_execution = batches_per_execution
        self._done = False
        self._host_queues = {d: queue.Queue(maxsize=loader_prefetch_size) for d in self._devices}
        self._device_queues = {d: queue.Queue(maxsize=device_prefetch_size) for d in self._devices}
        # When each batch reached its device (seconds, time.monotonic), in order: shows overlap.
        self.transfer_times = []
        self._threads = [threading.Thread(target=self._load, daemon=True)]
        for d in self._devices:
            self._threads.append(threading.Thread(target=self._transfer, args=(d,), daemon=True))
        for t in self._threads:
            t.start()

    def per_device_samples(self):
        return len(self._cpu_loader) // len(self._devices)

    def per_device_loader(self, device):
        return PerDeviceLoader(self, torch.device(device) if isinstance(device, str) else device)

    def next_item(self, device):
        item = self._device_queues[device].get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self):
        self._done = True

    def _load(self):
        end = _END
        try:
            batches = iter(self._cpu_loader)
            while not self._done:
                # Each device gets a whole batch in turn; a short last round ends every device.
                round_ = []
                for _ in self._devices:
                    try:
                        round_.append(next(batches))
                    except StopIteration:
                        break
                if len(round_) < len(self._devices):
                    break
                for d, batch in zip(self._devices, round_):
                    self._host_queues[d].put(batch)
        except BaseException as e:  # the consumer raises it
            end = e
        for q in self._host_queues.values():
            q.put(end)

    def _transfer(self, device):
        while True:
            batch = self._host_queues[device].get()
            if batch is _END or isinstance(batch, BaseException):
                self._device_queues[device].put(batch)
                return
            try:
                sent = self._send(batch, device)
            except BaseException as e:  # raised where the batch is taken, not lost with this thread
                self._device_queues[device].put(e)
                return
            self._device_queues[device].put(sent)
            self.transfer_times.append(time.monotonic())

    def _send(self, batch, device):
        """The batch on `device`; under SPMD laid out by input_sharding: one ShardingSpec for
        every tensor it fits, or a dict of them by the batch dict's keys (None: replicated)."""
        sharding = self._input_sharding
        if isinstance(sharding, dict):
            if not isinstance(batch, dict):
                raise ValueError(f'input_sharding is a dict (keys {sorted(sharding)}) but the batch is a '
                                 f'{type(batch).__name__}: a dict of ShardingSpecs shards a dict batch by key')
            missing = [k for k in batch if k not in sharding]
            if missing:
                raise KeyError(f'input_sharding has no ShardingSpec for the batch keys {missing}')
            return {k: xm._send_to_device(v, device, input_sharding=sharding[k]) for k, v in batch.items()}
        sent = xm._send_to_device(batch, device, input_sharding=sharding)
        if sharding is None and xr.is_spmd():
            _replicate(sent)
        return sent


def _replicate(data):
    """Marks every xla tensor in `data` replicated over the SPMD mesh (PyTorch/XLA's loaders
    place unsharded SPMD inputs so)."""
    import torch_xla
    if isinstance(data, torch.Tensor):
        if data.device.type == 'xla':
            torch_xla._XLAC._xla_mark_sharding(data, torch_xla._XLAC.OpSharding([], [], [], 0))
    elif isinstance(data, dict):
        for v in data.values():
            _replicate(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            _replicate(v)


class MpDeviceLoader:
    """The loader of one replica's device: `for batch in MpDeviceLoader(loader, device)`."""

    def __init__(self, loader, device, **kwargs):
        self._loader = loader
        self._device = device
        self._parallel_loader_kwargs = kwargs
        self.parallel_loader = None

    def __iter__(self):
        self.parallel_loader = ParallelLoader(self._loader, [self._device], **self._parallel_loader_kwargs)
        return self.parallel_loader.per_device_loader(self._device)

    def __len__(self):
        return len(self._loader)
