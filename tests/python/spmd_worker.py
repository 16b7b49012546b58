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

xr.use_spmd()
N = xr.global_runtime_device_count()
MESH = xs.Mesh(np.arange(N), (2, N // 2), ('data', 'model'))
out = {'devices': N}


def megatron_training():
    """fc1 column-parallel, fc2 row-parallel, batch over 'data': parameters after 4 SGD steps
    against eager float32 and float64."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.Tanh(), torch.nn.Linear(24, 6))
    m64 = copy.deepcopy(m).double()
    mx = copy.deepcopy(m).to('xla')
    xs.mark_sharding(mx[0].weight, MESH, ('model', None))
    xs.mark_sharding(mx[0].bias, MESH, ('model', ))
    xs.mark_sharding(mx[2].weight, MESH, (None, 'model'))
    x, y = torch.randn(8, 16), torch.randn(8, 6)
    compiles = []
    for model, dev, dtype in ((m, 'cpu', torch.float32), (m64, 'cpu', torch.float64), (mx, 'xla', torch.float32)):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(4):
            opt.zero_grad()
            xin = x.to(dev, dtype)
            if dev == 'xla':
                xs.mark_sharding(xin, MESH, ('data', None))
            loss = ((model(xin) - y.to(dev, dtype))**2).mean()
            loss.backward()
            opt.step()
            if dev == 'xla':
                xm.mark_step()
                compiles.append(met.counter_value('UncachedCompile') or 0)
    dev32 = max((a.double() - b).abs().max().item() for a, b in zip(m.parameters(), m64.parameters()))
    devx = max((a.cpu().double() - b).abs().max().item() for a, b in zip(mx.parameters(), m64.parameters()))
    out['megatron'] = {
        'eager32_from_f64': dev32, 'xla_from_f64': devx,
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


megatron_training()
uneven_shards()
resharding_explained()
bad_input()
print(json.dumps(out))
