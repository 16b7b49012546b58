"""Trains the MNIST network on the xla device, as the PyTorch/XLA documents show it, on synthetic
data; prints the loss as it falls and the metrics report at the end.

    .venv/bin/python examples/train_mnist.py --steps 300 --optimizer sgd
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist_model import MNIST, synthetic_mnist  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=300)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--optimizer', choices=['sgd', 'adam'], default='sgd')
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--momentum', type=float, default=0.5)
    parser.add_argument('--log-every', type=int, default=25)
    args = parser.parse_args()

    torch.manual_seed(1)
    device = xm.xla_device()
    model = MNIST().train().to(device)
    if args.optimizer == 'sgd':
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr / 10)
    loader = synthetic_mnist(num_batches=50, batch_size=args.batch_size)

    print(f'training MNIST on {device} ({args.optimizer}, batch {args.batch_size}, '
          f'{args.steps} steps)')
    start = time.time()
    for step in range(1, args.steps + 1):
        data, target = loader[step % len(loader)]
        optimizer.zero_grad()
        loss = F.nll_loss(model(data.to(device)), target.to(device))
        loss.backward()
        optimizer.step()
        xm.mark_step()
        if step % args.log_every == 0 or step == 1:
            print(f'step {step:4d}  loss {loss.item():.4f}  '
                  f'({(time.time() - start) / step * 1e3:.1f} ms/step)', flush=True)

    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader[:10]:
            pred = model(data.to(device)).argmax(1)
            correct += (pred.cpu() == target).sum().item()
    print(f'accuracy on 10 training batches: {correct / (10 * args.batch_size):.3f}')
    print(met.metrics_report())


if __name__ == '__main__':
    main()
