"""torch_xla.debug.profiler: Trace / StepTrace regions, host tracing, compilation, execution,
transfers and CPU fallbacks on one Chrome trace-event timeline, captured in-process
(start_trace / stop_trace) or from a running job through its server (start_server + trace /
trace_detached)."""
import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import torch_xla
import torch_xla.debug.profiler as xp


def spans(doc):
    return [e for e in doc['traceEvents'] if e['ph'] == 'X']


def thread_names(doc):
    return {e['tid']: e['args']['name'] for e in doc['traceEvents'] if e['ph'] == 'M' and e['name'] == 'thread_name'}


def inside(inner, outer):
    return outer['ts'] <= inner['ts'] and inner['ts'] + inner['dur'] <= outer['ts'] + outer['dur']


def test_regions_host_tracing_compilation_execution_transfers_and_fallbacks_on_one_timeline(dev, tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(13, 7).to(dev)  # shapes of its own: the first step compiles
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xp.start_trace(str(tmp_path))
    for step in range(3):
        with xp.StepTrace('train_step', step_num=step):
            with xp.Trace('forward', batch=11):
                loss = model(torch.randn(11, 13).to(dev)).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
    torch.nonzero(model.weight.detach() > 0)  # a CPU fallback
    value = loss.item()
    path = xp.stop_trace()
    assert path.startswith(str(tmp_path / 'plugins' / 'profile')) and path.endswith('.trace.json')
    doc = json.load(open(path))
    events = spans(doc)
    assert all(e['pid'] == os.getpid() and e['dur'] >= 0 for e in events)
    by_name = lambda name: [e for e in events if e['name'] == name]  # noqa: E731
    steps = by_name('train_step')
    assert [e['args']['step_num'] for e in steps] == ['0', '1', '2']
    forwards = by_name('forward')
    assert len(forwards) == 3 and all(f['args'] == {'batch': '11'} for f in forwards)
    assert all(any(inside(f, s) for s in steps) for f in forwards)
    # Leaving a StepTrace is a barrier: each step holds its MarkStep and graph cut.
    assert all(any(inside(m, s) for m in by_name('MarkStep')) for s in steps)
    # Host tracing: the recorded ops, inside the forward regions.
    assert any(e['cat'] == 'lazy' and e['name'] == 'txla::linear' and inside(e, forwards[0]) for e in events)
    # Compilation (the first step) with its phases inside it.
    compiles = by_name('CompileTime')
    assert len(compiles) >= 1
    for phase in ('LowerGraph', 'RunPipeline', 'EmitCpp', 'CppCompileTime'):
        assert any(inside(e, c) for e in by_name(phase) for c in compiles), phase
    # The pipeline's passes, each inside it.
    for compiler_pass in ('fusion', 'cse', 'dce', 'algebraic-simplifier'):
        assert any(inside(e, p) for e in by_name(compiler_pass) for p in by_name('RunPipeline')), compiler_pass
    # Execution runs on the device's own thread.
    names = thread_names(doc)
    runs = [e for e in events if e['cat'] == 'execute']
    assert len(runs) >= 3 and all(names[e['tid']] == 'xla:0 execution' for e in runs)
    assert all(e['name'].startswith('execute graph_') and 'dump' in e['args'] for e in runs)
    assert by_name('TransferToDeviceTime') and by_name('TransferFromDeviceTime')
    assert by_name('aten::nonzero (CPU fallback)')
    assert value == pytest.approx(loss.item())


def test_nothing_is_recorded_outside_a_capture_and_misuse_says_so(dev, tmp_path):
    x = torch.randn(3, 3).to(dev)
    (x * 2).cpu()
    xp.start_trace(str(tmp_path))
    with pytest.raises(RuntimeError, match='Only one profile may be run at a time'):
        xp.start_trace(str(tmp_path))
    doc = json.load(open(xp.stop_trace()))
    assert spans(doc) == []
    with pytest.raises(RuntimeError, match='No profile started'):
        xp.stop_trace()


JOB = """
import os, sys, time, torch, torch_xla
import torch_xla.debug.profiler as xp
server = xp.start_server(0)
print(server.port, flush=True)
dev = torch_xla.device()
model = torch.nn.Linear(9, 3).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
deadline = time.time() + 120
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    with xp.StepTrace('job_step'):
        model(torch.randn(5, 9).to(dev)).sum().backward()
        opt.step()
        opt.zero_grad()
"""


def test_capture_of_a_running_job_through_its_server(tmp_path):
    stop = tmp_path / 'stop'
    job = subprocess.Popen([sys.executable, '-c', textwrap.dedent(JOB), str(stop)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        port = int(job.stdout.readline())
        thread = xp.trace_detached(f'localhost:{port}', str(tmp_path / 'logs'), duration_ms=400)
        thread.join(timeout=120)
        assert not thread.is_alive()
        files = list((tmp_path / 'logs' / 'plugins' / 'profile').glob('*/*.trace.json'))
        assert len(files) == 1
        doc = json.load(open(files[0]))
        events = spans(doc)
        assert {e['pid'] for e in events} == {job.pid}
        assert any(e['name'] == 'job_step' for e in events)
        assert any(e['cat'] == 'execute' for e in events)
        with pytest.raises(RuntimeError, match='is xp.start_server'):
            xp.trace('localhost:1', str(tmp_path / 'none'), duration_ms=10, num_tracing_attempts=1, timeout_s=5)
    finally:
        stop.write_text('')
        job.wait(timeout=120)
    assert job.returncode == 0, job.stderr.read()


def test_profiled_kernels_and_their_thread_split_are_spans_of_the_execution(dev, tmp_path, xla_env):
    # TXLA_PROFILE_KERNELS=1 times every kernel; under a capture each is a span on the thread
    # that ran it, and each split region says how many threads it had.
    xla_env(TXLA_PROFILE_KERNELS='1')
    a, b = torch.randn(384, 320), torch.randn(320, 352)  # shapes of their own: compiles here
    xp.start_trace(str(tmp_path))
    out = ((a.to(dev) @ b.to(dev)).relu() * 2).sum(0)
    torch_xla.sync()
    result = out.cpu()
    doc = json.load(open(xp.stop_trace()))
    torch.testing.assert_close(result, ((a @ b).relu() * 2).sum(0), rtol=1e-4, atol=1e-3)
    events = spans(doc)
    runs = [e for e in events if e['cat'] == 'execute']
    kernels = [e for e in events if e['cat'] == 'kernel']
    assert len(runs) == 1 and kernels
    assert all(inside(k, runs[0]) and k['tid'] == runs[0]['tid'] for k in kernels)
    assert any(k['name'].startswith('dot') for k in kernels)
    regions = [e for e in events if e['cat'] == 'parallel']
    assert regions and all(inside(r, runs[0]) for r in regions)
    split = [r for r in regions if 'chunks run by the calling thread' in r['args']]
    if (os.environ.get('TXLA_NUM_THREADS') or str(os.cpu_count())) != '1':
        assert split or any(r['name'] == 'region, a core left to the host' for r in regions)
    assert all(re.fullmatch(r'\d+ of \d+', r['args']['chunks run by the calling thread']) for r in split)
    assert {r['name'] for r in regions} <= {'region, every thread', 'region, one thread', 'nested region',
                                           'region, a core left to the host'}


def test_a_barrier_inside_a_trace_raises_as_pytorch_xla_does(dev):
    import torch_xla
    import torch_xla.debug.profiler as xp
    with pytest.raises(RuntimeError, match=r'Expecting scope to be empty but it is fc\.\d+'):
        with xp.Trace('fc'):
            torch_xla.sync()
    with xp.Trace('outer'):
        torch_xla.sync(reset_scope=False)  # asked not to check
    with xp.StepTrace('step', step_num=1):  # ends its own scope before its barrier
        with xp.Trace('inner'):
            (torch.ones(2, device=dev) * 2).sum()
    torch_xla.sync()  # every scope has ended
