"""PyTorch/XLA's training helpers: gradient checkpointing (recomputation with the same random
numbers), checkpoint_module and the nn.Linear patch, the model comparator, the builder's type
names. Values and gradients against the plain computation."""
import pytest
import torch

import torch_xla
import torch_xla.core.xla_builder as xb
import torch_xla.core.xla_model as xm
import torch_xla.debug.model_comparator as mc
from torch_xla.distributed.fsdp import apply_xla_patch_to_nn_linear, checkpoint_module
from torch_xla.utils.checkpoint import checkpoint


def _block(x, w):
    return torch.nn.functional.dropout(torch.tanh(x @ w), p=0.5, training=True)


def test_checkpoint_recomputes_with_the_same_random_numbers(dev):
    x0, w0 = torch.randn(16, 8), torch.randn(8, 8)

    def grads(use_checkpoint):
        xm.set_rng_state(123, dev)
        x = x0.to(dev).requires_grad_()
        w = w0.to(dev).requires_grad_()
        y = checkpoint(_block, x, w) if use_checkpoint else _block(x, w)
        (y * y).sum().backward()
        torch_xla.sync()
        return y.detach().cpu(), x.grad.cpu(), w.grad.cpu()

    plain, checkpointed = grads(False), grads(True)
    assert (plain[0] == 0).any()  # dropout dropped something: a different mask would show
    for a, b in zip(plain, checkpointed):
        torch.testing.assert_close(b, a)


def test_checkpoint_refuses_what_it_cannot_do(dev):
    x = torch.randn(3, device=dev, requires_grad=True)
    with pytest.raises(NotImplementedError, match='reentrant'):
        checkpoint(torch.sin, x, use_reentrant=False)
    with pytest.raises(ValueError, match='keyword arguments'):
        checkpoint(torch.sin, x, foo=1)


class _Net(torch.nn.Module):

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(6, 5), torch.nn.Linear(5, 3)

    def forward(self, x, scale=1.0):
        return self.b(torch.relu(self.a(x))) * scale


def test_checkpoint_module_and_the_linear_patch_match_the_plain_module(dev):
    torch.manual_seed(0)
    ref = _Net()
    x0 = torch.randn(4, 6)
    expected = ref(x0, scale=2.0)
    expected.sum().backward()
    for wrap in (checkpoint_module, lambda m: apply_xla_patch_to_nn_linear(checkpoint_module(m))):
        net = _Net()
        net.load_state_dict(ref.state_dict())
        net = wrap(net.to(dev))
        x = x0.to(dev).requires_grad_()
        out = net(x, scale=2.0)
        out.sum().backward()
        torch.testing.assert_close(out.cpu(), expected.detach())
        for p, q in zip(net.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-5, atol=1e-6)
        ref.zero_grad()
        expected = ref(x0, scale=2.0)
        expected.sum().backward()


def test_the_model_comparator_reports_what_differs(dev, tmp_path):
    def run(where, shift):
        mc.configure(str(tmp_path / where))
        x = torch.arange(6.0).reshape(2, 3).to(dev)
        mc.save('input', x)
        mc.save('output', torch.exp(x) + shift)
        mc.save('output', torch.exp(x) * 2, step=1)
        mc.configure(None)

    for where in ('a', 'b', 'c'):
        (tmp_path / where).mkdir()
    run('a', 0.0)
    run('b', 0.0)
    run('c', 1.0)
    assert mc.compare(str(tmp_path / 'a'), str(tmp_path / 'b')) == ''
    report = mc.compare(str(tmp_path / 'a'), str(tmp_path / 'c'))
    assert 'output.0' in report and 'input' not in report and 'step-1' not in report


def test_builder_type_names_round_trip():
    for name in xb._XLA_PT_TYPE_MAP:
        assert xb.Op.from_torch_type(xb.Op.to_torch_type(name)) == name


def test_a_step_closure_from_a_backward_hook_runs_at_the_next_barrier(dev):
    # Backward hooks run on autograd's worker thread; the closure still waits for this barrier.
    seen = []
    x = torch.randn(4, device=dev, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: xm.add_step_closure(lambda t: seen.append(t.cpu()), args=(g, )))
    y.sum().backward()
    assert seen == []
    torch_xla.sync()
    assert len(seen) == 1 and torch.equal(seen[0], torch.ones(4))


def test_async_step_closures_run_in_order_on_their_own_thread_and_raise_at_a_later_barrier(dev):
    import threading
    release, ran, order = threading.Event(), threading.Event(), []
    main = threading.get_ident()

    def slow(t):
        release.wait(10)  # holds its thread until the program below has gone on
        order.append(('slow', t.cpu().item(), threading.get_ident() != main))

    x = torch.ones(1, device=dev) * 3
    xm.add_step_closure(slow, args=(x, ), run_async=True)
    xm.add_step_closure(lambda: (order.append('next'), ran.set()), run_async=True)
    torch_xla.sync()
    assert order == []  # the barrier did not wait for them
    release.set()
    assert ran.wait(10)
    assert order == [('slow', 3.0, True), 'next']

    failed, skipped = threading.Event(), []

    def fail():
        failed.set()
        raise ValueError('closure failed')

    xm.add_step_closure(fail, run_async=True)
    xm.add_step_closure(lambda: skipped.append(1), run_async=True)  # after a failure: not run
    torch_xla.sync()
    xm._async_closures.wait()
    assert failed.is_set()
    xm.add_step_closure(lambda: skipped.append(2), run_async=True)
    with pytest.raises(ValueError, match='closure failed'):
        torch_xla.sync()
    assert skipped == []
    # The error was raised once: later closures run again.
    xm.add_step_closure(lambda: ran.set(), run_async=True)
    ran.clear()
    torch_xla.sync()
    assert ran.wait(10)


def test_torch_xla_compile_limits_a_functions_different_graphs(dev):
    # Calls that trace graphs already seen are free; a new graph past the limit raises, naming
    # the op where it departs from the graphs seen (PyTorch/XLA's messages).
    def fn(x, step):
        r = x + x
        if step == 0:
            return r * 2
        if step == 1:
            return r + x
        return r / 3 if step == 2 else r

    x = torch.rand(6, device=dev)
    limited = torch_xla.compile(fn, max_different_graphs=2)
    for step in (0, 1, 0, 1):
        torch.testing.assert_close(limited(x, step).cpu(), fn(x.cpu(), step))
    add = '[] aten::add, xla_shape=f32[6]{0}, dynamic_dims: ()'
    mul = '[] aten::mul, xla_shape=f32[6]{0}, dynamic_dims: ()'
    with pytest.raises(RuntimeError) as error:
        limited(x, 2)
    div = '[] aten::div, xla_shape=f32[6]{0}, dynamic_dims: ()'
    assert str(error.value) == ('Maximum number of different graphs allowed per function exceeded: 2\n'
                                f'Got: {div}\nExpected either of:\n  - {mul}\n  - {add}\n')
    with pytest.raises(RuntimeError, match=r'Reached the end of the function at: \[\] aten::add'):
        limited(x, 3)
    # A new wrapper of the same function shares its graphs; another shape is another graph.
    with pytest.raises(RuntimeError, match=r'Got: \[\] aten::add, xla_shape=f32\[4\]'):
        torch_xla.compile(fn, max_different_graphs=2)(torch.rand(4, device=dev), 0)
    xm.mark_step()


def test_torch_xla_compile_runs_the_function_as_one_graph(dev):
    import torch_xla.debug.metrics as met

    def f(t):
        return torch.cos(torch.sin(t)) * 2

    x = torch.randn(4, 5)
    xd = x.to(dev)
    torch_xla.sync()
    met.clear_all()
    out = torch_xla.compile(f)(xd)
    assert not torch_xla._XLAC._xla_has_pending_ir(out)  # submitted when the function returned
    xm.wait_device_ops()  # the run is queued: its time is recorded when it ends
    assert met.metric_data('ExecuteTime')[0] == 1
    torch.testing.assert_close(out.cpu(), f(x))
    with torch_xla.compile():
        inside = f(xd)
    assert not torch_xla._XLAC._xla_has_pending_ir(inside)

    def breaks(t):
        return torch.sin(t) if t[0, 0] > 0 else torch.cos(t)  # a value read: a graph break

    with pytest.raises(RuntimeError, match='Unexpected execution happens inside the compiled function'):
        torch_xla.compile(breaks, full_graph=True)(xd)
    assert torch_xla._XLAC._get_allow_execution()  # restored after the error
    torch.testing.assert_close(torch_xla.compile(breaks)(xd).cpu(), breaks(x))


def test_ops_are_counted_by_name_as_pytorch_xla_counts_them(dev):
    import torch_xla.debug.metrics as met
    met.clear_counters()
    x = torch.ones(3, device=dev)
    y = (x + x).sum()
    torch_xla.sync()
    assert met.counter_value('xla::add') == 1
    assert met.counter_value('xla::sum') == 1
    del y


def test_nn_gru_is_pytorch_xlas_gru_and_computes_as_the_original():
    import torch.nn as nn
    from torch_xla.experimental.gru import GRU
    assert nn.GRU is GRU and nn.GRU._orig is not GRU
    assert type(nn.GRU(4, 8, bidirectional=True)) is nn.GRU._orig
    torch.manual_seed(0)
    ours, theirs = nn.GRU(4, 8, num_layers=2), nn.GRU._orig(4, 8, num_layers=2)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(5, 3, 4)
    torch.testing.assert_close(ours(x)[0], theirs(x)[0])


def test_none_remover_takes_nones_out_and_puts_them_back():
    from torch_xla._dynamo.dynamo_bridge import NoneRemover
    r = NoneRemover()
    values = ['a', None, 'b', None]
    assert r.remove_nones(values) == ['a', 'b'] and values == ['a', 'b'] and r.none_poslist == [1, 3]
    assert r.add_nones(('a', 'b')) == ('a', None, 'b', None)


def test_a_callback_runs_once_the_tensors_value_is_computed(dev):
    from torch_xla.experimental import callback
    x = torch.randn(64, 64, device=dev)
    y = x @ x  # pending: the callback submits it
    seen = []
    done = callback.on_ready_event(y)
    callback.on_ready_callback(y, seen.append)
    assert done.wait(60)
    import time
    for _ in range(600):
        if seen:
            break
        time.sleep(0.1)
    assert seen and seen[0] is y
    assert not torch_xla._XLAC._xla_has_pending_ir(y)


def test_a_deprecated_name_calls_the_new_function_and_warns_once(caplog):
    import logging
    import sys
    from torch_xla.experimental.deprecation import deprecated
    old = deprecated(sys.modules[__name__], lambda: 42, 'old_name')
    with caplog.at_level(logging.WARNING):
        assert old() == 42 and old() == 42
    assert sum('old_name is deprecated' in r.message for r in caplog.records) == 1


def test_assume_pure_traces_once_and_replays(dev):
    import functools
    import torch_xla.experimental.assume_pure as ap
    traced = []

    @functools.partial(ap.assume_pure_torch, use_cache=True)
    def f(params, x):
        traced.append(1)
        return torch.sin(x @ params['w']) + params['b']

    params = {'w': torch.randn(3, 3), 'b': torch.randn(3)}
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(2, 3)
            got = f({k: v.to(dev) for k, v in params.items()}, x.to(dev))
            torch_xla.sync()
            torch.testing.assert_close(got.cpu(), torch.sin(x @ params['w']) + params['b'])
    assert len(traced) == 1
    # A call that needs gradients runs the function itself, so autograd records it.
    w = params['w'].to(dev).requires_grad_()
    f({'w': w, 'b': params['b'].to(dev)}, torch.ones(2, 3, device=dev)).sum().backward()
    assert w.grad is not None and len(traced) == 2


@pytest.mark.parametrize('name', ['SGD', 'Adam', 'AdamW'])
def test_grad_scaler_with_syncfree_optimizers_skips_inf_steps_on_the_device(dev, name):
    import torch_xla.debug.metrics as met
    from torch_xla.amp import GradScaler, syncfree
    torch.manual_seed(0)
    x, y = torch.randn(6, 4), torch.randn(6, 3)
    kwargs = {'lr': 0.1, 'momentum': 0.9} if name == 'SGD' else {'lr': 0.1}
    results = []
    for device in ('cpu', dev):
        torch.manual_seed(1)
        model = torch.nn.Linear(4, 3).to(device)
        if device == 'cpu':
            opt, scaler = getattr(torch.optim, name)(model.parameters(), **kwargs), torch.amp.GradScaler('cpu')
        else:
            opt, scaler = getattr(syncfree, name)(model.parameters(), **kwargs), GradScaler()
        torch_xla.sync()
        reads_before = (met.metric_data('TransferFromDeviceTime') or (0, ))[0]
        for step in range(4):
            opt.zero_grad()
            loss = ((model(x.to(device)) - y.to(device))**2).mean()
            if step == 1:
                loss = loss * float('inf')  # an overflow: this step is skipped and the scale backs off
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            if device != 'cpu':
                torch_xla.sync()
        reads = (met.metric_data('TransferFromDeviceTime') or (0, ))[0] - reads_before
        results.append(([p.detach().cpu() for p in model.parameters()], float(scaler.get_scale())))
        if device != 'cpu':
            assert reads == 0  # no step read anything back to the host
    (cpu_params, cpu_scale), (xla_params, xla_scale) = results
    assert xla_scale == cpu_scale
    for a, b in zip(cpu_params, xla_params):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_fsdp_on_one_replica_builds_a_meta_module_and_computes_as_the_module(dev):
    import copy
    from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
    from torch_xla.distributed.fsdp.wrap import always_wrap_policy
    with torch.device('meta'):
        meta = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    wrapped = FSDP(meta, auto_wrap_policy=always_wrap_policy)  # materialized by reset_parameters
    assert all(p.device.type == 'xla' for p in wrapped.parameters())
    torch.manual_seed(0)
    plain = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model = FSDP(copy.deepcopy(plain), auto_wrap_policy=always_wrap_policy)
    x = torch.randn(3, 4)
    out = model(x.to(dev))
    out.sum().backward()
    expected = plain(x)
    expected.sum().backward()
    torch.testing.assert_close(out.detach().cpu(), expected.detach())
    grads = sorted((p.grad.cpu() for p in model.parameters()), key=lambda g: -g.numel())
    wanted = sorted((p.grad.reshape(-1) for p in plain.parameters()), key=lambda g: -g.numel())
    for g, w in zip(grads, wanted):
        torch.testing.assert_close(g, w)
