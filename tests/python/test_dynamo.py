"""torch.compile(backend='openxla' / 'openxla_eval'): traced once on the lazy device, then replayed
from the captured graph (no re-tracing: checked through the counters), with in-place updates
written back, fresh random seeds per call, recompiles on new shapes, graph breaks and lazy
fallbacks giving eager's values."""
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from conftest import CounterDelta


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def join_lazy_graph():
    """Calls may join the caller's lazy graph (torch_xla._dynamo.config.join_lazy_graph)."""
    from torch_xla._dynamo import config
    config.join_lazy_graph = True
    yield
    config.join_lazy_graph = False


def _pair(make, dev, dtype=torch.float32):
    torch.manual_seed(0)
    ref = make().to(dtype)
    mod = make().to(dtype).to(dev)
    mod.load_state_dict(ref.state_dict())
    return ref, mod


@pytest.mark.parametrize('join', [False, True])
@pytest.mark.parametrize('dtype,tol', [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_inference_traces_once_then_replays(dev, dtype, tol, join, request):
    if join:
        request.getfixturevalue('join_lazy_graph')
    # (Tanh when joining: a graph of its own in the compile cache, compiled with the caller's)
    act = nn.Tanh() if join else nn.GELU()
    ref, mod = _pair(lambda: nn.Sequential(nn.Linear(10, 20), act, nn.Linear(20, 3)), dev, dtype)
    compiled = torch.compile(mod, backend='openxla_eval')
    names = ('DynamoExtractCompiledGraph', 'DynamoCapturedGraph', 'DynamoRunCapturedGraph',
             'UncachedCompile', 'CachedCompile', 'DynamoInlinedCapturedGraph')
    with torch.no_grad():
        x = torch.randn(4, 10, dtype=dtype)
        with CounterDelta(*names) as first:
            out = compiled(x.to(dev))
            torch.testing.assert_close(out.cpu(), ref(x), rtol=tol, atol=tol)
        assert first['DynamoExtractCompiledGraph'] == 1 and first['DynamoCapturedGraph'] == 1
        # The call runs its graph when it is made (as PyTorch/XLA's bridge does); joining, the
        # step's first call joins the lazy graph, compiled when its value is read.
        assert first['DynamoInlinedCapturedGraph'] == (1 if join else 0)
        assert first['DynamoRunCapturedGraph'] == 1
        assert first['UncachedCompile'] == 1 and first['CachedCompile'] == 0
        with CounterDelta(*names) as later:
            for _ in range(3):
                x = torch.randn(4, 10, dtype=dtype)
                torch.testing.assert_close(compiled(x.to(dev)).cpu(), ref(x), rtol=tol, atol=tol)
    # Later calls replay the captured graph: no new trace, nothing compiled, no graph hashed (a
    # joined first call leaves the replay to find the graph it compiled, once).
    assert later['DynamoRunCapturedGraph'] == 3 and later['DynamoInlinedCapturedGraph'] == 0
    assert later['DynamoExtractCompiledGraph'] == 0 and later['DynamoCapturedGraph'] == 0
    assert later['UncachedCompile'] == 0 and later['CachedCompile'] == (1 if join else 0)


def test_inputs_with_pending_values_and_outputs_that_are_inputs(dev):
    def f(x, y):
        return x, y * 2, x + y

    compiled = torch.compile(f, backend='openxla_eval')
    for _ in range(2):
        a, b = torch.randn(5), torch.randn(5)
        xa = a.to(dev) + 1  # pending: the bridge materializes it first
        xb = b.to(dev)
        r = compiled(xa, xb)
        assert r[0] is xa
        torch.testing.assert_close(r[1].cpu(), b * 2)
        torch.testing.assert_close(r[2].cpu(), a + 1 + b)


def test_in_place_updates_are_written_back(dev):
    def f(x, buf):
        buf.add_(x)
        buf.mul_(0.5)
        return x * 2

    compiled = torch.compile(f, backend='openxla_eval')
    buf_cpu = torch.zeros(6)
    buf = buf_cpu.to(dev)
    view = buf[1:3]  # a view of the updated input follows it
    with CounterDelta('DynamoRunCapturedGraph', 'DynamoCapturedGraph') as d:
        for _ in range(4):
            x = torch.randn(6)
            out = compiled(x.to(dev), buf)
            buf_cpu.add_(x).mul_(0.5)
            torch.testing.assert_close(out.cpu(), x * 2)
            torch.testing.assert_close(buf.cpu(), buf_cpu)
    torch.testing.assert_close(view.cpu(), buf_cpu[1:3])
    assert d['DynamoRunCapturedGraph'] == 4 and d['DynamoCapturedGraph'] == 1


def test_batchnorm_running_stats_under_openxla_eval(dev):
    ref, mod = _pair(lambda: nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16)), dev)
    compiled = torch.compile(mod, backend='openxla_eval')
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(12, 8)
            torch.testing.assert_close(compiled(x.to(dev)).cpu(), ref(x), rtol=1e-5, atol=1e-5)
    for name in ('1.running_mean', '1.running_var', '1.num_batches_tracked'):
        torch.testing.assert_close(mod.state_dict()[name].cpu(), ref.state_dict()[name])


def test_random_ops_draw_a_fresh_seed_per_call(dev):
    def f(x):
        return F.dropout(x, 0.5, training=True), torch.rand(3, device=x.device)

    compiled = torch.compile(f, backend='openxla_eval')
    x = torch.ones(4000).to(dev)
    torch.manual_seed(1)
    first = [t.cpu() for t in compiled(x)]
    second = [t.cpu() for t in compiled(x)]
    for out in (first[0], second[0]):
        assert set(out.unique().tolist()) <= {0.0, 2.0}
        assert 0.4 < (out == 0).float().mean() < 0.6
    assert not torch.equal(first[0], second[0]) and not torch.equal(first[1], second[1])
    # torch.manual_seed governs replays as it governs lazy tracing.
    torch.manual_seed(1)
    again = [t.cpu() for t in compiled(x)]
    assert torch.equal(again[0], first[0]) and torch.equal(again[1], first[1])


def test_new_shape_recompiles_through_dynamo(dev):
    ref, mod = _pair(lambda: nn.Linear(10, 4), dev)
    compiled = torch.compile(mod, backend='openxla_eval', dynamic=False)
    with torch.no_grad():
        for batch, new in ((3, 1), (5, 1), (3, 0)):
            x = torch.randn(batch, 10)
            with CounterDelta('DynamoExtractCompiledGraph', 'UncachedCompile') as d:
                torch.testing.assert_close(compiled(x.to(dev)).cpu(), ref(x), rtol=1e-5, atol=1e-5)
            assert d['UncachedCompile'] == d['DynamoExtractCompiledGraph'] == new


def test_dynamic_shapes_retrace_per_size_without_dynamo_recompiling(dev):
    ref, mod = _pair(lambda: nn.Linear(16, 8), dev)
    compiled = torch.compile(mod, backend='openxla', dynamic=True)
    with torch.no_grad():
        x = torch.randn(8, 16)
        compiled(x.to(dev)).cpu()
        for batch, compiles in ((16, 1), (32, 1), (8, 0), (16, 0)):
            x = torch.randn(batch, 16)
            with CounterDelta('DynamoExtractCompiledGraph', 'UncachedCompile') as d:
                torch.testing.assert_close(compiled(x.to(dev)).cpu(), ref(x), rtol=1e-5, atol=1e-5)
            assert d['DynamoExtractCompiledGraph'] == 0
            assert d['UncachedCompile'] == compiles


def test_graph_break_runs_the_middle_lazily(dev):
    def f(x):
        y = torch.sin(x) * 2
        print('graph break', end='')  # dynamo splits the function here
        return torch.cos(y) + x.sum()

    compiled = torch.compile(f, backend='openxla_eval')
    for _ in range(2):
        x = torch.randn(7)
        torch.testing.assert_close(compiled(x.to(dev)).cpu(), torch.cos(torch.sin(x) * 2) + x.sum())


@pytest.mark.parametrize('pending', [False, True])
def test_graph_with_a_cpu_fallback_runs_lazily_and_says_so(dev, pending):
    """A CPU fallback runs part of the graph while it is traced: the graph runs lazily on every
    call. With a pending input the first trace ran on its stand-in (zeros): the result is still
    computed from the input's value."""
    def f(x):
        return torch.histc(x * 0.5, bins=4, min=0, max=1) + 1  # histc falls back to the CPU

    to_dev = (lambda x: x.to(dev) + 0) if pending else (lambda x: x.to(dev))
    compiled = torch.compile(f, backend='openxla_eval')
    with pytest.warns(UserWarning, match='runs lazily on every call'):
        x = torch.rand(9)
        torch.testing.assert_close(compiled(to_dev(x)).cpu(), torch.histc(x * 0.5, bins=4, min=0, max=1) + 1)
    with CounterDelta('DynamoLazyRun', 'DynamoRunCapturedGraph') as d:
        with warnings.catch_warnings():
            warnings.simplefilter('error')  # said once, not per call
            for _ in range(2):
                x = torch.rand(9)
                torch.testing.assert_close(compiled(to_dev(x)).cpu(), torch.histc(x * 0.5, bins=4, min=0, max=1) + 1)
    assert d['DynamoLazyRun'] == 2 and d['DynamoRunCapturedGraph'] == 0


def test_a_trace_that_fails_on_stand_ins_is_done_again_on_the_inputs_values(dev):
    """A pending input is traced as a stand-in of zeros, which can fail where its value would not
    (a multinomial draw from a distribution of zeros): the trace is done again on the
    materialized input, and an in-place update the failed trace made to another input is undone
    first (applied once per call, not twice)."""
    def f(probs, counter):
        counter.add_(1)
        return torch.multinomial(probs, 1).squeeze(1) + counter.long()

    compiled = torch.compile(f, backend='openxla_eval')
    counter = torch.zeros((), device=dev)
    xm.mark_step()
    for call in range(1, 3):
        picks = torch.tensor([2, 0, 1])
        probs = F.one_hot(picks, 4).double().to(dev) * 3  # pending: one outcome per row
        torch.testing.assert_close(compiled(probs, counter).cpu(), picks + call)
        assert counter.item() == call


def _small_cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))


@pytest.mark.parametrize('join', [False, True])
@pytest.mark.parametrize('dtype,tol', [(torch.float32, 2e-5), (torch.float64, 1e-10)])
def test_training_forward_and_backward_through_aot_autograd(dev, dtype, tol, join, request):
    if join:
        request.getfixturevalue('join_lazy_graph')
    ref, mod = _pair(_small_cnn, dev, dtype)
    compiled = torch.compile(mod, backend='openxla')
    opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt_x = torch.optim.SGD(mod.parameters(), lr=0.05, momentum=0.9)
    for step in range(4):
        x = torch.randn(6, 3, 8, 8, dtype=dtype)
        y = torch.randint(0, 10, (6,))
        opt.zero_grad()
        loss = F.cross_entropy(ref(x), y)
        loss.backward()
        opt.step()
        with CounterDelta('DynamoRunCapturedGraph', 'DynamoCapturedGraph', 'DynamoLazyGraph',
                          'DynamoInlinedCapturedGraph', 'ExecuteTime', 'UncachedCompile') as d:
            opt_x.zero_grad()
            loss_x = F.cross_entropy(compiled(x.to(dev)), y.to(dev))
            loss_x.backward()
            opt_x.step()
            xm.mark_step()
            xm.wait_device_ops()  # runs are timed (ExecuteTime) as they end
        torch.testing.assert_close(loss_x.cpu(), loss, rtol=tol, atol=tol)
        # forward and backward replay; both were captured on the first step only
        assert d['DynamoRunCapturedGraph'] == 2 and d['DynamoLazyGraph'] == 0
        assert d['DynamoCapturedGraph'] == (2 if step == 0 else 0)
        # Joining, both join the barrier's graph with the loss and the optimizer's update: the
        # forward as the step's first call of its graph, the backward because its input (the
        # loss's gradient) is pending. One execution a step, as on the lazy path, not four (the
        # forward, a graph for the loss's gradient, the backward, the update).
        assert d['DynamoInlinedCapturedGraph'] == (2 if join else 0), d.delta
        if step > 0:
            assert d['ExecuteTime'] == (1 if join else 4), d.delta
        # The step's graph is the same every step once SGD's momentum exists (step 2): nothing
        # compiles after it.
        if step > 1:
            assert d['UncachedCompile'] == 0, d.delta
    for (name, a), b in zip(ref.state_dict().items(), mod.state_dict().values()):
        torch.testing.assert_close(b.cpu(), a, rtol=tol * 10, atol=tol * 10, msg=name)



@pytest.mark.usefixtures('join_lazy_graph')
@pytest.mark.parametrize('dtype,tol', [(torch.float32, 2e-5), (torch.float64, 1e-10)])
def test_a_backward_graph_inlined_twice_in_one_step(dev, dtype, tol):
    """Two micro-batches accumulate their gradients before one update, and the model runs twice
    in the second (a sum of two losses): the backward graph joins the step's graph once per
    backward pass; gradients, BatchNorm statistics and the update are eager's."""
    ref, mod = _pair(_small_cnn, dev, dtype)
    compiled = torch.compile(mod, backend='openxla')
    opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt_x = torch.optim.SGD(mod.parameters(), lr=0.05, momentum=0.9)
    for step in range(3):
        xs = [torch.randn(6, 3, 8, 8, dtype=dtype) for _ in range(3)]
        y = torch.randint(0, 10, (6,))
        opt.zero_grad()
        F.cross_entropy(ref(xs[0]), y).backward()
        (F.cross_entropy(ref(xs[1]), y) + F.cross_entropy(ref(xs[2]), y)).backward()
        opt.step()
        with CounterDelta('DynamoInlinedCapturedGraph') as d:
            opt_x.zero_grad()
            F.cross_entropy(compiled(xs[0].to(dev)), y.to(dev)).backward()
            (F.cross_entropy(compiled(xs[1].to(dev)), y.to(dev)) +
             F.cross_entropy(compiled(xs[2].to(dev)), y.to(dev))).backward()
            grads = [p.grad.cpu() for p in mod.parameters()]
            opt_x.step()
            xm.mark_step()
        if step > 0:
            assert d['DynamoInlinedCapturedGraph'] >= 3, d.delta
        for p_ref, g in zip(ref.parameters(), grads):
            torch.testing.assert_close(g, p_ref.grad, rtol=tol * 10, atol=tol * 10)
    for (name, a), b in zip(ref.state_dict().items(), mod.state_dict().values()):
        torch.testing.assert_close(b.cpu(), a, rtol=tol * 10, atol=tol * 10, msg=name)

@pytest.mark.parametrize('dtype,tol', [(torch.float32, 2e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize('tiles', [True, False])
def test_max_pool_saves_its_input_not_indices_for_the_backward_graph(dev, monkeypatch, dtype, tol, tiles):
    """Through AOTAutograd, a pool whose windows tile the input saves no int64 indices between
    the forward and backward graphs: its gradient (txla::max_pool2d_backward_from_input) finds
    the maxima in the saved input. Other windows keep ATen's indices. Gradients are eager's."""
    from torch_xla.core import dynamo_bridge
    graphs = []
    extract = dynamo_bridge.extract_compiled_graph

    def recording(gm, args):
        graphs.append(gm)
        return extract(gm, args)

    monkeypatch.setattr(dynamo_bridge, 'extract_compiled_graph', recording)
    pool = nn.MaxPool2d(2) if tiles else nn.MaxPool2d(3, stride=2, padding=1)
    make = lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), pool, nn.Flatten(),
                                 nn.Linear(4 * 4 * 4, 5))
    ref, mod = _pair(make, dev, dtype)
    compiled = torch.compile(mod, backend='openxla')
    x = torch.randn(3, 3, 8, 8, dtype=dtype)
    for _ in range(2):
        ref.zero_grad(), mod.zero_grad()
        ref(x).square().sum().backward()
        out = compiled(x.to(dev))
        out.square().sum().backward()
        for p_ref, p in zip(ref.parameters(), mod.parameters()):
            torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=tol * 10, atol=tol * 10)
    forward, backward = graphs
    saved = [n.meta['val'].dtype for n in forward.graph.find_nodes(op='output')[0].args[0]
             if isinstance(n, torch.fx.Node)]
    targets = {n.target for n in backward.graph.nodes if n.op == 'call_function'}
    assert (torch.int64 in saved) != tiles, saved
    assert (torch.ops.txla.max_pool2d_backward_from_input.default in targets) == tiles, targets
    assert (torch.ops.aten.max_pool2d_with_indices_backward.default in targets) != tiles, targets


def _mlp():
    return nn.Sequential(nn.Linear(9, 13), nn.ReLU(), nn.Linear(13, 11), nn.Tanh(), nn.Linear(11, 5))


def _matmul_mlp():
    from conftest import MatMulLinear
    return nn.Sequential(MatMulLinear(9, 13), nn.ReLU(), MatMulLinear(13, 11), nn.Tanh(), MatMulLinear(11, 5))


@pytest.mark.parametrize('dtype,tol', [(torch.float32, 2e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize('barrier_before_backward', [False, True])
def test_transposed_weights_saved_for_backward_stay_views(dev, dtype, tol, barrier_before_backward):
    """AOT autograd saves the layers' transposed weights (`w.t()` of `x @ w.t()`) for the backward
    graph: the forward graph returns them as views of the weights and the backward graph reads
    the weights' data with the transpose inside it (DynamoTransposedInputs), replayed every step
    without tracing again; losses and parameters stay eager's over steps, also with a barrier
    between the forward and the backward pass."""
    ref, mod = _pair(_matmul_mlp, dev, dtype)
    compiled = torch.compile(mod, backend='openxla')
    opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt_x = torch.optim.SGD(mod.parameters(), lr=0.05, momentum=0.9)
    for step in range(4):
        x = torch.randn(6, 9, dtype=dtype)
        y = torch.randn(6, 5, dtype=dtype)
        opt.zero_grad()
        loss = F.mse_loss(ref(x), y)
        loss.backward()
        opt.step()
        with CounterDelta('DynamoRunCapturedGraph', 'DynamoCapturedGraph', 'DynamoTransposedInputs',
                          'DynamoLazyGraph') as d:
            opt_x.zero_grad()
            loss_x = F.mse_loss(compiled(x.to(dev)), y.to(dev))
            if barrier_before_backward:
                xm.mark_step()
            loss_x.backward()
            opt_x.step()
            xm.mark_step()
            xm.wait_device_ops()  # runs are timed (ExecuteTime) as they end
        torch.testing.assert_close(loss_x.cpu(), loss, rtol=tol, atol=tol)
        assert d['DynamoRunCapturedGraph'] == 2 and d['DynamoLazyGraph'] == 0, d.delta
        if step == 0:
            # The second and third layers' weights (the first one's input needs no gradient).
            assert d['DynamoTransposedInputs'] == 2 and d['DynamoCapturedGraph'] == 2, d.delta
        else:
            assert d['DynamoCapturedGraph'] == 0, d.delta
    for (name, a), b in zip(ref.state_dict().items(), mod.state_dict().values()):
        torch.testing.assert_close(b.cpu(), a, rtol=tol * 10, atol=tol * 10, msg=name)


class _MatMul(nn.Module):
    def forward(self, x, w):
        return x @ w


class _Add(nn.Module):
    def forward(self, a, b):
        return a * 2 + b


def test_a_transposed_input_that_is_no_longer_a_transpose_traces_again(dev):
    """A graph traced with a transpose of device data as an input runs on the data it transposes
    while later inputs are that transpose again (of new data too: an updated weight); an input
    that is not (materialized data) gets a trace of its own; values are eager's throughout."""
    from torch_xla.core import dynamo_bridge
    graph = dynamo_bridge.extract_compiled_graph(torch.fx.symbolic_trace(_MatMul()), None)
    torch.manual_seed(3)
    w, x = torch.randn(5, 7), torch.randn(3, 7)
    wd, xd = w.to(dev), x.to(dev)
    xm.mark_step()
    with CounterDelta('DynamoTransposedInputs', 'DynamoCapturedGraph') as d:
        torch.testing.assert_close(graph(xd, wd.t()).cpu(), x @ w.t())
    assert d['DynamoTransposedInputs'] == 1 and d['DynamoCapturedGraph'] == 1, d.delta
    wd.add_(1.5)
    xm.mark_step()
    with CounterDelta('DynamoCapturedGraph') as d:
        torch.testing.assert_close(graph(xd, wd.t()).cpu(), x @ (w + 1.5).t())
    assert d['DynamoCapturedGraph'] == 0, d.delta
    plain = torch.randn(7, 5)
    with CounterDelta('DynamoCapturedGraph') as d:
        torch.testing.assert_close(graph(xd, plain.to(dev)).cpu(), x @ plain)
    assert d['DynamoCapturedGraph'] == 1, d.delta
    torch.testing.assert_close(graph(xd, wd.t()).cpu(), x @ (w + 1.5).t())


@pytest.mark.usefixtures('join_lazy_graph')
@pytest.mark.parametrize('pending', [False, True])
def test_an_input_passed_twice_in_the_trace_and_apart_later(dev, pending):
    """Traced with one tensor as both inputs, the graph read one buffer for both; called with two
    different tensors it traces again instead of reading the first one twice. With pending inputs
    (inlined graphs) one pending value counts as one input."""
    from torch_xla.core import dynamo_bridge
    graph = dynamo_bridge.extract_compiled_graph(torch.fx.symbolic_trace(_Add()), None)
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    ad, bd = a.to(dev), b.to(dev)
    xm.mark_step()
    if pending:
        ad, bd, a, b = ad + 1, bd + 1, a + 1, b + 1
    torch.testing.assert_close(graph(ad, ad).cpu(), a * 3)
    with CounterDelta('DynamoCapturedGraph') as d:
        torch.testing.assert_close(graph(ad, bd).cpu(), a * 2 + b)
    assert d['DynamoCapturedGraph'] == 1, d.delta
    torch.testing.assert_close(graph(bd, bd).cpu(), b * 3)
    if pending:
        c = torch.randn(4, 3)
        cd = c.to(dev) * 2
        with CounterDelta('DynamoCapturedGraph', 'DynamoInlinedCapturedGraph') as d:
            torch.testing.assert_close(graph(cd, cd).cpu(), c * 6)
        assert d['DynamoCapturedGraph'] == 0 and d['DynamoInlinedCapturedGraph'] == 1, d.delta


@pytest.mark.usefixtures('join_lazy_graph')
@pytest.mark.parametrize('dtype,tol', [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_a_graph_called_with_pending_inputs_joins_the_callers_graph(dev, dtype, tol):
    """A graph traced on pending inputs is inlined on every call: its ops join the caller's lazy
    graph, computed at the next barrier together with what produces its inputs, instead of a
    graph to compute the inputs and one to run it. Nothing runs at the call, the first included:
    the trace runs on stand-ins of the pending inputs."""
    def f(x, y):
        return torch.relu(x @ y) * 2, x.sum(0), x

    compiled = torch.compile(f, backend='openxla_eval')
    for step in range(3):
        a, b = torch.randn(4, 5, dtype=dtype), torch.randn(5, 3, dtype=dtype)
        xa = a.to(dev) + 1
        with CounterDelta('DynamoInlinedCapturedGraph', 'DynamoCapturedGraph', 'ExecuteTime') as call:
            out, s, same = compiled(xa, b.to(dev) * 2)
            xm.wait_device_ops()
        with CounterDelta('ExecuteTime') as barrier:
            xm.mark_step()
            xm.wait_device_ops()
        assert call['DynamoInlinedCapturedGraph'] == 1, call.delta
        assert call['ExecuteTime'] == 0, call.delta
        assert call['DynamoCapturedGraph'] == (1 if step == 0 else 0), call.delta
        assert barrier['ExecuteTime'] == 1, barrier.delta
        assert same is xa
        torch.testing.assert_close(out.cpu(), torch.relu((a + 1) @ (b * 2)) * 2, rtol=tol, atol=tol)
        torch.testing.assert_close(s.cpu(), (a + 1).sum(0), rtol=tol, atol=tol)


@pytest.mark.usefixtures('join_lazy_graph')
def test_a_graph_traced_on_data_joins_the_callers_graph_once_a_step(dev):
    """A graph whose inputs are data joins the caller's graph on its first call of a step (from
    one barrier to the next) and runs on its own on later calls of the step, so a loop without
    barriers never grows one graph; with a pending input it joins every time. All give eager's
    values."""
    def f(x):
        return torch.tanh(x) + x.mean()

    compiled = torch.compile(f, backend='openxla_eval')
    x = torch.randn(6, 4)
    xd = x.to(dev)
    # (input pending, a barrier before the call, joins the caller's graph)
    calls = [(False, True, True), (False, False, False), (True, False, True), (False, False, False),
             (True, False, True), (False, True, True), (False, True, True), (True, True, True)]
    for pending, barrier, joins in calls:
        if barrier:
            xm.mark_step()
            xm.wait_device_ops()  # the barrier's own run (anything still pending) ends first
        arg, ref = (xd * 3, x * 3) if pending else (xd, x)
        with CounterDelta('DynamoInlinedCapturedGraph', 'ExecuteTime') as d:
            out = compiled(arg)
            xm.wait_device_ops()
        assert d['DynamoInlinedCapturedGraph'] == int(joins), (pending, barrier, d.delta)
        assert d['ExecuteTime'] == (0 if joins else 1), (pending, barrier, d.delta)
        torch.testing.assert_close(out.cpu(), torch.tanh(ref) + ref.mean())


@pytest.mark.usefixtures('join_lazy_graph')
def test_an_inlined_graph_writes_back_in_place_updates_and_draws_fresh_seeds(dev):
    """Inlined, a graph's in-place updates become its inputs' new pending values (a view
    follows), and its random ops draw a seed per call as a run does."""
    def f(x, buf):
        buf.add_(x)
        buf.mul_(0.5)
        return F.dropout(x, 0.5, training=True)

    compiled = torch.compile(f, backend='openxla_eval')
    buf_cpu = torch.zeros(4000)
    buf = buf_cpu.to(dev)
    view = buf[1:3]
    masks = []
    torch.manual_seed(5)
    for _ in range(3):
        x = torch.rand(4000) + 0.5
        with CounterDelta('DynamoInlinedCapturedGraph') as d:
            out = compiled(x.to(dev) * 1, buf)
        assert d['DynamoInlinedCapturedGraph'] == 1, d.delta
        buf_cpu.add_(x).mul_(0.5)
        o = out.cpu()
        kept = o != 0
        torch.testing.assert_close(o[kept], x[kept] * 2)
        assert 0.4 < kept.float().mean() < 0.6
        masks.append(kept)
        torch.testing.assert_close(buf.cpu(), buf_cpu)
    torch.testing.assert_close(view.cpu(), buf_cpu[1:3])
    assert not torch.equal(masks[1], masks[2])
    # torch.manual_seed governs inlined calls as it governs runs.
    torch.manual_seed(5)
    x = torch.rand(4000) + 0.5
    assert torch.equal(compiled(x.to(dev) * 1, buf).cpu() != 0, masks[0])


def test_openxla_eval_returns_a_transposed_input_as_a_view(dev):
    """An inference graph that returns a transpose of its input gives that view (as eager's
    `w.t()` is), with eager's values; other outputs are computed as before."""
    class TAndScale(nn.Module):
        def forward(self, w):
            return w.t(), w * 3

    compiled = torch.compile(TAndScale(), backend='openxla_eval')
    w = torch.randn(4, 6)
    for _ in range(2):
        t, s = compiled(w.to(dev))
        xm.mark_step()
        torch.testing.assert_close(t.cpu(), w.t())
        torch.testing.assert_close(s.cpu(), w * 3)


def test_an_inlined_graph_keeps_the_traces_source_frames_under_ir_debug(tmp_path):
    """With XLA_IR_DEBUG=1 the nodes an inlined call makes carry the frames the trace recorded
    (the compiled function's line), as the trace's own nodes did, for dumps and compile reasons."""
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent("""
        import torch, torch_xla, torch_xla._dynamo.config, torch_xla.core.xla_model as xm
        dev = xm.xla_device()
        def f(x):
            return torch.tanh(x) * 3
        torch_xla._dynamo.config.join_lazy_graph = True
        compiled = torch.compile(f, backend='openxla_eval')
        for k in range(3):
            out = compiled(torch.randn(4).to(dev) + 1)
            if k == 2:
                print(torch_xla._XLAC._get_xla_tensors_text([out]))
                print('inlined', torch_xla._XLAC._xla_counter_value('DynamoInlinedCapturedGraph'))
            xm.mark_step()
        """))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, '-W', 'ignore', str(script)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root, XLA_IR_DEBUG='1'), check=True).stdout
    assert 'inlined 3' in out, out
    tanh = out[out.index('aten::tanh'):out.index('aten::mul')]
    # (dynamo's frame for f points at its def line)
    assert re.search(r'File "%s", line \d+, in f\n' % re.escape(str(script)), tanh), out


@pytest.mark.parametrize('join', ['0', '1'])
def test_an_input_sharded_after_the_trace_traces_again_under_spmd(join):
    """Under SPMD a captured graph is made for its inputs' layouts: called with an input that has
    since been sharded, it traces again (PyTorch/XLA compiles again) and gives eager's values."""
    from conftest import run_python
    out = run_python(textwrap.dedent(f"""
        import torch, torch_xla, numpy as np
        import torch_xla.distributed.spmd as xs, torch_xla.runtime as xr
        import torch_xla.debug.metrics as met
        from torch_xla._dynamo import config
        config.join_lazy_graph = {join} == 1
        xr.use_spmd()
        mesh = xs.Mesh(np.arange(4), (1, 4))
        torch.manual_seed(0)
        ref = torch.nn.Linear(128, 128)
        lin = torch.nn.Linear(128, 128).to('xla')
        lin.load_state_dict(ref.state_dict())
        x = torch.randn(8, 128)
        xx = x.to('xla')
        torch_xla.sync()
        f = torch.compile(lin, backend='openxla_eval')
        with torch.no_grad():
            errors = [(f(xx).cpu() - ref(x)).abs().max().item()]
            xs.mark_sharding(xx, mesh, (1, 0))
            errors.append((f(xx).cpu() - ref(x)).abs().max().item())
        print(max(errors) < 1e-5, met.counter_value('DynamoCapturedGraph'))
        """), CPU_NUM_DEVICES='4', PJRT_DEVICE='CPU')
    assert out.split() == ['True', '2'], out
