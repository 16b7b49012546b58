"""The PyTorch/XLA core API (`import torch_xla.core.xla_model as xm`)."""
import os
import queue
import threading
import time

import torch

import torch_xla
from torch_xla import runtime as xr
from torch_xla._internal import config
from torch_xla.core import collectives as _collectives

# Step closures wait for their program's next barrier: a replica thread's for that replica's,
# every other thread's (the main one, autograd's workers running backward hooks) for the
# process's.
_closures_lock = threading.Lock()
_pending_closures = {}


def _replica_key():
    state, index = _collectives.replication()
    return None if state is None else (id(state), index)


class _AsyncClosures:
    """The closures registered with run_async=True: one thread runs them in order, each after its
    barrier, while the program goes on. The first one to raise stops the rest; its exception is
    raised at the next barrier that has async closures to hand over (PyTorch/XLA's behaviour)."""

    def __init__(self):
        self._queue = queue.Queue()
        self._thread = None
        self._error = None
        self._lock = threading.Lock()

    def submit(self, closure, args):
        with self._lock:
            error, self._error = self._error, None
            if error is None and self._thread is None:
                self._thread = threading.Thread(target=self._run, name='xla async step closures', daemon=True)
                self._thread.start()
        if error is not None:
            raise error
        self._queue.put((closure, args))

    def wait(self):
        """Blocks until every closure handed over so far has run (or been skipped)."""
        self._queue.join()

    def _run(self):
        while True:
            closure, args = self._queue.get()
            try:
                with self._lock:
                    failed = self._error is not None
                if not failed:  # the closures after a failed one do not run
                    closure(*args)
            except Exception as e:  # noqa: B902  raised at the next barrier
                with self._lock:
                    self._error = e
            finally:
                self._queue.task_done()


_async_closures = _AsyncClosures()


# Devices -------------------------------------------------------------------------------------

_warned = set()


def _deprecated(name, instead):
    """Warns once per process, as PyTorch/XLA 2.9 does for the names it deprecated."""
    if name not in _warned:
        _warned.add(name)
        import warnings
        warnings.warn(f'{name} is deprecated: use {instead} instead', DeprecationWarning, stacklevel=3)


def xla_device(n=None, devkind=None):
    """The xla device `n` of this process (default: its first), e.g. device(type='xla', index=0).
    Deprecated in PyTorch/XLA 2.9 for torch_xla.device(); still works."""
    _deprecated('torch_xla.core.xla_model.xla_device', 'torch_xla.device')
    return _xla_device(n, devkind)


def _xla_device(n=None, devkind=None):
    if devkind is not None and devkind.upper() not in ('CPU', 'XLA', xr.device_type()):
        raise RuntimeError(f'no xla devices of kind {devkind!r} here; this host has CPU devices')
    index = 0 if n is None else int(n)
    count = torch_xla._XLAC._xla_device_count()
    if not 0 <= index < count:
        raise IndexError(f'xla device {index} does not exist: this process has {count} '
                           f'device(s) (set CPU_NUM_DEVICES for more)')
    return torch.device('xla', index)


def get_xla_supported_devices(devkind=None, max_devices=None):
    # Under SPMD a script addresses one virtual device, xla:0.
    devices = ['xla:0'] if xr.is_spmd() else torch_xla._XLAC._xla_get_all_devices()
    if max_devices is not None:
        devices = devices[:max_devices]
    return devices


def is_xla_tensor(tensor):
    """Whether `tensor` lives on an xla device."""
    return tensor.device.type == 'xla'


def xla_device_hw(device):
    """The hardware an xla device stands in for: 'CPU' on this backend."""
    return xr.device_type()


def xla_real_devices(devices):
    return ['CPU:%d' % torch.device(d).index for d in devices]


def xla_replication_devices(local_devices):
    """The real devices replication runs over, given this process's local devices (all of them)."""
    supported = get_xla_supported_devices()
    if len(supported) != len(local_devices):
        raise RuntimeError(f'Cannot replicate if number of devices ({len(local_devices)}) is different from '
                           f'{len(supported)}')
    return xla_real_devices(supported)


# Topology: the launcher's environment (RANK, WORLD_SIZE, LOCAL_RANK), or the devices of this
# process when DataParallel replicates a model over them in threads ------------------------------

def xrt_world_size(defval=1):
    """The number of replicas: processes of the job, or devices of a threaded DataParallel."""
    return _collectives.replica_count()


def get_ordinal(defval=0):
    return _collectives.replica_index()


def get_local_ordinal(defval=0):
    state, index = _collectives.replication()
    return index if state is not None else xr.local_ordinal()


def set_replication(device, devices):
    """Makes the calling thread the replica of `device` among `devices` (threaded replication)."""
    _collectives.set_replication(device, devices)


def get_replication_devices():
    state, _ = _collectives.replication()
    return [str(d) for d in state.devices] if state is not None else []


def is_master_ordinal(local=True):
    ordinal = get_local_ordinal() if local else get_ordinal()
    return ordinal == 0


def master_print(*args, fd=None, **kwargs):
    if is_master_ordinal(local=False):
        print(*args, file=fd, **kwargs)


# Barriers -------------------------------------------------------------------------------------

def mark_step(wait=False, reset_scope=True):
    """Deprecated in PyTorch/XLA 2.9 for torch_xla.sync(); still works (see _mark_step)."""
    _deprecated('torch_xla.core.xla_model.mark_step', 'torch_xla.sync')
    _mark_step(wait, reset_scope)


def _mark_step(wait=False, reset_scope=True):
    """Cuts the pending graph of every live xla tensor, compiles it (or reuses the cached
    executable) and executes it. Step closures registered with add_step_closure run after.
    With reset_scope, a barrier inside an xp.Trace region raises (as PyTorch/XLA's)."""
    if reset_scope:
        from torch_xla.debug import profiler as xp
        xp._check_no_open_scope()
    state, index = _collectives.replication()
    if state is not None:  # a replica thread: its own device's graph
        devices = [str(state.devices[index])]
    else:
        devices = torch_xla._XLAC._xla_get_all_devices()
    _collectives.forget_tokens(devices)
    torch_xla._XLAC._xla_step_marker(devices[0], devices, wait)
    _run_step_closures()
    metrics_file = config.XLA_METRICS_FILE.get()
    if metrics_file:
        with open(metrics_file, 'a') as f:
            f.write(torch_xla._XLAC._xla_metrics_report())
            f.write('\n')


def wait_device_ops(devices=[]):
    """Blocks until every graph submitted to `devices` (all when empty) has executed."""
    torch_xla._XLAC._xla_wait_device_ops(list(devices))


def add_step_closure(closure, args=(), run_async=False):
    """Runs `closure(*args)` after the next barrier, when tensors in `args` hold their values
    (registered from any thread, a backward hook's included). With run_async, on a thread of its
    own while the program goes on (its exception is raised at a later barrier)."""
    with _closures_lock:
        _pending_closures.setdefault(_replica_key(), []).append((closure, args, run_async))


def _run_step_closures():
    key = _replica_key()
    while True:
        with _closures_lock:
            pending = _pending_closures.pop(key, [])
        if not pending:
            return
        for closure, args, run_async in pending:  # closures they register run in the same barrier
            if run_async:
                _async_closures.submit(closure, args)
            else:
                closure(*args)


# Moving and saving ----------------------------------------------------------------------------

def _map_tensors(data, fn, leaf=lambda x: isinstance(x, torch.Tensor)):
    """`data` with every leaf (a tensor, or what `leaf` says) replaced by fn(leaf), through dicts,
    lists and tuples (namedtuples too)."""
    if leaf(data):
        return fn(data)
    if isinstance(data, dict):
        return type(data)((k, _map_tensors(v, fn, leaf)) for k, v in data.items())
    if isinstance(data, (list, tuple)) and not hasattr(data, '_fields'):
        return type(data)(_map_tensors(v, fn, leaf) for v in data)
    if isinstance(data, tuple):  # namedtuple
        return type(data)(*(_map_tensors(v, fn, leaf) for v in data))
    return data


class ToXlaTensorArena:
    """Converts the tensors of a nested structure that `select_fn` picks in one batch:
    `convert_fn(list of tensors)` returns their replacements, in order, and `transform(data)`
    returns `data` with them put in place, through dicts (keys too), lists, tuples, sets and
    objects' attributes, each tensor once however often it is referenced (PyTorch/XLA's helper,
    over torch_xla.utils.utils.for_each_instance)."""

    def __init__(self, convert_fn, select_fn):
        self._convert_fn = convert_fn
        self._select_fn = select_fn

    def transform(self, data):
        from torch_xla.utils import utils as xu
        picked = []
        xu.for_each_instance(data, self._select_fn, picked.append)
        converted = iter(self._convert_fn(picked) if picked else [])
        return xu.for_each_instance_rewrite(data, self._select_fn, lambda _: next(converted))


def _maybe_convert_to_cpu(data, convert=True):
    return _map_tensors(data, lambda t: t.cpu() if convert and t.device.type == 'xla' else t)


def optimization_barrier_(tensors):
    """XLA's optimization barrier on `tensors`: the compiler may not move computation across it.
    Values are unchanged; this compiler neither rematerializes nor fuses across graph outputs in
    ways the barrier would forbid, so it has nothing to hold back."""
    return None


def send_cpu_data_to_device(data, device, input_sharding=None):
    """The tensors of `data` moved to `device`; under SPMD, laid out as `input_sharding` (a
    torch_xla.distributed.spmd.ShardingSpec) says where it fits the tensor. A single tensor comes
    back in a list, as PyTorch/XLA returns it; a `torch_xla.utils.utils.DataWrapper` is rebuilt
    from its tensors moved."""
    if type(data) is torch.Tensor:
        data = [data]
    return _send_to_device(data, device, input_sharding)


def _send_to_device(data, device, input_sharding=None):
    """send_cpu_data_to_device's structure-preserving part: a single tensor stays one."""
    from torch_xla.utils import utils as xu

    def send(t):
        if input_sharding is not None and getattr(input_sharding, 'minibatch', False) and t.dim() > 0 \
                and input_sharding.can_apply(t):
            # a host's minibatch is split over its own devices along the batch dimension
            local = xr.addressable_runtime_device_count()
            if t.shape[0] % local != 0:
                raise RuntimeError('When minibatch is configured, the per-host batch size must be divisible by '
                                   f'local runtime device count. Per host input data shape = {t.size()}, '
                                   f'local_runtime_device_count = {local}')
        if input_sharding is not None and getattr(input_sharding, 'minibatch', False) and t.dim() > 0 \
                and input_sharding.can_apply(t):
            return _global_batch_from_minibatch(t, device, input_sharding)
        x = t.to(device)
        if input_sharding is not None and input_sharding.can_apply(t):
            input_sharding.apply(x)
        return x

    def send_any(x):
        if isinstance(x, xu.DataWrapper):  # its tensors moved; what is not a tensor (None) kept
            return x.from_tensors([send(t) if isinstance(t, torch.Tensor) else t for t in x.get_tensors()])
        return send(x)

    return xu.for_each_instance_rewrite(data, lambda x: isinstance(x, (torch.Tensor, xu.DataWrapper)), send_any)


def _global_batch_from_minibatch(t, device, input_sharding):
    """This process's minibatch as its rows of the global batch (every process's minibatch, in
    process order), laid out by `input_sharding`: each process's devices must hold tiles of its
    own rows only, as a mesh whose batch axis follows the processes does."""
    index, processes = torch_xla._XLAC._xla_spmd_processes()
    if processes == 1:
        x = t.to(device)
        input_sharding.apply(x)
        return x
    rows = t.shape[0]
    whole = torch.zeros((rows * processes,) + tuple(t.shape[1:]), dtype=t.dtype)
    whole[index * rows:(index + 1) * rows] = t
    x = whole.to(device)
    input_sharding.apply(x)
    for _, indices in torch_xla._XLAC._get_local_shard_replica_and_indices([x])[0]:
        if indices is Ellipsis or not (index * rows <= indices[0].start and indices[0].stop <= (index + 1) * rows):
            raise ValueError(
                f'minibatch input: the sharding {input_sharding.partition_spec} puts rows of other processes on '
                f'the devices of process {index}; give the batch dimension a mesh axis that follows the '
                'processes (device ids numbered process by process)')
    return x


def save(data, file_or_path, master_only=True, global_master=False):
    """torch.save of `data` with xla tensors moved to CPU first; with master_only, only the
    master ordinal writes (local master, or the global one with global_master)."""
    cpu_data = _maybe_convert_to_cpu(data)
    should_write = (not master_only) or is_master_ordinal(local=not global_master)
    if not should_write:
        return
    if not isinstance(file_or_path, (str, os.PathLike)):
        torch.save(cpu_data, file_or_path)  # a file object: the caller owns it
        return
    _save_atomically(cpu_data, file_or_path)


def _save_atomically(obj, path):
    """torch.save to a name aside, then renamed over `path`: a process that dies midway leaves no
    half-written file there (the previous one, if any, stays whole)."""
    path = os.fspath(path)
    tmp = f'{path}.partial-{os.getpid()}-{threading.get_ident()}'
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# Optimizer ------------------------------------------------------------------------------------

def reduce_gradients(optimizer, groups=None, pin_layout=True):
    """Averages the gradients of `optimizer`'s parameters across replicas (all-reduce sum, scaled
    by 1 / replicas): after it every replica holds the gradient of the whole global batch."""
    count = xrt_world_size()
    if count == 1 and not groups:
        return
    grads = [p.grad for group in optimizer.param_groups for p in group['params'] if p.grad is not None]
    if grads:
        size = len(groups[0]) if groups else count
        all_reduce(REDUCE_SUM, grads, scale=1.0 / size, groups=groups)


def optimizer_step(optimizer, barrier=False, optimizer_args={}, groups=None, pin_layout=True):
    """reduce_gradients + optimizer.step(), then the barrier if `barrier`; returns step's loss."""
    reduce_gradients(optimizer, groups=groups, pin_layout=pin_layout)
    loss = optimizer.step(**optimizer_args)
    if barrier:
        _mark_step()
    return loss


# Collectives (torch.distributed with Gloo underneath; see core/collectives.py) ----------------

REDUCE_SUM, REDUCE_MUL, REDUCE_MIN, REDUCE_MAX = (
    _collectives.REDUCE_SUM, _collectives.REDUCE_MUL, _collectives.REDUCE_MIN, _collectives.REDUCE_MAX)


def all_reduce(reduce_type, inputs, scale=1.0, groups=None, pin_layout=True):
    """Reduces `inputs` (a tensor: returns the result; a list: updated in place) across replicas."""
    return _collectives.all_reduce(reduce_type, inputs, scale=scale, groups=groups)


def all_gather(value, dim=0, groups=None, output=None, pin_layout=True):
    result = _collectives.all_gather(value, dim=dim, groups=groups)
    if output is not None:
        output.copy_(result)
        return output
    return result


def reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count, groups=None, output=None,
                   pin_layout=True):
    result = _collectives.reduce_scatter(reduce_type, input, scale, scatter_dim, shard_count, groups)
    if output is not None:
        output.copy_(result)
        return output
    return result


def all_to_all(value, split_dimension, concat_dimension, split_count, groups=None, pin_layout=True):
    """XLA's all-to-all among the replicas (see torch_xla.core.collectives.all_to_all)."""
    return _collectives.all_to_all(value, split_dimension, concat_dimension, split_count, groups)


def broadcast_master_param(model):
    """Every replica takes the master's (ordinal 0) parameters and buffers."""
    _collectives.broadcast(list(model.parameters()) + list(model.buffers()), src=0)
    _mark_step()


def rendezvous(tag, payload=b'', replicas=[]):
    """Waits for every replica to reach `tag`; returns their payloads (bytes) in ordinal order."""
    if not isinstance(payload, (bytes, bytearray)):
        raise TypeError(f'rendezvous {tag!r}: the payload must be bytes, not {type(payload).__name__}')
    gathered = _collectives.gather_objects((tag, payload))
    tags = sorted({t for t, _ in gathered})
    if len(tags) != 1:
        raise RuntimeError(f'rendezvous {tag!r}: the replicas reached different tags {tags}')
    return [p for _, p in gathered]


def mesh_reduce(tag, data, reduce_fn):
    """reduce_fn over every replica's `data` (host values), the same result on each."""
    return reduce_fn(_collectives.gather_objects(data))


class RateTracker:
    """Smoothed rate of a growing count (samples/s), as PyTorch/XLA's xm.RateTracker."""

    def __init__(self, smooth_factor=0.4):
        self._smooth_factor = smooth_factor
        self._start_time = time.time()
        self._partial_time = self._start_time
        self._partial_count = 0.0
        self._partial_rate = None
        self._count = 0.0

    def _update(self, now, rate):
        self._partial_count += self._count
        self._count = 0.0
        self._partial_time = now
        self._partial_rate = rate

    def add(self, count):
        self._count += count

    def _smooth(self, current_rate):
        if self._partial_rate is None:
            return current_rate
        return (1 - self._smooth_factor) * current_rate + self._smooth_factor * self._partial_rate

    def rate(self):
        now = time.time()
        delta = now - self._partial_time
        report_rate = 0.0
        if delta > 0:
            report_rate = self._smooth(self._count / delta)
            self._update(now, report_rate)
        return report_rate

    def global_rate(self):
        delta = time.time() - self._start_time
        count = self._partial_count + self._count
        return count / delta if delta > 0 else 0.0


# Random numbers ----------------------------------------------------------------------------------

def get_memory_info(device=None):
    """The device's memory: {'bytes_used', 'peak_bytes_used', 'bytes_limit'}. On this CPU backend
    `bytes_used` is what the device's buffers, scratch arenas and kernel libraries' scratch hold
    now and `peak_bytes_used` the most they ever held at once (every xla device of a process
    counts in the same figures: they share the host's memory), and `bytes_limit` is the machine's
    physical memory."""
    return dict(torch_xla._XLAC._xla_memory_info(_device_arg(device)))


def _device_arg(device):
    return str(device) if device is not None else torch_xla._XLAC._xla_get_default_device()


def set_rng_state(seed, device=None):
    """Gives the device a random state of its own, `seed`: random ops on it that are given no
    generator draw from it from now on (before, they draw from torch's default generator, which
    torch.manual_seed seeds)."""
    torch_xla._XLAC._xla_set_rng_seed(int(seed), _device_arg(device))


def get_rng_state(device=None):
    """The device's current random state, as an int: set_rng_state(it) replays what follows.
    A device without a state of its own takes one from torch's default generator here."""
    return torch_xla._XLAC._xla_get_rng_seed(_device_arg(device))
