"""Auto-sharding checks, in a process of their own (auto-sharding stays on once on):
`CPU_NUM_DEVICES=4 python spmd_auto_worker.py` prints one JSON object of results."""
import copy
import json

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.runtime as xr

out = {}
before = torch.ones(2, 2).to('xla')
xr.use_spmd()
hash_plain = torch_xla._XLAC._get_graph_hash([before + 0])
xr.use_spmd(auto=True)
out['auto'] = torch_xla._XLAC._xla_get_auto_sharding()
out['hash_differs'] = torch_xla._XLAC._get_graph_hash([before + 0]) != hash_plain

# An MLP trained under auto-sharding against eager float32 and float64: the layouts the compiler
# picks change how the work is spread, not the answer.
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
m64, mx = copy.deepcopy(m).double(), copy.deepcopy(m).to('xla')
x, y = torch.randn(256, 64), torch.randn(256, 8)
compiles = []
for model, dev, dtype in ((m, 'cpu', torch.float32), (m64, 'cpu', torch.float64), (mx, 'xla', torch.float32)):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    xin, yin = x.to(dev, dtype), y.to(dev, dtype)
    for step in range(6):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xin), yin).backward()
        opt.step()
        if dev == 'xla':
            xm.mark_step()
            compiles.append(met.counter_value('CompileWithAutoSharding') or 0)
dist = lambda ps: max((a.detach().cpu().double() - b).abs().max().item() for a, b in zip(ps, m64.parameters()))
out['eager32_from_f64'], out['xla_from_f64'] = dist(m.parameters()), dist(mx.parameters())
out['compiles'] = compiles
# The layouts chosen, as the partitioned program's parameters show them: the batch split 4 ways.
import os
os.environ['XLA_DUMP_POST_OPTIMIZATIONS'] = '1'
hlo = torch_xla._XLAC._get_xla_tensors_hlo([mx(xin).sum()])
del os.environ['XLA_DUMP_POST_OPTIMIZATIONS']
out['split'] = [line.strip() for line in hlo.splitlines() if 'parameter(' in line and 'devices=[4,1]' in line
                and 'f32[64,64]' in line]
out['unpartitioned'] = met.counter_value('SpmdUnpartitionedGraph') or 0
print(json.dumps(out))
