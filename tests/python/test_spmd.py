"""SPMD on four CPU devices (tests/python/spmd_worker.py, in its own process): training against
eager float64, uneven shards, no recompilation after warm-up, clear errors for bad specs, the
DTensor API on xla meshes, and distributed checkpoints loaded onto another mesh."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope='module')
def debug_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp('spmd') / 'pt_xla_debug.txt')


@pytest.fixture(scope='module')
def results(debug_file):
    env = dict(os.environ, CPU_NUM_DEVICES='4', PT_XLA_DEBUG='1', PT_XLA_DEBUG_FILE=debug_file)
    env.pop('XLA_USE_SPMD', None)
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'spmd_worker.py')], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_megatron_mlp_trains_like_eager_on_a_2x2_mesh(results):
    r = results['megatron']
    # The 10x rule: no farther from float64 than ten times eager float32 is.
    assert r['xla_from_f64'] <= 10 * max(r['eager32_from_f64'], 1e-7), r
    assert r['w1_spec'] == '{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}'
    assert r['w2_spec'] == '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}'
    assert r['compiles_after_warmup'] == 0
    assert r['unpartitioned'] == 0
    assert r['all_reduces'] > 0  # fc2's contraction over 'model' is summed across devices


def test_uneven_shards_are_padded_and_computed_exactly(results):
    r = results['uneven']
    assert r['shapes'] == [[2, 3]] * 4
    assert r['last_piece'] == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]  # rows 6-7 do not exist
    assert r['indices'] == [[[0, 2], [0, 3]], [[2, 4], [0, 3]], [[4, 5], [0, 3]], [[5, 5], [0, 3]]]
    assert r['sum_error'] < 1e-6 and r['matmul_error'] == 0.0 and r['whole']


def test_bad_specs_raise_at_the_call(results):
    e = results['bad_input']
    assert e['rank'].startswith('AssertionError') and 'input rank' in e['rank']
    assert e['axis'].startswith('ValueError') and 'nope' in e['axis']
    assert e['cpu'].startswith('ValueError') and 'xla' in e['cpu']
    assert e['repeat'].startswith('AssertionError')
    assert e['mesh'].startswith('AssertionError')


def test_the_debugging_tool_names_each_resharding_and_what_needed_it(results, debug_file):
    with open(debug_file) as f:
        report = f.read()
    assert 'SPMD resharding in this graph:' in report
    assert 'all-gather of 128 bytes per device: operand 0 of' in report  # the strided slice
    assert 'which has no partitioned form: it runs whole' in report
    assert 'all-reduce of' in report and 'partial sums of' in report  # fc2's contraction


def test_dtensor_api_on_an_xla_mesh(results):
    r = results['dtensor']
    assert r['is_dtensor'] and r['placements'] == '(Shard(dim=0),)'
    assert r['piece_rows'] == [3, 3, 3, 1]
    assert r['replicated_spec'] == '{replicated}' and r['redistributed_exact']
    assert r['op_type'] == 'XLAShardedTensor' and r['op_exact']
    assert r['xla_from_f64'] <= 10 * max(r['eager32_from_f64'], 1e-7), r


def test_checkpoints_load_resharded_and_are_managed_per_step(results):
    r = results['checkpoint']
    assert r['resharded_exact'] and r['kept_layout'] == '{devices=[1,4]0,1,2,3}'
    assert r['skipped_step'] is False
    assert r['steps'] == [10, 15]  # max_to_keep=2 dropped step 5
    assert r['restored_exact']
    assert r['preempted_at'] == [16] and r['checkpointed_off_interval']


def test_a_manual_region_works_on_each_devices_piece(results):
    r = results['manual']
    assert r['piece_shape'] == [8, 1]
    assert r['spec'] == '{devices=[1,4]0,1,2,3}' and r['exact']
    assert 'manual-sharding region' in r['read_manual']
    assert 'piece of shape' in r['wrong_piece']
    # _xla_spmd_all_reduce among pairs: columns 0,1 become (c0 + c1) / 2, columns 2,3 (c2 + c3) / 2.
    rows = [[4 * i + j for j in range(4)] for i in range(8)]
    assert r['pairs'] == [[(row[0] + row[1]) / 2] * 2 + [(row[2] + row[3]) / 2] * 2 for row in rows]
    # _xla_spmd_reduce_scatter over all four along rows: device d keeps rows 2d, 2d+1 of the sum of
    # the four columns.
    assert r['scattered_shape'] == [2, 1]
    assert r['scattered'] == [[float(sum(row))] for row in rows]
    assert 'manual-sharding region' in r['not_manual']


def test_auto_sharding_trains_like_eager_and_settles():
    env = dict(os.environ, CPU_NUM_DEVICES='4')
    env.pop('XLA_USE_SPMD', None)
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'spmd_auto_worker.py')], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r['auto'] and r['hash_differs']
    assert r['xla_from_f64'] <= 10 * max(r['eager32_from_f64'], 1e-7), r
    assert r['split'], r  # the compiler split something (the batch)
    assert r['compiles'][-1] <= 3 and r['compiles'][-1] == r['compiles'][-3], r  # no compiles once settled
    assert r['unpartitioned'] == 0


def test_shardings_are_drawn_device_by_tile(results):
    r = results['pictures']
    assert (r['rows'], r['cols']) == (2, 2) and r['cells'] == ['0', '1', '2', '3']
    assert r['replicated'] == [1, 1]


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _run_worker(env):
    env = dict(os.environ, **env)
    env.pop('XLA_USE_SPMD', None)
    return subprocess.Popen([sys.executable, os.path.join(HERE, 'spmd_processes_worker.py')], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc):
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def over_processes():
    """The same SPMD program as a job of two processes with two devices each, and on one process
    with four devices."""
    port = str(_free_port())
    job = [_run_worker({'RANK': str(r), 'WORLD_SIZE': '2', 'MASTER_ADDR': '127.0.0.1', 'MASTER_PORT': port,
                        'CPU_NUM_DEVICES': '2'}) for r in range(2)]
    ranks = [_result(p) for p in job]
    alone = _result(_run_worker({'CPU_NUM_DEVICES': '4', 'WORLD_SIZE': '1'}))
    return ranks, alone


def test_spmd_over_processes_trains_as_one_process_does(over_processes):
    ranks, alone = over_processes
    for r in ranks:
        assert (r['devices'], r['local_devices']) == (4, 2)
        assert '2 processes' in r['transport'], r['transport']
        # The collectives reduce in the same order as in one process: the same bits.
        assert r['megatron']['losses'] == alone['megatron']['losses']
        assert r['megatron']['params'] == alone['megatron']['params']
    m = alone['megatron']
    assert m['xla_from_f64'] <= 10 * max(m['eager32_from_f64'], 1e-7), m


def test_a_value_split_over_processes_is_not_read_whole_where_half_of_it_is_missing(over_processes):
    ranks, alone = over_processes
    assert alone['megatron']['read_remote'] == 'no error'
    for r in ranks:
        assert 'in another process' in r['megatron']['read_remote'], r['megatron']['read_remote']


def test_tiles_move_between_processes_by_all_to_all_and_reduce_scatter(over_processes):
    ranks, alone = over_processes
    for r in ranks + [alone]:
        s = r['resharding']
        assert s['cols'] == s['cols_expected']
        assert s['prod_error'] < 1e-6 * 96 * 12 * 4, s['prod_error']
        assert s['all_to_all'] >= 1 and s['reduce_scatter'] >= 1, s


def test_minibatch_input_takes_each_processs_rows(over_processes):
    ranks, alone = over_processes
    # Each process loads 4 rows (its own values); alone, one process loads all 8.
    for r in ranks:
        assert r['minibatch'] == {'shape': [8, 3], 'sum': 2 * sum(range(12)) + 100 * 12}
    assert alone['minibatch'] == {'shape': [8, 3], 'sum': float(sum(range(24)))}


def test_a_preemption_notice_to_one_process_checkpoints_every_process_at_one_step(over_processes):
    ranks, _ = over_processes
    assert [r['preempted_at'] for r in ranks] == [[3], [3]]
