"""Laziness, graph cut, compile cache and recompilation, checked through the metrics."""
import os
import subprocess
import sys

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from conftest import CounterDelta, counter, run_python

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def executions():
    xm.wait_device_ops()  # mark_step returns before the graph has run
    data = met.metric_data('ExecuteTime')
    return data[0] if data else 0


def pending(t):
    return torch_xla._XLAC._xla_has_pending_ir(t)


def test_ops_record_and_do_not_run(dev):
    x = torch.randn(3, 4).to(dev)
    before = executions()
    y = (x * 2 + 1).relu().sum(0)
    assert pending(y)
    assert executions() == before
    text = torch_xla._XLAC._get_xla_tensors_text([y])
    assert 'aten::relu' in text and 'aten::sum.dim_IntList' in text


def test_mark_step_executes_every_pending_tensor_as_one_graph(dev):
    x = torch.randn(3, 4).to(dev)
    a = x + 1
    b = x * 3
    before = executions()
    with CounterDelta('MarkStep') as d:
        xm.mark_step()
    assert d['MarkStep'] == 1
    assert executions() == before + 1  # one graph for both tensors
    assert not pending(a) and not pending(b)
    torch.testing.assert_close(b.cpu(), x.cpu() * 3)


def test_torch_xla_sync_is_the_same_barrier(dev):
    y = torch.randn(2).to(dev) * 2
    with CounterDelta('MarkStep') as d:
        torch_xla.sync()
    assert d['MarkStep'] == 1 and not pending(y)


def test_reading_a_value_runs_only_what_it_needs(dev):
    x = torch.randn(3, 4).to(dev)
    a = x.exp()
    b = x.sin()
    before = executions()
    a_host = a.cpu()
    assert executions() == before + 1
    assert not pending(a)
    assert pending(b)  # the rest of the graph is not cut
    torch.testing.assert_close(a_host, x.cpu().exp())


@pytest.mark.parametrize('read', ['item', 'tolist', 'bool', 'print', 'numpy'])
def test_host_reads_materialize(dev, read, capsys):
    t = (torch.ones(1).to(dev) * 3).sum()
    value = {
        'item': lambda: t.item(),
        'tolist': lambda: t.tolist(),
        'bool': lambda: bool(t > 2),
        'print': lambda: print(t),
        'numpy': lambda: t.cpu().numpy().item(),
    }[read]()
    if read == 'print':
        assert 'tensor(3., device=\'xla:0\')' in capsys.readouterr().out
    else:
        assert value in (3.0, True)


def test_training_loop_compiles_once_per_distinct_graph(dev):
    w = torch.randn(4, 4).to(dev)
    x = torch.randn(8, 4).to(dev)
    xm.mark_step()
    with CounterDelta('UncachedCompile', 'CachedCompile') as d:
        for _ in range(5):
            w = w - 0.1 * (x @ w).tanh().t() @ x / 8
            xm.mark_step()
    assert d['UncachedCompile'] == 1
    assert d['CachedCompile'] == 4


def test_tensors_sharing_a_value_do_not_make_a_graph_of_their_own(dev):
    # SGD's momentum buffer starts as a clone of the gradient: one computed value held by two
    # tensors, one buffer after the barrier. The next step reads it twice; that graph is the
    # same program as every later step's (ResNet-18 compiled a third graph for it).
    x = torch.randn(6).to(dev)
    xm.mark_step()
    a = x * 3 + 1
    b = a.clone()
    xm.mark_step()
    expected_a, expected_b = a.cpu(), b.cpu()
    with CounterDelta('UncachedCompile', 'CachedCompile', 'DonatedBuffers') as d:
        for _ in range(4):
            a.mul_(0.5).add_(b)  # in place: a donation must not overwrite b, which reads the same memory
            b.mul_(2).add_(1)
            expected_a = expected_a * 0.5 + expected_b
            expected_b = expected_b * 2 + 1
            xm.mark_step()
        xm.wait_device_ops()  # runs count their donations: read the counter after they ran
    assert d['UncachedCompile'] == 1 and d['CachedCompile'] == 3
    # The first step's one buffer is both of its parameters: it is kept. Each later step updates
    # at least a in place (b's kernel runs before a's, which still reads b's buffer).
    assert d['DonatedBuffers'] >= 3
    torch.testing.assert_close(a.cpu(), expected_a)
    torch.testing.assert_close(b.cpu(), expected_b)


def test_graphs_reading_different_inputs_of_one_shape_are_different_programs(dev):
    # Inputs of one shape hash alike; which one an op reads is part of the graph. (x + y) * y ran
    # the program compiled for (x + y) * x before, and answered with its values.
    x_cpu, y_cpu = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
    x, y = x_cpu.to(dev), y_cpu.to(dev)
    xm.mark_step()
    cases = [
        (lambda x, y: (x + y) * x, lambda x, y: (x + y) * y),
        (lambda x, y: (x * 2 + y * 2) * (x * 2), lambda x, y: (x * 2 + y * 2) * (y * 2)),
        (lambda x, y: torch.stack([x.exp(), y.exp()]), lambda x, y: torch.stack([y.exp(), x.exp()])),
    ]
    for first, second in cases:
        for fn in (first, second):
            out = fn(x, y)
            xm.mark_step()
            torch.testing.assert_close(out.cpu(), fn(x_cpu, y_cpu))


def test_new_input_shape_compiles_again(dev):
    def step(n):
        y = (torch.randn(n, 3).to(dev) * 2).sum()
        xm.mark_step()
        return y
    step(5)
    with CounterDelta('UncachedCompile', 'CachedCompile') as d:
        step(5)
        step(6)
        step(6)
    assert d['UncachedCompile'] == 1 and d['CachedCompile'] == 2


def test_changing_scalars_do_not_recompile(dev):
    x = torch.randn(3).to(dev)
    xm.mark_step()
    results = []
    with CounterDelta('UncachedCompile', 'CachedCompile') as d:
        for lr in (0.1, 0.25, 0.5, 2.5):
            y = x * lr - lr
            xm.mark_step()
            results.append(y.cpu())
    assert d['UncachedCompile'] == 1 and d['CachedCompile'] == 3
    for lr, y in zip((0.1, 0.25, 0.5, 2.5), results):
        torch.testing.assert_close(y, x.cpu() * lr - lr)


def test_zero_and_one_are_baked_into_the_graph(dev):
    x = torch.randn(3).to(dev)
    text_one = torch_xla._XLAC._get_xla_tensors_text([x * 1.0])
    text_two = torch_xla._XLAC._get_xla_tensors_text([x * 2.0])
    assert 'prim::Constant()' in text_one and 'value=1' in text_one
    assert 'prim::Constant()' not in text_two


def test_no_special_scalars_env_makes_zero_and_one_parameters():
    script = (
        "import torch, torch_xla, torch_xla.core.xla_model as xm\n"
        "x = torch.randn(3).to(xm.xla_device())\n"
        "print('Constant' in torch_xla._XLAC._get_xla_tensors_text([x * 1.0]))\n")
    assert run_python(script, XLA_NO_SPECIAL_SCALARS='1').strip() == 'False'


def test_nonzero_falls_back_to_cpu_and_is_counted(dev):
    x = torch.tensor([0., 1., 0., 2., 3.]).to(dev)
    with CounterDelta('aten::nonzero') as d:
        nz = torch.nonzero(x)
    assert d['aten::nonzero'] == 1
    assert nz.device.type == 'xla'
    assert nz.cpu().flatten().tolist() == [1, 3, 4]


def test_masked_indexing_falls_back_and_is_correct(dev):
    x = torch.randn(4, 3)
    mask = x[:, 0] > 0
    with CounterDelta('aten::index') as d:
        y = x.to(dev)[mask.to(dev)]
    assert d['aten::index'] == 1
    torch.testing.assert_close(y.cpu(), x[mask])
    assert 'aten::index' in met.executed_fallback_ops()


def test_fallback_result_keeps_working_lazily(dev):
    x = torch.tensor([3., 1., 2.]).to(dev)
    z = torch.nonzero(x).float() * 2  # a fallback result feeds lazy ops
    assert pending(z)
    assert z.cpu().flatten().tolist() == [0., 2., 4.]


def test_shape_mismatch_raises_at_the_op(dev):
    a = torch.randn(3, 4).to(dev)
    b = torch.randn(5).to(dev)
    with pytest.raises(RuntimeError, match='Shapes are not compatible for broadcasting'):
        a + b
    with pytest.raises(RuntimeError, match=r'cannot matrix-multiply tensors f32\[3,4\] and f32\[5,2\]'):
        a @ torch.randn(5, 2).to(dev)
    with pytest.raises(RuntimeError, match='invalid for input of size 12'):
        a.view(5, 2)
    with pytest.raises(RuntimeError, match='channels'):
        torch.nn.functional.conv2d(torch.randn(1, 3, 8, 8).to(dev), torch.randn(4, 2, 3, 3).to(dev))


def test_cpu_tensor_in_an_xla_op_is_a_clear_error(dev):
    linear = torch.nn.Linear(10, 20)  # left on the CPU
    with pytest.raises(RuntimeError, match='Input tensor is not an XLA tensor: torch.FloatTensor'):
        linear(torch.randn(10, device=dev))


def test_cpu_zero_dim_tensor_is_accepted_as_a_scalar(dev):
    x = torch.randn(3).to(dev)
    y = x * torch.tensor(2.5)
    torch.testing.assert_close(y.cpu(), x.cpu() * 2.5)


def test_cpu_index_tensors_index_and_assign_as_in_pytorch_xla(dev):
    """PyTorch/XLA's index and index_put take index tensors on the CPU (its CanonicalIndexInfo
    moves them); index_select, like it, does not."""
    from conftest import CounterDelta
    base = torch.arange(12.).reshape(3, 4)
    x = base.to(dev)
    rows, cols = torch.tensor([0, 2, -1]), torch.tensor([1, 3, 0])
    with CounterDelta('InterpretedGraph', 'aten::index', 'aten::index_put') as d:
        torch.testing.assert_close(x[rows].cpu(), base[rows])
        torch.testing.assert_close(x[rows, cols].cpu(), base[rows, cols])
        y, expected = x.clone(), base.clone()
        y[rows, cols] = torch.tensor([7., 8., 9.]).to(dev)
        expected[rows, cols] = torch.tensor([7., 8., 9.])
        torch.testing.assert_close(y.cpu(), expected)
    assert d['InterpretedGraph'] == 0 and d['aten::index'] == 0 and d['aten::index_put'] == 0
    with pytest.raises(RuntimeError, match='index 3 is out of bounds'):
        x[torch.tensor([3])].cpu()
    with pytest.raises(RuntimeError, match="Input tensor is not an XLA tensor: torch.LongTensor \\(argument 'index'"):
        x.index_select(0, rows)


def test_unsupported_dtype_is_named(dev):
    with pytest.raises(TypeError, match='ComplexFloat'):
        torch.randn(2, dtype=torch.cfloat).to(dev)


def test_views_and_in_place_ops_behave_as_on_cpu(dev):
    def program(a):
        b = a.view(4, 3)
        b.add_(1)                   # write through a view reaches the base
        a[1:].zero_()               # slice assignment
        v = a[0]                    # view taken before a later write to the base
        a.mul_(2)
        c = a.t_()                  # in-place transpose
        c[0, 0] = 7.
        return a.clone(), v.clone(), b.clone()
    base = torch.arange(12.).view(3, 4)
    want = program(base.clone())
    got = program(base.clone().to(dev))
    for w, g in zip(want, got):
        assert w.shape == g.shape
        torch.testing.assert_close(g.cpu(), w)


def test_optimizer_updates_parameters_in_place(dev):
    p = torch.nn.Parameter(torch.ones(3).to(dev))
    opt = torch.optim.SGD([p], lr=0.5)
    (p * torch.tensor([1., 2., 3.]).to(dev)).sum().backward()
    opt.step()
    xm.mark_step()
    assert p.cpu().tolist() == [0.5, 0.0, -0.5]


def test_to_and_from_device_and_between_dtypes(dev):
    x = torch.arange(6).view(2, 3)
    xd = x.to(dev)
    assert xd.device == torch.device('xla', 0) and xd.dtype == torch.int64
    assert torch.equal(xd.cpu(), x)
    assert xd.to(torch.float32).cpu().dtype == torch.float32
    assert torch.equal(x.to(dev, torch.float64).cpu(), x.double())
    assert torch.equal(xd.to('cpu'), x)


def test_factories_on_the_device(dev):
    torch.testing.assert_close(torch.zeros(2, 3, device=dev).cpu(), torch.zeros(2, 3))
    torch.testing.assert_close(torch.ones(2, device=dev, dtype=torch.int32).cpu(),
                               torch.ones(2, dtype=torch.int32))
    torch.testing.assert_close(torch.full((2,), 4.5, device=dev).cpu(), torch.full((2,), 4.5))
    torch.testing.assert_close(torch.arange(5, device=dev).cpu(), torch.arange(5))
    torch.testing.assert_close(torch.tensor([1., 2.], device=dev).cpu(), torch.tensor([1., 2.]))
    assert torch.randn(4, 2, device=dev).shape == (4, 2)


def test_save_and_load(dev, tmp_path):
    t = torch.randn(3, 2)
    data = {'w': t.to(dev), 'list': [t.to(dev) * 2, 5], 'step': 3}
    path = tmp_path / 'ckpt.pt'
    xm.save(data, str(path))
    loaded = torch.load(str(path))
    assert loaded['w'].device.type == 'cpu'
    torch.testing.assert_close(loaded['w'], t)
    torch.testing.assert_close(loaded['list'][0], t * 2)
    assert loaded['step'] == 3
    back = loaded['w'].to(dev)
    torch.testing.assert_close((back + 1).cpu(), t + 1)
    torch.save(data['w'].cpu(), str(tmp_path / 't.pt'))
    torch.testing.assert_close(torch.load(str(tmp_path / 't.pt')), t)

    import torch_xla.utils.serialization as xser
    xser.save({'a': t.to(dev)}, str(tmp_path / 'x.pt'))
    torch.testing.assert_close(xser.load(str(tmp_path / 'x.pt'))['a'], t)


def test_devices():
    assert xm.xla_device() == torch.device('xla', 0)
    assert torch_xla.device() == torch.device('xla', 0)
    assert xm.get_xla_supported_devices() == ['xla:0']
    assert xm.xla_device_hw(xm.xla_device()) == 'CPU'
    with pytest.raises(IndexError, match='does not exist'):
        xm.xla_device(5)


def test_ir_dump_file(tmp_path):
    path = tmp_path / 'graphs.txt'
    script = (
        "import torch, torch_xla, torch_xla.core.xla_model as xm\n"
        "x = torch.randn(3).to(xm.xla_device())\n"
        "y = (x + 2).exp()\n"
        "xm.mark_step()\n")
    run_python(script, XLA_SAVE_TENSORS_FILE=str(path), XLA_IR_DEBUG='1')
    text = path.read_text()
    assert 'aten::exp' in text and 'aten::add.Tensor' in text and 'Graph Hash' in text
    assert '<string>' in text  # XLA_IR_DEBUG: the Python frame that made the node


def test_metrics_file_is_appended_every_step(tmp_path):
    path = tmp_path / 'metrics.txt'
    script = (
        "import torch, torch_xla, torch_xla.core.xla_model as xm\n"
        "for _ in range(2):\n"
        "    y = torch.ones(2).to(xm.xla_device()) * 3\n"
        "    xm.mark_step()\n")
    run_python(script, XLA_METRICS_FILE=str(path))
    assert path.read_text().count('Counter: MarkStep') == 2


def test_training_steps_do_not_accumulate_tensors(dev):
    # PyTorch 1.13's functionalization kept every in-place result alive (see
    # csrc/aten/functionalize_fixes.cc); the live-tensor count must stay flat across steps.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(dev)
    for opt in (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                torch.optim.Adam(model.parameters(), lr=0.01)):
        x = torch.randn(5, 8).to(dev)
        counts = []
        for _ in range(6):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
            xm.mark_step()
            counts.append(torch_xla._XLAC._xla_live_tensor_count('xla:0'))
        assert counts[2:] == [counts[2]] * 4, counts


def test_in_place_ops_do_not_accumulate_tensors(dev):
    w = torch.zeros(3).to(dev)
    xm.mark_step()
    counts = []
    for _ in range(5):
        w.add_(1.0).mul_(2.0)
        w.copy_(w * 0.5)
        xm.mark_step()
        counts.append(torch_xla._XLAC._xla_live_tensor_count('xla:0'))
    assert counts == [counts[0]] * 5, counts
    assert w.cpu().tolist() == [5.0] * 3  # w <- ((w + 1) * 2) * 0.5


def test_mark_step_does_not_wait_and_reads_do(dev):
    # Asynchronous execution: the barrier submits, a read waits for the value.
    x = torch.randn(256, 256).to(dev)
    y = x
    for _ in range(4):
        y = (y @ x).tanh()
    xm.mark_step()
    assert not pending(y)  # it holds its (possibly still being written) buffer
    torch.testing.assert_close(y.cpu(), _reference_chain(x.cpu()), rtol=1e-3, atol=1e-3)  # 4 chained GEMMs amplify rounding
    xm.mark_step(wait=True)
    xm.wait_device_ops()


def test_a_read_of_written_inputs_does_not_wait_for_queued_steps(dev):
    # transformers reads `attention_mask.all()` in the middle of every forward: a graph of the
    # batch alone. It runs at once beside the queued step, not behind it; the value is right.
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]]).to(dev)
    x = torch.randn(256, 256).to(dev)
    xm.wait_device_ops()  # both written
    y = x
    for _ in range(4):
        y = (y @ x).tanh()
    xm.mark_step()  # queued: the step
    with CounterDelta('ReadRanBesideQueuedSteps') as d:
        assert not bool(mask.all())
        assert bool(mask[1].all())
    assert d['ReadRanBesideQueuedSteps'] == 2
    # Run on the reading thread, a convolution's library call leaves the thread's torch thread
    # count as it was (oneDNN sets its OpenMP team to one thread where it runs).
    threads = torch.get_num_threads()
    image, weight = torch.randn(2, 3, 16, 16).to(dev), torch.randn(8, 3, 3, 3).to(dev)
    xm.wait_device_ops()
    want = torch.nn.functional.conv2d(image.cpu(), weight.cpu()).sum()
    torch.testing.assert_close(torch.nn.functional.conv2d(image, weight).sum().cpu(), want, rtol=1e-4, atol=1e-3)
    assert torch.get_num_threads() == threads
    torch.testing.assert_close(y.cpu(), _reference_chain(x.cpu()), rtol=1e-3, atol=1e-3)


def test_a_loop_reading_a_value_every_iteration_does_not_retrace_its_history(dev):
    # No barrier, a read every iteration (as generate checks for finished sequences): the read
    # materializes the live state it computes on the way, so the next read's graph starts from
    # it. Otherwise each graph would hold every iteration so far: a compile each, growing.
    x = torch.ones(4, device=dev)
    state = torch.zeros(4, device=dev)
    with CounterDelta('UncachedCompile', 'ReadMaterializedLiveIntermediates') as d:
        for i in range(8):
            state = state * 0.5 + x
            assert not bool((state > 100).any())
            assert not pending(state)
            if i == 2:
                warm = counter('UncachedCompile')
    assert counter('UncachedCompile') == warm  # iterations 4-8 reuse iteration 3's graph
    assert d['ReadMaterializedLiveIntermediates'] == 8
    torch.testing.assert_close(state.cpu(), torch.full((4,), 2 - 0.5 ** 7))


def _reference_chain(x):
    y = x
    for _ in range(4):
        y = (y @ x).tanh()
    return y


@pytest.mark.parametrize('sync_wait', ['0', '1'])
def test_mark_step_waits_for_its_graph_only_under_sync_wait(sync_wait, tmp_path):
    """A graph that cannot finish until another replica joins its all-reduce, and a replica that
    joins only once the barrier has returned: mark_step returns first unless XLA_SYNC_WAIT=1."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, CPU_NUM_DEVICES='2', XLA_SYNC_WAIT=sync_wait,
               PYTHONPATH=os.pathsep.join([here, os.path.join(ROOT, 'examples'), ROOT]))
    job = subprocess.run([sys.executable, os.path.join(here, 'threaded_job.py'), 'barrier'], env=env,
                         capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    expected = 'False' if sync_wait == '1' else 'True'
    assert f'mark_step returned before its graph finished: {expected}' in job.stdout, job.stdout


def test_parameters_nothing_else_holds_are_updated_in_place(dev):
    # An SGD update p -= lr * g: once the tensor holds the new value, nothing else holds the old
    # buffer, and the asynchronous run writes the result over it (counted), with the right values.
    torch.manual_seed(0)
    w_cpu = torch.randn(64, 32)
    g_cpu = torch.randn(64, 32)
    w = w_cpu.clone().to(dev)
    g = g_cpu.clone().to(dev)
    xm.mark_step()
    with CounterDelta('DonatedBuffers') as d:
        for _ in range(3):
            w.sub_(0.1 * g)
            xm.mark_step()
        xm.wait_device_ops()
    expected = w_cpu - 0.3 * g_cpu
    torch.testing.assert_close(w.cpu(), expected, rtol=1e-5, atol=1e-5)
    assert d['DonatedBuffers'] >= 2
    torch.testing.assert_close(g.cpu(), g_cpu)  # the other input is read, never written


def test_queued_steps_hold_no_memory_for_the_parameters_they_will_update():
    # Pipelined steps wait behind the running one (XLA_MAX_INFLIGHT_STEPS). An update's output
    # takes its parameter's memory when its run starts: a queued step holds none of its own, so
    # the device's peak stays at the parameters' size, not a copy per queued step (ResNet-18's
    # piped loop held 270 MB more than eager before).
    out = run_python("""
import torch, torch_xla, torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
dev = torch_xla.device()
n = 1 << 22  # 16 MB of float32
w = torch.full((n,), 2.0, device=dev)
g = torch.ones(n, device=dev)
buf = torch.zeros(n, device=dev)
torch_xla.sync(); xm.wait_device_ops()
before = xm.get_memory_info(dev)
for _ in range(12):  # SGD with momentum, never read: the steps queue up
    buf.mul_(0.9).add_(g)
    w.sub_(0.01 * buf)
    torch_xla.sync()
xm.wait_device_ops()
after = xm.get_memory_info(dev)
print(before['bytes_used'], after['bytes_used'], after['peak_bytes_used'], after['bytes_limit'],
      met.counter_value('DonatedBuffers'), float(w[0]), float(buf[0]))
""")
    before, used, peak, limit, donated, w0, buf0 = out.split()
    mb = 1 << 20
    # w, g, buf; nothing leaked but the two numbers' shared buffers (0.9 and 0.01, 64 bytes each:
    # runtime/scalar_cache.h)
    assert int(before) >= 48 * mb and int(used) == int(before) + 2 * 64
    assert int(peak) - int(before) < 16 * mb, (int(peak) - int(before)) / mb
    assert int(limit) > int(peak) and int(donated) >= 20
    expected_buf = sum(0.9 ** k for k in range(12))
    expected_w = 2.0 - 0.01 * sum(sum(0.9 ** k for k in range(j + 1)) for j in range(12))
    assert abs(float(buf0) - expected_buf) < 1e-4 and abs(float(w0) - expected_w) < 1e-4


def test_a_parameter_still_referenced_is_not_overwritten(dev):
    x_cpu = torch.randn(16, 16)
    x = x_cpu.clone().to(dev)
    xm.mark_step()
    with CounterDelta('DonatedBuffers') as d:
        y = x * 2 + 1  # x stays alive in Python
        xm.mark_step()
        xm.wait_device_ops()
    assert d['DonatedBuffers'] == 0
    torch.testing.assert_close(x.cpu(), x_cpu)
    torch.testing.assert_close(y.cpu(), x_cpu * 2 + 1)


def test_a_deleted_tensors_data_a_pending_view_still_reads_is_kept(dev):
    # A barrier frees its graph after the run and lets go of the buffers no tensor or future graph
    # can reach first (graph/graph_retirement.h). `b`, a transpose of `a`'s data, stays pending
    # through the barrier (a deferred view); once `a` is deleted, only `b`'s view and the barrier's
    # own graph reach that data, and it must stay intact (and not be donated to `c`).
    a_cpu = torch.randn(6, 4)
    a = a_cpu.clone().to(dev)
    xm.mark_step()
    b = a.t()
    c = a * 2
    del a
    xm.mark_step()
    c.add_(1)
    xm.mark_step()
    xm.wait_device_ops()
    torch.testing.assert_close(b.cpu(), a_cpu.t())
    torch.testing.assert_close(c.cpu(), a_cpu * 2 + 1)


def test_a_read_keeps_the_data_other_pending_tensors_use(dev):
    # A value read computes part of what is pending; a tensor outside that graph still reads the
    # same (otherwise unreferenced) device data afterwards.
    w_cpu = torch.randn(32)
    w = w_cpu.clone().to(dev)
    xm.mark_step()
    u = w + 1  # pending, not read
    s = (w * 2).sum()
    del w
    assert abs(s.item() - float((w_cpu * 2).sum())) < 1e-4
    u.mul_(3)
    xm.mark_step()
    torch.testing.assert_close(u.cpu(), (w_cpu + 1) * 3)


def test_retired_graphs_still_donate_their_parameters(dev):
    # The run starts before the barrier's graph is freed; the parameters only that graph held are
    # let go of first, so an update still writes over its input (counted, once per tensor a step).
    torch.manual_seed(0)
    params = [torch.randn(16, 8).to(dev) for _ in range(3)]
    grads = [torch.randn(16, 8).to(dev) for _ in range(3)]
    expected = [p.cpu() - 0.5 * g.cpu() for p, g in zip(params, grads)]
    xm.mark_step()
    xm.wait_device_ops()
    with CounterDelta('DonatedBuffers') as d:
        for _ in range(5):
            for p, g in zip(params, grads):
                p.sub_(0.1 * g)
            xm.mark_step()
        xm.wait_device_ops()
    assert d['DonatedBuffers'] == 15
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.cpu(), e, rtol=1e-5, atol=1e-5)


def test_a_failed_build_names_its_dumps_and_the_inputs_keep_their_data():
    script = (
        "import os, torch, torch_xla, torch_xla.core.xla_model as xm\n"
        "dev = xm.xla_device()\n"
        "a = torch.arange(6.).reshape(2, 3).to(dev)\n"
        "xm.mark_step()\n"
        "y = (a * 3 + 1).exp()\n"
        "try:\n"
        "    xm.mark_step()\n"
        "    print('no error')\n"
        "except RuntimeError as e:\n"
        "    msg = str(e)\n"
        "    hlo = msg.split('HLO: ')[1].split()[0]\n"
        "    src = msg.split('source: ')[1].split()[0]\n"
        "    print('failed', os.path.exists(hlo), os.path.exists(src))\n"
        "print(a.cpu().sum().item())\n")
    # A C++ compiler that always fails: the build error must reach Python, naming the dumps.
    out = run_python(script, TXLA_CXX='false').split()
    assert out[:3] == ['failed', 'True', 'True'], out
    assert float(out[3]) == 15.0


def executed_graphs():
    xm.wait_device_ops()
    data = met.metric_data('ExecuteTime')
    return data[0] if data else 0


def test_moving_a_model_and_reading_its_state_builds_no_graph(dev):
    """`model.to(xla)` leaves no alias per parameter for the next barrier, and detaching and
    reading device data (what xm.save does) compiles and runs nothing."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)).to(dev)
    assert not any(pending(p) for p in model.parameters())
    before = executed_graphs()
    with CounterDelta('UncachedCompile', 'CachedCompile') as d:
        xm.mark_step()
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        aliased = [torch.ops.aten.alias(p) for p in model.parameters()]
        assert not any(pending(a) for a in aliased)
    assert d['UncachedCompile'] == 0 and d['CachedCompile'] == 0
    assert executed_graphs() == before
    cpu = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    cpu.load_state_dict(state)
    for p, q in zip(cpu.parameters(), model.parameters()):
        torch.testing.assert_close(p, q.cpu())


def test_xm_save_after_training_builds_no_graph(dev, tmp_path):
    """xm.save(model.state_dict()) after a step's barrier reads buffers: no compile, no run."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.Linear(16, 4)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(5, 8).to(dev)).sum().backward()
    opt.step()
    xm.mark_step()
    xm.wait_device_ops()
    before = executed_graphs()
    with CounterDelta('UncachedCompile', 'CachedCompile') as d:
        xm.save(model.state_dict(), str(tmp_path / 'model.pt'))
    assert d['UncachedCompile'] == 0 and d['CachedCompile'] == 0
    assert executed_graphs() == before
    saved = torch.load(str(tmp_path / 'model.pt'))
    for k, v in model.state_dict().items():
        assert saved[k].device.type == 'cpu'
        torch.testing.assert_close(saved[k], v.cpu())


def test_detach_of_a_pending_value_shares_it(dev):
    x = torch.randn(3).to(dev)
    y = x * 2
    z = y.detach()
    assert pending(z)
    text = torch_xla._XLAC._get_xla_tensors_text([z])
    assert 'alias_copy' not in text and 'detach_copy' not in text and 'aten::mul' in text
    torch.testing.assert_close(z.cpu(), x.cpu() * 2)
