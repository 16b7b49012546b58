"""A sweep of torch.nn's layers on the device against eager CPU: outputs, input gradients and
parameter gradients, in training and in inference mode. Every layer must run (through a lowering
or the counted CPU fallback), never crash on views taken below functionalization."""
import copy

import pytest
import torch
import torch.nn as nn

import torch_xla.core.xla_model as xm

# name: (constructor, input shapes). Inputs are float32 randn unless the layer says otherwise.
LAYERS = {
    'Linear': (lambda: nn.Linear(5, 3), [(4, 5)]),
    'Bilinear': (lambda: nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    'Conv1d': (lambda: nn.Conv1d(2, 3, 3, padding=1), [(2, 2, 8)]),
    'Conv2d': (lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1), [(2, 2, 7, 7)]),
    'Conv3d': (lambda: nn.Conv3d(2, 3, 3), [(1, 2, 5, 5, 5)]),
    'ConvTranspose2d': (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2), [(1, 2, 4, 4)]),
    'BatchNorm1d': (lambda: nn.BatchNorm1d(4), [(6, 4)]),
    'BatchNorm2d': (lambda: nn.BatchNorm2d(3), [(2, 3, 4, 4)]),
    'BatchNorm3d': (lambda: nn.BatchNorm3d(2), [(2, 2, 3, 3, 3)]),
    'GroupNorm': (lambda: nn.GroupNorm(2, 4), [(2, 4, 5, 5)]),
    'GroupNorm1Group': (lambda: nn.GroupNorm(1, 3, affine=False), [(3, 3, 4)]),
    'InstanceNorm2d': (lambda: nn.InstanceNorm2d(4, affine=True), [(2, 4, 5, 5)]),
    'LayerNorm': (lambda: nn.LayerNorm([4, 5]), [(2, 4, 5)]),
    'LocalResponseNorm': (lambda: nn.LocalResponseNorm(2), [(2, 4, 3, 3)]),
    'RNN': (lambda: nn.RNN(4, 6, num_layers=2), [(3, 2, 4)]),
    'LSTM': (lambda: nn.LSTM(4, 6, batch_first=True), [(2, 3, 4)]),
    'LSTMBidirectional': (lambda: nn.LSTM(4, 5, bidirectional=True), [(3, 2, 4)]),
    'GRU': (lambda: nn.GRU(4, 6), [(3, 2, 4)]),
    'LSTMCell': (lambda: nn.LSTMCell(4, 6), [(2, 4)]),
    'GRUCell': (lambda: nn.GRUCell(4, 6), [(2, 4)]),
    'RNNCell': (lambda: nn.RNNCell(4, 6), [(2, 4)]),
    'MultiheadAttention': (lambda: nn.MultiheadAttention(8, 2, batch_first=True), [(2, 3, 8)] * 3),
    'TransformerEncoderLayer': (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                                [(2, 3, 8)]),
    'TransformerDecoderLayer': (lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), [(3, 2, 8), (4, 2, 8)]),
    'MaxPool1d': (lambda: nn.MaxPool1d(2), [(2, 3, 8)]),
    'MaxPool2d': (lambda: nn.MaxPool2d(3, 2, 1), [(2, 3, 7, 7)]),
    'MaxPool3d': (lambda: nn.MaxPool3d(2), [(1, 2, 4, 4, 4)]),
    'AvgPool1d': (lambda: nn.AvgPool1d(3), [(2, 3, 9)]),
    'AvgPool2d': (lambda: nn.AvgPool2d(2, ceil_mode=True), [(2, 3, 5, 5)]),
    'AvgPool3d': (lambda: nn.AvgPool3d(2), [(1, 2, 4, 4, 4)]),
    'AdaptiveAvgPool2d': (lambda: nn.AdaptiveAvgPool2d((2, 3)), [(2, 3, 7, 7)]),
    'AdaptiveMaxPool2d': (lambda: nn.AdaptiveMaxPool2d(2), [(2, 3, 5, 5)]),
    'Upsample': (lambda: nn.Upsample(scale_factor=2, mode='nearest'), [(1, 2, 3, 3)]),
    'UpsampleBilinear': (lambda: nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False),
                         [(1, 2, 3, 3)]),
    'PixelShuffle': (lambda: nn.PixelShuffle(2), [(1, 8, 3, 3)]),
    'ReflectionPad2d': (lambda: nn.ReflectionPad2d(1), [(1, 2, 4, 4)]),
    'ReplicationPad2d': (lambda: nn.ReplicationPad2d(1), [(1, 2, 4, 4)]),
    'ZeroPad2d': (lambda: nn.ZeroPad2d((1, 0, 2, 1)), [(1, 2, 4, 4)]),
    'PReLU': (lambda: nn.PReLU(3), [(2, 3, 4)]),
    'GLU': (lambda: nn.GLU(), [(2, 6)]),
    'Softmax2d': (lambda: nn.Softmax2d(), [(1, 3, 2, 2)]),
    'LogSoftmax': (lambda: nn.LogSoftmax(dim=1), [(3, 5)]),
    'Softmin': (lambda: nn.Softmin(dim=0), [(3, 5)]),
    'GELU': (lambda: nn.GELU(), [(3, 5)]),
    'SiLU': (lambda: nn.SiLU(), [(3, 5)]),
    'Mish': (lambda: nn.Mish(), [(3, 5)]),
    'ELU': (lambda: nn.ELU(), [(3, 5)]),
    'SELU': (lambda: nn.SELU(), [(3, 5)]),
    'CELU': (lambda: nn.CELU(), [(3, 5)]),
    'Hardswish': (lambda: nn.Hardswish(), [(3, 5)]),
    'Softplus': (lambda: nn.Softplus(), [(3, 5)]),
    'Tanhshrink': (lambda: nn.Tanhshrink(), [(3, 5)]),
    'Dropout0': (lambda: nn.Dropout(0.0), [(3, 5)]),
    'Flatten': (lambda: nn.Flatten(), [(2, 3, 4)]),
    'Unflatten': (lambda: nn.Unflatten(1, (2, 3)), [(4, 6)]),
    'Identity': (lambda: nn.Identity(), [(3,)]),
    'CosineSimilarity': (lambda: nn.CosineSimilarity(dim=1), [(4, 5), (4, 5)]),
    'PairwiseDistance': (lambda: nn.PairwiseDistance(), [(4, 5), (4, 5)]),
}

# Losses take (input, target); targets are made per loss.
LOSSES = {
    'MSELoss': (nn.MSELoss, lambda: (torch.randn(4, 3), torch.randn(4, 3))),
    'L1Loss': (nn.L1Loss, lambda: (torch.randn(4, 3), torch.randn(4, 3))),
    'SmoothL1Loss': (nn.SmoothL1Loss, lambda: (torch.randn(4, 3), torch.randn(4, 3))),
    'HuberLoss': (nn.HuberLoss, lambda: (torch.randn(4, 3), torch.randn(4, 3))),
    'CrossEntropyLoss': (nn.CrossEntropyLoss, lambda: (torch.randn(4, 5), torch.randint(0, 5, (4,)))),
    'CrossEntropyLossSmoothing': (lambda: nn.CrossEntropyLoss(label_smoothing=0.1),
                                  lambda: (torch.randn(4, 5), torch.randint(0, 5, (4,)))),
    'NLLLoss': (nn.NLLLoss, lambda: (torch.randn(4, 5).log_softmax(1), torch.randint(0, 5, (4,)))),
    'BCELoss': (nn.BCELoss, lambda: (torch.rand(4, 3) * 0.9 + 0.05, torch.rand(4, 3))),
    'BCEWithLogitsLoss': (nn.BCEWithLogitsLoss, lambda: (torch.randn(4, 3), torch.rand(4, 3))),
    'KLDivLoss': (lambda: nn.KLDivLoss(reduction='batchmean'),
                  lambda: (torch.randn(4, 5).log_softmax(1), torch.rand(4, 5).softmax(1))),
    'HingeEmbeddingLoss': (nn.HingeEmbeddingLoss, lambda: (torch.randn(4, 3), torch.randint(0, 2, (4, 3)) * 2. - 1)),
    'SoftMarginLoss': (nn.SoftMarginLoss, lambda: (torch.randn(4, 3), torch.randint(0, 2, (4, 3)) * 2. - 1)),
}


def first_tensor(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def run(module, inputs):
    out = first_tensor(module(*inputs))
    # A fixed, non-uniform upstream gradient: a plain sum() hides errors in normalizing layers
    # (their gradient of a sum is ~0).
    weights = torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(out.device)
    (out * weights).sum().backward()
    return out


@pytest.mark.parametrize('training', [True, False], ids=['train', 'eval'])
@pytest.mark.parametrize('name', sorted(LAYERS))
def test_layer_matches_eager(name, training):
    make, shapes = LAYERS[name]
    torch.manual_seed(0)
    module = make().train(training)
    dev = xm.xla_device()
    module_x = copy.deepcopy(module).to(dev)
    inputs = [torch.randn(*s, requires_grad=True) for s in shapes]
    inputs_x = [t.detach().to(dev).requires_grad_() for t in inputs]
    want = run(module, inputs)
    got = run(module_x, inputs_x)
    xm.mark_step()
    tol = dict(rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got.cpu(), want.detach(), **tol)
    for t, tx in zip(inputs, inputs_x):
        torch.testing.assert_close(tx.grad.cpu(), t.grad, **tol)
    for (pname, p), px in zip(module.named_parameters(), module_x.parameters()):
        torch.testing.assert_close(px.grad.cpu(), p.grad, msg=lambda m: f'{pname}: {m}', **tol)
    for (bname, b), bx in zip(module.named_buffers(), module_x.buffers()):
        torch.testing.assert_close(bx.cpu(), b, msg=lambda m: f'{bname}: {m}', **tol)


@pytest.mark.parametrize('name', sorted(LOSSES))
def test_loss_matches_eager(name):
    make, data = LOSSES[name]
    torch.manual_seed(0)
    x, target = data()
    x.requires_grad_()
    dev = xm.xla_device()
    xx = x.detach().to(dev).requires_grad_()
    want = make()(x, target)
    want.backward()
    got = make()(xx, target.to(dev))
    got.backward()
    xm.mark_step()
    torch.testing.assert_close(got.cpu(), want.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(xx.grad.cpu(), x.grad, rtol=1e-5, atol=1e-6)


def test_embedding_and_embedding_bag():
    torch.manual_seed(0)
    dev = xm.xla_device()
    emb = nn.Embedding(10, 4, padding_idx=0)
    emb_x = copy.deepcopy(emb).to(dev)
    idx = torch.tensor([[0, 2, 9], [4, 4, 1]])
    (emb(idx) * torch.arange(24.).reshape(2, 3, 4)).sum().backward()
    (emb_x(idx.to(dev)) * torch.arange(24.).reshape(2, 3, 4).to(dev)).sum().backward()
    xm.mark_step()
    torch.testing.assert_close(emb_x.weight.grad.cpu(), emb.weight.grad)


def _fallback_counts():
    import torch_xla.debug.metrics as met
    return {k: met.counter_value(k) for k in met.counter_names() if k.startswith('aten::')}


def test_an_out_overload_on_raw_xla_tensors_records_its_functional_twin(dev):
    # ATen composites that run below functionalization write through out= overloads on raw xla
    # tensors; the overload is recorded as its functional op, not run on the CPU.
    from conftest import CounterDelta
    c = torch.tensor([True, False, True], device=dev)
    a, b, o = torch.ones(3, device=dev), torch.zeros(3, device=dev), torch.empty(3, device=dev)
    raw = [torch._from_functional_tensor(t) for t in (c, a, b, o)]
    before = _fallback_counts()
    with CounterDelta('OutVariantsRecorded') as d:
        torch.where(raw[0], raw[1], raw[2], out=raw[3])
    assert d['OutVariantsRecorded'] == 1 and _fallback_counts() == before
    assert torch.equal(raw[3].cpu(), torch.tensor([1.0, 0.0, 1.0]))


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('mask', ['none', 'causal', 'bool', 'float', 'rows_fully_masked'])
def test_scaled_dot_product_attention_records_without_a_cpu_fallback(dev, dtype, mask):
    """F.scaled_dot_product_attention on the device takes PyTorch's math path, whose softmax
    (_safe_softmax) is one recorded op, nothing on the CPU. Values and q/k/v gradients against
    eager's math path; a fully masked row is zeros in both, with zero gradients."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from conftest import CounterDelta
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 4, dtype=dtype) for _ in range(3))
    kwargs = {}
    if mask == 'causal':
        kwargs['is_causal'] = True
    elif mask in ('bool', 'rows_fully_masked'):
        m = torch.rand(6, 6) > 0.3
        m[:, 0] = True
        if mask == 'rows_fully_masked':
            m[2] = False
        kwargs['attn_mask'] = m
    elif mask == 'float':
        kwargs['attn_mask'] = torch.randn(2, 1, 6, 6, dtype=dtype)
    results = []
    for device in ('cpu', dev):
        ins = [t.detach().to(device).requires_grad_() for t in (q, k, v)]
        kw = {key: (val.to(device) if isinstance(val, torch.Tensor) else val) for key, val in kwargs.items()}
        before = _fallback_counts()
        with CounterDelta('xla::_safe_softmax') as d, sdpa_kernel(SDPBackend.MATH):
            out = torch.nn.functional.scaled_dot_product_attention(*ins, **kw)
            (out * torch.linspace(-1, 1, out.numel(), dtype=dtype).reshape(out.shape).to(device)).sum().backward()
            xm.mark_step()
        if device != 'cpu':
            assert _fallback_counts() == before
            assert d['xla::_safe_softmax'] >= 1
        results.append([out.detach().cpu()] + [t.grad.cpu() for t in ins])
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    for got, want in zip(results[1], results[0]):
        torch.testing.assert_close(got, want, **tol)
    if mask == 'rows_fully_masked':
        assert (results[1][0][:, :, 2] == 0).all()

