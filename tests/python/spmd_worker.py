"""SPMD checks run in a process of their own (SPMD is process-wide and cannot be turned off):
`CPU_NUM_DEVICES=4 python spmd_worker.py` prints one JSON object of results."""
import copy
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
out = {'devices': N}


def megatron_training():
    """The Megatron MLP (spmd_megatron.py) against eager float32 and float64."""
    compiles = []
    m, m64, mx = spmd_megatron.train(MESH, lambda loss: compiles.append(met.counter_value('UncachedCompile') or 0))
    out['megatron'] = {
        'eager32_from_f64': spmd_megatron.largest_deviation(m.parameters(), m64.parameters()),
        'xla_from_f64': spmd_megatron.largest_deviation(mx.parameters(), m64.parameters()),
        'w1_spec': torch_xla._XLAC._get_xla_sharding_spec(mx[0].weight),
        'w2_spec': torch_xla._XLAC._get_xla_sharding_spec(mx[2].weight),
        'compiles_after_warmup': compiles[-1] - compiles[1],
        'unpartitioned': met.counter_value('SpmdUnpartitionedGraph') or 0,
        'all_reduces': met.counter_value('SpmdReshard:all-reduce') or 0,
    }


def uneven_shards():
    """5 rows over 4 devices: pieces of 2 rows, zero-padded; values and reductions exact."""
    t = torch.arange(15, dtype=torch.float32).reshape(5, 3)
    xt = xs.mark_sharding(t.to('xla'), xs.get_1d_mesh('x'), ('x', None))
    shards = xt.local_shards
    r = (xt.global_tensor.exp() * 2).sum(0)
    mm = xt.global_tensor @ torch.ones(3, 2, device='xla')
    out['uneven'] = {
        'shapes': [list(s.data.shape) for s in shards],
        'last_piece': shards[-1].data.tolist(),
        'indices': [[(i.start, i.stop) for i in s.indices] for s in shards],
        'sum_error': ((r.cpu() - (t.exp() * 2).sum(0)).abs() / (t.exp() * 2).sum(0)).max().item(),
        'matmul_error': (mm.cpu() - t @ torch.ones(3, 2)).abs().max().item(),
        'whole': (xt.global_tensor.cpu() == t).all().item(),
    }


def bad_input():
    errors = {}
    x = torch.zeros(4, 4, device='xla')
    cases = {
        'rank': lambda: xs.mark_sharding(x, MESH, ('data', )),
        'axis': lambda: xs.mark_sharding(x, MESH, ('nope', None)),
        'cpu': lambda: xs.mark_sharding(torch.zeros(4, 4), MESH, ('data', None)),
        'repeat': lambda: xs.mark_sharding(x, MESH, ('data', 'data')),
        'mesh': lambda: xs.Mesh(np.arange(2 * N), (2, N)),
    }
    for name, f in cases.items():
        try:
            f()
            errors[name] = None
        except Exception as e:  # noqa: BLE001 - the type is what is checked
            errors[name] = type(e).__name__ + ': ' + str(e).splitlines()[0]
    out['bad_input'] = errors


def resharding_explained():
    """A strided slice has no partitioned form: its tiled operand is gathered, and the debugging
    tool (PT_XLA_DEBUG, set by the test) says so."""
    t = xs.mark_sharding(torch.randn(8, 4).to('xla'), xs.get_1d_mesh('x'), ('x', None)).global_tensor
    (t[::2] * 2).sum().item()


def dtensor_interop():
    """torch.distributed.tensor on an xla DeviceMesh: distribute_tensor gives XLAShardedTensors
    (DTensors) whose placements, pieces and redistribution follow the mesh; a model whose two
    layers are both row-split trains as eager does (its second dot meets operands split over
    the same devices)."""
    from torch.distributed.tensor import DeviceMesh, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor import DTensor
    mesh = DeviceMesh('xla', list(range(N)))
    t = torch.randn(10, 6)  # 10 rows over 4 devices: uneven
    d = distribute_tensor(t, mesh, [Shard(0)])
    r = {'is_dtensor': isinstance(d, DTensor), 'placements': str(d.placements),
         'piece_rows': [s.unpadded_data.shape[0] for s in d.local_shards]}
    whole = d.redistribute(xs.Mesh(np.arange(N), (N, )), [Replicate()])
    torch_xla.sync()
    r['replicated_spec'] = torch_xla._XLAC._get_xla_sharding_spec(whole.global_tensor)
    r['redistributed_exact'] = torch.equal(whole.global_tensor.cpu(), t)
    doubled = d * 2  # an op on the DTensor runs on the global tensor
    r['op_type'] = type(doubled).__name__
    r['op_exact'] = torch.equal(doubled.global_tensor.cpu(), t * 2)

    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(16, 12), torch.nn.ReLU(), torch.nn.Linear(12, 1))
    x, y = torch.randn(20, 16), torch.randn(20, 1)

    def train(model, xs_, ys_, steps=4):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(xs_), ys_).backward()
            opt.step()
            torch_xla.sync()
        return [p.detach().cpu().double() for p in model.parameters()]

    f64 = train(copy.deepcopy(ref).double(), x.double(), y.double())
    f32 = train(copy.deepcopy(ref), x, y)
    model = copy.deepcopy(ref).to('xla')
    for p in model.parameters():
        distribute_tensor(p, mesh, [Shard(0)])
    got = train(model, x.to('xla'), y.to('xla'))
    dist = lambda a: max((u - v).abs().max().item() for u, v in zip(a, f64))
    r['xla_from_f64'], r['eager32_from_f64'] = dist(got), dist(f32)
    out['dtensor'] = r


def checkpoint_resharding():
    """A model sharded on a 2x2 mesh is checkpointed and loaded into one sharded another way
    (and padded: 63 rows over 4 devices); CheckpointManager keeps the newest checkpoints and
    restores them; a SIGTERM becomes the step to checkpoint at."""
    import os
    import signal
    import tempfile
    import torch.distributed as dist
    import torch.distributed.checkpoint as dist_cp
    from torch_xla.experimental.distributed_checkpoint import (CheckpointManager, SPMDLoadPlanner,
                                                               SPMDSavePlanner)
    tmp = tempfile.mkdtemp()
    r = {}
    torch.manual_seed(1)
    saved, loaded = torch.nn.Linear(127, 63).to('xla'), torch.nn.Linear(127, 63).to('xla')
    xs.mark_sharding(saved.weight, MESH, ('data', 'model'))
    xs.mark_sharding(loaded.weight, xs.get_1d_mesh('x'), (None, 'x'))
    xs.mark_sharding(loaded.bias, xs.get_1d_mesh('x'), ('x', ))
    dist_cp.save(saved.state_dict(), storage_writer=dist_cp.FileSystemWriter(os.path.join(tmp, 'a')),
                 planner=SPMDSavePlanner())
    target = loaded.state_dict()
    dist_cp.load(target, storage_reader=dist_cp.FileSystemReader(os.path.join(tmp, 'a')), planner=SPMDLoadPlanner())
    r['resharded_exact'] = all(torch.equal(a.cpu(), b.cpu()) for a, b in zip(saved.parameters(), loaded.parameters()))
    r['kept_layout'] = torch_xla._XLAC._get_xla_sharding_spec(loaded.weight)

    dist.init_process_group('gloo', init_method='file://' + os.path.join(tmp, 'pg'), rank=0, world_size=1)
    manager = CheckpointManager(os.path.join(tmp, 'm'), save_interval=5, max_to_keep=2)
    state = {'model': saved.state_dict()}
    r['skipped_step'] = manager.save(3, state)
    for step in (5, 10):
        manager.save_async(step, state)
    manager.join()
    manager.save(15, state)
    r['steps'] = sorted(manager.all_steps())
    fresh = torch.nn.Linear(127, 63).to('xla')
    xs.mark_sharding(fresh.weight, MESH, ('model', 'data'))
    restored = {'model': fresh.state_dict()}
    manager.restore(10, restored)
    r['restored_exact'] = all(torch.equal(a.cpu(), b.cpu()) for a, b in zip(saved.parameters(), fresh.parameters()))
    os.kill(os.getpid(), signal.SIGTERM)  # the manager took SIGTERM over: the process lives
    r['preempted_at'] = [s for s in (16, 17) if manager.reached_preemption(s)]
    r['checkpointed_off_interval'] = manager.save(16, state)
    torch_xla._XLAC._deactivate_preemption_sync_manager()
    dist.destroy_process_group()
    out['checkpoint'] = r


def manual_region():
    """enable_manual_sharding / disable_manual_sharding: ops between them run on each device's
    piece (here each piece's own row sums, which the compiler would otherwise all-reduce); a
    manual value cannot be read whole; pieces of the wrong shape are refused at the call."""
    r = {}
    mesh = xs.get_1d_mesh('x')
    t = torch.arange(32.0).reshape(8, 4)
    piece = xs.enable_manual_sharding(t.to('xla'), (None, 'x'), mesh=mesh).global_tensor
    r['piece_shape'] = list(piece.shape)
    local_sums = piece.sum(1, keepdim=True) * 10 + piece  # each device sees only its column
    whole = xs.disable_manual_sharding(local_sums, (None, 'x'), t.shape, mesh=mesh).global_tensor
    r['spec'] = torch_xla._XLAC._get_xla_sharding_spec(whole)
    r['exact'] = torch.equal(whole.cpu(), t * 11)  # a column's sum over one column is itself
    try:
        local_sums.cpu()
        r['read_manual'] = 'no error'
    except RuntimeError as e:
        r['read_manual'] = str(e)
    try:
        xs.disable_manual_sharding(local_sums, ('x', None), t.shape, mesh=mesh)
        r['wrong_piece'] = 'no error'
    except RuntimeError as e:
        r['wrong_piece'] = str(e)
    # Collectives among the devices inside the region: each column's piece summed over the pairs
    # {0,1} and {2,3} (scaled), and reduce-scattered over all four along the rows.
    piece = xs.enable_manual_sharding(t.to('xla'), (None, 'x'), mesh=mesh).global_tensor
    pairs = torch_xla._XLAC._xla_spmd_all_reduce(xm.REDUCE_SUM, piece, 0.5, [[0, 1], [2, 3]])
    r['pairs'] = xs.disable_manual_sharding(pairs, (None, 'x'), t.shape, mesh=mesh).global_tensor.cpu().tolist()
    piece = xs.enable_manual_sharding(t.to('xla'), (None, 'x'), mesh=mesh).global_tensor
    scattered = torch_xla._XLAC._xla_spmd_reduce_scatter(xm.REDUCE_SUM, piece, 1.0, 0, 4, [[0, 1, 2, 3]])
    r['scattered_shape'] = list(scattered.shape)
    r['scattered'] = xs.disable_manual_sharding(scattered, ('x', None), (8, 1), mesh=mesh).global_tensor.cpu().tolist()
    try:
        torch_xla._XLAC._xla_spmd_all_reduce(xm.REDUCE_SUM, t.to('xla'), 1.0, [[0, 1, 2, 3]])
        r['not_manual'] = 'no error'
    except ValueError as e:
        r['not_manual'] = str(e)
    out['manual'] = r


def sharding_pictures():
    """visualize_tensor_sharding draws which device holds which tile (a rich table)."""
    import io
    import rich.console
    from torch_xla.distributed.spmd.debugging import visualize_sharding, visualize_tensor_sharding
    t = xs.mark_sharding(torch.zeros(8, 8).to('xla'), MESH, ('data', 'model'))
    table = visualize_tensor_sharding(t, use_color=False)
    console = rich.console.Console(file=io.StringIO(), width=80)
    console.print(table)
    whole = visualize_sharding('{replicated}', use_color=False)
    out['pictures'] = {'rows': table.row_count, 'cols': len(table.columns),
                       'cells': sorted(set(w for w in console.file.getvalue().split('CPU ')[1:] for w in [w[0]])),
                       'replicated': (whole.row_count, len(whole.columns))}


megatron_training()
uneven_shards()
sharding_pictures()
manual_region()
dtensor_interop()
checkpoint_resharding()
resharding_explained()
bad_input()
print(json.dumps(out))
