"""Data-parallel training benchmark: the seeds' MNIST network, one global batch per step split over
two replicas, on this machine's two cores.

Systems (each in fresh processes, interleaved over rounds so machine noise hits all alike):
  eager_1       eager CPU PyTorch, one process, the whole batch (2 threads)
  eager_ddp     eager CPU, DistributedDataParallel over Gloo, 2 processes (1 thread each)
  xla_1         this project's device, one process, the whole batch
  xla_spawn     xmp.spawn, 2 processes, xm.optimizer_step (all-reduce inside the step graph)
  xla_ddp       DistributedDataParallel on the 'xla' backend, 2 processes
  xla_threads   dp.DataParallel over 2 devices of one process (CPU_NUM_DEVICES=2)
  xla_spmd      SPMD over 2 devices of one process: the batch sharded over a 1-D mesh, the model
                replicated; the compiler partitions the step (gradients all-reduced inside it)
  xla_spmd_procs  the same SPMD program over 2 processes of one device each (xmp.spawn): the
                collectives between the processes go over Gloo
Every step ends with the loss read on the host (the step has finished). Prints the median ms per
global step and the ratio to eager_ddp; compilation is excluded (the first steps are warm-up,
and every system runs with a warm disk cache after round 0).

    .venv/bin/python bench/data_parallel.py --rounds 3 --steps 30
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SYSTEMS = ['eager_1', 'eager_ddp', 'xla_1', 'xla_spawn', 'xla_ddp', 'xla_threads', 'xla_spmd', 'xla_spmd_procs']
WARMUP = 5


def _batches(steps, batch):
    import torch
    torch.manual_seed(0)
    return [(torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))) for _ in range(steps)]


def _loop(model, opt, batches, device, step_fn, world, rank):
    import torch.nn.functional as F
    times = []
    for data, target in batches:
        start = time.perf_counter()
        opt.zero_grad()
        loss = F.nll_loss(model(data.chunk(world)[rank].to(device)), target.chunk(world)[rank].to(device))
        loss.backward()
        step_fn()
        loss.item()
        times.append(time.perf_counter() - start)
    return statistics.median(times[WARMUP:]) * 1e3


def _replica(index, system, steps, batch, out):
    import torch
    sys.path.insert(0, os.path.join(ROOT, 'examples'))
    from mnist_model import MNIST
    world, rank = int(os.environ.get('WORLD_SIZE', '1')), int(os.environ.get('RANK', '0'))
    batches = _batches(steps, batch)
    torch.manual_seed(0)
    if system.startswith('eager'):
        import torch.distributed as dist
        torch.set_num_threads(1 if world > 1 else 2)
        model, device = MNIST().train(), torch.device('cpu')
        if system == 'eager_ddp':
            dist.init_process_group('gloo', init_method='env://')
            model = torch.nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        ms = _loop(model, opt, batches, device, opt.step, world, rank)
    else:
        import torch_xla.core.xla_model as xm
        device = xm.xla_device()
        model = MNIST().train().to(device)
        if system == 'xla_ddp':
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401
            dist.init_process_group('xla', init_method='xla://')
            model = torch.nn.parallel.DistributedDataParallel(model)
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            step = lambda: (opt.step(), xm.mark_step())  # noqa: E731
        else:
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            step = lambda: xm.optimizer_step(opt, barrier=True)  # noqa: E731
        ms = _loop(model, opt, batches, device, step, world, rank)
    if rank == 0:
        with open(out, 'w') as f:
            json.dump({'ms': ms}, f)


def _threads(steps, batch, out):
    import torch
    import torch.nn.functional as F
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.data_parallel as dp
    sys.path.insert(0, os.path.join(ROOT, 'examples'))
    from mnist_model import MNIST
    batches = _batches(steps, batch)
    # Device d takes batches d, d+2, ...: split each global batch in two consecutive halves.
    halves = [half for data, target in batches for half in zip(data.chunk(2), target.chunk(2))]
    torch.manual_seed(0)
    model_parallel = dp.DataParallel(MNIST, device_ids=xm.get_xla_supported_devices())

    def loop_fn(model, loader, device, context):
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        times = []
        start = time.perf_counter()
        for _, (data, target) in loader:  # the loader's barrier ends the previous step
            opt.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            xm.optimizer_step(opt)
            loss.item()
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
        return statistics.median(times[WARMUP:]) * 1e3

    ms = model_parallel(loop_fn, halves)
    with open(out, 'w') as f:
        json.dump({'ms': ms[0]}, f)


def _spmd(steps, batch, out):
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr
    sys.path.insert(0, os.path.join(ROOT, 'examples'))
    from mnist_model import MNIST
    xr.use_spmd()
    mesh = xs.Mesh(np.arange(xr.global_runtime_device_count()), (xr.global_runtime_device_count(), ), ('data', ))
    batches = _batches(steps, batch)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = MNIST().train().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    times = []
    for data, target in batches:
        start = time.perf_counter()
        opt.zero_grad()
        x, y = data.to(device), target.to(device)
        xs.mark_sharding(x, mesh, ('data', None, None, None))
        xs.mark_sharding(y, mesh, ('data', ))
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
        loss.item()
        times.append(time.perf_counter() - start)
    moved = {k: met.counter_value(k) for k in met.counter_names() if k.startswith('SpmdReshard')}
    with open(out, 'w') as f:
        json.dump({'ms': statistics.median(times[WARMUP:]) * 1e3, 'reshard': moved}, f)


def _spmd_replica(index, steps, batch, out):
    _spmd(steps, batch, out if index == 0 else tempfile.mktemp(suffix='.json'))


def run_system(system, steps, batch, cache):
    out = tempfile.mktemp(suffix='.json')
    env = dict(os.environ, XLA_PERSISTENT_CACHE_PATH=cache, PYTHONPATH=ROOT, TXLA_NUM_THREADS='1')
    env.pop('OPENBLAS_CORETYPE', None)
    env.pop('OPENBLAS_L2_SIZE', None)
    if system in ('eager_1', 'xla_1'):
        env['TXLA_NUM_THREADS'] = '2'
        code = f'import bench.data_parallel as b; b._replica(0, {system!r}, {steps}, {batch}, {out!r})'
    elif system == 'xla_spmd':
        env.update(CPU_NUM_DEVICES='2', TXLA_NUM_THREADS='1')
        code = f'import bench.data_parallel as b; b._spmd({steps}, {batch}, {out!r})'
    elif system == 'xla_spmd_procs':
        code = ('import torch_xla.distributed.xla_multiprocessing as xmp, bench.data_parallel as b; '
                f'xmp.spawn(b._spmd_replica, args=({steps}, {batch}, {out!r}), nprocs=2)')
    elif system == 'xla_threads':
        env.update(CPU_NUM_DEVICES='2', TXLA_NUM_THREADS='2')
        code = f'import bench.data_parallel as b; b._threads({steps}, {batch}, {out!r})'
    else:
        code = ('import torch_xla.distributed.xla_multiprocessing as xmp, bench.data_parallel as b; '
                f'xmp.spawn(b._replica, args=({system!r}, {steps}, {batch}, {out!r}), nprocs=2)')
    subprocess.run([sys.executable, '-c', code], env=env, cwd=ROOT, check=True)
    with open(out) as f:
        return json.load(f)['ms']


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=30)
    parser.add_argument('--batch', type=int, default=128, help='global batch per step')
    parser.add_argument('--systems', default=','.join(SYSTEMS))
    args = parser.parse_args()
    systems = args.systems.split(',')
    cache = tempfile.mkdtemp(prefix='txla_dp_bench_')
    for s in systems:  # round 0 fills the disk cache; not measured
        if s.startswith('xla'):
            run_system(s, WARMUP + 2, args.batch, cache)
    results = {s: [] for s in systems}
    for r in range(args.rounds):
        for s in systems:
            results[s].append(run_system(s, args.steps, args.batch, cache))
            print(f'round {r} {s}: {results[s][-1]:.2f} ms/step', flush=True)
    base = statistics.median(results['eager_ddp']) if 'eager_ddp' in results else None
    print(f'\nMNIST CNN, global batch {args.batch}, {args.steps} steps x {args.rounds} rounds (median ms per step)')
    for s in systems:
        ms = statistics.median(results[s])
        ratio = f'{base / ms:5.2f}x eager_ddp' if base else ''
        print(f'  {s:12s} {ms:8.2f} ms   {ratio}')


if __name__ == '__main__':
    main()
