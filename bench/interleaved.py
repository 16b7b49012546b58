"""Eager and this project's xla device on one model in one process, step by step in turn: the
ratio of each pair of steps, so that the machine's drift (these 2-core machines move 10-40%
between processes) hits both sides of every ratio alike. For comparing two builds of the project,
where train_step.py's separate processes differ more from run to run than the builds do.

Each step reads the loss (`loss.item()`); after an xla step the device's remaining work is waited
for outside the timing, so that it does not run during the next eager step. The xla side is thus
the host's trace plus the wait for the loss, without the optimizer's kernels that a training loop
overlaps with its next trace.

    .venv/bin/python bench/interleaved.py whisper --steps 60
"""
import argparse
import copy
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_step import workload  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('model', help='a model of train_step.py (zoo models included)')
    parser.add_argument('--steps', type=int, default=60)
    parser.add_argument('--warmup', type=int, default=5)
    args = parser.parse_args()
    import torch_xla
    import torch_xla.core.xla_model as xm
    dev = torch_xla.device()
    model, data, target, loss_fn, make_opt = workload(args.model, 0)
    if not isinstance(data, dict):
        raise SystemExit('interleaved.py runs the zoo models (keyword batches); use train_step.py for the others')
    sides = {'eager': (model.train(), 'cpu'), 'xla': (copy.deepcopy(model).train().to(dev), dev)}
    optimizers = {name: make_opt(m.parameters()) for name, (m, _) in sides.items()}

    def step(name):
        m, device = sides[name]
        opt = optimizers[name]
        opt.zero_grad()
        inputs = {k: v.to(device) for k, v in data.items()}
        loss = loss_fn(m(**inputs), inputs)
        loss.backward()
        opt.step()
        if name == 'xla':
            xm.mark_step()
        return loss.item()

    times = {'eager': [], 'xla': []}
    for i in range(args.warmup + args.steps):
        for name in ('eager', 'xla'):
            start = time.perf_counter()
            step(name)
            if i >= args.warmup:
                times[name].append((time.perf_counter() - start) * 1e3)
            if name == 'xla':
                xm.wait_device_ops()
    ratios = [e / x for e, x in zip(times['eager'], times['xla'])]
    print(f'{args.model}: eager {statistics.median(times["eager"]):.2f} ms, xla {statistics.median(times["xla"]):.2f} ms, '
          f'eager/xla per pair of steps (median) {statistics.median(ratios):.3f}')


if __name__ == '__main__':
    main()
