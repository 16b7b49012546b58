"""Training-step benchmark: eager CPU PyTorch, PyTorch's torch._lazy (TorchScript backend) and
this project's xla device, on the same models, in one run.

Each measurement runs in its own process (one per system and model, interleaved over rounds, so
machine noise hits all systems alike). OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for every
system so eager's GEMMs run at their best. Prints, per system and model: first step (includes
compilation), steady-state median ms/step, compile time (xla: a cold compile into an empty disk
cache; xla_warm: a new process with that cache warm), peak RSS, and the ratios to eager.

    .venv/bin/python bench/train_step.py                 # both models, 3 rounds
    .venv/bin/python bench/train_step.py --models mlp --rounds 1 --steps 20
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# xla runs with an empty disk cache (a cold compile that fills it); xla_warm then runs with it.
SYSTEMS = ['eager', 'lazy_ts', 'xla', 'xla_warm']


def build_model(name):
    import torch.nn as nn
    if name == 'mlp':
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                             nn.ReLU(), nn.Linear(512, 10), nn.LogSoftmax(dim=1))
    sys.path.insert(0, os.path.join(HERE, '..', 'examples'))
    from mnist_model import MNIST
    return MNIST()


def child(system, model_name, steps, batch):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    if system == 'eager':
        device, barrier = torch.device('cpu'), lambda: None
    elif system == 'lazy_ts':
        import torch._lazy
        import torch._lazy.ts_backend
        torch._lazy.ts_backend.init()
        device, barrier = torch.device('lazy'), torch._lazy.mark_step
    else:  # xla, xla_warm
        import torch_xla.core.xla_model as xm
        device, barrier = xm.xla_device(), xm.mark_step
    model = build_model(model_name).train().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(batch, 1, 28, 28)
    target = torch.randint(0, 10, (batch,))
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        opt.zero_grad()
        loss = F.nll_loss(model(data.to(device)), target.to(device))
        loss.backward()
        opt.step()
        barrier()
        loss_value = loss.item()  # every system finishes the step before the clock stops
        times.append(time.perf_counter() - start)
    # Pipelined: barriers only, one read at the end (as a loop that logs every N steps runs).
    start = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        loss = F.nll_loss(model(data.to(device)), target.to(device))
        loss.backward()
        opt.step()
        barrier()
    loss.item()
    pipelined_ms = (time.perf_counter() - start) / steps * 1e3
    compile_ms = None
    cpp_ms = None
    if system.startswith('xla'):
        import torch_xla.debug.metrics as met
        data_ = met.metric_data('CompileTime')
        compile_ms = data_[1] / 1e6 if data_ else 0.0
        data_ = met.metric_data('CppCompileTime')
        cpp_ms = data_[1] / 1e6 if data_ else 0.0
    return {
        'first_ms': times[0] * 1e3,
        'median_ms': statistics.median(times[3:]) * 1e3,
        'pipelined_ms': pipelined_ms,
        'compile_ms': compile_ms,
        'cpp_compile_ms': cpp_ms,
        'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        'loss': loss_value,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--models', default='mlp,cnn')
    parser.add_argument('--systems', default=','.join(SYSTEMS))
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=25)
    parser.add_argument('--batch', type=int, default=128)
    parser.add_argument('--child', nargs=2, metavar=('SYSTEM', 'MODEL'))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.steps, args.batch)))
        return

    env = {k: v for k, v in os.environ.items() if k not in ('OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE')}
    results = {}
    import tempfile
    for r in range(args.rounds):
        for model in args.models.split(','):
            cache = tempfile.mkdtemp(prefix='txla_bench_cache_')
            for system in args.systems.split(','):
                child_env = dict(env, XLA_PERSISTENT_CACHE_PATH=cache) if system.startswith('xla') else env
                out = subprocess.run([sys.executable, __file__, '--child', system, model,
                                      '--steps', str(args.steps), '--batch', str(args.batch)],
                                     env=child_env, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f'{system}/{model} failed:\n{out.stderr[-2000:]}', file=sys.stderr)
                    continue
                results.setdefault((model, system), []).append(json.loads(out.stdout.splitlines()[-1]))
    print(f'{"model":5} {"system":8} {"first ms":>9} {"x eager":>7} {"step ms":>8} {"vs eager":>8} '
          f'{"piped ms":>8} {"vs eager":>8} {"compile ms":>10} {"c++ ms":>7} {"RSS MB":>7} {"loss":>8}')
    for model in args.models.split(','):
        eager = results.get((model, 'eager'))
        eager_first = statistics.median(x['first_ms'] for x in eager) if eager else None
        eager_ms = statistics.median(x['median_ms'] for x in eager) if eager else None
        eager_piped = statistics.median(x['pipelined_ms'] for x in eager) if eager else None
        for system in args.systems.split(','):
            runs = results.get((model, system))
            if not runs:
                continue
            med = statistics.median(x['median_ms'] for x in runs)
            first = statistics.median(x['first_ms'] for x in runs)
            comp = [x['compile_ms'] for x in runs if x['compile_ms'] is not None]
            cpp = [x['cpp_compile_ms'] for x in runs if x.get('cpp_compile_ms') is not None]
            first_ratio = f'{first / eager_first:.1f}' if eager_first else '-'
            ratio = f'{eager_ms / med:.2f}x' if eager_ms else '-'
            piped = statistics.median(x['pipelined_ms'] for x in runs)
            piped_ratio = f'{eager_piped / piped:.2f}x' if eager_piped else '-'
            print(f'{model:5} {system:8} {first:9.1f} {first_ratio:>7} {med:8.2f} {ratio:>8} {piped:8.2f} '
                  f'{piped_ratio:>8} {(statistics.median(comp) if comp else float("nan")):10.1f} '
                  f'{(statistics.median(cpp) if cpp else float("nan")):7.1f} '
                  f'{max(x["peak_rss_mb"] for x in runs):7.0f} {runs[-1]["loss"]:8.4f}')
    print('first ms: the first step, compilation included; x eager: first / eager\'s first (<2 is the\n'
          'target with a warm cache). step ms: median with the loss read every step; piped ms: mean\n'
          'over steps with only barriers, the loss read once at the end. vs eager = eager time /\n'
          'system time (>1 faster). c++ ms: the part of compile ms spent in the C++ compiler.')


if __name__ == '__main__':
    main()
