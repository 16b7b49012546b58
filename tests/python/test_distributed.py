"""Data-parallel jobs: replicas in processes (xmp.spawn / torch_xla.launch), collectives on
torch.distributed's Gloo backend, failures that end the job."""
import os

import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import dist_workers
from mnist_model import MNIST, synthetic_mnist

STEPS = 3


def reference_parameters(batches, world):
    """One process, eager CPU: each step sums the replicas' shard gradients and averages them."""
    torch.manual_seed(0)
    model = MNIST().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for data, target in batches[:STEPS]:
        opt.zero_grad()
        for d, t in zip(data.chunk(world), target.chunk(world)):
            (F.nll_loss(model(d), t) / world).backward()
        opt.step()
    return {k: v.detach() for k, v in model.named_parameters()}


@pytest.mark.parametrize('world', [1, 2, 4])
def test_data_parallel_mnist_matches_one_process(world, tmp_path, monkeypatch):
    monkeypatch.setenv('XLA_PERSISTENT_CACHE_PATH', str(tmp_path / 'cache'))  # replicas share builds
    batches = synthetic_mnist(STEPS, 8, seed=1)
    xmp.spawn(dist_workers.train_mnist, args=(STEPS, batches, str(tmp_path)), nprocs=world)
    replicas = [torch.load(tmp_path / f'{r}.pt') for r in range(world)]
    expected = reference_parameters(batches, world)
    for name, value in expected.items():
        for r in range(1, world):
            assert torch.equal(replicas[r][name], replicas[0][name]), (name, r)
        torch.testing.assert_close(replicas[0][name], value, rtol=1e-4, atol=5e-5)


def test_collectives_against_their_definitions(tmp_path):
    world = 2
    xmp.spawn(dist_workers.collectives, args=(str(tmp_path),), nprocs=world)
    bases = [torch.arange(6, dtype=torch.float32).reshape(2, 3) + 10 * r for r in range(world)]
    total = sum(bases)
    for r in range(world):
        out = torch.load(tmp_path / f'{r}.pt')
        torch.testing.assert_close(out['sum'], total * 0.5)
        torch.testing.assert_close(out['max'], torch.maximum(*bases))
        torch.testing.assert_close(out['min'], torch.minimum(*bases))
        torch.testing.assert_close(out['mul'], bases[0] * bases[1])
        torch.testing.assert_close(out['gather0'], torch.cat(bases, 0))
        torch.testing.assert_close(out['gather1'], torch.cat(bases, 1))
        torch.testing.assert_close(out['scatter'], total.chunk(world, 0)[r])
        assert out['rendezvous'] == [bytes([0]), bytes([1])]
        assert out['mesh'] == 3
        torch.testing.assert_close(out['in_place'][0], sum(b + 1 for b in bases))
        torch.testing.assert_close(out['in_place'][1], sum(b * 2 for b in bases))
        torch.testing.assert_close(out['in_place'][2], sum(b.long().t() for b in bases))
        torch.testing.assert_close(out['broadcast'], torch.zeros(2, 3))  # the master's
        torch.testing.assert_close(out['all_to_all'], torch.cat([b.chunk(world, 0)[r] for b in bases], 1))


def test_collectives_in_replica_groups_follow_the_groups_order(tmp_path, monkeypatch):
    monkeypatch.setenv('XLA_PERSISTENT_CACHE_PATH', str(tmp_path / 'cache'))
    xmp.spawn(dist_workers.grouped_collectives, args=(str(tmp_path),), nprocs=4)
    for r in range(4):
        out = torch.load(tmp_path / f'{r}.pt')
        group = [1, 0] if r < 2 else [3, 2]
        assert out['pending'] == [True, True, True]  # recorded in the graph, not run at the call
        torch.testing.assert_close(out['sum'], torch.full((2, 2), float(sum(group))))
        torch.testing.assert_close(out['gather'], torch.cat([torch.full((2, 2), float(g)) for g in group], 1))
        reduced = sum(torch.arange(4.) + g for g in group)
        torch.testing.assert_close(out['shard'], reduced.chunk(2)[group.index(r)])


def test_collectives_are_graph_ops_not_barriers(dev):
    """In one process: the collective is recorded lazily and runs inside the compiled graph."""
    import torch_xla
    from conftest import CounterDelta, counter
    x = torch.arange(6.).reshape(2, 3).to(dev)
    xm.mark_step()
    marks, reduces = counter('MarkStep'), counter('CollectiveAllReduce')
    y = xm.all_reduce(xm.REDUCE_SUM, x * 2, scale=0.5) + 1
    g = xm.all_gather(x, dim=1)
    s = xm.reduce_scatter(xm.REDUCE_MAX, x, 1.0, 1, 1)
    assert all(torch_xla._XLAC._xla_has_pending_ir(t) for t in (y, g, s))
    assert counter('MarkStep') == marks and counter('CollectiveAllReduce') == reduces
    with CounterDelta('CollectiveAllReduce', 'CollectiveAllGather', 'CollectiveReduceScatter',
                      'InterpretedGraph') as d:
        xm.mark_step()
        torch.testing.assert_close(y.cpu(), torch.arange(6.).reshape(2, 3) + 1)
        torch.testing.assert_close(g.cpu(), x.cpu())
        torch.testing.assert_close(s.cpu(), x.cpu())
    assert d['CollectiveAllReduce'] == 1 and d['CollectiveAllGather'] == 1
    assert d['CollectiveReduceScatter'] == 1 and d['InterpretedGraph'] == 0
    assert 'txla::all_reduce' in torch_xla._XLAC._get_xla_tensors_text([xm.all_reduce(xm.REDUCE_MIN, x)])


def test_collective_errors_are_raised_at_the_call(dev):
    with pytest.raises(TypeError, match='takes xla tensors'):
        xm.all_reduce(xm.REDUCE_SUM, torch.ones(2))
    with pytest.raises(ValueError, match='reduce_type'):
        xm.all_reduce('avg', torch.ones(2).to(dev))
    with pytest.raises(ValueError, match='there are 1 replicas'):
        xm.all_reduce(xm.REDUCE_SUM, torch.ones(2).to(dev), groups=[[0, 1]])
    with pytest.raises(ValueError, match='shard_count'):
        xm.reduce_scatter(xm.REDUCE_SUM, torch.ones(2).to(dev), 1.0, 0, 2)
    with pytest.raises(RuntimeError, match='does not divide'):
        torch.ops.txla.reduce_scatter(torch.ones(3).to(dev), 0, 0, [0, 0], 2)


def _threaded_job(args, devices, tmp_path):
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    env = dict(os.environ, CPU_NUM_DEVICES=str(devices), XLA_PERSISTENT_CACHE_PATH=str(tmp_path / 'cache'),
               PYTHONPATH=os.pathsep.join([here, os.path.join(root, 'examples'), root]))
    return subprocess.run([sys.executable, os.path.join(here, 'threaded_job.py')] + args, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize('devices', [2, 4])
def test_threaded_data_parallel_matches_one_process(devices, tmp_path):
    """dp.DataParallel over this process's devices, as the seeds write it: each device trains on
    its share of the batches, gradients all-reduced in memory inside the compiled graphs."""
    batches = synthetic_mnist(STEPS * devices, 4, seed=6)
    torch.save(batches, tmp_path / 'batches.pt')
    job = _threaded_job(['train', str(STEPS), str(tmp_path / 'batches.pt'), str(tmp_path / 'out.pt')],
                        devices, tmp_path)
    assert job.returncode == 0, job.stderr[-3000:]
    out = torch.load(tmp_path / 'out.pt')
    assert [r['device'] for r in out['results']] == [f'xla:{d}' for d in range(devices)]
    assert all(r['steps'] == list(range(STEPS)) and r['world'] == devices for r in out['results'])
    assert [r['ordinal'] for r in out['results']] == list(range(devices))
    # One all-reduce per device and step carries all twelve gradients.
    assert out['counters'] == {'CollectiveAllReduce': devices * STEPS, 'InterpretedGraph': None,
                               'TransferFromDeviceTime': out['counters']['TransferFromDeviceTime']}
    # Device d took batches d, d + devices, ...: step k's global batch is batches k*devices...
    merged = [(torch.cat([b[0] for b in batches[k * devices:(k + 1) * devices]]),
               torch.cat([b[1] for b in batches[k * devices:(k + 1) * devices]])) for k in range(STEPS)]
    expected = reference_parameters(merged, devices)
    params = out['params']
    for name, value in expected.items():
        for d in range(1, devices):
            assert torch.equal(params[d][name], params[0][name]), (name, d)
        torch.testing.assert_close(params[0][name], value, rtol=1e-4, atol=5e-5)


def test_threaded_data_parallel_without_devices_runs_on_cpu(tmp_path):
    batches = synthetic_mnist(STEPS, 4, seed=7)
    torch.save(batches, tmp_path / 'batches.pt')
    job = _threaded_job(['cpu', str(STEPS), str(tmp_path / 'batches.pt'), str(tmp_path / 'out.pt')], 1, tmp_path)
    assert job.returncode == 0, job.stderr[-3000:]
    out = torch.load(tmp_path / 'out.pt')
    assert out['results'] == [{'device': 'cpu', 'steps': [0, 1, 2], 'ordinal': 0, 'world': 1}]
    for name, value in reference_parameters(batches, 1).items():
        torch.testing.assert_close(out['params'][0][name], value)


def test_threaded_replica_failure_ends_every_thread_with_its_error(tmp_path):
    job = _threaded_job(['fail'], 2, tmp_path)
    assert job.returncode != 0
    assert 'ValueError: replica one gave up' in job.stderr, job.stderr[-3000:]


@pytest.mark.parametrize('example', [
    ['train_mnist_mp.py', '--num-cores', '2', '--steps', '12'],
    ['train_mnist_threads.py', '--epochs', '1', '--batches', '8'],
])
def test_the_seeds_data_parallel_examples_run(example, tmp_path):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, CPU_NUM_DEVICES='2', XLA_PERSISTENT_CACHE_PATH=str(tmp_path / 'cache'))
    run = subprocess.run([sys.executable, os.path.join(root, 'examples', example[0])] + example[1:],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert ('done: 2 replicas' in run.stdout) or ("on ['xla:0', 'xla:1']" in run.stdout), run.stdout


def test_a_failing_replica_ends_the_job_with_its_error():
    with pytest.raises(Exception, match='replica one gave up'):
        xmp.spawn(dist_workers.fail_on_one, args=('replica one gave up',), nprocs=2)


def test_a_crashing_replica_ends_the_job():
    with pytest.raises(Exception, match='exit code 7'):
        xmp.spawn(dist_workers.crash_on_one, nprocs=2)


def test_optimizer_step_without_barrier_and_step_closures(dev):
    from conftest import CounterDelta
    w = torch.ones(3).to(dev).requires_grad_()
    opt = torch.optim.SGD([w], lr=0.25)
    seen = []

    def closure():
        opt.zero_grad()
        loss = (w * 2).sum()
        loss.backward()
        return loss

    with CounterDelta('MarkStep') as d:
        loss = xm.optimizer_step(opt, optimizer_args={'closure': closure})  # returns step's loss
        xm.add_step_closure(lambda t: seen.append(t.cpu().tolist()), args=(w,))
        assert seen == []  # closures wait for the barrier
    assert d['MarkStep'] == 0
    xm.mark_step()
    assert seen == [[0.5, 0.5, 0.5]]  # 1 - 0.25 * 2, read after the barrier
    assert loss.item() == 6.0


def test_rate_tracker():
    import time
    start = time.time()
    tracker = xm.RateTracker()
    tracker.add(100)
    time.sleep(0.05)
    rate = tracker.rate()
    elapsed = time.time() - start
    assert 100 / elapsed <= rate <= 100 / 0.05  # samples per second over the interval
    assert 0 < tracker.global_rate() <= 100 / 0.05


def test_single_process_topology():
    assert xm.xrt_world_size() == 1 and xm.get_ordinal() == 0 and xm.is_master_ordinal()
    x = torch.ones(3).to(xm.xla_device())
    torch.testing.assert_close(xm.all_reduce(xm.REDUCE_SUM, x, scale=2.0).cpu(), torch.full((3,), 2.0))


def test_mp_device_loader_prefetches_and_issues_one_barrier_per_batch(dev):
    from conftest import CounterDelta
    import time
    from torch_xla.distributed.parallel_loader import MpDeviceLoader
    from torch_xla.utils.utils import SampleGenerator
    data = (torch.ones(4, 3), torch.zeros(4, dtype=torch.long))
    loader = MpDeviceLoader(SampleGenerator(data, 6), dev)
    step_ends = []
    with CounterDelta('MarkStep') as d:
        seen = 0
        for x, y in loader:
            assert x.device.type == 'xla' and y.device.type == 'xla'
            (x * 2).sum().item()
            time.sleep(0.05)  # a slow step: the next batch should move meanwhile
            step_ends.append(time.monotonic())
            seen += 1
    assert seen == 6 and len(loader) == 6
    assert d['MarkStep'] == 7  # one per batch, one at the end
    moved = loader.parallel_loader.transfer_times
    assert len(moved) == 6
    # Batch k + 1 reached the device before step k finished.
    assert all(moved[k + 1] < step_ends[k] for k in range(5)), (moved, step_ends)


def test_parallel_loader_batches_per_execution(dev):
    from conftest import CounterDelta
    from torch_xla.distributed.parallel_loader import ParallelLoader
    batches = [torch.full((2,), float(i)) for i in range(6)]
    loader = ParallelLoader(batches, [dev], batches_per_execution=3).per_device_loader(dev)
    with CounterDelta('MarkStep') as d:
        got = [b.cpu()[0].item() for b in loader]
    assert got == [float(i) for i in range(6)]
    assert d['MarkStep'] == 3  # after every third batch is taken, and at the end


def test_training_script_helpers(capsys):
    import torch_xla.test.test_utils as test_utils
    from torch_xla.utils.utils import SampleGenerator
    assert len(SampleGenerator(1, 3)) == 3 and list(SampleGenerator('x', 2)) == ['x', 'x']
    test_utils.print_training_update('xla:0', 5, torch.tensor(0.25), 10.0, 11.0, epoch=1)
    test_utils.print_test_update('xla:0', 97.5, epoch=1)
    out = capsys.readouterr().out
    assert 'Training' in out and 'Step=5' in out and 'Loss=0.25000' in out and 'Accuracy=97.50' in out
    assert test_utils.get_summary_writer(None) is None
    writer = test_utils.get_summary_writer('/tmp/txla_summary_test')
    test_utils.write_to_summary(writer, 1, {'acc': 1.0})
    test_utils.close_summary_writer(writer)
    assert isinstance(test_utils.now(), str)


def test_the_xla_process_group_backend(tmp_path):
    world = 2
    xmp.spawn(dist_workers.xla_backend_collectives, args=(str(tmp_path),), nprocs=world)
    for r in range(world):
        out = torch.load(tmp_path / f'{r}.pt')
        assert out['backend'] == 'xla' and out['device'] == 'xla'
        torch.testing.assert_close(out['sum'], torch.arange(4.) * 2 + 1)
        torch.testing.assert_close(out['broadcast'], torch.ones(3))
        torch.testing.assert_close(out['gather'][0], torch.ones(2))
        torch.testing.assert_close(out['gather'][1], torch.full((2,), 2.))


@pytest.mark.parametrize('bucket_view', [False, True])
def test_distributed_data_parallel_on_the_xla_backend(bucket_view, tmp_path, monkeypatch):
    monkeypatch.setenv('XLA_PERSISTENT_CACHE_PATH', str(tmp_path / 'cache'))
    world = 2
    batches = synthetic_mnist(STEPS, 8, seed=3)
    xmp.spawn(dist_workers.train_mnist_ddp, args=(STEPS, batches, str(tmp_path), bucket_view),
              nprocs=world)
    replicas = [torch.load(tmp_path / f'{r}.pt') for r in range(world)]
    for name, value in reference_parameters(batches, world).items():
        assert torch.equal(replicas[1][name], replicas[0][name]), name
        torch.testing.assert_close(replicas[0][name], value, rtol=1e-4, atol=5e-5)


def test_two_hosts_of_two_processes_over_loopback(tmp_path):
    """The same script started on two "hosts" (two launcher processes here) with MASTER_ADDR,
    MASTER_PORT, XLA_NUM_HOSTS and XLA_HOST_RANK trains as one job of four replicas."""
    import subprocess
    import sys
    from torch_xla.distributed.xla_multiprocessing import _free_port
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    batches = synthetic_mnist(STEPS, 8, seed=2)
    torch.save(batches, tmp_path / 'batches.pt')
    script = (
        'import sys, torch\n'
        'import torch_xla.distributed.xla_multiprocessing as xmp\n'
        'import dist_workers\n'
        f'batches = torch.load({str(tmp_path / "batches.pt")!r})\n'
        f'xmp.spawn(dist_workers.train_mnist, args=({STEPS}, batches, {str(tmp_path)!r}), nprocs=2)\n')
    port = str(_free_port())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, os.path.join(root, 'examples'), root]),
               MASTER_ADDR='127.0.0.1', MASTER_PORT=port, XLA_NUM_HOSTS='2',
               XLA_PERSISTENT_CACHE_PATH=str(tmp_path / 'cache'))
    hosts = [subprocess.Popen([sys.executable, '-c', script], env=dict(env, XLA_HOST_RANK=str(h)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for h in range(2)]
    for h in hosts:
        _, err = h.communicate(timeout=600)
        assert h.returncode == 0, err[-3000:]
    replicas = [torch.load(tmp_path / f'{r}.pt') for r in range(4)]
    expected = reference_parameters(batches, 4)
    for name, value in expected.items():
        for r in range(1, 4):
            assert torch.equal(replicas[r][name], replicas[0][name]), (name, r)
        torch.testing.assert_close(replicas[0][name], value, rtol=1e-4, atol=5e-5)


def test_functional_collectives_are_graph_collectives(tmp_path):
    world = 2
    xmp.spawn(dist_workers.functional_collectives, args=(str(tmp_path),), nprocs=world)
    base = torch.arange(4.)
    for r in range(world):
        out = torch.load(tmp_path / f'{r}.pt')
        torch.testing.assert_close(out['sum'], base * 2 + 1)
        torch.testing.assert_close(out['avg'], base + 0.5)
        torch.testing.assert_close(out['max'], base + 1)
        torch.testing.assert_close(out['gather'], torch.stack([base, base + 1]).view(4, 2))
        # rank r keeps shard r of the sum of (arange(8) * (rank + 1)) over ranks: arange * 3
        torch.testing.assert_close(out['scatter'], (torch.arange(8.) * 3)[r * 4:(r + 1) * 4])
        assert out['pending'] and out['barriers'] == 1
        for k, got in enumerate(out['compiled']):
            # all_reduce(2 * (rank + k)) over ranks 0 and 1, plus one
            torch.testing.assert_close(got, torch.full((3,), 2. * (2 * k + 1) + 1))
        assert out['lazy_graphs'] == 0 and out['captured'] == 1 and out['replayed'] == 3
        assert out['inlined'] == 0
        for k, got in enumerate(out['first_pending']):
            torch.testing.assert_close(got, torch.full((2,), 3. * (2 * k + 1)))  # 3 * (k + k + 1)
        assert out['first_pending_inlined'] == 0


_TORCHRUN_SCRIPT = '''
import json, os, sys
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.runtime as xr
import torch_xla.distributed.xla_backend  # noqa: F401
dist.init_process_group('xla', init_method='xla://')
x = torch.full((3,), float(xr.global_ordinal() + 1)).to(torch_xla.device())
dist.all_reduce(x)
torch_xla.sync()
with open(os.path.join(sys.argv[1], f'{dist.get_rank()}.json'), 'w') as f:
    json.dump({'sum': x.cpu().tolist(), 'world': xr.world_size(), 'ordinal': xr.global_ordinal(),
               'local': xr.local_ordinal(), 'rank': dist.get_rank()}, f)
'''


def test_xla_rendezvous_under_torchrun(tmp_path):
    import json
    import socket
    import subprocess
    import sys
    script = tmp_path / 'job.py'
    script.write_text(_TORCHRUN_SCRIPT)
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node=2',
                    f'--master_port={port}', str(script), str(tmp_path)], check=True, timeout=240)
    for rank in range(2):
        out = json.loads((tmp_path / f'{rank}.json').read_text())
        assert out == {'sum': [3.0, 3.0, 3.0], 'world': 2, 'ordinal': rank, 'local': rank,
                       'rank': rank}


_SINGLE_PROCESS_XLA_GROUP = r'''
import json, os
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.xla_backend as xb
out = {}
dist.init_process_group('xla', init_method='xla://')  # one process, no launcher variables
out['world'] = [dist.get_rank(), dist.get_world_size()]
t = torch.arange(3, device='xla') + 1
dist.all_reduce(t)
out['all_reduce'] = t.tolist()
g = dist.new_group(ranks=[0])
flags = torch.tensor([0.1, 0.2], device='xla')
dist.broadcast(flags, src=0, group=g)
out['broadcast'] = flags.tolist()
out['mesh'] = xb._infer_mesh([1, 5, 9], 12)
for ranks in ([4, 5, 6], [1, 5, 10]):
    try:
        xb._infer_mesh(ranks, 12)
        out[str(ranks)] = 'no error'
    except ValueError as e:
        out[str(ranks)] = 'ValueError'
for op in ('allreduce_coalesced', 'recv_anysource', 'monitored_barrier'):
    try:
        getattr(dist.group.WORLD, op)(t)
        out[op] = 'no error'
    except NotImplementedError:
        out[op] = 'NotImplementedError'
print(json.dumps(out))
'''


def test_the_xla_process_group_in_one_process_and_its_group_meshes():
    import json
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ('MASTER_ADDR', 'MASTER_PORT', 'RANK', 'WORLD_SIZE')}
    env['MASTER_PORT'] = str(_free_port())
    run = subprocess.run([sys.executable, '-c', _SINGLE_PROCESS_XLA_GROUP], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out['world'] == [0, 1]
    assert out['all_reduce'] == [1, 2, 3]
    assert out['broadcast'] == pytest.approx([0.1, 0.2])
    assert out['mesh'] == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]
    assert out['[4, 5, 6]'] == out['[1, 5, 10]'] == 'ValueError'
    assert {out[op] for op in ('allreduce_coalesced', 'recv_anysource', 'monitored_barrier')} == {'NotImplementedError'}


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_zero1_over_two_replicas_matches_one_optimizer_on_the_whole_batch(tmp_path):
    steps = 3
    xmp.spawn(dist_workers.train_zero1, args=(steps, str(tmp_path)), nprocs=2)
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 7)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x, y = dist_workers.regression_problem(5, 7)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y)**2).mean().backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
    for r in range(2):
        out = torch.load(tmp_path / f'{r}.pt')
        assert out['shard_shapes'] == [(4, 5), (4, )]  # each replica holds half (7 rows padded to 8)
        torch.testing.assert_close(out['norm'], norm, rtol=1e-5, atol=1e-6)
        for name, value in model.named_parameters():
            torch.testing.assert_close(out['params'][name], value.detach(), rtol=1e-5, atol=1e-6)


def test_sync_batch_norm_over_two_replicas_is_batch_norm_on_the_whole_batch(tmp_path):
    xmp.spawn(dist_workers.sync_batch_norm, args=(str(tmp_path), ), nprocs=2)
    x = torch.randn(8, 3, 4, 4, generator=torch.Generator().manual_seed(0)).requires_grad_()
    bn = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    out = bn(x)
    (out * out.detach().cos()).sum().backward()
    for r in range(2):
        got = torch.load(tmp_path / f'{r}.pt')
        torch.testing.assert_close(got['out'], out.detach().chunk(2)[r], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got['grad'], x.grad.chunk(2)[r], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(got['mean'], bn.running_mean, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(got['var'], bn.running_var, rtol=1e-5, atol=1e-6)


def test_fsdp_over_two_replicas_trains_as_one_process_and_consolidates(tmp_path):
    from torch_xla.distributed.fsdp import consolidate_sharded_model_checkpoints
    steps = 3
    xmp.spawn(dist_workers.train_fsdp, args=(steps, str(tmp_path)), nprocs=2)
    model = dist_workers.fsdp_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = dist_workers.regression_problem(6, 3)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y)**2).mean().backward()
        opt.step()
    # Each replica holds half of every parameter (padded: 5*6=30, 5, 5*3=15 -> 8 elements, 3, 2 ...).
    shards = torch.load(tmp_path / 'ckpt_rank-0.pth')['shard_sizes']
    assert sum(shards) == sum((p.numel() + 1) // 2 for p in model.parameters())
    full, path = consolidate_sharded_model_checkpoints(str(tmp_path / 'ckpt'), '_rank-*.pth')
    assert os.path.exists(path) and set(full) == set(model.state_dict())
    for name, value in model.state_dict().items():
        torch.testing.assert_close(full[name], value, rtol=1e-5, atol=1e-6)
