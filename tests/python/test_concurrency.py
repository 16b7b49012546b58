"""Concurrency: one device's compile does not hold up another device's barrier, and two syncs
needing the same graph compile it once."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A C++ compiler that waits, before compiling, until the gate file exists: a compile that lasts
# exactly as long as the test wants, without timing anything.
GATED_CXX = """#!/bin/sh
while [ ! -e "$TXLA_TEST_GATE" ]; do touch "$TXLA_TEST_GATE.waiting"; sleep 0.05; done
exec c++ "$@"
"""

SCRIPT = textwrap.dedent("""
    import os, threading, time
    import torch, torch_xla, torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met
    gate = os.environ['TXLA_TEST_GATE']

    def step(device, n):
        y = (torch.ones(n, device=device) * 2 + 1).sum()
        torch_xla._XLAC._xla_step_marker(device, [device], True)  # this device only, waited
        return y

    def counter(name):
        return met.counter_value(name) or 0

    open(gate, 'w').close()
    assert step('xla:0', 8).cpu().item() == 24      # device 0's graph, compiled with the gate open
    os.remove(gate)
    results = {}
    other = threading.Thread(target=lambda: results.update(v=step('xla:1', 1000).cpu().item()))
    other.start()
    for _ in range(2000):                            # until device 1's compile is held at the gate
        if os.path.exists(gate + '.waiting'):
            break
        time.sleep(0.01)
    assert os.path.exists(gate + '.waiting'), 'device 1 never started compiling'
    uncached = counter('UncachedCompile')
    done = threading.Event()                         # a cached graph on device 0: must not wait
    barrier = threading.Thread(target=lambda: (results.update(v0=step('xla:0', 8).cpu().item()), done.set()))
    barrier.start()
    finished = done.wait(60)
    print('device0', results.get('v0'), 'finished while device 1 compiles:', finished and other.is_alive(),
          'new compiles:', counter('UncachedCompile') - uncached)
    open(gate, 'w').close()
    barrier.join(120)
    other.join(120)
    print('device1', results.get('v'))

    # Two threads syncing the same new graph: one compile, both get the executable.
    before = counter('UncachedCompile')
    os.remove(gate)
    os.remove(gate + '.waiting')
    outs = []
    threads = [threading.Thread(target=lambda d=d: outs.append(step(d, 77).cpu().item()))
               for d in ('xla:0', 'xla:1')]
    for t in threads:
        t.start()
    while not os.path.exists(gate + '.waiting'):
        time.sleep(0.01)
    time.sleep(0.2)  # give the second thread the chance to ask for the graph too
    open(gate, 'w').close()
    for t in threads:
        t.join(120)
    print('same graph', sorted(outs), 'compiles:', counter('UncachedCompile') - before)
""")


def test_a_compile_on_one_device_does_not_block_another_devices_barrier(tmp_path):
    cxx = tmp_path / 'gated_cxx'
    cxx.write_text(GATED_CXX)
    cxx.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=ROOT, CPU_NUM_DEVICES='2', TXLA_CXX=str(cxx),
               TXLA_TEST_GATE=str(tmp_path / 'gate'), TMPDIR=str(tmp_path))
    env.pop('XLA_PERSISTENT_CACHE_PATH', None)
    run = subprocess.run([sys.executable, '-c', SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert 'device0 24.0 finished while device 1 compiles: True new compiles: 0' in lines, run.stdout
    assert 'device1 3000.0' in lines, run.stdout
    assert 'same graph [231.0, 231.0] compiles: 1' in lines, run.stdout
