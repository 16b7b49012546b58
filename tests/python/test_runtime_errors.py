"""A runtime that never returns garbage: an out-of-range index read from data fails the run with
eager's error (never a silent clamp), so does an integer division by zero (never a trap), a graph that consumes a failed run's output fails with the
original error and the graph's dump path, and the device keeps working afterwards."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla

ROWS = 4
INDEX_OPS = {
    'index_select': lambda x, i: torch.index_select(x, 0, i),
    'embedding': lambda x, i: F.embedding(i, x),
    'gather': lambda x, i: torch.gather(x, 0, i.view(-1, 1).expand(-1, 3)),
    'advanced_index': lambda x, i: x[i],
    # Two index tensors merge into one row index: either one out of its own range must fail, not
    # land on another element (x[0, 5] of a 4x3 tensor would be element 5 = x[1, 2]).
    'advanced_index_two': lambda x, i: x[i.flip(0), i.remainder(3)],
    'advanced_index_two_columns': lambda x, i: x[i.remainder(ROWS), i],
    'index_put_two': lambda x, i: x.index_put((i.remainder(ROWS), i), torch.ones(1, device=x.device), accumulate=True),
    'scatter_add': lambda x, i: torch.zeros(ROWS, 3, device=x.device).scatter_add(
        0, i.view(-1, 1).expand(-1, 3), torch.ones(i.numel(), 3, device=x.device)),
    'index_put': lambda x, i: x.index_put((i,), torch.ones(3, device=x.device), accumulate=True),
    'index_add': lambda x, i: x.index_add(0, i, torch.ones(i.numel(), 3, device=x.device)),
    'index_copy': lambda x, i: x.index_copy(0, i, torch.ones(i.numel(), 3, device=x.device)),
    'index_fill': lambda x, i: x.index_fill(0, i, 2.0),
    'take': lambda x, i: x.take(i * 3),
}


@pytest.mark.parametrize('name', sorted(INDEX_OPS))
@pytest.mark.parametrize('index', [[1, ROWS], [ROWS + 5, 0], [-ROWS - 1, 2]])
def test_out_of_range_index_raises_like_eager(name, index, dev):
    fn = INDEX_OPS[name]
    x = torch.randn(ROWS, 3)
    i = torch.tensor(index)
    with pytest.raises((IndexError, RuntimeError)):
        fn(x, i)
    result = fn(x.to(dev), i.to(dev))
    with pytest.raises(RuntimeError, match='out of bounds for a dimension of size') as info:
        result.cpu()
    assert 'graph_' in str(info.value)  # names the graph's dump


@pytest.mark.parametrize('name', sorted(INDEX_OPS))
def test_in_range_and_negative_indices_match_eager(name, dev):
    fn = INDEX_OPS[name]
    x = torch.randn(ROWS, 3)
    negatives = name.startswith('advanced_index') or name.startswith('index_put')
    for index in ([1, 2], [0, 0, 2]) + (([-1, 2],) if negatives else ()):
        i = torch.tensor(index)
        torch.testing.assert_close(fn(x.to(dev), i.to(dev)).cpu(), fn(x, i))


def test_failure_propagates_to_consumers_and_device_recovers(dev):
    from conftest import CounterDelta
    import re
    x = torch.randn(ROWS, 3).to(dev)
    with CounterDelta('FailedExecution') as d:
        bad = torch.index_select(x, 0, torch.tensor([ROWS + 3]).to(dev))
        torch_xla.sync()
        later = bad * 2 + 1  # a later graph reading the failed run's output
        # A loop that never reads a value stops: a barrier reports the failure, exactly once,
        # even though runs that read the failed output fail too. Runs are asynchronous, so it is
        # one of the next barriers: by the fourth, the queue's room for two steps in flight
        # (XLA_MAX_INFLIGHT_STEPS) has made the failed run end.
        tick = torch.zeros(1, device=dev)
        raised = []
        for _ in range(6):
            tick = tick + 1
            try:
                torch_xla.sync()
            except RuntimeError as e:
                raised.append(str(e))
        assert len(raised) == 1, raised
        assert re.search(r'a graph that ran on xla:0 failed .*index 7 is out of bounds', raised[0])
        with pytest.raises(RuntimeError, match='comes from a graph that failed: index 7 is out of bounds'):
            later.cpu()
        with pytest.raises(RuntimeError, match='index 7 is out of bounds'):
            bad.cpu()
        torch_xla.sync()  # the reads above reported the failure: the barrier is quiet
    assert d['FailedExecution'] >= 1
    # Tensors that did not depend on the failure keep their values; new work runs.
    torch.testing.assert_close((x * 2).cpu(), x.cpu() * 2)
    assert torch.equal((torch.ones(3).to(dev) + 1).cpu(), torch.full((3,), 2.0))


INTEGER_DIVISIONS = {
    'remainder': lambda x, y: x % y,
    'remainder_scalar': lambda x, y: x % 0,
    'floor_divide': lambda x, y: x // y,
    'fmod': torch.fmod,
    'div_trunc': lambda x, y: torch.div(x, y, rounding_mode='trunc'),
    'div_floor': lambda x, y: torch.div(x, y, rounding_mode='floor'),
}


@pytest.mark.parametrize('name', sorted(INTEGER_DIVISIONS))
@pytest.mark.parametrize('dtype', [torch.int64, torch.int32, torch.int8])
def test_integer_division_by_zero_raises_like_eager_and_the_device_goes_on(name, dtype, dev):
    fn = INTEGER_DIVISIONS[name]
    x, y = torch.tensor([7, -7, 3], dtype=dtype), torch.tensor([2, 0, -1], dtype=dtype)
    with pytest.raises(RuntimeError, match='ZeroDivisionError'):
        fn(x, y)
    result = fn(x.to(dev), y.to(dev))
    with pytest.raises(RuntimeError, match='ZeroDivisionError') as info:
        result.cpu()
    assert 'graph_' in str(info.value)
    # Nonzero divisors (-1 among them, which traps in C for the minimum) give eager's values.
    if name != 'remainder_scalar':
        ok = torch.tensor([2, -3, -1], dtype=dtype)
        assert torch.equal(fn(x.to(dev), ok.to(dev)).cpu(), fn(x, ok))
    assert torch.equal((torch.arange(4, dtype=dtype).to(dev) * 2).cpu(), torch.arange(4, dtype=dtype) * 2)


HUGE = (1024, 1024, 1024, 1024, 1024)  # 4.5 PB of float32


@pytest.mark.parametrize('make', [
    lambda dev: torch.rand(HUGE, device=dev).sum(),
    lambda dev: torch.ones(HUGE, device=dev),
    lambda dev: torch.empty(HUGE, device=dev),
    lambda dev: torch.zeros(1, device=dev).expand(HUGE) + 1,
], ids=['rand_sum', 'ones', 'empty', 'add_to_an_expanded_view'])
def test_a_result_larger_than_the_machine_raises_out_of_memory_at_its_op(make, dev):
    """Eager cannot allocate it either: the op raises at once (PyTorch/XLA's
    test_construct_large_tensor_raises_error ran for ten minutes here), never a fused loop over
    2^50 elements, and the device goes on."""
    with pytest.raises(torch.OutOfMemoryError, match='Out of memory allocating 4503599627370496 bytes'):
        make(dev)
    assert torch.equal((torch.ones(3, device=dev) * 2).cpu(), torch.full((3,), 2.0))


def test_a_huge_view_is_no_allocation(dev):
    """Views allocate nothing in eager: an expanded view of any size is fine, and so is reading a
    few of its elements."""
    view = torch.arange(3.0, device=dev).expand(*HUGE[:-1], 3)
    assert torch.equal(view[5, 6, 7, 8].cpu(), torch.arange(3.0))


class _Interrupted(Exception):
    pass


def test_a_signal_interrupts_a_read_waiting_on_a_long_run_and_the_value_stays_readable(dev):
    """Ctrl-C or a test runner's timeout (SIGALRM) reaches Python while the main thread waits for a
    run: the read raises the handler's exception instead of waiting for the run, and the run goes
    on, so the value can be read afterwards. (The run is ten float64 GEMMs of 2048x2048, seconds
    of work; the alarm comes after 0.1 s.)"""
    import signal
    torch.manual_seed(0)
    a = torch.randn(2048, 2048, dtype=torch.float64) / 2048 ** 0.5
    w = a.to(dev)
    x = w
    for _ in range(10):
        x = x @ w
    torch_xla.sync()

    def handler(signum, frame):
        raise _Interrupted()

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(_Interrupted):
            x.cpu()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    want = a
    for _ in range(10):
        want = want @ a
    torch.testing.assert_close(x.cpu(), want)


@pytest.mark.parametrize('write', [
    lambda cpu, i, v: cpu.index_copy_(2, i, v),
    lambda cpu, i, v: cpu.index_add_(2, i, v),
], ids=['index_copy_', 'index_add_'])
def test_a_cpu_tensor_written_with_xla_operands_raises_at_the_op(write, dev):
    """Eager raises for tensors on two devices; an in-place op on a CPU tensor with xla operands
    says so at the op (it used to fail inside the CPU fallback's copy back, naming neither), and
    the CPU tensor is left as it was."""
    cpu = torch.zeros(1, 4, 16, 8)
    index, values = torch.tensor([3, 4], device=dev), torch.ones(1, 4, 2, 8, device=dev)
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        write(cpu, index, values)
    assert torch.equal(cpu, torch.zeros(1, 4, 16, 8))
