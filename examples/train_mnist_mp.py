"""Data-parallel MNIST, one process per replica, as the seeds' multiprocessing example writes it
(synthetic data). Each replica trains on its own shard; xm.optimizer_step all-reduces the
gradients inside the compiled step.

    .venv/bin/python examples/train_mnist_mp.py --num-cores 2 --steps 50
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.optim as optim

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist_model import MNIST, synthetic_mnist  # noqa: E402


def _mp_fn(index, args):
    device = xm.xla_device()
    torch.manual_seed(0)
    # Each replica reads its own shard of the (synthetic) data set.
    train_loader = synthetic_mnist(args.steps, args.batch_size, seed=100 + xm.get_ordinal())
    mp_device_loader = pl.MpDeviceLoader(train_loader, device)
    model = MNIST().train().to(device)
    xm.broadcast_master_param(model)  # every replica starts from the master's weights
    loss_fn = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    tracker = xm.RateTracker()
    for step, (data, target) in enumerate(mp_device_loader):
        optimizer.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        xm.optimizer_step(optimizer)
        tracker.add(args.batch_size)
        if step % args.log_every == 0:
            xm.add_step_closure(lambda s, l: xm.master_print(
                f'step {s:4d}  loss {l.item():.4f}  {tracker.rate():.1f} samples/s per replica'), args=(step, loss))
    xm.master_print(f'done: {xm.xrt_world_size()} replicas, {args.steps} steps each')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--num-cores', type=int, default=2)
    parser.add_argument('--steps', type=int, default=50)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--momentum', type=float, default=0.5)
    parser.add_argument('--log-every', type=int, default=10)
    args = parser.parse_args()
    xmp.spawn(_mp_fn, args=(args,), nprocs=args.num_cores)
