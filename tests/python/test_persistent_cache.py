"""The on-disk compilation cache: a second process loads what the first compiled (and never runs
the C++ compiler), bad entries are detected and rebuilt, read-only caches are not written, and
processes sharing a directory do not disturb each other."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Two training steps of an MLP (two graphs: the second step's momentum buffers exist); prints its
# result and the cache counters as JSON.
SCRIPT = r'''
import json, os, sys
import torch, torch.nn as nn
import torch_xla, torch_xla.core.xla_model as xm, torch_xla.runtime as xr
import torch_xla.debug.metrics as met
if os.environ.get('CACHE_DIR'):
    xr.initialize_cache(os.environ['CACHE_DIR'], readonly=os.environ.get('READONLY') == '1')
torch.manual_seed(0)
dev = xm.xla_device()
model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(4, 6).to(dev), torch.randint(0, 3, (4,)).to(dev)
for _ in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    xm.mark_step()
cpp = met.metric_data('CppCompileTime')
work = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'torch_xla_cpp_{os.getuid()}')
print(json.dumps({
    'kernel_objects': sum(p.endswith('.o') for p in os.listdir(work)) if os.path.isdir(work) else 0,
    'loss': loss.item(),
    'weight': model[0].weight.cpu().flatten().tolist(),
    'hit': met.counter_value('PersistentCacheHit') or 0,
    'miss': met.counter_value('PersistentCacheMiss') or 0,
    'error': met.counter_value('PersistentCacheError') or 0,
    'cpp_compiles': cpp[0] if cpp else 0,
    'graph_hits': met.counter_value('PersistentCacheGraphHit') or 0,
}))
'''


def start(cache_dir=None, readonly=False, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith('XLA_PERSISTENT_CACHE')}
    full.update(PYTHONPATH=ROOT, **env)
    if cache_dir is not None:
        full['CACHE_DIR'] = str(cache_dir)
    full['READONLY'] = '1' if readonly else '0'
    return subprocess.Popen([sys.executable, '-c', SCRIPT], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def run(cache_dir=None, readonly=False, **env):
    return finish(start(cache_dir, readonly, **env))


def entries(cache_dir):
    return sorted(p for p in os.listdir(cache_dir) if p.endswith('.txla'))


@pytest.fixture(scope='module')
def reference():
    return run()  # no cache at all


def test_second_process_loads_instead_of_compiling(tmp_path, reference):
    first = run(tmp_path)
    assert first['miss'] > 0 and first['hit'] == 0 and first['cpp_compiles'] == first['miss']
    assert len(entries(tmp_path)) == first['miss']
    second = run(tmp_path)
    assert second['hit'] == first['miss'] and second['miss'] == 0
    assert second['cpp_compiles'] == 0, 'the second process ran the C++ compiler'
    # ...nor lowered or generated anything: the graph entries map graph hashes to libraries.
    assert second['graph_hits'] == first['miss'] and first['graph_hits'] == 0
    assert second['loss'] == pytest.approx(reference['loss'], rel=1e-6)
    assert second['weight'] == pytest.approx(reference['weight'], rel=1e-6)


def test_environment_variable_enables_the_cache(tmp_path):
    run(None, XLA_PERSISTENT_CACHE_PATH=str(tmp_path))
    assert entries(tmp_path)
    again = run(None, XLA_PERSISTENT_CACHE_PATH=str(tmp_path))
    assert again['hit'] > 0 and again['cpp_compiles'] == 0


@pytest.mark.parametrize('damage', ['truncate', 'flip', 'other_key'])
def test_bad_entry_is_counted_rebuilt_and_never_loaded(tmp_path, reference, damage):
    first = run(tmp_path)
    names = entries(tmp_path)
    victim = tmp_path / names[0]
    data = victim.read_bytes()
    if damage == 'truncate':
        victim.write_bytes(data[:len(data) // 2])
    elif damage == 'flip':
        flipped = bytearray(data)
        flipped[-100] ^= 0xFF  # inside the shared object, past the header
        victim.write_bytes(bytes(flipped))
    else:  # a whole, valid-looking entry stored under the wrong name
        assert len(names) >= 2, names
        (tmp_path / names[0]).write_bytes((tmp_path / names[-1]).read_bytes())
    second = run(tmp_path)
    assert second['error'] == 1 and second['cpp_compiles'] == 1
    assert second['hit'] == first['miss'] - 1
    assert second['loss'] == pytest.approx(reference['loss'], rel=1e-6)
    third = run(tmp_path)  # the entry was rebuilt
    assert third['error'] == 0 and third['hit'] == first['miss'] and third['cpp_compiles'] == 0


def test_readonly_cache_is_never_written(tmp_path):
    cache = tmp_path / 'ro'
    cache.mkdir()
    result = run(cache, readonly=True)
    assert result['miss'] > 0 and os.listdir(cache) == []
    # A read-only cache still serves what is there.
    run(cache)
    served = run(cache, readonly=True)
    assert served['hit'] > 0 and served['cpp_compiles'] == 0


def test_processes_compiling_into_one_directory_at_once(tmp_path, reference):
    procs = [start(tmp_path) for _ in range(3)]
    results = [finish(p) for p in procs]
    for r in results:
        assert r['loss'] == pytest.approx(reference['loss'], rel=1e-6)
        assert r['error'] == 0
    assert not [p for p in os.listdir(tmp_path) if '.tmp.' in p]  # no half-written leftovers
    after = run(tmp_path)
    assert after['miss'] == 0 and after['error'] == 0 and after['cpp_compiles'] == 0


# Directories we dlopen code from: private, refused when others could have written them, capped,
# and cleaned.
def test_cache_directory_is_created_private(tmp_path):
    cache = tmp_path / 'cache'
    finish(start(cache))
    assert (cache.stat().st_mode & 0o777) == 0o700


def test_cache_directory_writable_by_others_is_refused(tmp_path):
    cache = tmp_path / 'shared'
    cache.mkdir()
    os.chmod(cache, 0o777)
    proc = start(cache)  # xr.initialize_cache: the caller asked for it, so it raises
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0 and 'writable by other users' in err
    # From the environment, training goes on without the cache and says why.
    proc = start(None, XLA_PERSISTENT_CACHE_PATH=str(cache))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert 'persistent cache disabled' in err and 'writable by other users' in err
    result = json.loads(out.strip().splitlines()[-1])
    assert result['hit'] == 0 and result['miss'] == 0
    assert not any(cache.iterdir())


def test_cache_size_cap_evicts_the_oldest_entries(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir(mode=0o700)
    old = cache / 'old_entry.txla'
    old.write_bytes(b'x' * (3 << 20))
    os.utime(old, (1, 1))
    finish(start(cache, XLA_PERSISTENT_CACHE_MAX_MB='2'))
    assert not old.exists()
    assert any(p.suffix == '.txla' for p in cache.iterdir())  # what this run stored stays


def test_work_directory_drops_day_old_files(tmp_path):
    work = tmp_path / f'torch_xla_cpp_{os.getuid()}'
    work.mkdir(mode=0o700)
    stale, fresh = work / 'graph_stale.cc', work / 'graph_fresh.cc'
    stale.write_text('// old')
    fresh.write_text('// new')
    os.utime(stale, (1, 1))
    finish(start(None, TMPDIR=str(tmp_path)))
    assert not stale.exists() and fresh.exists()


def test_work_directory_is_cleaned_at_most_hourly(tmp_path):
    # The directory is shared by every process of the user and may hold a day of graphs: one
    # process an hour walks it, when it exits.
    work = tmp_path / f'torch_xla_cpp_{os.getuid()}'
    work.mkdir(mode=0o700)
    stale = work / 'graph_stale.cc'
    stale.write_text('// old')
    os.utime(stale, (1, 1))
    (work / '.last_cleaned').touch()  # another process cleaned a moment ago
    finish(start(None, TMPDIR=str(tmp_path)))
    assert stale.exists()
    os.utime(work / '.last_cleaned', (1, 1))  # ... an hour ago and more
    finish(start(None, TMPDIR=str(tmp_path)))
    assert not stale.exists()


def test_kernel_objects_go_with_their_process(tmp_path):
    # Objects are reused only by the process that built them; left behind, a test suite's
    # processes made 34,000 a day.
    out = finish(start(None, TMPDIR=str(tmp_path)))
    assert out['kernel_objects'] > 0
    work = tmp_path / f'torch_xla_cpp_{os.getuid()}'
    assert not [p for p in work.iterdir() if p.suffix == '.o']
    assert [p for p in work.iterdir() if p.suffix == '.so']  # the graphs' libraries stay a day
