"""SPMD benchmark: a Megatron-style MLP (fc1 column-parallel, fc2 row-parallel) trained on one
device and partitioned over the devices of one process, on 1-D and 2-D meshes.

Each system runs in a fresh process (SPMD is process-wide), interleaved over rounds. Reported per
system: the median ms per step (the loss read every step), the parameter bytes each device holds,
and the bytes the step's collectives deliver to the devices (CollectiveBytes: every device's
all-reduced tile and gathered whole, per step).

    CPU_NUM_DEVICES is set per system; run as  .venv/bin/python bench/spmd_mlp.py --rounds 3
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WARMUP = 5
# system: (devices, mesh shape, axis names, fc1 weight spec, fc2 weight spec, batch spec)
SYSTEMS = {
    'xla_1': (1, None, None, None, None, None),
    'spmd_data_2': (2, (2, 1), ('data', 'model'), None, None, ('data', None)),
    'spmd_model_2': (2, (1, 2), ('data', 'model'), ('model', None), (None, 'model'), ('data', None)),
    'spmd_2x2': (4, (2, 2), ('data', 'model'), ('model', None), (None, 'model'), ('data', None)),
}


def _per_device_bytes(tensor, spec):
    import torch_xla
    text = torch_xla._XLAC._get_xla_sharding_spec(tensor) if spec else ''
    m = re.match(r'\{devices=\[([0-9,]+)\]', text)
    tiles = 1
    if m:
        dims = [int(d) for d in m.group(1).split(',')]
        tiles = 1
        for d in (dims[:-1] if 'last_tile_dim_replicate' in text else dims):
            tiles *= d
    return tensor.numel() * tensor.element_size() / tiles


def _run(system, steps, batch, hidden, out):
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met
    import torch_xla.runtime as xr
    devices, mesh_shape, axes, w1_spec, w2_spec, x_spec = SYSTEMS[system]
    if mesh_shape:
        import torch_xla.distributed.spmd as xs
        xr.use_spmd()
        mesh = xs.Mesh(np.arange(devices), mesh_shape, axes)
    torch.manual_seed(0)
    dev = torch_xla.device()
    model = torch.nn.Sequential(torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(),
                                torch.nn.Linear(4 * hidden, hidden)).to(dev)
    if mesh_shape and w1_spec:
        xs.mark_sharding(model[0].weight, mesh, w1_spec)
        xs.mark_sharding(model[0].bias, mesh, (w1_spec[0], ))
        xs.mark_sharding(model[2].weight, mesh, w2_spec)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = [(torch.randn(batch, hidden), torch.randn(batch, hidden)) for _ in range(4)]
    times, moved = [], []
    for step in range(steps):
        x, y = (t.to(dev) for t in data[step % len(data)])
        if mesh_shape:
            xs.mark_sharding(x, mesh, x_spec)
        start = time.perf_counter()
        before = met.counter_value('CollectiveBytes') or 0
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
        loss.item()
        times.append(time.perf_counter() - start)
        moved.append((met.counter_value('CollectiveBytes') or 0) - before)
    params = sum(_per_device_bytes(p, mesh_shape) for p in model.parameters())
    with open(out, 'w') as f:
        json.dump({'ms': statistics.median(times[WARMUP:]) * 1e3, 'param_mb': params / 2**20,
                   'collective_mb': statistics.median(moved[WARMUP:]) / 2**20}, f)


def run_system(system, steps, batch, hidden):
    out = tempfile.mktemp(suffix='.json')
    devices = SYSTEMS[system][0]
    env = dict(os.environ, PYTHONPATH=ROOT, CPU_NUM_DEVICES=str(devices),
               TXLA_NUM_THREADS=str(max(1, os.cpu_count() // devices)))
    code = f'import bench.spmd_mlp as b; b._run({system!r}, {steps}, {batch}, {hidden}, {out!r})'
    subprocess.run([sys.executable, '-c', code], env=env, cwd=ROOT, check=True)
    with open(out) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=25)
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--hidden', type=int, default=512)
    parser.add_argument('--systems', default=','.join(SYSTEMS))
    args = parser.parse_args()
    systems = args.systems.split(',')
    results = {s: [] for s in systems}
    for r in range(args.rounds):
        for s in systems:
            results[s].append(run_system(s, args.steps, args.batch, args.hidden))
            print(f"round {r} {s}: {results[s][-1]['ms']:.2f} ms/step", flush=True)
    base = statistics.median(x['ms'] for x in results[systems[0]])
    print(f'\nMLP {args.hidden}-{4 * args.hidden}-{args.hidden}, batch {args.batch}, '
          f'{args.steps} steps x {args.rounds} rounds')
    print(f"| system | step ms | vs {systems[0]} | params MB per device | collective MB per step |")
    print('|---|---:|---:|---:|---:|')
    for s in systems:
        ms = statistics.median(x['ms'] for x in results[s])
        print(f"| {s} | {ms:.2f} | {base / ms:.2f}x | {results[s][-1]['param_mb']:.2f} | "
              f"{results[s][-1]['collective_mb']:.3f} |")


if __name__ == '__main__':
    main()
