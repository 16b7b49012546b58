"""Convolutions of images of a few pixels (emit_small_image_conv.cc): ResNet-18's last stages, 512
channels of 2x2 images (where a padded 3x3 window has 4 of its 9 taps inside the image) and 256
of 4x4. Loop
kernels that multiply only the valid taps compute the forward pass and the input gradient 16
images a vector and the filter gradient 16 input channels a vector. Each is checked against eager
float32 (oneDNN, which skips padding as these kernels do, where eager float64's im2col multiplies
an infinite weight by a padding zero), with NaN and Inf where they reach, and counted exactly
where its conditions hold."""
import pytest
import torch
import torch.nn.functional as F
import torch_xla

from conftest import CounterDelta, cpu_flags

FORWARD, INPUT_GRADIENT, FILTER_GRADIENT = ('ConvSmallImageKernels', 'ConvSmallImageInputGradientKernels',
                                            'ConvSmallImageFilterGradientKernels')


@pytest.fixture(autouse=True)
def small_image_kernels_on(xla_env):
    """The kernels on every machine (by default only CPUs with AVX-512 take them): they are
    checked where they would be slow too."""
    xla_env(TXLA_CONV_LOOP_KERNELS='on')


@pytest.mark.parametrize('mode', ['auto', 'on', 'off'])
def test_the_kernels_are_taken_on_avx512_cpus_only_unless_asked(dev, xla_env, mode):
    """Their accumulators need AVX-512's 32 registers of 16 floats: elsewhere oneDNN takes the
    convolution (auto), on and off force the choice; so for the few-input-channel kernels'
    input gradient; the values are eager's either way."""
    xla_env(TXLA_CONV_LOOP_KERNELS=mode)
    taken = 1 if mode == 'on' or (mode == 'auto' and 'avx512f' in cpu_flags()) else 0
    torch.manual_seed(3)
    x, w = torch.randn(16, 32, 2, 2), torch.randn(32, 32, 3, 3)
    with CounterDelta(FORWARD) as d:
        y = F.conv2d(x.to(dev), w.to(dev), padding=1)
        torch_xla.sync()
    assert d[FORWARD] == taken
    torch.testing.assert_close(y.cpu(), F.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
    x = torch.randn(16, 2, 12, 12, requires_grad=True)
    xd = x.detach().to(dev).requires_grad_()
    w = torch.randn(4, 2, 5, 5)
    F.conv2d(x, w).sum().backward()
    with CounterDelta('ConvDirectInputGradientKernels') as d:
        F.conv2d(xd, w.to(dev)).sum().backward()
        torch_xla.sync()
    assert d['ConvDirectInputGradientKernels'] == taken
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=1e-4, atol=1e-4)


def _out_size(size, k, stride, pad, dilation):
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _expected(xs, ws, kwargs):
    """Which of the three passes the small-image kernels take: float32, one group, images of at
    most 16 positions in and out; the forward pass and the input gradient a batch of whole 16s
    with the images-last copy within 512 KB (and the input gradient only where
    emit_direct_conv.cc's few-channel kernel, unpadded at stride 1, does not take it); the filter
    gradient input channels in whole 16s, its taps and the input positions within 28 registers,
    the copy within 512 KB."""
    stride, pad = kwargs.get('stride', 1), kwargs.get('padding', 0)
    dilation, groups = kwargs.get('dilation', 1), kwargs.get('groups', 1)
    n, c, h, w = xs
    o, _, kh, kw = ws
    oh, ow = _out_size(h, kh, stride, pad, dilation), _out_size(w, kw, stride, pad, dilation)
    small = groups == 1 and n > 0 and oh * ow <= 16 and h * w <= 16 and oh > 0 and ow > 0
    whole = n % 16 == 0
    forward = small and whole and c * h * w * 64 <= 512 * 1024
    plain = stride == 1 and pad == 0 and dilation == 1
    direct_input = plain and whole and c <= 24 and (o * oh * ow + c * h * w) * 64 <= 512 * 1024
    input_gradient = small and whole and o * oh * ow * 64 <= 512 * 1024 and not direct_input
    filter_gradient = small and c % 16 == 0 and kh * kw <= 28 - h * w and n * h * w * 64 <= 512 * 1024
    return {FORWARD: int(forward), INPUT_GRADIENT: int(input_gradient), FILTER_GRADIENT: int(filter_gradient)}


GEOMETRIES = [
    # (input shape, weight shape, conv kwargs)
    ((16, 512, 2, 2), (512, 512, 3, 3), dict(padding=1)),  # ResNet-18's last stage
    ((16, 256, 4, 4), (256, 256, 3, 3), dict(padding=1)),  # ... and the one before: 4x4
    ((16, 256, 4, 4), (512, 256, 3, 3), dict(stride=2, padding=1)),  # the last stage's first
    ((16, 256, 4, 4), (512, 256, 1, 1), dict(stride=2)),  # ... and its downsampling
    ((32, 16, 2, 2), (24, 16, 3, 3), dict(padding=1)),  # two groups of 16 images
    ((16, 32, 1, 1), (10, 32, 3, 3), dict(padding=1)),  # one pixel: only the centre tap
    ((16, 16, 2, 3), (7, 16, 2, 2), dict()),  # rectangular, unpadded: few-channel input gradient
    ((16, 16, 4, 4), (8, 16, 3, 3), dict(padding=2, dilation=2, stride=3)),  # dilated: a 2x2 output
    ((16, 48, 3, 3), (20, 48, 3, 3), dict(padding=1)),  # a 3x3 image: 9 positions
    ((16, 32, 5, 4), (20, 32, 3, 3), dict(padding=1)),  # 20 positions: the library
    ((16, 32, 4, 4), (20, 32, 5, 5), dict(padding=2)),  # 25 taps and 16 positions: no filter gradient
    ((20, 32, 2, 2), (24, 32, 3, 3), dict(padding=1)),  # not whole 16s of images: filter gradient only
    ((16, 24, 2, 2), (32, 24, 3, 3), dict(padding=1)),  # 24 input channels: no filter gradient
    ((16, 32, 2, 2), (32, 16, 3, 3), dict(padding=1, groups=2)),  # groups: the library
    ((16, 16, 2, 2), (8, 16, 5, 5), dict(padding=2)),  # 25 taps and 4 positions: filter gradient too
    ((16, 16, 4, 4), (8, 16, 5, 6), dict(padding=2)),  # 30 taps: no filter gradient
]


def _output_gradient(y, special_dy):
    """dy for y: a ramp, with a NaN and an Inf at two fixed positions when `special_dy`."""
    g = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
    if special_dy:
        at = torch.arange(y.numel(), device=y.device).reshape(y.shape)
        g = torch.where(at == 5, float('nan'), torch.where(at == 9, float('inf'), g))
    return g


def _passes(x, w, b, kwargs, special_dy):
    x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
    y = F.conv2d(x, w, b, **kwargs)
    (y * _output_gradient(y, special_dy)).sum().backward()
    return y, x.grad, w.grad


@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('geometry', GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_small_image_convolutions_match_eager(dev, geometry, bias):
    """The forward pass and both gradients against eager, with a NaN and an Inf in the
    input (each reaches only the outputs and weights that read it) and an infinite weight on a
    corner tap (it multiplies only inside the image: padding is not 0 * inf), and each kernel
    exactly where _expected says."""
    xs, ws, kwargs = geometry
    torch.manual_seed(5)
    x, w = torch.randn(xs), torch.randn(ws)
    b = torch.randn(ws[0]) if bias else None
    x[-1, 0, 0, 0] = float('nan')
    x[0, -1, -1, -1] = float('inf')
    w[0, 0, 0, 0] = float('inf')
    want = _passes(x, w, b, kwargs, False)
    with CounterDelta(FORWARD, INPUT_GRADIENT, FILTER_GRADIENT) as d:
        got = _passes(x.to(dev), w.to(dev), None if b is None else b.to(dev), kwargs, False)
        torch_xla.sync()
        got = [t.cpu() for t in got]
    for name, a, e in zip(('y', 'dx', 'dw'), got, want):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=2e-3, equal_nan=True, msg=lambda m: f'{name}: {m}')
    assert d.delta == _expected(xs, ws, kwargs)


def _taps_inside_the_image(x, w, dy, stride, pad):
    """dx and dw of a convolution (one group, no dilation) in float64, each tap multiplied only
    where it falls inside the image: the answer of kernels that skip padding, whatever the CPU.
    (Eager's own filter gradient depends on it: oneDNN's direct AVX-512 kernels skip padding, its
    AVX2 GEMM over im2col columns multiplies a NaN of dy by a padding zero.)"""
    x, w, dy = x.double(), w.double(), dy.double()
    dx, dw = torch.zeros_like(x), torch.zeros_like(w)
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            for oh in range(dy.shape[2]):
                for ow in range(dy.shape[3]):
                    ih, iw = oh * stride - pad + i, ow * stride - pad + j
                    if 0 <= ih < x.shape[2] and 0 <= iw < x.shape[3]:
                        dw[:, :, i, j] += dy[:, :, oh, ow].t() @ x[:, :, ih, iw]
                        dx[:, :, ih, iw] += dy[:, :, oh, ow] @ w[:, :, i, j]
    return dx, dw


def test_small_image_gradients_carry_nan_and_inf_of_the_output_gradient(dev):
    """A NaN and an Inf in dy reach exactly the parts of dx and dw whose taps read them inside the image."""
    xs, ws, kwargs = (16, 32, 2, 2), (16, 32, 3, 3), dict(padding=1)
    torch.manual_seed(6)
    x, w = torch.randn(xs), torch.randn(ws)
    y = F.conv2d(x, w, **kwargs)
    dy = _output_gradient(y, True)
    want = [y, *(t.float() for t in _taps_inside_the_image(x, w, dy, 1, kwargs['padding']))]
    assert want[2].isnan().any() and not want[2].isnan().all()
    with CounterDelta(INPUT_GRADIENT, FILTER_GRADIENT) as d:
        got = [t.cpu() for t in _passes(x.to(dev), w.to(dev), None, kwargs, True)]
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=2e-3, equal_nan=True)
    assert d[INPUT_GRADIENT] == 1 and d[FILTER_GRADIENT] == 1


def test_resnet_last_stage_trains_like_eager(dev):
    """Two SGD steps of a block of ResNet-18's last stage (convolutions, batch norm, ReLU, a
    residual) on the device and in eager: the same losses and weights, every convolution pass
    through the small-image kernels."""
    import torchvision
    torch.manual_seed(7)
    block = torchvision.models.resnet.BasicBlock(64, 64)
    x = torch.randn(16, 64, 2, 2)

    def train(model, x):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            torch_xla.sync()
            losses.append(loss.item())
        return losses, [p.detach().cpu() for p in model.parameters()]

    import copy
    want = train(copy.deepcopy(block), x)
    with CounterDelta(FORWARD, INPUT_GRADIENT, FILTER_GRADIENT) as d:
        got = train(copy.deepcopy(block).to(dev), x.to(dev))
    torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
    for a, e in zip(got[1], want[1]):
        torch.testing.assert_close(a, e, rtol=1e-3, atol=1e-4)
    # One graph a step (the first step's kernels compiled, the second's cached): two
    # convolutions, each with both gradients (the block's input needs none: x is not a leaf).
    assert d[FORWARD] >= 2 and d[FILTER_GRADIENT] >= 2 and d[INPUT_GRADIENT] >= 1
