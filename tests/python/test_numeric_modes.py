"""The numeric modes of the seeds, each in a fresh process (switches are read at import), against
eager CPU in the matching precision: XLA_USE_BF16 (float32 and float64 stored and computed as
bfloat16, dtypes reported as PyTorch's), XLA_DOWNCAST_BF16 (float32 as bfloat16, float64 as
float32), XLA_USE_32BIT_LONG (int64 as int32). Each case also shows that nothing fell back to the
interpreter or the CPU."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

SCRIPT = """
import sys, torch, torch_xla
import torch.nn.functional as F
import torch_xla.debug.metrics as met
dev = torch_xla.device()
sys.path.insert(0, {here!r})
from test_numeric_modes import inputs, model_losses
out = {{}}
x32, x64, w32, idx, tgt = inputs()
for name, t in (('x32', x32), ('x64', x64), ('idx', idx)):
    d = t.to(dev)
    out[name + '_dtype'] = str(d.dtype)
    out[name + '_round_trip'] = d.cpu()
out['matmul'] = (x32.to(dev) @ w32.to(dev)).relu().cpu()
out['double_sum'] = (x64.to(dev) * 3).sum(0).cpu()
out['argmax'] = (x32.to(dev) @ w32.to(dev)).argmax(-1).cpu()
out['index_math'] = (idx.to(dev) * 7 + 3).cpu()
out['gathered'] = F.embedding(idx.to(dev), w32.t().contiguous().to(dev)).cpu()
out['losses'] = model_losses(dev)
out['fallbacks'] = [n for n in met.counter_names()
                    if n.startswith(('aten::', 'InterpretedGraph', 'LoweringError', 'NoLowering', 'NoCodegen'))]
torch.save(out, sys.argv[1])
"""


def inputs():
    g = torch.Generator().manual_seed(0)
    x32 = torch.randn(6, 9, generator=g)
    x64 = torch.randn(5, 4, generator=g, dtype=torch.float64)
    w32 = torch.randn(9, 4, generator=g)
    idx = torch.randint(0, 4, (7,), generator=g)
    tgt = torch.randint(0, 3, (6,), generator=g)
    return x32, x64, w32, idx, tgt


def model_losses(device, dtype=torch.float32):
    """Three SGD steps of an embedding + conv + linear model with cross entropy."""
    torch.manual_seed(1)
    emb = torch.nn.Embedding(20, 8).to(dtype).to(device)
    conv = torch.nn.Conv2d(1, 3, 3).to(dtype).to(device)
    lin = torch.nn.Linear(8, 5).to(dtype).to(device)
    params = [*emb.parameters(), *conv.parameters(), *lin.parameters()]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(2)
    tokens, target = torch.randint(0, 20, (6, 4), generator=g), torch.randint(0, 5, (6,), generator=g)
    image = torch.randn(6, 1, 5, 5, generator=g).to(dtype)
    losses = []
    for _ in range(3):
        h = emb(tokens.to(device)).mean(1) + conv(image.to(device)).mean((1, 2, 3))[:, None]
        loss = F.cross_entropy(lin(h), target.to(device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        if device != 'cpu':
            import torch_xla
            torch_xla.sync()
        losses.append(loss.detach().float().cpu())
    return torch.stack(losses)


def run_mode(tmp_path, **env):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / 'out.pt'
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(SCRIPT.format(here=here)), str(out)],
                          env=dict(os.environ, **env), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return torch.load(out, weights_only=False)


def test_use_bf16_stores_floats_and_doubles_as_bfloat16(tmp_path):
    got = run_mode(tmp_path, XLA_USE_BF16='1')
    x32, x64, w32, idx, tgt = inputs()
    assert got['x32_dtype'] == 'torch.float32' and got['x64_dtype'] == 'torch.float64'
    assert got['x32_round_trip'].dtype == torch.float32 and got['x64_round_trip'].dtype == torch.float64
    # Values on the device are bfloat16: a round trip is exactly bfloat16 rounding.
    assert torch.equal(got['x32_round_trip'], x32.bfloat16().float())
    assert torch.equal(got['x64_round_trip'], x64.bfloat16().double())
    assert torch.equal(got['idx_round_trip'], idx)
    bf = dict(rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(got['matmul'], (x32.bfloat16() @ w32.bfloat16()).relu().float(), **bf)
    torch.testing.assert_close(got['double_sum'], (x64.bfloat16() * 3).sum(0).double(), **bf)
    torch.testing.assert_close(got['losses'], model_losses('cpu', torch.bfloat16), **bf)
    assert torch.equal(got['gathered'], F.embedding(idx, w32.t().contiguous().bfloat16()).float())
    assert got['fallbacks'] == []


def test_downcast_bf16_stores_floats_as_bfloat16_and_doubles_as_float(tmp_path):
    got = run_mode(tmp_path, XLA_DOWNCAST_BF16='1')
    x32, x64, w32, idx, tgt = inputs()
    assert got['x64_dtype'] == 'torch.float64' and got['x64_round_trip'].dtype == torch.float64
    assert torch.equal(got['x32_round_trip'], x32.bfloat16().float())
    assert torch.equal(got['x64_round_trip'], x64.float().double())
    torch.testing.assert_close(got['double_sum'], (x64.float() * 3).sum(0).double(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got['matmul'], (x32.bfloat16() @ w32.bfloat16()).relu().float(), rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(got['losses'], model_losses('cpu', torch.bfloat16), rtol=2e-2, atol=2e-2)
    assert got['fallbacks'] == []


def test_use_32bit_long_computes_int64_as_int32(tmp_path):
    got = run_mode(tmp_path, XLA_USE_32BIT_LONG='1')
    x32, x64, w32, idx, tgt = inputs()
    assert got['idx_dtype'] == 'torch.int64' and got['idx_round_trip'].dtype == torch.int64
    assert torch.equal(got['idx_round_trip'], idx)
    assert torch.equal(got['index_math'], idx * 7 + 3)
    assert torch.equal(got['argmax'], (x32 @ w32).argmax(-1))
    assert torch.equal(got['gathered'], F.embedding(idx, w32.t().contiguous()))
    assert torch.equal(got['x32_round_trip'], x32) and torch.equal(got['x64_round_trip'], x64)
    torch.testing.assert_close(got['losses'], model_losses('cpu'), rtol=1e-5, atol=1e-5)
    assert got['fallbacks'] == []
