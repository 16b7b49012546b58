"""Runtime queries (`torch_xla.runtime`, imported as `xr` in PyTorch/XLA scripts)."""
import os

import torch_xla
from torch_xla._internal import config


def device_type():
    """What the xla devices stand in for: PJRT_DEVICE, 'CPU' when unset (None when
    PJRT_SELECT_DEFAULT_DEVICE=0 asks for no default)."""
    chosen = config.PJRT_DEVICE.get()
    if chosen is None:
        return 'CPU' if config.PJRT_SELECT_DEFAULT_DEVICE.get() else None
    return chosen.upper()


def set_device_type(pjrt_device):
    """Chooses the device type before the runtime starts, as PJRT_DEVICE does; once it has
    started, asking for another type raises. The runtime offers 'CPU' devices only."""
    if torch_xla._XLAC._xla_runtime_is_initialized() and device_type() != pjrt_device.upper():
        raise RuntimeError(f"the runtime has started with device type {device_type()!r}; it cannot become "
                           f"{pjrt_device!r}")
    config.PJRT_DEVICE.set(pjrt_device)


def host_index():
    """This host's index in a multi-host job (XLA_HOST_RANK; 0 on one host)."""
    return config.XLA_HOST_RANK.get()


def local_device_count():
    """The devices a script addresses: under SPMD the one virtual device the program is traced
    on (it runs on every runtime device), else this process's devices."""
    return 1 if is_spmd() else torch_xla._XLAC._xla_device_count()


def addressable_device_count():
    return local_device_count()


def addressable_runtime_device_count():
    """The runtime devices of this process (CPU_NUM_DEVICES), SPMD or not."""
    return torch_xla._XLAC._xla_device_count()


def local_process_count():
    return config.LOCAL_WORLD_SIZE.get()


def global_device_count():
    # In a spawned job every replica drives one device: the job's devices are its replicas.
    if config.WORLD_SIZE.is_set():
        return world_size()
    return local_device_count() * config.XLA_NUM_HOSTS.get()


def world_size():
    return config.WORLD_SIZE.get()


def global_ordinal():
    return config.RANK.get()


def local_ordinal():
    return config.LOCAL_RANK.get()


def process_index():
    return global_ordinal()


def process_count():
    return world_size()


def get_master_ip() -> str:
    """The address of the job's first process (MASTER_ADDR): where process 0's rendezvous and
    coordination listen."""
    return config.MASTER_ADDR.get()


def initialize_cache(path, readonly=False):
    """Keeps compiled graphs in `path` across processes (PyTorch/XLA's persistent cache).

    A later process running the same graphs loads them from there instead of compiling; many
    processes may share one directory. With `readonly=True` nothing is written. The environment
    variables XLA_PERSISTENT_CACHE_PATH (and XLA_PERSISTENT_CACHE_READ_ONLY=1) do the same at
    start-up. Counters: PersistentCacheHit, PersistentCacheMiss, PersistentCacheError.
    """
    torch_xla._XLAC._xla_init_persistent_cache(os.fspath(path), bool(readonly))


def global_runtime_device_count():
    """Every device of the job the runtime drives: this process's devices (CPU_NUM_DEVICES) on
    every host; under SPMD over processes, on every process. SPMD meshes span all of them."""
    if is_spmd():
        _, processes = torch_xla._XLAC._xla_spmd_processes()
        if processes > 1:
            return torch_xla._XLAC._xla_spmd_device_count()
    return addressable_runtime_device_count() * config.XLA_NUM_HOSTS.get()


def use_spmd(auto=False):
    """Turns SPMD on for the rest of the process: programs traced on xla:0 are partitioned over
    every device by the shardings `torch_xla.distributed.spmd.mark_sharding` gives tensors.
    With `auto=True` the compiler also chooses layouts for the tensors left unsharded
    (auto-sharding; XLA_AUTO_SPMD_MESH=2,2 gives the mesh axes it may split over)."""
    config.XLA_USE_SPMD.set('1')
    torch_xla._XLAC._xla_use_spmd()
    if world_size() > 1:
        _join_spmd_processes()
    if auto:
        config.XLA_AUTO_SPMD.set('1')
        torch_xla._XLAC._xla_set_auto_sharding()


def _join_spmd_processes():
    """SPMD over the processes of a job (torchrun's or xmp.spawn's RANK and WORLD_SIZE, one process
    per host or several): every process runs the same program, each on its own devices, and the
    mesh spans all of them, numbered process by process. Collectives between processes go over a
    Gloo group of the job."""
    index, count = torch_xla._XLAC._xla_spmd_processes()
    if count > 1:
        return  # joined already
    import torch.distributed as dist
    from torch_xla.core import collectives
    collectives.ensure_process_group()
    world = dist.new_group(ranks=list(range(world_size())), backend='gloo',
                           timeout=collectives.collective_timeout())
    torch_xla._XLAC._xla_spmd_join_processes(world, global_ordinal(), world_size())


def is_spmd():
    """Whether SPMD is on: XLA_USE_SPMD, which use_spmd() sets (as in PyTorch/XLA, the
    variable is the answer; the runtime, once partitioning, stays so for the process)."""
    return config.XLA_USE_SPMD.get()
