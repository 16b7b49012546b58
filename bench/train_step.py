"""Training-step benchmark: eager CPU PyTorch, torch.compile with inductor, PyTorch/XLA 2.9 itself,
and this project's xla device (lazily and through torch.compile('openxla')), on the same models,
in one run.

Each measurement runs in its own process (one per system and model, interleaved over rounds, so
machine noise hits all systems alike). OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for every
system so eager's GEMMs run at their best.

Systems:
  eager         torch 2.9 on the CPU
  inductor      torch.compile(model) (inductor, CPU); its compile is in the first step
  lazy_ts       torch._lazy with the TorchScript backend (torch's own lazy tensor reference)
  xla           this project, lazily: a cold compile into an empty disk cache
  xla_warm      this project again, in a new process, with that disk cache warm
  xla_dynamo    this project through torch.compile(model, backend='openxla')
  ptxla         PyTorch/XLA 2.9 (torch-xla==2.9.0 from PyPI, PJRT_DEVICE=CPU), lazily
  ptxla_dynamo  PyTorch/XLA 2.9 through torch.compile(model, backend='openxla')
PyTorch/XLA installs a package named torch_xla too, so it runs from a venv of its own, made on
first use under ~/.cache/txla-bench/ptxla-venv (torch 2.9.0, torchvision 0.24.0, torch-xla 2.9.0, and
the zoo's transformers, timm and diffusers at the test extras' pins).

Models: mlp (784-512-512-10, batch 128, SGD momentum), cnn (the MNIST CNN of the seeds, batch 128,
SGD momentum), resnet18 (torchvision, batch 16 of 3x64x64, SGD momentum), gpt (a 2-layer decoder,
dim 128, 4 heads, 64 tokens, batch 8, AdamW); encoder (inference: nn.TransformerEncoder, 4 layers of
d_model 256, 8 heads, 128 tokens, batch 8, under torch.no_grad()); `zoo` adds the models of tests/python/model_zoo.py,
each with its own optimizer, and the zoo's diffusion loop (unet: a UNet2DConditionModel through 4
DDIM steps), whose "step" is that loop under torch.no_grad() with a scalar of its output read.

Columns: first step (compilation included), steady-state ms/step with the loss read every
step, "piped" (barriers only, the loss read once at the end of a block of 5 steps; blocks of
both kinds alternate; each the median over blocks of a block's mean step), host ms (median time to issue one
step while the device is idle: tracing and the barrier's graph cut for lazy systems, replay for
torch.compile ones; for eager and inductor, the step itself), compile time (the device's CompileTime metric), peak RSS.

    .venv/bin/python bench/train_step.py                       # every model and system, 1 round
    .venv/bin/python bench/train_step.py --models mlp,cnn --systems eager,xla --rounds 3
    .venv/bin/python bench/train_step.py --autocast bfloat16    # mixed precision, each system's autocast
    .venv/bin/python bench/train_step.py --allocator jemalloc   # every system with jemalloc preloaded
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SYSTEMS = ['eager', 'inductor', 'xla', 'xla_warm', 'xla_dynamo', 'ptxla', 'ptxla_dynamo']
MODELS = ['mlp', 'cnn', 'resnet18', 'gpt']
PTXLA_VENV = os.path.expanduser('~/.cache/txla-bench/ptxla-venv')
# --allocator: the system's glibc malloc, or jemalloc preloaded into every system's process alike
ALLOCATORS = {'system': None, 'jemalloc': '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'}
# The zoo's libraries at the test extras' pins (pyproject.toml), so the zoo runs there too.
PTXLA_PINS = ['torch==2.9.0', 'torchvision==0.24.0', 'torch-xla==2.9.0', 'numpy', 'transformers==4.57.1',
              'timm==1.0.20', 'diffusers==0.35.2']


def workload(name, batch):
    """(model, inputs, target, loss_fn, make_optimizer) on the CPU."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(ROOT, 'examples'))
    sgd = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)  # noqa: E731
    if name == 'mlp':
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                              nn.ReLU(), nn.Linear(512, 10), nn.LogSoftmax(dim=1))
        return (model, torch.randn(batch or 128, 1, 28, 28), torch.randint(0, 10, (batch or 128,)),
                F.nll_loss, sgd)
    if name == 'cnn':
        from mnist_model import MNIST
        return (MNIST(), torch.randn(batch or 128, 1, 28, 28), torch.randint(0, 10, (batch or 128,)),
                F.nll_loss, sgd)
    if name == 'resnet18':
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
        return (model, torch.randn(batch or 16, 3, 64, 64), torch.randint(0, 10, (batch or 16,)),
                F.cross_entropy, sgd)
    if name == 'gpt':
        from decoder_model import Decoder, next_token_loss
        tokens = torch.randint(0, 512, (batch or 8, 64))
        return (Decoder(), tokens, tokens, lambda logits, t: next_token_loss(logits, t),
                lambda p: torch.optim.AdamW(p, lr=1e-3))
    if name == 'encoder':
        # Inference (no optimizer): eager takes its fused fast path (_transformer_encoder_layer_fwd).
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, batch_first=True)
        return (nn.TransformerEncoder(layer, num_layers=4), torch.randn(batch or 8, 128, 256), None,
                lambda out, _: out.square().mean(), None)
    zoo = zoo_models()
    if name in zoo:
        # A model of the test zoo (tests/python/model_zoo.py): its batch is the model's keyword
        # inputs and its loss reads the batch (labels inside); its own optimizer, without the
        # zoo's clipping and schedule.
        entry = zoo[name]()
        torch.manual_seed(0)
        return entry.build(), entry.batch(), None, entry.loss, entry.optimizer if entry.train else None
    raise SystemExit(f'unknown model {name}')


def zoo_models():
    sys.path.insert(0, os.path.join(ROOT, 'tests', 'python'))
    import model_zoo
    return dict(model_zoo.ZOO)


def child(system, model_name, steps, batch, autocast=''):
    import contextlib
    import torch
    torch.manual_seed(0)
    compiled = system in ('inductor', 'xla_dynamo', 'ptxla_dynamo')
    wait = lambda: None  # noqa: E731
    if system in ('eager', 'inductor'):
        device, barrier = torch.device('cpu'), lambda: None
    elif system == 'lazy_ts':
        import torch._lazy
        import torch._lazy.ts_backend
        torch._lazy.ts_backend.init()
        device, barrier = torch.device('lazy'), torch._lazy.mark_step
    else:  # xla*, ptxla*: the same PyTorch/XLA API in both packages
        import torch_xla.core.xla_model as xm
        device, barrier, wait = xm.xla_device(), xm.mark_step, xm.wait_device_ops
    model, data, target, loss_fn, make_opt = workload(model_name, batch)
    evaluated = make_opt is None  # inference (the encoder, the zoo's diffusion loop): no gradients
    model = (model.eval() if evaluated else model.train()).to(device)
    opt = None if evaluated else make_opt(model.parameters())
    run = model
    if compiled:
        run = torch.compile(model) if system == 'inductor' else torch.compile(model, backend='openxla')

    # Mixed precision: each system's own torch.autocast (eager and inductor: 'cpu', which runs
    # oneDNN's bf16 kernels; the xla systems: 'xla').
    mixed = (lambda: torch.autocast(device.type, dtype=getattr(torch, autocast))) if autocast else contextlib.nullcontext

    def forward_loss():
        if isinstance(data, dict):  # a zoo model: keyword inputs, the loss reads them
            inputs = {k: v.to(device) for k, v in data.items()}
            return loss_fn(run(**inputs), inputs)
        return loss_fn(run(data.to(device)), None if target is None else target.to(device))

    def step():
        if evaluated:
            with torch.no_grad(), mixed():
                loss = forward_loss()
            barrier()
            return loss
        opt.zero_grad()
        with mixed():
            loss = forward_loss()
        loss.backward()
        opt.step()
        barrier()
        return loss

    # The first step (compilation included) and two more to settle.
    times = []
    for _ in range(3):
        start = time.perf_counter()
        loss_value = step().item()
        times.append(time.perf_counter() - start)
    # Then blocks of steps in alternating order: reading the loss every step (every system
    # finishes the step before the clock stops), and pipelined, barriers only with one read at
    # the block's end (as a loop that logs every N steps runs). Alternating keeps the machine's
    # drift out of the comparison: measured one after the other, the second mode came out up to
    # 5% slower for every system, eager included. Both modes count a block's mean step, the
    # median over blocks: a training loop's throughput is its mean step. (Read steps used to be
    # timed one by one and their median taken, which drops the slow steps a mean keeps: eager's
    # MLP, whose steps have a long tail (median 3.20, mean 3.47 ms), came out 10-13% slower
    # "piped" than read every step, with nothing to pipeline.)
    block = 5
    read, piped = [], []
    for b in range(max(1, steps // block)):
        for mode in (('read', 'piped') if b % 2 == 0 else ('piped', 'read')):
            start = time.perf_counter()
            if mode == 'read':
                for _ in range(block):
                    loss_value = step().item()
                read.append((time.perf_counter() - start) / block)
            else:
                for _ in range(block):
                    loss = step()
                loss.item()
                piped.append((time.perf_counter() - start) / block)
    pipelined_ms = statistics.median(piped) * 1e3
    # Host cost: issuing one step with the device idle (tracing and the barrier's cut, or a
    # replay), so no wait for a queue slot is counted.
    host = []
    for _ in range(max(steps // 2, 3)):
        wait()
        t0 = time.perf_counter()
        step()
        host.append(time.perf_counter() - t0)
    wait()
    compile_ms = None
    if system.startswith(('xla', 'ptxla')):
        import torch_xla.debug.metrics as met
        data_ = met.metric_data('CompileTime')
        compile_ms = data_[1] / 1e6 if data_ else 0.0
    return {
        'first_ms': times[0] * 1e3,
        'median_ms': statistics.median(read) * 1e3,
        'pipelined_ms': pipelined_ms,
        'host_ms': statistics.median(host) * 1e3,
        'compile_ms': compile_ms,
        'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        'loss': loss_value,
    }


def ptxla_python():
    """The PyTorch/XLA venv's python, made on first use (a few minutes, from pip's cache faster)."""
    python = os.path.join(PTXLA_VENV, 'bin', 'python')
    probe = [python, '-c', 'import torch_xla, torchvision, transformers, timm, diffusers']
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f'making {PTXLA_VENV} with {" ".join(PTXLA_PINS)} ...', file=sys.stderr)
    subprocess.run(['python3', '-m', 'venv', PTXLA_VENV], check=True)
    subprocess.run([python, '-m', 'pip', 'install', '-q'] + PTXLA_PINS, check=True)
    return python


def cpu_name():
    try:
        with open('/proc/cpuinfo') as f:
            info = f.read()
    except OSError:
        return platform.processor()
    name = next((line.split(':', 1)[1].strip() for line in info.splitlines()
                 if line.startswith('model name')), '?')
    flags = next((line.split(':', 1)[1].split() for line in info.splitlines()
                  if line.startswith('flags')), [])
    isa = 'AMX' if 'amx_tile' in flags else 'AVX-512' if 'avx512f' in flags else \
        'AVX2' if 'avx2' in flags else 'no AVX2'
    return f'{name}, {os.cpu_count()} cores, {isa}'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--models', default=','.join(MODELS),
                        help="comma-separated; 'zoo' adds every model of tests/python/model_zoo.py "
                             "(an evaluated one, the diffusion denoiser, runs its forward pass only)")
    parser.add_argument('--systems', default=','.join(SYSTEMS))
    parser.add_argument('--rounds', type=int, default=1)
    # 60: twelve blocks of each kind per process. With 20, the piped median was one of four
    # blocks and moved 10-15% between rounds, more than the difference it was meant to show.
    parser.add_argument('--steps', type=int, default=60)
    parser.add_argument('--batch', type=int, default=0, help='0: each model\'s own batch size')
    parser.add_argument('--json', help='also write the raw results here')
    parser.add_argument('--autocast', default='', help='e.g. bfloat16: forward and loss under torch.autocast')
    parser.add_argument('--allocator', default='system', choices=sorted(ALLOCATORS),
                        help='the malloc every system of the run uses (preloaded alike into each process)')
    parser.add_argument('--child', nargs=2, metavar=('SYSTEM', 'MODEL'))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.steps, args.batch, args.autocast)))
        return

    models = [m for name in args.models.split(',') for m in (zoo_models() if name == 'zoo' else [name])]
    systems = args.systems.split(',')
    env = {k: v for k, v in os.environ.items() if k not in ('OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE')}
    preload = ALLOCATORS[args.allocator]
    if preload:
        if not os.path.exists(preload):
            raise SystemExit(f'{preload} is missing (Debian: apt-get install libjemalloc2)')
        env['LD_PRELOAD'] = ' '.join(filter(None, [env.get('LD_PRELOAD'), preload]))
    pythons = {s: sys.executable for s in systems}
    if any(s.startswith('ptxla') for s in systems):
        ptxla = ptxla_python()
        for s in systems:
            if s.startswith('ptxla'):
                pythons[s] = ptxla
    results = {}
    for _ in range(args.rounds):
        for model in models:
            cache = tempfile.mkdtemp(prefix='txla_bench_cache_')
            for system in systems:
                child_env = dict(env)
                if system.startswith('xla'):
                    child_env['XLA_PERSISTENT_CACHE_PATH'] = cache
                if system.startswith('ptxla'):
                    child_env.update(PJRT_DEVICE='CPU')
                    child_env.pop('PYTHONPATH', None)
                out = subprocess.run([pythons[system], __file__, '--child', system, model,
                                      '--steps', str(args.steps), '--batch', str(args.batch),
                                      '--autocast', args.autocast],
                                     env=child_env, capture_output=True, text=True, cwd=HERE)
                if out.returncode != 0:
                    print(f'{system}/{model} failed:\n{out.stderr[-3000:]}', file=sys.stderr)
                    continue
                results.setdefault((model, system), []).append(json.loads(out.stdout.splitlines()[-1]))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({f'{m}/{s}': r for (m, s), r in results.items()}, f, indent=1)
    precision = f'; autocast {args.autocast}' if args.autocast else ''
    print(f'CPU: {cpu_name()}; {args.rounds} round(s) of {args.steps} steps; medians over rounds{precision}; '
          f'allocator {args.allocator}')
    print(f'| model | system | first ms | step ms | vs eager | piped ms | vs eager | host ms | '
          f'compile ms | RSS MB | loss |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    med = lambda runs, key: statistics.median(x[key] for x in runs)  # noqa: E731
    for model in models:
        eager = results.get((model, 'eager'))
        for system in systems:
            runs = results.get((model, system))
            if not runs:
                continue
            step, piped = med(runs, 'median_ms'), med(runs, 'pipelined_ms')
            ratio = f'{med(eager, "median_ms") / step:.2f}x' if eager else '-'
            piped_ratio = f'{med(eager, "pipelined_ms") / piped:.2f}x' if eager else '-'
            comp = [x['compile_ms'] for x in runs if x['compile_ms'] is not None]
            comp_text = f'{statistics.median(comp):.0f}' if comp else '-'
            print(f'| {model} | {system} | {med(runs, "first_ms"):.0f} | {step:.2f} | {ratio} | '
                  f'{piped:.2f} | {piped_ratio} | {med(runs, "host_ms"):.2f} | {comp_text} | '
                  f'{max(x["peak_rss_mb"] for x in runs):.0f} | {runs[-1]["loss"]:.4f} |')
    print('vs eager = eager time / system time (>1: faster than eager).')


if __name__ == '__main__':
    main()
