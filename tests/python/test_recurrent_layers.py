"""nn.LSTM and nn.GRU on the device: each layer and direction one fused recurrence (txla::rnn_layer,
a library call), its gradient one op too. Checked against eager CPU PyTorch: outputs, final states
and every gradient (parameters, input, initial states), in float64 to rounding and in float32
within the 10x rule; the configurations nn.LSTM/nn.GRU offer; what stays on ATen's decomposition;
and the errors."""
import copy

import pytest
import torch
import torch.nn as nn

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

CONFIGS = [
    dict(num_layers=1),
    dict(num_layers=2, batch_first=True),
    dict(num_layers=1, bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True, bias=False),
    dict(num_layers=3, dropout=0.5),  # dropout between layers: off in eval, checked below
]


def _run(module, x, state, dev):
    """Output, final state(s) and every gradient of a loss reading all of them."""
    x = x.detach().to(dev).requires_grad_()
    state = tuple(s.detach().to(dev).requires_grad_() for s in state) if state is not None else None
    if state is not None and len(state) == 1:
        out, h_n = module(x, state[0])
        finals = (h_n,)
    else:
        out, finals = module(x, state)
        finals = finals if isinstance(finals, tuple) else (finals,)
    loss = out.square().sum() + sum((k + 2) * f.sin().sum() for k, f in enumerate(finals))
    loss.backward()
    grads = [p.grad for p in module.parameters()] + [x.grad] + [s.grad for s in (state or ())]
    return [t.cpu() for t in (out,) + finals + tuple(grads)]


def _pair(cell, dtype, dev, **kw):
    torch.manual_seed(0)
    cpu = cell(6, 10, **kw).to(dtype).eval()
    return cpu, copy.deepcopy(cpu).to(dev)


def _initial_state(cell, kw, batch, dtype):
    layers = kw.get('num_layers', 1) * (2 if kw.get('bidirectional') else 1)
    h0 = torch.randn(layers, batch, 10, dtype=dtype)
    return (h0, torch.randn(layers, batch, 10, dtype=dtype)) if cell is nn.LSTM else (h0,)


@pytest.mark.parametrize('cell', [nn.LSTM, nn.GRU])
@pytest.mark.parametrize('kw', CONFIGS, ids=lambda kw: '-'.join(f'{k}={v}' for k, v in kw.items()))
def test_matches_eager_in_float64(dev, cell, kw):
    cpu, xla = _pair(cell, torch.float64, dev, **kw)
    x = torch.randn(4, 5, 6, dtype=torch.float64)  # (steps, batch) or (batch, steps)
    for state in (None, _initial_state(cell, kw, 5 if not kw.get('batch_first') else 4, torch.float64)):
        cpu.zero_grad()
        xla.zero_grad()
        want, got = _run(cpu, x, state, 'cpu'), _run(xla, x, state, dev)
        assert len(want) == len(got)
        for w, g in zip(want, got):
            assert g.shape == w.shape
            torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('cell', [nn.LSTM, nn.GRU])
def test_float32_within_ten_times_eager_from_float64(dev, cell):
    kw = dict(num_layers=2, batch_first=True)
    cpu, xla = _pair(cell, torch.float32, dev, **kw)
    ref = copy.deepcopy(cpu).double()
    x = torch.randn(8, 32, 6)
    exact = _run(ref, x.double(), None, 'cpu')
    eager = _run(cpu, x, None, 'cpu')
    device = _run(xla, x, None, dev)
    for e64, e32, d32 in zip(exact, eager, device):
        eager_dev = (e32.double() - e64).abs().max().item()
        device_dev = (d32.double() - e64).abs().max().item()
        assert device_dev <= 10 * max(eager_dev, 1e-7), (device_dev, eager_dev)


@pytest.mark.parametrize('cell', [nn.LSTM, nn.GRU])
def test_a_layer_is_one_library_call_not_unrolled_steps(dev, cell):
    _, xla = _pair(cell, torch.float32, dev, num_layers=2, bidirectional=True)
    out, _ = xla(torch.randn(16, 3, 6, device=dev))
    hlo = torch_xla._XLAC._get_xla_tensors_hlo([out])
    target = 'txla.lstm_layer' if cell is nn.LSTM else 'txla.gru_layer'
    assert hlo.count(f'custom_call_target="{target}"') == 4  # 2 layers x 2 directions
    assert hlo.count('dimensions={0}') >= 2  # the reverse directions
    # 16 steps unrolled would be at least 16 products by the hidden weights a layer and direction.
    assert hlo.count(' dot(') <= 4
    xm.mark_step()


@pytest.mark.parametrize('cell', [nn.LSTM, nn.GRU])
def test_training_compiles_once_and_runs_nothing_on_the_cpu(dev, cell):
    torch.manual_seed(0)
    model = cell(6, 10, num_layers=2, batch_first=True).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 7, 6, device=dev)

    def step():
        opt.zero_grad()
        out, _ = model(x)
        out.sum().backward()
        opt.step()
        xm.mark_step()

    step()
    step()  # the first step's graph reads parameters fresh from the host; the second is the loop's
    met.clear_all()
    step()
    step()
    assert met.counter_value('UncachedCompile') in (None, 0)
    assert not [n for n in met.counter_names() if n.startswith('aten::')]  # no CPU fallback


def test_dropout_between_layers_while_training(dev):
    torch.manual_seed(0)
    model = nn.LSTM(6, 10, num_layers=2, dropout=1.0).to(dev).train()
    out, (h_n, _) = model(torch.randn(4, 2, 6, device=dev))
    # p=1 zeroes the first layer's output: the second layer sees only its biases.
    ref = copy.deepcopy(model).cpu()
    with torch.no_grad():
        ref.weight_ih_l1.zero_()
    want, _ = ref(torch.randn(4, 2, 6))
    torch.testing.assert_close(out.cpu(), want, rtol=1e-5, atol=1e-6)


def test_projections_keep_atens_decomposition(dev):
    torch.manual_seed(0)
    cpu = nn.LSTM(6, 10, proj_size=4)
    xla = copy.deepcopy(cpu).to(dev)
    x = torch.randn(5, 2, 6)
    want, got = _run(cpu, x, None, 'cpu'), _run(xla, x, None, dev)
    for w, g in zip(want, got):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_unbatched_input(dev):
    torch.manual_seed(0)
    cpu = nn.GRU(6, 10)
    xla = copy.deepcopy(cpu).to(dev)
    x = torch.randn(5, 6)
    torch.testing.assert_close(xla(x.to(dev))[0].cpu(), cpu(x)[0], rtol=1e-5, atol=1e-6)


def test_an_empty_sequence_raises_eagers_error(dev):
    with pytest.raises(RuntimeError, match='sequence length to be larger than 0'):
        nn.LSTM(6, 10).to(dev)(torch.randn(0, 2, 6, device=dev))


def test_double_backward_raises_a_clear_error(dev):
    model = nn.LSTM(6, 10).to(dev)
    x = torch.randn(3, 2, 6, device=dev, requires_grad=True)
    out, _ = model(x)
    with pytest.raises(RuntimeError, match='double backward'):
        torch.autograd.grad(out.sum(), x, create_graph=True)


def test_the_ops_off_the_device_match_the_library():
    """txla::rnn_layer(_backward) on the CPU (ATen's cell formulas step by step: what the
    interpreter and Meta run) against the device's library call."""
    torch.manual_seed(0)
    dev = xm.xla_device()
    for cell, gates in ((0, 4), (1, 3)):
        for reverse in (False, True):
            args = [torch.randn(5, 3, gates * 7, dtype=torch.float64), torch.randn(gates * 7, 7, dtype=torch.float64),
                    torch.randn(gates * 7, dtype=torch.float64), torch.randn(3, 7, dtype=torch.float64),
                    torch.randn(3, 7, dtype=torch.float64)]
            fw = torch.ops.txla.rnn_layer(*args, cell, reverse)
            fw_dev = torch.ops.txla.rnn_layer(*[a.to(dev) for a in args], cell, reverse)
            torch.testing.assert_close(fw_dev.cpu(), fw, rtol=1e-13, atol=1e-13)
            grads = [torch.randn(5, 3, 7, dtype=torch.float64), torch.randn(3, 7, dtype=torch.float64),
                     torch.randn(3, 7, dtype=torch.float64)]
            back_args = grads + [args[1], args[3], args[4], fw]
            back = torch.ops.txla.rnn_layer_backward(*back_args, cell, reverse)
            back_dev = torch.ops.txla.rnn_layer_backward(*[a.to(dev) for a in back_args], cell, reverse)
            torch.testing.assert_close(back_dev.cpu(), back, rtol=1e-12, atol=1e-12)


def test_mismatched_arguments_raise_at_the_op(dev):
    gates = torch.randn(5, 3, 28, device=dev)
    w_hh, b_hh = torch.randn(28, 7, device=dev), torch.randn(28, device=dev)
    h0 = torch.randn(3, 7, device=dev)
    with pytest.raises(RuntimeError, match='h0 and c0 must be'):
        torch.ops.txla.rnn_layer(gates, w_hh, b_hh, h0, torch.randn(2, 7, device=dev), 0, False)
    with pytest.raises(RuntimeError, match='w_hh must be'):
        torch.ops.txla.rnn_layer(gates, w_hh, b_hh, h0, h0, 1, False)  # GRU: 3 gates, not 4
    with pytest.raises(RuntimeError, match='float32 or float64'):
        torch.ops.txla.rnn_layer(gates.half(), w_hh.half(), b_hh.half(), h0.half(), h0.half(), 0, False)
