"""Data-parallel MNIST over the devices of one process, in threads, as the seeds' MultiThreading
example writes it (torch_xla.distributed.data_parallel.DataParallel; synthetic data). The
number of devices comes from CPU_NUM_DEVICES; --cpu passes device_ids=[] (plain CPU PyTorch).

    CPU_NUM_DEVICES=2 .venv/bin/python examples/train_mnist_threads.py --epochs 2
"""
import argparse
import os
import sys

import torch.nn as nn
import torch.optim as optim

import torch_xla.core.xla_model as xm
import torch_xla.distributed.data_parallel as dp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist_model import MNIST, synthetic_mnist  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batches', type=int, default=40)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--momentum', type=float, default=0.5)
    parser.add_argument('--cpu', action='store_true')
    args = parser.parse_args()

    devices = [] if args.cpu else xm.get_xla_supported_devices()
    model_parallel = dp.DataParallel(MNIST, device_ids=devices)
    train_loader = synthetic_mnist(args.batches, args.batch_size, seed=1)

    def train_loop_fn(model, loader, device, context):
        loss_fn = nn.NLLLoss()
        optimizer = context.getattr_or(
            'optimizer', lambda: optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum))
        model.train()
        last = None
        # A device's loop gets its batches; without devices (--cpu) PyTorch/XLA 2.9 hands the
        # loop enumerate(loader).
        for batch in loader:
            data, target = batch[1] if device.type == 'cpu' else batch
            optimizer.zero_grad()
            output = model(data)
            loss = loss_fn(output, target)
            loss.backward()
            xm.optimizer_step(optimizer)
            last = loss
        return last.item()

    for epoch in range(1, args.epochs + 1):
        losses = model_parallel(train_loop_fn, train_loader)
        print(f'epoch {epoch}: last loss per device {[round(l, 4) for l in losses]} '
              f'on {devices or ["cpu"]}')


if __name__ == '__main__':
    main()
