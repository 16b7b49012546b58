"""bf16 and f16 on the device, against eager CPU PyTorch.

A graph's 16-bit float arithmetic is computed in f32 (FloatNormalizedInstructions) and each op's
result is rounded to the type, as eager rounds it: the steps of a composite op stay f32, as
eager's float opmath keeps them. XLA_FLAGS=--xla_allow_excess_precision=true keeps f32 from one
op to the next too (XLA's excess precision).
Conversions are exact: f32 -> bf16/f16 rounds to nearest even as c10 does, NaN, infinities,
subnormals and overflow included. torch.autocast('xla') runs matmuls and convolutions in the
autocast dtype and precision-sensitive ops in f32, as core's CUDA policy lists say."""
import textwrap

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from conftest import CounterDelta, cpu_flags, deviation_from_largest, run_python

LOW = [torch.bfloat16, torch.float16]


@pytest.mark.parametrize('dtype', LOW)
def test_each_ops_result_is_rounded_as_eager_rounds_it(dev, dtype):
    torch.manual_seed(0)
    a, b, c = (torch.randn(4096, dtype=dtype) for _ in range(3))
    norm = torch.linalg.vector_norm(a)
    cases = [lambda a, b, c: a * b + c, lambda a, b, c: (a - c) / (b.abs() + 1) * 3,
             # clip_grad_norm_'s scaling: a coefficient from a norm, then the product
             lambda a, b, c: a * torch.clamp(1.0 / (norm.to(a.device) + 1e-6), max=1.0)]
    for fn in cases:
        assert torch.equal(fn(a.to(dev), b.to(dev), c.to(dev)).cpu(), fn(a, b, c))


def test_excess_precision_is_the_users_choice():
    out = run_python(textwrap.dedent("""
        import torch, torch_xla
        torch.manual_seed(0)
        a, b, c = (torch.randn(4096, dtype=torch.bfloat16) for _ in range(3))
        x = (a.to('xla') * b.to('xla') + c.to('xla')).cpu()
        print(torch.equal(x, a * b + c), torch.equal(x, (a.float() * b.float() + c.float()).bfloat16()))
        """), XLA_FLAGS='--xla_cpu_use_thunk_runtime=false --xla_allow_excess_precision=true')
    assert out.split() == ['False', 'True'], out


def tol(dtype):
    # One unit in the last place of the type, relative, plus a little for values near 0.
    return dict(rtol=2 ** -7, atol=1e-3) if dtype == torch.bfloat16 else dict(rtol=2 ** -10, atol=1e-4)


def special_values(dtype):
    return torch.tensor([0.0, -0.0, 1.0, -2.5, float('nan'), float('inf'), -float('inf'), 1e-40, 3e38, 65504.0,
                         70000.0, 1.00390625, 1.001953125, 5.96e-8, -1e-6], dtype=torch.float32)


@pytest.mark.parametrize('dtype', LOW)
def test_conversions_round_exactly_as_eager(dev, dtype):
    x = torch.cat([special_values(dtype), torch.randn(1000) * 100, torch.randn(1000) * 1e-6])
    got = x.to(dev).to(dtype).cpu()
    torch.testing.assert_close(got, x.to(dtype), rtol=0, atol=0, equal_nan=True)
    # and back to f32 and f64 exactly
    low = x.to(dtype)
    torch.testing.assert_close(low.to(dev).float().cpu(), low.float(), rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(low.to(dev).double().cpu(), low.double(), rtol=0, atol=0, equal_nan=True)
    # f64 -> 16 bits goes through float, as c10's conversion does
    d = x.double() * 1.0000001
    torch.testing.assert_close(d.to(dev).to(dtype).cpu(), d.to(dtype), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize('dtype', LOW)
def test_tensors_round_trip_and_constants_fold_to_the_type(dev, dtype):
    x = torch.randn(7, 5).to(dtype)
    assert torch.equal(x.to(dev).cpu(), x)
    # a converted f32 constant is folded at compile time: rounded as the kernels round
    got = (torch.full((3,), 0.1, device=dev).to(dtype) + torch.zeros(3, dtype=dtype, device=dev)).cpu()
    assert torch.equal(got, torch.full((3,), 0.1).to(dtype))
    assert got.dtype == dtype


UNARY = {
    'exp': torch.exp, 'tanh': torch.tanh, 'sigmoid': torch.sigmoid, 'relu': torch.relu, 'neg': torch.neg,
    'abs': torch.abs, 'sqrt': torch.sqrt, 'log': torch.log, 'gelu': F.gelu, 'silu': F.silu,
    'square_plus_one': lambda t: t * t + 1, 'clamp': lambda t: t.clamp(-0.5, 0.5),
}


@pytest.mark.parametrize('dtype', LOW)
@pytest.mark.parametrize('name', sorted(UNARY))
@pytest.mark.parametrize('shape', [(3, 17), (0, 4), ()])
def test_elementwise_ops_match_eager(dev, dtype, name, shape):
    torch.manual_seed(0)
    x = torch.randn(shape).to(dtype)
    if x.numel() >= 3:
        x.view(-1)[:3] = torch.tensor([float('nan'), float('inf'), -float('inf')]).to(dtype)
        if name == 'gelu':  # eager's vectorized gelu(+inf) is NaN on AVX-512 machines; ours is inf
            x.view(-1)[1] = 4.0
    fn = UNARY[name]
    want = fn(x)
    got = fn(x.to(dev)).cpu()
    assert got.dtype == want.dtype == dtype
    torch.testing.assert_close(got, want, equal_nan=True, **tol(dtype))


@pytest.mark.parametrize('dtype', LOW)
def test_binary_ops_broadcast_and_non_contiguous_inputs(dev, dtype):
    torch.manual_seed(1)
    a = torch.randn(6, 8).to(dtype).t()  # non-contiguous
    b = torch.randn(6).to(dtype)
    for fn in (torch.add, torch.mul, torch.div, torch.maximum, torch.sub, lambda p, q: torch.where(p > q, p, q * 2)):
        want = fn(a, b)
        got = fn(a.to(dev), b.to(dev)).cpu()
        torch.testing.assert_close(got, want, equal_nan=True, **tol(dtype))
    # comparisons give exactly eager's booleans
    assert torch.equal((a.to(dev) > b.to(dev)).cpu(), a > b)
    # mixed with f32: promotes to f32 as eager does
    c = torch.randn(8, 6)
    got = (a.to(dev) * c.to(dev)).cpu()
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, a * c, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('dtype', LOW)
def test_reductions_accumulate_in_float(dev, dtype):
    torch.manual_seed(2)
    x = (torch.rand(64, 300) + 0.5).to(dtype)  # a bf16 running sum would stall far from eager's
    for fn in (lambda t: t.sum(1), lambda t: t.sum(0), lambda t: t.mean(), lambda t: t.amax(1),
               lambda t: t.softmax(-1), lambda t: F.layer_norm(t, (300,))):
        want = fn(x)
        got = fn(x.to(dev)).cpu()
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, equal_nan=True, **tol(dtype))
    y = x.clone()
    y[3, 7] = float('nan')
    assert torch.isnan(y.to(dev).sum(1).cpu()[3])
    assert torch.isnan(y.to(dev).amax(1).cpu()[3])


@pytest.mark.parametrize('dtype', LOW)
def test_matmul_and_convolution_values_and_gradients(dev, dtype):
    torch.manual_seed(3)
    a = torch.randn(5, 33).to(dtype)
    w = torch.randn(7, 33).to(dtype)
    img = torch.randn(2, 3, 9, 9).to(dtype)
    k = torch.randn(4, 3, 3, 3).to(dtype)

    def run(device):
        xs = [t.to(device).requires_grad_() for t in (a, w, img, k)]
        y1 = F.linear(xs[0], xs[1])
        y2 = F.conv2d(xs[2], xs[3], padding=1)
        (y1.float().sum() + (y2.float() * 0.5).sum()).backward()
        xm.mark_step()
        return [t.detach().cpu() for t in (y1, y2)] + [t.grad.cpu() for t in xs]

    with CounterDelta('FloatNormalizedInstructions') as d:
        got = run(dev)
    want = run('cpu')
    for g, w_ in zip(got, want):
        assert g.dtype == w_.dtype == dtype
        # products of many terms: eager's bf16 GEMM and ours round each output once, but their
        # float accumulations run in different orders
        torch.testing.assert_close(g.float(), w_.float(), rtol=2 ** -6, atol=2e-2)
    assert d['FloatNormalizedInstructions'] > 0


@pytest.mark.parametrize('dtype', LOW)
def test_index_ops_and_scatter(dev, dtype):
    torch.manual_seed(4)
    x = torch.randn(10, 4).to(dtype)
    idx = torch.tensor([0, 3, 3, -1])
    assert torch.equal(x.to(dev)[idx.to(dev)].cpu(), x[idx])
    src = torch.randn(4, 4).to(dtype)
    want = torch.zeros(10, 4, dtype=dtype).index_add(0, idx % 10, src)
    got = torch.zeros(10, 4, dtype=dtype, device=dev).index_add(0, (idx % 10).to(dev), src.to(dev)).cpu()
    torch.testing.assert_close(got, want, **tol(dtype))
    assert torch.equal(torch.cat([x, x * 2]).to(dev).cpu(), torch.cat([x, x * 2]))


@pytest.mark.parametrize('dtype', LOW)
def test_viewing_16_bit_floats_as_int16_keeps_their_bits(dev, dtype):
    x = torch.tensor([1.0, -2.5, float('nan'), float('inf'), 1e-40, 0.1]).to(dtype)
    assert torch.equal(x.to(dev).view(torch.int16).cpu(), x.view(torch.int16))
    assert torch.equal((x.to(dev) * 2).view(torch.int16).cpu(), (x * 2).view(torch.int16))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8 * 6 * 6, 32), nn.GELU(), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 10))


def _autocast_step(device):
    model = _model().to(device)
    x = torch.randn(4, 3, 6, 6, generator=torch.Generator().manual_seed(1)).to(device)
    y = torch.tensor([1, 0, 9, 3]).to(device)
    with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
        hidden = model[:5](x)
        out = model[5:](hidden)
        loss = F.cross_entropy(out, y)
        soft = out.softmax(-1)
    loss.backward()
    xm.mark_step()
    return hidden.dtype, soft.dtype, loss.detach().cpu(), [p.grad.cpu() for p in model.parameters()]


def test_autocast_runs_matmuls_in_bf16_and_softmax_in_f32(dev):
    # batch norm of a bf16 activation with f32 parameters, linear layers whose weight gradients
    # multiply two transposed bf16 operands: every graph compiles (none falls back)
    with CounterDelta('InterpretedGraph', 'OneDnnGemmBf16', 'GemmBf16Widened') as d:
        h_dtype, s_dtype, loss, grads = _autocast_step(str(dev))
    assert d['InterpretedGraph'] == 0
    assert d['OneDnnGemmBf16'] + d['GemmBf16Widened'] >= 6
    _, _, want_loss, want_grads = _autocast_step('cpu')
    assert h_dtype == torch.bfloat16  # linear under autocast
    assert s_dtype == torch.float32   # softmax is on the f32 list
    torch.testing.assert_close(loss, want_loss, rtol=2e-2, atol=2e-2)
    for g, w in zip(grads, want_grads):
        assert g.dtype == torch.float32  # parameters stay f32
        torch.testing.assert_close(g, w, rtol=5e-2, atol=2e-2)


def test_autocast_disabled_and_f16_dtype(dev):
    a = torch.randn(4, 8, device=dev)
    b = torch.randn(8, 3, device=dev)
    with torch.autocast('xla', dtype=torch.bfloat16, enabled=False):
        assert (a @ b).dtype == torch.float32
    with torch.autocast('xla', dtype=torch.float16):
        c = a @ b
        assert c.dtype == torch.float16
        torch.testing.assert_close(c.cpu(), (a.cpu().half() @ b.cpu().half()), rtol=2e-3, atol=2e-3)


def _has_bf16_instructions():
    return bool({'amx_bf16', 'avx512_bf16'} & cpu_flags())


GEMM_CASES = [
    ((128, 96), (96, 64), False, False),
    ((33, 17), (40, 17), False, True),   # x @ w.t(), as linear
    ((17, 33), (17, 40), True, False),   # x.t() @ y, as a weight gradient
    ((128, 10), (50, 128), True, True),  # both transposed, as fc2's weight gradient
    ((3, 5, 7), (3, 7, 4), False, False),  # batched
    ((0, 8), (8, 5), False, False),
    ((4, 0), (0, 5), False, False),       # k = 0: zeros
    ((1, 9), (9, 1), False, False),
    # big enough to be split over the threads (by columns, by rows, by batch): parts run at once
    ((256, 384), (512, 384), False, True),
    ((512, 256), (256, 96), False, False),
    ((8, 128, 256), (8, 256, 128), False, False),
    ((512, 384), (512, 256), True, False),
    ((384, 512), (256, 384), True, True),
    ((256, 384), (480, 384), False, True),  # parts of unequal widths: two kernels at once
    ((384, 496), (384, 200), True, False),  # unequal row parts
]


@pytest.mark.parametrize('library', ['onednn', 'widened'])
@pytest.mark.parametrize('a_shape,b_shape,ta,tb', GEMM_CASES)
def test_bf16_products_take_the_mixed_precision_gemm(dev, xla_env, library, a_shape, b_shape, ta, tb):
    xla_env(TXLA_GEMM_BF16_LIBRARY=library)
    torch.manual_seed(5)
    a = torch.randn(a_shape).to(torch.bfloat16)
    b = torch.randn(b_shape).to(torch.bfloat16)
    if a.numel() > 2:
        a.view(-1)[1] = float('nan')
        a.view(-1)[2] = float('inf')

    def fn(x, y):
        x = x.transpose(-1, -2) if ta else x
        y = y.transpose(-1, -2) if tb else y
        return x @ y

    with CounterDelta('OneDnnGemmBf16', 'GemmBf16Widened') as d:
        got = fn(a.to(dev), b.to(dev)).cpu()
    want = fn(a, b)
    assert got.dtype == torch.bfloat16
    # one rounding of an f32 accumulation on both sides; orders of the sum differ
    torch.testing.assert_close(got.float(), want.float(), rtol=2 ** -7, atol=1e-2, equal_nan=True)
    if got.numel() and a_shape[-1 if not ta else -2] > 0:
        if library == 'onednn' and _has_bf16_instructions():
            assert d['OneDnnGemmBf16'] == 1 and d['GemmBf16Widened'] == 0
        else:
            assert d['GemmBf16Widened'] == 1 and d['OneDnnGemmBf16'] == 0


# (batch, in channels, image side, out channels, kernel, stride, padding, groups)
CONV_CASES = [
    (2, 3, 9, 4, 3, 1, 1, 1),       # a first layer's few input channels
    (16, 64, 16, 64, 3, 1, 1, 1),   # big enough to be split over the threads
    (4, 16, 8, 32, 1, 2, 0, 1),     # 1x1 stride 2 (a downsample), whose trimmed edge oneDNN is not asked for
    (2, 8, 7, 8, 3, 1, 1, 2),       # grouped
    (3, 10, 12, 20, 5, 2, 2, 1),    # channels that are not multiples of 16
    (16, 256, 2, 256, 3, 1, 1, 1),  # weights that outweigh the images: bf16 GEMMs over im2col columns
    (0, 4, 6, 4, 3, 1, 1, 1),       # empty batch
]


@pytest.mark.parametrize('library', ['onednn', 'im2col'])
@pytest.mark.parametrize('case', CONV_CASES)
def test_autocast_convolutions_take_the_bf16_kernels(dev, xla_env, library, case):
    """Under autocast a convolution and both its gradients multiply bf16 values and accumulate in
    f32, as eager's oneDNN kernels do: oneDNN's bf16 kernels where the CPU has bf16 instructions,
    bf16 GEMMs where the weights outweigh the images, else the operands widened for the f32 kernels."""
    xla_env(TXLA_CONV_LIBRARY=library)
    n, c, h, o, k, stride, pad, groups = case
    torch.manual_seed(7)
    x = torch.randn(n, c, h, h)
    w = torch.randn(o, c // groups, k, k)
    b = torch.randn(o)
    if n:
        x[0, 0, 1, 1] = float('nan')  # reaches the outputs whose window holds it, and their gradients

    def run(device):
        xs = [t.to(device).requires_grad_() for t in (x, w, b)]
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
            y = F.conv2d(xs[0], xs[1], xs[2], stride=stride, padding=pad, groups=groups)
        (y.float().nan_to_num(0.0) ** 2).sum().backward()
        xm.mark_step()
        return [y.detach().cpu()] + [t.grad.cpu() for t in xs]

    names = ('OneDnnConvolutionBf16', 'ConvolutionBf16ByGemm', 'ConvolutionBf16Widened')
    with CounterDelta(*names) as d:
        got = run(dev)
    want = run('cpu')
    # the exact answer to the rounded operands: bf16 inputs and output, every sum in float64
    xs = [t.to(torch.bfloat16).double().requires_grad_() for t in (x, w, b)]
    y = F.conv2d(xs[0], xs[1], xs[2], stride=stride, padding=pad, groups=groups)
    exact = [y.detach()] + list(torch.autograd.grad((y.to(torch.bfloat16).double().nan_to_num(0.0) ** 2).sum(), xs))
    assert got[0].dtype == want[0].dtype == torch.bfloat16
    for g, e, r in zip(got, want, exact):
        assert g.shape == e.shape and torch.equal(torch.isnan(g), torch.isnan(e))
        if g.numel():
            # the device accumulates bf16 products in f32 and rounds once; eager's kernels depend on
            # the CPU (without bf16 instructions its gradients round more), so both are measured
            # against the exact answer and the device may be no further from it than eager
            mine, eagers = (deviation_from_largest(t.nan_to_num(0), r.nan_to_num(0)) for t in (g, e))
            assert mine < max(2 * eagers, 2 ** -7), (mine, eagers)
    if n == 0:
        return
    heavy = o * (c // groups) * k * k >= 8 * n * (c * h * h + o * ((h + 2 * pad - k) // stride + 1) ** 2)
    passes = 3
    if heavy:
        assert d['ConvolutionBf16ByGemm'] == passes and d['OneDnnConvolutionBf16'] == 0
    elif library == 'onednn' and _has_bf16_instructions() and (h + 2 * pad - k) % stride == 0:
        assert d['OneDnnConvolutionBf16'] == passes and d['ConvolutionBf16Widened'] == 0
    elif library == 'im2col':
        assert d['ConvolutionBf16Widened'] == passes and d['OneDnnConvolutionBf16'] == 0
    else:
        assert d['OneDnnConvolutionBf16'] + d['ConvolutionBf16Widened'] == passes


def test_bf16_linear_gradients_through_the_gemm(dev):
    torch.manual_seed(6)
    lin = nn.Linear(48, 24).to(torch.bfloat16)
    x = torch.randn(16, 48).to(torch.bfloat16)
    want_y = lin(x)
    want_y.float().pow(2).sum().backward()
    dlin = nn.Linear(48, 24).to(torch.bfloat16)
    dlin.load_state_dict(lin.state_dict())
    dlin = dlin.to(dev)
    y = dlin(x.to(dev))
    y.float().pow(2).sum().backward()
    xm.mark_step()
    torch.testing.assert_close(y.cpu().float(), want_y.float(), rtol=2 ** -7, atol=1e-2)
    for p, q in zip(dlin.parameters(), lin.parameters()):
        torch.testing.assert_close(p.grad.cpu().float(), q.grad.float(), rtol=2 ** -6, atol=5e-2)


def test_autocast_decoder_training_follows_eager():
    """The GPT-style decoder of the benchmark under autocast, 4 AdamW steps: its products are big
    enough to be split over the threads (parts that once shared oneDNN's scratchpad and went
    wrong from the second step: 6.129 against eager's 6.043)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'examples'))
    from decoder_model import Decoder, next_token_loss
    losses = {}
    for device in ('cpu', 'xla'):
        torch.manual_seed(0)
        dev = torch.device(device) if device == 'cpu' else xm.xla_device()
        model = Decoder().train().to(dev)
        tokens = torch.randint(0, 512, (8, 64), generator=torch.Generator().manual_seed(1)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        losses[device] = []
        for _ in range(4):
            opt.zero_grad()
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                loss = next_token_loss(model(tokens), tokens)
            loss.backward()
            opt.step()
            xm.mark_step()
            losses[device].append(loss.item())
    for got, want in zip(losses['xla'], losses['cpu']):
        assert abs(got - want) <= 5e-3 * abs(want), losses
