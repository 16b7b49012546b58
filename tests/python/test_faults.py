"""Faults, each bounded in time: a replica killed mid-collective, a host cut off from the job in
the middle of a step (two network namespaces joined by veth, made here), and a persistent cache
on a disk that is full or read-only."""
import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import torch_xla.distributed.xla_multiprocessing as xmp
import dist_workers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_a_replica_killed_mid_collective_ends_the_job_naming_it(tmp_path):
    start = time.monotonic()
    with pytest.raises(Exception, match=r'process 1 terminated with signal SIGKILL'):
        xmp.spawn(dist_workers.train_until_stopped, args=(str(tmp_path), 1), nprocs=2)
    elapsed = time.monotonic() - start
    print(f'job ended {elapsed:.1f} s after start')
    assert elapsed < 120
    # Replica 1 died at step 5; the all-reduces of steps 1-4 kept replica 0 in step, so it was in a
    # step (and its collective) when the kill came.
    assert os.path.exists(tmp_path / 'step5-1')


def _sh(*command):
    return subprocess.run(command, capture_output=True, text=True)


@pytest.fixture
def two_hosts():
    """Two network namespaces joined by a veth pair: host 0 at 10.231.0.1, host 1 at 10.231.0.2."""
    tag = f'txla{os.getpid() % 100000}'
    names = [f'{tag}h0', f'{tag}h1']
    if _sh('ip', 'netns', 'add', names[0]).returncode != 0:
        pytest.skip('cannot create network namespaces here (needs root and iproute2)')
    try:
        _sh('ip', 'netns', 'add', names[1])
        steps = [['ip', 'link', 'add', f'{tag}a', 'type', 'veth', 'peer', 'name', f'{tag}b'],
                 ['ip', 'link', 'set', f'{tag}a', 'netns', names[0]],
                 ['ip', 'link', 'set', f'{tag}b', 'netns', names[1]]]
        for k, (ns, dev) in enumerate(zip(names, (f'{tag}a', f'{tag}b'))):
            steps += [['ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', f'10.231.0.{k + 1}/24', 'dev', dev],
                      ['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', dev, 'up'],
                      ['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']]
        for step in steps:
            done = _sh(*step)
            assert done.returncode == 0, (step, done.stderr)
        yield {'namespaces': names, 'interfaces': [f'{tag}a', f'{tag}b'], 'link': (names[0], f'{tag}a')}
    finally:
        for ns in names:
            _sh('ip', 'netns', 'del', ns)


def test_a_host_cut_off_mid_step_ends_the_job_in_bounded_time(two_hosts, tmp_path):
    from torch_xla.distributed.xla_multiprocessing import _free_port
    script = ('import torch_xla.distributed.xla_multiprocessing as xmp, dist_workers\n'
              f'xmp.spawn(dist_workers.train_until_stopped, args=({str(tmp_path)!r},), nprocs=1)\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, ROOT]), MASTER_ADDR='10.231.0.1',
               MASTER_PORT=str(_free_port()), XLA_NUM_HOSTS='2', TXLA_COLLECTIVE_TIMEOUT_S='10')
    hosts = [subprocess.Popen(['ip', 'netns', 'exec', ns, sys.executable, '-c', script],
                              # Gloo's address: the host's veth (its hostname resolves to loopback)
                              env=dict(env, XLA_HOST_RANK=str(h), GLOO_SOCKET_IFNAME=two_hosts['interfaces'][h]),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for h, ns in enumerate(two_hosts['namespaces'])]
    try:
        deadline = time.monotonic() + 180
        while not all(os.path.exists(tmp_path / f'step5-{r}') for r in range(2)):
            assert time.monotonic() < deadline, [h.poll() for h in hosts]
            assert all(h.poll() is None for h in hosts), hosts[0].communicate()[1][-2000:]
            time.sleep(0.05)
        ns, dev = two_hosts['link']
        cut = time.monotonic()
        assert _sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', dev, 'down').returncode == 0
        errors = []
        for h in hosts:
            _, err = h.communicate(timeout=120)
            errors.append(err)
            assert h.returncode != 0, err[-2000:]
        elapsed = time.monotonic() - cut
        print(f'both hosts ended {elapsed:.1f} s after the cut')
        assert elapsed < 90
        for err in errors:  # each says which collective of which replica failed
            assert 'all-reduce among replicas [0, 1] failed on replica' in err, err[-3000:]
    finally:
        for h in hosts:
            if h.poll() is None:
                h.kill()


CACHE_SCRIPT = textwrap.dedent("""
    import sys, torch, torch_xla, torch_xla.core.xla_model as xm, torch_xla.debug.metrics as met
    dev = xm.xla_device()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 3))
    import copy
    reference = copy.deepcopy(model)  # the same parameters, trained on the CPU
    model = model.to(dev)
    x, y = torch.randn(5, 1, 8, 8), torch.randint(0, 3, (5,))
    for m, device in ((model, dev), (reference, 'cpu')):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x.to(device)), y.to(device)).backward()
            opt.step()
            xm.mark_step()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a.cpu(), b, rtol=1e-4, atol=1e-5)
    print('write errors', met.counter_value('PersistentCacheWriteError') or 0,
          'compiles', met.counter_value('UncachedCompile'))
""")


@pytest.mark.parametrize('options', ['size=8k', 'ro'])
def test_a_full_or_read_only_cache_disk_is_counted_and_training_goes_on(options, tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir(mode=0o700)
    command = (f'mount -t tmpfs -o {options},mode=0700 tmpfs "{cache}" && '
               f'exec "{sys.executable}" -c "$TXLA_SCRIPT"')
    if _sh('unshare', '-m', 'true').returncode != 0:
        pytest.skip('cannot make a mount namespace here (needs root)')
    run = subprocess.run(['unshare', '-m', 'sh', '-c', command], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT, TXLA_SCRIPT=CACHE_SCRIPT,
                                  XLA_PERSISTENT_CACHE_PATH=str(cache)))
    assert run.returncode == 0, run.stderr[-3000:]
    words = run.stdout.split()
    assert int(words[words.index('errors') + 1]) > 0, run.stdout  # every failed write counted
