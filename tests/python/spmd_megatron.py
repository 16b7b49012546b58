"""The Megatron-style MLP the SPMD workers train (spmd_worker.py, spmd_processes_worker.py): fc1
column-parallel, fc2 row-parallel, the batch and its targets over the mesh's 'data' axis; four
SGD steps each on eager float32, eager float64 and the xla device."""
import copy

import torch

import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs


def train(mesh, after_step=lambda loss: None):
    """(eager float32 model, float64 model, xla model) after training; `after_step(loss)` runs
    after each of the xla model's steps."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.Tanh(), torch.nn.Linear(24, 6))
    m64 = copy.deepcopy(m).double()
    mx = copy.deepcopy(m).to('xla')
    xs.mark_sharding(mx[0].weight, mesh, ('model', None))
    xs.mark_sharding(mx[0].bias, mesh, ('model', ))
    xs.mark_sharding(mx[2].weight, mesh, (None, 'model'))
    x, y = torch.randn(8, 16), torch.randn(8, 6)
    for model, dev, dtype in ((m, 'cpu', torch.float32), (m64, 'cpu', torch.float64), (mx, 'xla', torch.float32)):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(4):
            opt.zero_grad()
            xin, yin = x.to(dev, dtype), y.to(dev, dtype)
            if dev == 'xla':
                xs.mark_sharding(xin, mesh, ('data', None))
                xs.mark_sharding(yin, mesh, ('data', None))
            loss = ((model(xin) - yin)**2).mean()
            loss.backward()
            opt.step()
            if dev == 'xla':
                xm.mark_step()
                after_step(loss)
    return m, m64, mx


def largest_deviation(params, reference):
    """The largest elementwise difference of `params` (any device) from `reference`'s."""
    return max((a.detach().cpu().double() - b).abs().max().item() for a, b in zip(params, reference))
