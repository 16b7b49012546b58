"""A long training run: 2,000 steps of an MLP with SGD momentum, a barrier per step and a loss
read every 100 steps. Resident memory is flat after warm-up (a per-step leak of ~1 KB would show)
and nothing recompiles."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import gc, os
    import torch, torch.nn as nn
    import torch_xla, torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    def rss_mb():
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

    dev = xm.xla_device()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(32, 64).to(dev), torch.randint(0, 10, (32,)).to(dev)
    for step in range(1, 2001):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
        if step % 100 == 0:
            loss.item()
        if step in (250, 1000, 2000):
            xm.wait_device_ops()
            gc.collect()
            print('rss', step, rss_mb(), met.counter_value('UncachedCompile'))
""")


def test_resident_memory_is_flat_over_2000_training_steps():
    run = subprocess.run([sys.executable, '-c', SCRIPT], env=dict(os.environ, PYTHONPATH=ROOT),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    samples = [l.split() for l in run.stdout.splitlines() if l.startswith('rss')]
    rss = {int(s[1]): float(s[2]) for s in samples}
    compiles = {int(s[1]): int(s[3]) for s in samples}
    print(rss)
    assert rss[2000] - rss[250] < 2.0, rss  # MB, over 1,750 steps
    assert rss[2000] - rss[1000] < 1.0, rss
    assert compiles[250] == compiles[2000], compiles  # no graph compiled after warm-up
