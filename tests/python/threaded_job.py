"""Threaded DataParallel jobs for test_distributed.py, run in a process of their own (the device
count, CPU_NUM_DEVICES, is fixed when torch_xla loads):

    threaded_job.py train <steps> <batches.pt> <out.pt>   # MNIST over every device
    threaded_job.py cpu <steps> <batches.pt> <out.pt>     # device_ids=[]: plain CPU
    threaded_job.py fail                                  # replica 1 raises mid-step
    threaded_job.py barrier                               # does mark_step wait for its graph?
"""
import sys

import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.data_parallel as dp
from mnist_model import MNIST


def train(steps, batches, devices):
    torch.manual_seed(0)
    model_parallel = dp.DataParallel(MNIST, device_ids=devices)

    def loop_fn(model, loader, device, context):
        optimizer = context.getattr_or('optimizer', lambda: torch.optim.SGD(model.parameters(), lr=0.05))
        model.train()
        seen = []
        # PyTorch/XLA 2.9 hands a device's loop its batches, and a loop without devices
        # (device_ids=[]) enumerate(loader).
        for step, (data, target) in (loader if device.type == 'cpu' else enumerate(loader)):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            xm.optimizer_step(optimizer)
            seen.append(step)
        return {'device': str(device), 'steps': seen, 'ordinal': xm.get_ordinal(),
                'world': xm.xrt_world_size()}

    results = model_parallel(loop_fn, batches[:steps * max(1, len(devices))])
    params = [{k: v.detach().cpu() for k, v in m.named_parameters()} for m in model_parallel.models]
    return results, params


def fail():
    model_parallel = dp.DataParallel(torch.nn.Linear(3, 1), device_ids=xm.get_xla_supported_devices())

    def loop_fn(model, loader, device, context):
        for step, (x,) in enumerate(loader):
            if xm.get_ordinal() == 1 and step == 1:
                raise ValueError('replica one gave up')
            y = xm.all_reduce(xm.REDUCE_SUM, model(x).sum())
            y.cpu()  # the others wait here for replica 1, which never comes
        return 'done'

    model_parallel(loop_fn, [(torch.ones(2, 3),)] * 8)


def barrier():
    """Replica 0 runs a graph holding an all-reduce, which cannot finish before replica 1 joins it;
    replica 1 starts its step only once replica 0's mark_step has returned (or after 5 s). So
    mark_step returned in time only if it does not wait for its graph to finish."""
    import threading
    returned = threading.Event()
    model_parallel = dp.DataParallel(torch.nn.Linear(3, 1), device_ids=xm.get_xla_supported_devices())

    def loop_fn(model, loader, device, context):
        in_time = None
        for step, (x,) in enumerate(loader):
            if xm.get_ordinal() == 1:
                in_time = returned.wait(5)
            y = xm.all_reduce(xm.REDUCE_SUM, model(x).sum())
            xm.mark_step()
            if xm.get_ordinal() == 0:
                returned.set()
            y.cpu()
        return in_time

    results = model_parallel(loop_fn, [(torch.ones(2, 3),)] * 2)
    print('mark_step returned before its graph finished:', results[1])


if __name__ == '__main__':
    what = sys.argv[1]
    if what == 'fail':
        fail()
    elif what == 'barrier':
        barrier()
    else:
        steps, batches, out = int(sys.argv[2]), torch.load(sys.argv[3]), sys.argv[4]
        devices = [] if what == 'cpu' else xm.get_xla_supported_devices()
        results, params = train(steps, batches, devices)
        counters = {n: torch_xla._XLAC._xla_counter_value(n)
                    for n in ('CollectiveAllReduce', 'InterpretedGraph', 'TransferFromDeviceTime')}
        torch.save({'results': results, 'params': params, 'counters': counters}, out)
