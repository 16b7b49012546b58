"""One process of an SPMD job over processes (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
CPU_NUM_DEVICES from the environment), or the same program on one process with all the devices:
prints one JSON object of results, the same in both when the job computes what one process does."""
import json

import numpy as np
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

import spmd_megatron

xr.use_spmd()
N = xr.global_runtime_device_count()
MESH = xs.Mesh(np.arange(N), (2, N // 2), ('data', 'model'))
out = {'devices': N, 'local_devices': xr.addressable_runtime_device_count(),
       'transport': torch_xla._XLAC._xla_collective_transport()}


def whole(t):
    """`t` as one host tensor on every process: gathered whole on the devices first."""
    r = t * 1
    xs.mark_sharding(r, MESH, (None, ) * t.dim())
    return r.cpu()


def megatron_training():
    """The Megatron MLP (spmd_megatron.py) with each process holding its half of the batch:
    losses and parameters, against eager float32 and float64."""
    losses = []
    m, m64, mx = spmd_megatron.train(MESH, lambda loss: losses.append(loss.item()))  # replicated: on every process
    params = [p.detach().cpu() for p in mx.parameters()]  # each process holds every tile of these
    out['megatron'] = {
        'eager32_from_f64': spmd_megatron.largest_deviation(m.parameters(), m64.parameters()),
        'xla_from_f64': spmd_megatron.largest_deviation(params, m64.parameters()),
        'losses': losses,
        'params': [p.flatten().tolist() for p in params],
    }
    xin = torch.randn(8, 16).to('xla')
    xs.mark_sharding(xin, MESH, ('data', None))
    # The batch's rows are split over the processes: reading them whole here is refused.
    try:
        xin.cpu()
        out['megatron']['read_remote'] = 'no error'
    except RuntimeError as e:
        out['megatron']['read_remote'] = str(e)


def resharding():
    """Tiles moved between processes: rows to columns (an all-to-all), and a contraction split
    over every device whose result is wanted split by rows (a reduce-scatter)."""
    a = torch.arange(8 * 12, dtype=torch.float32).reshape(8, 12)
    b = torch.randn(12, 5, generator=torch.Generator().manual_seed(1))
    met.clear_counters()
    ax = a.to('xla')
    xs.mark_sharding(ax, xs.Mesh(np.arange(N), (N, 1)), (0, None))
    cols = ax + 1
    xs.mark_sharding(cols, xs.Mesh(np.arange(N), (1, N)), (None, 1))
    xm.mark_step()
    bx = b.to('xla')
    xs.mark_sharding(bx, xs.Mesh(np.arange(N), (N, 1)), (0, None))
    row_mesh = xs.Mesh(np.arange(N), (1, N))
    ax2 = a.to('xla')
    xs.mark_sharding(ax2, row_mesh, (None, 1))
    prod = ax2 @ bx
    xs.mark_sharding(prod, xs.Mesh(np.arange(N), (N, 1)), (0, None))
    xm.mark_step()
    out['resharding'] = {
        'cols': whole(cols).tolist(),
        'cols_expected': (a + 1).tolist(),
        'prod_error': (whole(prod) - a @ b).abs().max().item(),
        'all_to_all': met.counter_value('SpmdReshard:all-to-all') or 0,
        'reduce_scatter': met.counter_value('SpmdReshard:reduce-scatter') or 0,
    }


def minibatch():
    """MpDeviceLoader's minibatch input: each process loads its own rows of the global batch."""
    index, processes = xr.process_index(), max(xr.process_count(), 1)
    spec = xs.ShardingSpec(MESH, ('data', None), minibatch=True)
    rows = 4 if processes > 1 else 8
    local = torch.arange(rows * 3, dtype=torch.float32).reshape(rows, 3) + 100 * index
    [x] = xm.send_cpu_data_to_device(local, torch_xla.device(), input_sharding=spec)  # a tensor comes back listed
    out['minibatch'] = {'shape': list(x.shape), 'sum': whole(x).sum().item()}


def preemption():
    """A SIGTERM to process 1 only: both processes checkpoint at the same step."""
    import os
    import signal
    import tempfile
    from torch_xla.experimental.distributed_checkpoint import CheckpointManager
    manager = CheckpointManager(tempfile.mkdtemp(), save_interval=100, chkpt_on_preemption=True)
    reached = []
    for step in range(1, 5):
        if step == 3 and xr.process_index() == 1:
            os.kill(os.getpid(), signal.SIGTERM)  # the manager took SIGTERM over: the process lives
        if manager.reached_preemption(step):
            reached.append(step)
    torch_xla._XLAC._deactivate_preemption_sync_manager()
    out['preempted_at'] = reached


megatron_training()
resharding()
minibatch()
if xr.process_count() > 1:
    preemption()
print(json.dumps(out))
