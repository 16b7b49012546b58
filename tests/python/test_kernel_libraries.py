"""Library paths of the compiled code: float32 convolutions through oneDNN (the default when the
build found it) and through im2col + GEMM (TXLA_CONV_LIBRARY=im2col, float64, the geometries
oneDNN cannot express, and the filter gradients of convolutions whose weights outweigh their
images); float32 products through MKL, oneDNN and OpenBLAS
(TXLA_GEMM_LIBRARY); each against eager, values and gradients."""
import contextlib
import os
import warnings

import pytest
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.backends
import torch_xla.core.xla_model as xm

from conftest import CounterDelta, cpu_flags, deviation_from_largest


@pytest.fixture(autouse=True)
def conv_loop_kernels_on(xla_env):
    """The convolutions' loop kernels on every machine (by default only CPUs with AVX-512 take
    most of them): each is checked exactly where its conditions hold, fast there or not."""
    xla_env(TXLA_CONV_LOOP_KERNELS='on')

GEOMETRIES = [
    # (input shape, weight shape, conv kwargs)
    ((2, 3, 9, 9), (4, 3, 3, 3), dict(padding=1)),
    ((1, 1, 28, 28), (10, 1, 5, 5), dict()),
    ((3, 4, 8, 7), (6, 2, 3, 3), dict(stride=2, padding=1, groups=2)),
    ((2, 3, 11, 11), (5, 3, 3, 3), dict(dilation=2, padding=2)),
    ((2, 3, 8, 8), (4, 3, 3, 3), dict(stride=2)),  # the last row/column of the input is unused
    ((2, 4, 5, 5), (4, 1, 3, 3), dict(padding=1, groups=4)),  # depthwise
    ((0, 3, 5, 5), (4, 3, 3, 3), dict()),  # empty batch
]


def _conv_and_grads(x, w, kwargs):
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    y = F.conv2d(x, w, **kwargs)
    g = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
    (y * g).sum().backward()
    return y, x.grad, w.grad


def _matches_eager(dev, x, w, kwargs, *counters):
    """The device's convolution and both gradients equal eager's (NaN and Inf where they reach);
    returns how much the named counters grew."""
    want = _conv_and_grads(x, w, kwargs)
    with CounterDelta(*counters) as d:
        got = [t.cpu() for t in _conv_and_grads(x.to(dev), w.to(dev), kwargs)]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=2e-3, equal_nan=True)
    return d


@pytest.mark.parametrize('library', ['onednn', 'im2col'])
@pytest.mark.parametrize('geometry', GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_conv2d_values_and_gradients(dev, xla_env, library, geometry):
    xla_env(TXLA_CONV_LIBRARY=library)
    xs, ws, kwargs = geometry
    torch.manual_seed(0)
    x, w = torch.randn(xs), torch.randn(ws)
    want = _conv_and_grads(x, w, kwargs)
    with CounterDelta('OneDnnConvolution') as d:
        got = _conv_and_grads(x.to(dev), w.to(dev), kwargs)
        got = [t.cpu() for t in got]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    passes = _onednn_passes(xs, ws, kwargs)  # forward, input and filter gradients, unless loop kernels
    expected = passes if library == 'onednn' and _onednn_built() and _onednn_expresses(xs, ws, kwargs) else 0
    assert d['OneDnnConvolution'] == expected


# Large enough (>= 4M multiply-adds) that a convolution is cut into parts, one per thread: images
# when the batch has one per thread, else the channels a pass produces (output channels for the
# forward pass and the filter gradient, input channels for the input gradient); odd channel
# counts leave unequal parts; grouped convolutions split images only.
SPLIT_GEOMETRIES = [
    ((4, 21, 20, 20), (37, 21, 3, 3), dict(padding=1)),
    ((1, 21, 24, 24), (40, 21, 3, 3), dict(padding=1)),  # one image: channels
    ((4, 32, 23, 23), (48, 32, 3, 3), dict(stride=2, padding=1)),
    ((1, 33, 22, 22), (35, 33, 3, 3), dict(dilation=2, padding=2)),
    ((4, 32, 16, 16), (64, 16, 3, 3), dict(padding=1, groups=2)),
    ((1, 32, 30, 30), (64, 16, 3, 3), dict(padding=1, groups=2)),  # grouped, one image: whole
]


@pytest.mark.parametrize('geometry', SPLIT_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_onednn_convolutions_split_over_threads_match_eager(dev, geometry):
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    xs, ws, kwargs = geometry
    torch.manual_seed(0)
    x, w = torch.randn(xs), torch.randn(ws)
    x[0, 0, 3, 4] = float('nan')  # reaches every output channel of image 0 near it, and dw
    d = _matches_eager(dev, x, w, kwargs, 'OneDnnConvolution', 'OneDnnConvolutionParts')
    assert d['OneDnnConvolution'] == 3
    threads = int(os.environ.get('TXLA_NUM_THREADS') or os.cpu_count())
    if threads >= 2:
        grouped, batched = kwargs.get('groups', 1) > 1, xs[0] >= threads
        split_passes = 2 * (batched or not grouped) + (not grouped)  # forward + input grad, filter grad
        assert d['OneDnnConvolutionParts'] == split_passes * threads


def test_a_barrier_after_the_backward_pass_gives_the_run_every_core(dev):
    """The backward pass records on autograd's thread; a barrier right after it (gradient
    accumulation) must end that trace, so the run's first kernel (the forward convolution, split
    over the images) takes every core instead of leaving one to a host that is not tracing
    (ParallelYieldedToHost, counted whenever a split leaves the host a core)."""
    threads = int(os.environ.get('TXLA_NUM_THREADS') or os.cpu_count())
    if threads < 2:
        pytest.skip('one core: nothing to leave the host')
    torch.manual_seed(0)
    x = torch.randn(64, 10, 12, 12).to(dev)
    w = torch.randn(20, 10, 5, 5).to(dev).requires_grad_()
    for _ in range(2):  # compile
        F.conv2d(x, w).sum().backward()
        torch_xla.sync()
        xm.wait_device_ops()
    with CounterDelta('ParallelYieldedToHost') as d:
        for _ in range(5):
            F.conv2d(x, w).sum().backward()
            torch_xla.sync()
            xm.wait_device_ops()
    assert d['ParallelYieldedToHost'] == 0
    eager_w = w.detach().cpu().requires_grad_()
    F.conv2d(x.cpu(), eager_w).sum().backward()
    torch.testing.assert_close(w.grad.cpu(), 7 * eager_w.grad, rtol=1e-4, atol=1e-2)  # accumulated 7 times


# Channel counts oneDNN's blocked layouts would pad to 16: the gradients of convolutions with 8 or
# more input channels run with NHWC images (OneDnnConvolutionNhwc, once per gradient), the forward
# pass (where it is not a loop kernel, see _direct) and convolutions with fewer input channels (the
# first-layer kernels) stay blocked, and so do channel counts that are multiples of 16. Parts of a thread split count by their own channels.
NHWC_GEOMETRIES = [
    # (input shape, weight shape, conv kwargs, gradients run NHWC)
    ((4, 10, 12, 12), (20, 10, 5, 5), dict(), 2),  # the MNIST CNN's second convolution
    ((1, 12, 9, 9), (7, 12, 3, 3), dict(stride=2, padding=1), 2),  # one image, odd channels
    ((3, 24, 6, 6), (16, 24, 3, 3), dict(padding=1, dilation=2), 2),  # 24 input channels
    ((2, 3, 16, 16), (10, 3, 3, 3), dict(padding=1), 0),  # 3 input channels: first-layer kernels
    ((2, 16, 6, 6), (32, 16, 3, 3), dict(padding=1), 0),  # whole 16-wide blocks
]


@pytest.mark.parametrize('geometry', NHWC_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_gradients_of_padded_channel_counts_run_nhwc(dev, geometry):
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    xs, ws, kwargs, nhwc = geometry
    torch.manual_seed(1)
    x, w = torch.randn(xs), torch.randn(ws)
    x[0, 1, 2, 2] = float('nan')
    x[-1, -1, -1, 0] = float('-inf')
    d = _matches_eager(dev, x, w, kwargs, 'OneDnnConvolution', 'OneDnnConvolutionNhwc')
    assert d['OneDnnConvolution'] == _onednn_passes(xs, ws, kwargs)
    assert d['OneDnnConvolutionNhwc'] == nhwc


# A filter gradient with fewer output channels than a 16-wide block per thread splits its images
# instead; each part computes a whole partial gradient and the parts are summed in order
# (OneDnnFilterGradientPartialSums). 1->10 5x5 is the MNIST CNN's first convolution.
PARTIAL_SUM_GEOMETRIES = [
    ((32, 1, 28, 28), (10, 1, 5, 5), dict(), True),
    ((33, 10, 12, 12), (20, 10, 5, 5), dict(), True),  # odd batch: unequal parts, NHWC parts
    ((16, 8, 40, 40), (31, 8, 3, 3), dict(stride=2, padding=1), True),
    ((1, 8, 50, 50), (24, 8, 3, 3), dict(padding=1), False),  # one image: output channels
    ((8, 16, 20, 20), (64, 16, 3, 3), dict(padding=1), False),  # 32 output channels a thread
]


@pytest.mark.parametrize('geometry', PARTIAL_SUM_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_filter_gradients_with_few_output_channels_sum_image_parts(dev, geometry):
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    threads = int(os.environ.get('TXLA_NUM_THREADS') or os.cpu_count())
    xs, ws, kwargs, sums = geometry
    torch.manual_seed(2)
    x, w = torch.randn(xs), torch.randn(ws)
    x[-1, 0, 5, 6] = float('nan')  # only the last part's images hold it: the sum must carry it
    x[0, -1, 1, 1] = float('inf')
    d = _matches_eager(dev, x, w, kwargs, 'OneDnnConvolution', 'OneDnnFilterGradientPartialSums',
                       'OneDnnConvolutionParts')
    assert d['OneDnnConvolution'] == _onednn_passes(xs, ws, kwargs)
    summed = sums and threads >= 2 and ws[0] < 16 * threads
    assert d['OneDnnFilterGradientPartialSums'] == (1 if summed else 0)
    if summed:
        # Four image parts a thread (as the batch allows), claimed one at a time; the other
        # passes add a part a thread at most.
        per = -(-xs[0] // (4 * threads))
        assert d['OneDnnConvolutionParts'] >= -(-xs[0] // per)
        assert d['OneDnnConvolutionParts'] > 2 * threads


# A convolution's bias is added by the library call as it writes its output (oneDNN's bias
# argument; im2col's GEMM accumulating onto rows that start as the biases), counted once per
# forward call by ConvBiasInLibraryCall; a transposed convolution keeps its separate add.
BIAS_GEOMETRIES = [
    # (input shape, weight shape, conv kwargs, bias in the call)
    ((4, 1, 28, 28), (10, 1, 5, 5), dict(padding=1), True),  # one input channel, padded: a library call
    ((1, 21, 24, 24), (40, 21, 3, 3), dict(padding=1), True),  # one image: output-channel parts
    ((4, 21, 20, 20), (37, 21, 3, 3), dict(padding=1), True),  # image parts
    ((3, 4, 8, 7), (6, 2, 3, 3), dict(stride=2, padding=1, groups=2), True),  # each group's biases
    ((2, 3, 11), (5, 3, 3), dict(padding=1), True),  # conv1d
    ((0, 3, 5, 5), (4, 3, 3, 3), dict(), True),  # empty batch
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('library', ['onednn', 'im2col'])
@pytest.mark.parametrize('geometry', BIAS_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_convolution_bias_is_added_by_the_library_call(dev, xla_env, library, dtype, geometry):
    xla_env(TXLA_CONV_LIBRARY=library)
    xs, ws, kwargs, in_call = geometry
    torch.manual_seed(4)
    x, w, b = torch.randn(xs, dtype=dtype), torch.randn(ws, dtype=dtype), torch.randn(ws[0], dtype=dtype)
    if x.numel():
        x.view(-1)[5] = float('nan')
    b[-1] = float('inf')  # the last output channel: the last part's slice of the biases
    conv = F.conv1d if len(xs) == 3 else F.conv2d

    def run(x, w, b):
        x, w, b = (t.detach().requires_grad_() for t in (x, w, b))
        y = conv(x, w, b, **kwargs)
        g = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
        (y.nan_to_num(0, 0, 0) * g).sum().backward()
        return y, x.grad, w.grad, b.grad

    want = run(x, w, b)
    with CounterDelta('ConvBiasInLibraryCall') as d:
        got = run(x.to(dev), w.to(dev), b.to(dev))
        torch_xla.sync()  # one graph: nan_to_num's gradient would otherwise recompute y per tensor
        got = [t.cpu() for t in got]
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == torch.float64 else dict(rtol=1e-4, atol=2e-3)
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, equal_nan=True, **tol)
    assert d['ConvBiasInLibraryCall'] == (1 if in_call else 0)


def test_transposed_convolution_keeps_its_bias_add(dev):
    torch.manual_seed(5)
    x, w, b = torch.randn(2, 4, 5, 5), torch.randn(4, 3, 3, 3), torch.randn(3)
    with CounterDelta('ConvBiasInLibraryCall') as d:
        got = F.conv_transpose2d(x.to(dev), w.to(dev), b.to(dev), stride=2).cpu()
    torch.testing.assert_close(got, F.conv_transpose2d(x, w, b, stride=2), rtol=1e-4, atol=1e-4)
    assert d['ConvBiasInLibraryCall'] == 0


# Weights that outweigh the images 8 times or more (ResNet-18's last stage: 2x2 images, 512x512x3x3
# weights): the filter gradient is one GEMM over im2col columns (ConvFilterGradientsByGemm), the
# forward pass and the input gradient stay on oneDNN.
BY_GEMM_GEOMETRIES = [
    # (input channels not a multiple of 16: test_small_image_conv.py's kernels take those)
    ((4, 56, 2, 2), (64, 56, 3, 3), dict(padding=1)),  # 32256 weights, 1920 image elements
    ((2, 40, 4, 4), (64, 40, 3, 3), dict(stride=2, padding=1)),
    ((2, 64, 3, 3), (64, 32, 3, 3), dict(padding=1, groups=2)),  # exactly 8 times
    ((1, 48, 5, 5), (40, 48, 3, 3), dict(stride=2, dilation=2)),  # a 1x1 output
]


@pytest.mark.parametrize('geometry', BY_GEMM_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_filter_gradients_of_weight_heavy_convolutions_are_one_gemm(dev, geometry):
    xs, ws, kwargs = geometry
    torch.manual_seed(3)
    x, w = torch.randn(xs), torch.randn(ws)
    x[0, 0, 1, 1] = float('nan')  # every weight of input channel 0 that reads it, in every group
    x[-1, -1, 0, 0] = float('inf')
    d = _matches_eager(dev, x, w, kwargs, 'OneDnnConvolution', 'ConvFilterGradientsByGemm')
    assert d['ConvFilterGradientsByGemm'] == 1
    assert d['OneDnnConvolution'] == (2 if _onednn_built() else 0)


def _onednn_built():
    import torch_xla
    return 'onednn' in torch_xla._XLAC._xla_kernel_libraries()


def _onednn_expresses(xs, ws, kwargs):
    """oneDNN takes explicit right/bottom padding, which must not be negative (it is when the
    stride leaves the input's last rows unused), and no empty batch."""
    s, p, d = kwargs.get('stride', 1), kwargs.get('padding', 0), kwargs.get('dilation', 1)
    for size, k in zip(xs[2:], ws[2:]):
        out = (size + 2 * p - d * (k - 1) - 1) // s + 1
        if (out - 1) * s + (k - 1) * d + 1 - size - p < 0:
            return False
    return xs[0] > 0


def _direct(xs, ws, kwargs, dtype=torch.float32):
    """Whether codegen computes the forward convolution as a loop kernel (emit_direct_conv.cc):
    float32, stride 1, no padding or dilation, one group, some output, and either rows of 8 or more,
    a multiple of 4, whose vectors (16, 8 and 4 floats) times the output channels are at most 24,
    or at most 4 input channels with output rows of 16 to 64."""
    if len(xs) != 4 or dtype != torch.float32 or xs[0] == 0 or kwargs.get('groups', 1) != 1:
        return False
    if any(kwargs.get(key, default) != default for key, default in (('stride', 1), ('padding', 0), ('dilation', 1))):
        return False
    out_h, out_w = xs[2] - ws[2] + 1, xs[3] - ws[3] + 1
    rows = xs[1] <= 4 and 16 <= out_w <= 64
    vectors = out_w // 16 + (out_w % 16) // 8 + (out_w % 8) // 4
    channels = out_w >= 8 and out_w % 4 == 0 and vectors * ws[0] <= 24
    return out_h > 0 and (rows or channels)


DIRECT_GEOMETRIES = [
    # (input shape, weight shape, conv kwargs, bias)
    ((128, 1, 28, 28), (10, 1, 5, 5), dict(), True),  # the MNIST CNN's first layer
    ((1, 1, 28, 28), (10, 1, 5, 5), dict(), False),  # one image: not split over threads
    ((3, 4, 20, 70), (5, 4, 3, 7), dict(), True),  # 4 channels, rows of 64, odd kernel
    ((2, 2, 9, 21), (3, 2, 4, 6), dict(), False),  # rows of 16
    ((5, 3, 6, 17), (2, 3, 6, 1), dict(), True),  # one output row, 1-wide kernel
    ((128, 10, 12, 12), (20, 10, 5, 5), dict(), True),  # the MNIST CNN's second layer: rows of 8
    ((1, 10, 12, 12), (20, 10, 5, 5), dict(), False),
    ((3, 3, 20, 20), (24, 3, 5, 5), dict(), False),  # rows of 16, 24 output channels
    ((2, 6, 10, 10), (7, 6, 3, 3), dict(), True),  # rows of 8, odd channels
    ((3, 2, 16, 14), (6, 2, 3, 3), dict(), True),  # rows of 12: vectors of 8 and 4
    ((2, 7, 9, 32), (4, 7, 2, 5), dict(), False),  # rows of 28 (16+8+4), 7 input channels
    ((2, 2, 6, 24), (2, 2, 3, 3), dict(), True),  # rows of 22: not a multiple of 4, the row form
    # Library calls: more channels, stride, padding, dilation, groups, short or long rows, empty.
    ((2, 5, 20, 20), (4, 5, 3, 3), dict(), True),
    ((2, 6, 10, 10), (25, 6, 3, 3), dict(), True),  # rows of 8, 25 output channels
    ((2, 6, 11, 11), (7, 6, 3, 3), dict(), True),  # rows of 9
    ((2, 1, 28, 28), (4, 1, 3, 3), dict(stride=2), True),
    ((2, 1, 28, 28), (4, 1, 3, 3), dict(padding=1), False),
    ((2, 1, 28, 28), (4, 1, 3, 3), dict(dilation=2), False),
    ((2, 4, 28, 28), (4, 2, 3, 3), dict(groups=2), True),
    ((2, 1, 12, 12), (4, 1, 5, 5), dict(), True),
    ((2, 1, 8, 70), (4, 1, 3, 3), dict(), False),
    ((0, 1, 28, 28), (4, 1, 5, 5), dict(), True),
]


@pytest.mark.parametrize('geometry', DIRECT_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]) + str(g[3]))
def test_forward_convolutions_of_few_input_channels_are_loop_kernels(dev, geometry):
    """Values and gradients against eager (NaN and Inf in the input, Inf in a bias) in float64,
    and the loop kernel (ConvDirectKernels) exactly where _direct says (the input gradient's own
    loop kernel: test_input_gradients_of_few_channel_convolutions_vectorize_over_images)."""
    xs, ws, kwargs, with_bias = geometry
    torch.manual_seed(7)
    x, w = torch.randn(xs), torch.randn(ws)
    b = torch.randn(ws[0]) if with_bias else None
    if x.numel():
        x.view(-1)[3] = float('nan')
        x.view(-1)[-2] = float('inf')
    if b is not None:
        b[-1] = float('inf')

    def run(x, w, b):
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        if b is not None:
            b = b.detach().requires_grad_()
        y = F.conv2d(x, w, b, **kwargs)
        g = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
        (y.nan_to_num(0, 0, 0) * g).sum().backward()
        return [y, x.grad, w.grad] + ([b.grad] if b is not None else [])

    # Eager in float64: the bias gradient of the MNIST layer sums 73728 terms, which eager's own
    # float32 sum misses by ~2 (the device accumulates sums in double).
    want = [t.float() for t in run(x.double(), w.double(), b.double() if b is not None else None)]
    with CounterDelta('ConvDirectKernels') as d:
        got = run(x.to(dev), w.to(dev), b.to(dev) if b is not None else None)
        torch_xla.sync()
        got = [t.cpu() for t in got]
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, equal_nan=True, rtol=1e-4, atol=2e-3)
    assert d['ConvDirectKernels'] == (1 if _direct(xs, ws, kwargs) else 0)


def _direct_input_gradient(xs, ws, kwargs):
    """Whether codegen computes conv2d's input gradient as a loop kernel over 16-image vectors
    (emit_direct_conv.cc): float32, stride 1, no padding or dilation, one group, a batch of whole
    16s, at most 24 input channels, and both images-last copies within 512 KB."""
    if kwargs or xs[0] == 0 or xs[0] % 16 != 0 or xs[1] > 24:
        return False
    dh, dw = xs[2] - ws[2] + 1, xs[3] - ws[3] + 1
    return dh > 0 and dw > 0 and (ws[0] * dh * dw + xs[1] * xs[2] * xs[3]) * 64 <= 512 * 1024


def _direct_filter_gradient(xs, ws, kwargs):
    """Whether codegen computes conv2d's filter gradient as a loop kernel over 16-image vectors:
    as _direct_input_gradient's conditions, at most 25 taps, and at least 64 vector multiply-adds
    for each vector its images-last copies move."""
    if kwargs or xs[0] == 0 or xs[0] % 16 != 0 or ws[2] * ws[3] > 25:
        return False
    dh, dw = xs[2] - ws[2] + 1, xs[3] - ws[3] + 1
    copied = ws[0] * dh * dw + xs[1] * xs[2] * xs[3]
    weights = ws[0] * xs[1] * ws[2] * ws[3]
    return (dh > 0 and dw > 0 and copied * 64 <= 512 * 1024 and xs[0] // 16 * weights * 4 <= 1024 * 1024
            and weights * dh * dw >= 64 * copied)


def _onednn_passes(xs, ws, kwargs):
    """oneDNN calls of a float32 convolution's forward pass and both gradients: the ones no loop
    kernel takes."""
    return 3 - _direct(xs, ws, kwargs) - _direct_input_gradient(xs, ws, kwargs) - _direct_filter_gradient(xs, ws, kwargs)


INPUT_GRADIENT_GEOMETRIES = [
    ((128, 10, 12, 12), (20, 10, 5, 5), dict()),  # the MNIST CNN's second layer
    ((16, 3, 9, 7), (5, 3, 4, 2), dict()),  # one group of 16, rectangular kernel and image
    ((32, 24, 6, 6), (2, 24, 3, 3), dict()),  # 24 input channels: every accumulator register
    ((16, 2, 5, 5), (3, 2, 5, 5), dict()),  # the kernel as large as the image: a 1x1 gradient
    ((16, 25, 6, 6), (2, 25, 3, 3), dict()),  # 25 input channels: the library
    ((20, 4, 8, 8), (3, 4, 3, 3), dict()),  # not whole 16s of images: the library
    ((16, 4, 8, 8), (3, 4, 3, 3), dict(stride=2)),  # stride: the library
    ((16, 4, 8, 8), (3, 4, 3, 3), dict(padding=1)),  # padding: the library
]


def _one_gradient_matches_eager(dev, x, w, kwargs, of, counter, special_dy=False):
    """conv2d's gradient with respect to `of` (x or w: the tensor itself) on the device against
    eager in float64; returns how much `counter` grew. special_dy: a NaN and an Inf in the
    output gradient."""
    def gradient(x, w, wrt_input):
        x, w = x.detach().requires_grad_(wrt_input), w.detach().requires_grad_(not wrt_input)
        y = F.conv2d(x, w, **kwargs)
        g = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(y.device)
        at = torch.arange(y.numel(), device=y.device).reshape(y.shape)
        if special_dy:
            g = torch.where(at == 5, float('nan'), torch.where(at == 9, float('inf'), g))
        (y * g).sum().backward()
        return x.grad if wrt_input else w.grad

    wrt_input = of is x
    want = gradient(x.double(), w.double(), wrt_input).float()
    with CounterDelta(counter) as d:
        got = gradient(x.to(dev), w.to(dev), wrt_input)
        torch_xla.sync()
        got = got.cpu()
    torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-4, atol=2e-3)
    return d[counter]


@pytest.mark.parametrize('geometry', INPUT_GRADIENT_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_input_gradients_of_few_channel_convolutions_vectorize_over_images(dev, geometry):
    """conv2d's input gradient against eager, with a NaN and an Inf in the output gradient and an
    infinite weight (only taps inside the gradient multiply: no 0 * inf), and the loop kernel
    (ConvDirectInputGradientKernels) exactly where _direct_input_gradient says."""
    xs, ws, kwargs = geometry
    torch.manual_seed(3)
    x, w = torch.randn(xs), torch.randn(ws)
    w.view(-1)[1] = float('inf')
    grew = _one_gradient_matches_eager(dev, x, w, kwargs, x, 'ConvDirectInputGradientKernels', special_dy=True)
    assert grew == (1 if _direct_input_gradient(xs, ws, kwargs) else 0)


FILTER_GRADIENT_GEOMETRIES = [
    ((128, 10, 12, 12), (20, 10, 5, 5), dict()),  # the MNIST CNN's second layer
    ((32, 8, 10, 10), (12, 8, 3, 3), dict()),  # two groups of 16 images: their parts summed
    ((16, 6, 7, 9), (16, 6, 4, 2), dict()),  # rectangular kernel and image
    ((128, 1, 28, 28), (10, 1, 5, 5), dict()),  # the first layer: copies outweigh the work, oneDNN
    ((16, 4, 8, 8), (6, 4, 6, 6), dict()),  # 36 taps: more than the registers, oneDNN
    ((24, 8, 10, 10), (12, 8, 3, 3), dict()),  # not whole 16s of images: oneDNN
    ((32, 8, 10, 10), (12, 8, 3, 3), dict(padding=1)),  # padding: oneDNN
]


@pytest.mark.parametrize('geometry', FILTER_GRADIENT_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_filter_gradients_of_few_channel_convolutions_vectorize_over_images(dev, geometry):
    """conv2d's filter gradient against eager, with a NaN and an Inf in the input too (each
    reaches only the weights that read it; the NaN in the last group of 16 images, which the
    parts' sum must carry), and the loop kernel (ConvDirectFilterGradientKernels) exactly where
    _direct_filter_gradient says."""
    xs, ws, kwargs = geometry
    torch.manual_seed(4)
    x, w = torch.randn(xs), torch.randn(ws)
    x[-1, 0, 2, 3] = float('nan')
    x[0, -1, -1, -1] = float('inf')
    grew = _one_gradient_matches_eager(dev, x, w, kwargs, w, 'ConvDirectFilterGradientKernels')
    assert grew == (1 if _direct_filter_gradient(xs, ws, kwargs) else 0)


def test_conv2d_nan_and_inf_propagate_like_eager(dev):
    x = torch.randn(1, 2, 6, 6)
    x[0, 0, 2, 3] = float('nan')
    x[0, 1, 4, 4] = float('inf')
    w = torch.randn(3, 2, 3, 3)
    torch.testing.assert_close(F.conv2d(x.to(dev), w.to(dev), padding=1).cpu(), F.conv2d(x, w, padding=1),
                               equal_nan=True, rtol=1e-4, atol=1e-4)


def test_float64_convolutions_use_im2col(dev):
    x, w = torch.randn(2, 3, 7, 7, dtype=torch.float64), torch.randn(4, 3, 3, 3, dtype=torch.float64)
    with CounterDelta('OneDnnConvolution') as d:
        got = [t.cpu() for t in _conv_and_grads(x.to(dev), w.to(dev), dict(padding=1))]
    for a, b in zip(got, _conv_and_grads(x, w, dict(padding=1))):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    assert d['OneDnnConvolution'] == 0


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('geometry', [
    ((2, 3, 32, 32), 3, 2, 1, 1),  # ResNet's stem pool
    ((16, 64, 32, 32), 3, 2, 1, 1),  # large enough to split planes across threads
    ((1, 2, 7, 9), 3, 1, 1, 1),
    ((2, 2, 10, 11), 2, 2, 1, 1),
    ((1, 1, 5, 5), 3, 2, 1, 2),  # dilated: the window's span decides what is inside
    ((1, 1, 3, 3), 3, 1, 1, 1),  # no output window lies wholly inside
    ((0, 3, 8, 8), 3, 2, 1, 1),  # empty batch
], ids=lambda g: 'x'.join(map(str, g[0])) + f'k{g[1]}s{g[2]}p{g[3]}d{g[4]}')
def test_padded_max_pool_indices_values_and_gradients(dev, dtype, geometry):
    shape, k, s, p, dil = geometry
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype)
    if x.numel():
        x.view(-1)[5] = float('nan')  # NaN wins its windows, as in eager
        x.view(-1)[-1] = float('inf')
    results = []
    for device in ('cpu', dev):
        xd = x.detach().clone().to(device).requires_grad_()
        y, i = F.max_pool2d(xd, k, s, p, dil, return_indices=True)
        g = torch.linspace(-1, 1, y.numel(), dtype=dtype).reshape(y.shape).to(device)
        y.backward(g)
        results.append((y.detach().cpu(), i.cpu(), xd.grad.cpu()))
    (y0, i0, g0), (y1, i1, g1) = results
    assert torch.equal(i1, i0)
    torch.testing.assert_close(y1, y0, equal_nan=True)
    torch.testing.assert_close(g1, g0, equal_nan=True)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_max_pool_values_are_the_inputs_at_their_indices(dev, dtype):
    """The pooled values are read from the input at the indices the library call finds: a tie
    keeps the first maximum (-0.0 before 0.0 stays -0.0), a window of -inf pools to -inf,
    ceil_mode's windows that run past the input and unbatched inputs read in range; values,
    indices and gradients as eager's."""
    x = torch.randn(2, 3, 7, 7, dtype=dtype)
    x[0, 0] = -float('inf')
    x[0, 1, :2, :2] = torch.tensor([[-0.0, 0.0], [0.0, -0.0]], dtype=dtype)
    x[0, 1, 2:, :] = -1
    x[0, 1, :, 2:] = -1
    cases = [(x, dict(kernel_size=3, stride=2, ceil_mode=True)),
             (x, dict(kernel_size=2, stride=2, padding=1)),
             (x[1], dict(kernel_size=3, stride=2, padding=1))]  # unbatched
    for inp, kwargs in cases:
        results = []
        for device in ('cpu', dev):
            xd = inp.detach().clone().to(device).requires_grad_()
            y, i = F.max_pool2d(xd, return_indices=True, **kwargs)
            y.backward(torch.linspace(-1, 1, y.numel(), dtype=dtype).reshape(y.shape).to(device))
            results.append((y.detach().cpu(), i.cpu(), xd.grad.cpu()))
        (y0, i0, g0), (y1, i1, g1) = results
        assert torch.equal(i1, i0), kwargs
        assert torch.equal(torch.signbit(y1), torch.signbit(y0)), kwargs
        torch.testing.assert_close(y1, y0, equal_nan=True)
        torch.testing.assert_close(g1, g0, equal_nan=True)



@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('geometry', [
    ((128, 10, 24, 24), 2, True),  # the MNIST CNN's first pool
    ((2, 3, 8, 8), (2, 4), True),  # rectangular tiles
    ((3, 12, 12), 3, True),  # unbatched, 3x3 tiles
    ((0, 3, 8, 8), 2, True),  # empty batch
    ((2, 3, 9, 9), 2, False),  # a margin no window covers: indices as before
    ((2, 3, 8, 8), (3, 3), False),  # windows that overlap (stride 2 is set below)
], ids=lambda g: 'x'.join(map(str, g[0])) + f'k{g[1]}')
def test_max_pool_gradient_of_tiling_windows_reads_the_input(dev, dtype, geometry):
    """Windows that tile the input: the gradient finds each window's maximum in the input again
    (txla.max_pool2d_backward_from_input) instead of reading int64 indices the forward wrote.
    Ties keep the first maximum (a ReLU's zeros), NaN wins its window, a window of -inf gets the
    gradient at its first position; a transposed (non-contiguous) input; values and gradients
    as eager's. Other windows keep the indices."""
    shape, k, tiles = geometry
    stride = 2 if k == (3, 3) else k
    torch.manual_seed(0)
    x = torch.relu(torch.randn(shape, dtype=dtype))  # many windows of zeros: ties
    if x.numel():
        x.view(-1)[3] = float('nan')
        x.view(-1)[-4:] = -float('inf')
    for transposed in (False, True):
        inp = x.transpose(-1, -2) if transposed else x
        grads = []
        for device in ('cpu', dev):
            xd = inp.detach().clone().to(device).requires_grad_()
            src = xd.transpose(-1, -2).contiguous().transpose(-1, -2) if transposed else xd
            y = F.max_pool2d(src, k, stride)
            y.backward(torch.linspace(-1, 1, y.numel(), dtype=dtype).reshape(y.shape).to(device))
            if device != 'cpu':
                hlo = torch_xla._XLAC._get_xla_tensors_hlo([xd.grad])
                assert ('max_pool2d_backward_from_input' in hlo) == tiles
            grads.append((y.detach().cpu(), xd.grad.cpu()))
        (y0, g0), (y1, g1) = grads
        torch.testing.assert_close(y1, y0, equal_nan=True)
        torch.testing.assert_close(g1, g0, equal_nan=True)


def test_max_pool_indices_the_user_keeps_and_the_gradient_from_the_input(dev):
    """Indices returned to the user are still computed (and right) when the gradient finds its
    maxima in the input."""
    x = torch.randn(4, 5, 16, 16)
    xd = x.to(dev).requires_grad_()
    y, i = F.max_pool2d(xd, 2, return_indices=True)
    y.sum().backward()
    y0, i0 = F.max_pool2d(x, 2, return_indices=True)
    xr = x.clone().requires_grad_()
    F.max_pool2d(xr, 2).sum().backward()
    assert torch.equal(i.cpu(), i0)
    torch.testing.assert_close(xd.grad.cpu(), xr.grad)

@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('window', [
    ((2, 2), (2, 2), (0, 0), (1, 1), False),  # tiles: found in the input
    ((2, 3), (2, 3), (0, 0), (1, 1), True),  # tiles with ceil_mode on (no partial window)
    ((3, 3), (2, 2), (1, 1), (1, 1), True),  # ResNet's stem, ceil_mode: indices first
    ((2, 2), (1, 1), (0, 0), (2, 2), False),  # overlapping, dilated
    ((5, 5), (5, 5), (0, 0), (1, 1), True),  # ceil_mode: a partial window over the margin
], ids=lambda w: 'k{}s{}p{}d{}c{}'.format(*(v[0] if isinstance(v, tuple) else int(v) for v in w)))
def test_max_pool2d_backward_from_input_called_directly(dev, dtype, window):
    """txla::max_pool2d_backward_from_input for any window: what ATen's backward gives with the
    indices max_pool2d_with_indices finds, on the device and on the CPU (the composite kernel that
    AOTAutograd's fake tensors run too), ties and NaN included."""
    torch.manual_seed(0)
    x = torch.relu(torch.randn(2, 3, 12, 12, dtype=dtype))
    x.view(-1)[5] = float('nan')
    y, idx = F.max_pool2d(x, *window, return_indices=True)
    g = torch.randn(y.shape, dtype=dtype)
    expected = torch.ops.aten.max_pool2d_with_indices_backward(g, x, *window, idx)
    cpu = torch.ops.txla.max_pool2d_backward_from_input(g, x, *window)
    on_dev = torch.ops.txla.max_pool2d_backward_from_input(g.to(dev), x.to(dev), *window)
    assert torch.equal(cpu, expected)
    assert torch.equal(on_dev.cpu(), expected)


def test_max_pool2d_gradient_differentiated_again(dev):
    """create_graph: the gradient of a tiling pool takes ATen's differentiable formula (the
    indices found again), so a second derivative through it is eager's."""
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64)
    results = []
    for device in ('cpu', dev):
        xd = x.to(device).requires_grad_()
        y = F.max_pool2d(xd, 2)
        g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape).to(device).requires_grad_()
        (gx,) = torch.autograd.grad(y, xd, g, create_graph=True)
        (gg,) = torch.autograd.grad((gx * torch.arange(gx.numel(), dtype=gx.dtype, device=device).reshape(gx.shape)).sum(), g)
        results.append((gx.detach().cpu(), gg.cpu()))
    torch.testing.assert_close(results[1], results[0], rtol=1e-12, atol=1e-12)


def test_max_pool2d_input_changed_in_place_before_backward(dev):
    """The pool's gradient reads its input again: changing the input in place before the
    backward pass raises autograd's error, as eager's saved input does."""
    for device in ('cpu', dev):
        a = torch.randn(2, 3, 8, 8, device=device, requires_grad=True)
        b = a * 2
        y = F.max_pool2d(b, 2)
        b.add_(1)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            y.sum().backward()


# Products in every operand layout the lowering emits (row-major, each operand plain or
# transposed), odd sizes, products split over threads (by columns, by rows; 300 rows: split by
# rows though the product is wider than tall), empty and k=0 products.
GEMM_SHAPES = [(7, 5, 3), (33, 70, 129), (130, 96, 200), (300, 520, 40), (0, 4, 5), (4, 0, 5), (6, 3, 0)]


@pytest.mark.parametrize('library', ['mkl', 'onednn', 'openblas'])
@pytest.mark.parametrize('trans_a,trans_b', [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize('m,n,k', GEMM_SHAPES, ids=lambda s: str(s))
def test_float32_products_values_and_gradients_in_each_library(dev, xla_env, library, trans_a, trans_b, m, n, k):
    """TXLA_GEMM_LIBRARY picks the float32 GEMM (gemm.cc); each must match eager, including NaN and
    infinity, and MklGemmCalls shows when MKL ran."""
    import torch_xla
    xla_env(TXLA_GEMM_LIBRARY=library)
    torch.manual_seed(m * 100 + n * 10 + k)
    a = torch.randn((k, m) if trans_a else (m, k))
    b = torch.randn((n, k) if trans_b else (k, n))
    if a.numel() and b.numel():
        a.view(-1)[0] = float('nan')
        b.view(-1)[-1] = float('inf')

    def run(a, b):
        a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
        y = (a.t() if trans_a else a) @ (b.t() if trans_b else b)
        g = torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(y.device)
        (torch.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0) * g).sum().backward()
        return y, a.grad, b.grad

    want = run(a, b)
    with CounterDelta('MklGemmCalls') as d:
        got = [t.cpu() for t in run(a.to(dev), b.to(dev))]
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-4, equal_nan=True)
    mkl = library == 'mkl' and 'mkl' in torch_xla._XLAC._xla_kernel_libraries()
    if mkl and m and n and k:
        assert d['MklGemmCalls'] >= 3  # the product and both gradients
    elif not mkl:
        assert d['MklGemmCalls'] == 0


def test_mkl_is_installed_and_loads_and_float64_stays_on_openblas(dev, xla_env):
    """The README's set-up installs PyPI's mkl, which the package points TXLA_MKL_LIBRARY at; MKL
    computes float32 products only (float64 goes to OpenBLAS, at float64 tolerances)."""
    import torch_xla
    assert os.path.exists(os.environ.get('TXLA_MKL_LIBRARY', '')), 'PyPI mkl not found at import'
    assert 'mkl' in torch_xla._XLAC._xla_kernel_libraries()
    xla_env(TXLA_GEMM_LIBRARY='mkl')
    a, b = torch.randn(40, 50, dtype=torch.float64), torch.randn(50, 30, dtype=torch.float64)
    with CounterDelta('MklGemmCalls') as d:
        got = (a.to(dev) @ b.to(dev)).cpu()
    torch.testing.assert_close(got, a @ b, rtol=1e-12, atol=1e-12)
    assert d['MklGemmCalls'] == 0


def _cpu_has_avx512_core():
    """Whether oneDNN may use AVX-512 kernels here: the CPU has them and ONEDNN_MAX_CPU_ISA (a
    cap on what oneDNN dispatches to) does not rule them out."""
    cap = os.environ.get('ONEDNN_MAX_CPU_ISA', 'ALL').upper()
    if cap != 'ALL' and not cap.startswith('AVX512') and not cap.startswith('AVX10'):
        return False
    return {'avx512f', 'avx512bw', 'avx512vl', 'avx512dq'} <= cpu_flags()


@contextlib.contextmanager
def reduced_precision(how):
    """Allows reduced-precision float32 convolutions the way a user does (`how`: 'torch_xla',
    'torch_matmul', 'mkldnn_conv', or None for the default, exact), and restores the setting."""
    saved = (torch_xla.backends.get_mat_mul_precision(), torch.backends.mkldnn.conv.fp32_precision,
             torch.backends.mkldnn.matmul.fp32_precision)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # set_float32_matmul_precision's deprecation notice
        try:
            if how == 'torch_xla':
                torch_xla.backends.set_mat_mul_precision('default')
            elif how == 'torch_matmul':
                torch.set_float32_matmul_precision('high')
            elif how == 'mkldnn_conv':
                torch.backends.mkldnn.conv.fp32_precision = 'tf32'
            yield
        finally:
            torch_xla.backends.set_mat_mul_precision(saved[0])
            torch.backends.mkldnn.conv.fp32_precision = saved[1]
            torch.backends.mkldnn.matmul.fp32_precision = saved[2]


# Where the user allows reduced precision, 3x3 stride-1 convolutions with outputs of at least 16
# pixels a side (TXLA_CONV_WINOGRAD_MIN) run oneDNN's Winograd kernels on AVX-512 CPUs: odd sizes
# (partial tiles), no padding, a bias, a batch split over threads and a channel split (one image).
WINOGRAD_GEOMETRIES = [
    # (input shape, weight shape, conv kwargs, bias)
    ((4, 16, 16, 16), (32, 16, 3, 3), dict(padding=1), False),
    ((2, 32, 19, 17), (16, 32, 3, 3), dict(padding=1), True),
    ((3, 16, 18, 20), (16, 16, 3, 3), dict(), False),  # 16x18 outputs
    ((1, 64, 24, 24), (64, 64, 3, 3), dict(padding=1), True),
]


@pytest.mark.parametrize('geometry', WINOGRAD_GEOMETRIES, ids=lambda g: 'x'.join(map(str, g[0])) + str(g[2]))
def test_winograd_convolutions_match_eager(dev, xla_env, geometry):
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    xs, ws, kwargs, with_bias = geometry
    torch.manual_seed(3)
    x, w = torch.randn(xs), torch.randn(ws) / 10
    b = torch.randn(ws[0]) if with_bias else None

    def run(x, w, b):
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        y = F.conv2d(x, w, b, **kwargs)
        g = torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(y.device)
        (y * g).sum().backward()
        return [t.cpu() for t in (y, x.grad, w.grad)]

    exact = run(x.double(), w.double(), None if b is None else b.double())
    for how, minimum, expect in (('torch_xla', '16', _cpu_has_avx512_core()), ('torch_xla', '0', False),
                                 (None, '16', False)):
        xla_env(TXLA_CONV_WINOGRAD_MIN=minimum)
        with reduced_precision(how), CounterDelta('OneDnnConvolution', 'OneDnnConvolutionWinograd') as d:
            got = run(x.to(dev), w.to(dev), None if b is None else b.to(dev))
        assert d['OneDnnConvolution'] == 3
        assert d['OneDnnConvolutionWinograd'] == (3 if expect else 0)
        for a, e in zip(got, exact):
            # Winograd's error is ~2e-6 of the largest result, not of each one.
            assert a.shape == e.shape and deviation_from_largest(a, e) < 2e-5


def test_winograd_keeps_nan_and_inf_where_eager_has_them(dev):
    """Winograd's transforms spread a NaN or an infinity over a whole tile; a pass that gives any
    non-finite result is computed again with the direct algorithm, so the results and their
    NaN/Inf positions are eager's."""
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    torch.manual_seed(4)
    x, w = torch.randn(2, 16, 20, 20), torch.randn(16, 16, 3, 3) / 10
    x[0, 3, 5, 7] = float('nan')
    x[1, 0, 12, 2] = float('inf')
    want = _conv_and_grads(x, w, dict(padding=1))
    with reduced_precision('torch_xla'), CounterDelta('OneDnnConvolutionWinograd', 'OneDnnConvolutionWinogradRedone') as d:
        got = [t.cpu() for t in _conv_and_grads(x.to(dev), w.to(dev), dict(padding=1))]
    for a, b in zip(got, want):
        assert torch.equal(a.isnan(), b.isnan()) and torch.equal(a.isinf(), b.isinf())
        torch.testing.assert_close(a, b, rtol=1e-4, atol=2e-3, equal_nan=True)
    if _cpu_has_avx512_core():
        assert d['OneDnnConvolutionWinograd'] == 3
        # The forward pass and the filter gradient read x; the input gradient (of finite dy and
        # w) is finite and stays Winograd's.
        assert d['OneDnnConvolutionWinogradRedone'] == 2


def test_winograd_geometry_with_an_empty_batch(dev):
    """A Winograd-sized convolution over no images: empty results and gradients, no library call."""
    x = torch.randn(0, 16, 18, 18)
    w = torch.randn(16, 16, 3, 3)
    want = _conv_and_grads(x, w, dict(padding=1))
    with reduced_precision('torch_xla'), CounterDelta('OneDnnConvolution', 'OneDnnConvolutionWinograd') as d:
        got = [t.cpu() for t in _conv_and_grads(x.to(dev), w.to(dev), dict(padding=1))]
    for a, b in zip(got, want):
        assert a.shape == b.shape
        torch.testing.assert_close(a, b)
    assert d['OneDnnConvolutionWinograd'] == 0


@pytest.mark.parametrize('batch,how', [(2, 'torch_xla'), (3, 'torch_matmul'), (4, 'mkldnn_conv')])
def test_each_precision_switch_opts_in_and_a_switch_compiles_again(dev, batch, how):
    """PyTorch/XLA's and PyTorch's own switches allow Winograd; the graph traced under the other
    setting is compiled again (its precision is part of the graph's key), not reused. (A batch
    of its own per switch: graphs no other case compiled.)"""
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    x, w = torch.randn(batch, 16, 18, 18), torch.randn(16, 16, 3, 3) / 10
    with CounterDelta('OneDnnConvolutionWinograd', 'UncachedCompile') as exact:
        F.conv2d(x.to(dev), w.to(dev), padding=1).cpu()
    with reduced_precision(how), CounterDelta('OneDnnConvolutionWinograd', 'UncachedCompile') as fast:
        y = F.conv2d(x.to(dev), w.to(dev), padding=1)
        assert 'operand_precision={highest,highest}' not in torch_xla._XLAC._get_xla_tensors_hlo([y])
        y.cpu()
    assert exact['OneDnnConvolutionWinograd'] == 0
    assert fast['OneDnnConvolutionWinograd'] == (1 if _cpu_has_avx512_core() else 0)
    assert fast['UncachedCompile'] >= 1


def test_winograd_sized_convolutions_round_as_eager_by_default(dev):
    """Exact by default: a Winograd-eligible convolution, its input and its filter gradient stay
    as close to float64 as eager float32's are, with no reduced-precision switch set (Winograd's
    rounding would be several times further off), and the HLO says `highest`."""
    if not _onednn_built():
        pytest.skip('built without oneDNN')
    torch.manual_seed(5)
    x, w = torch.randn(8, 64, 32, 32), torch.randn(64, 64, 3, 3) / 10
    exact = _conv_and_grads(x.double(), w.double(), dict(padding=1))
    eager = _conv_and_grads(x, w, dict(padding=1))
    y = F.conv2d(x.to(dev), w.to(dev), padding=1)
    assert 'operand_precision={highest,highest}' in torch_xla._XLAC._get_xla_tensors_hlo([y])
    with CounterDelta('OneDnnConvolution', 'OneDnnConvolutionWinograd') as d:
        got = [t.cpu() for t in _conv_and_grads(x.to(dev), w.to(dev), dict(padding=1))]
    assert d['OneDnnConvolution'] == 3 and d['OneDnnConvolutionWinograd'] == 0
    for g, e, want in zip(got, eager, exact):
        assert deviation_from_largest(g, want) <= 2 * deviation_from_largest(e, want) + 1e-7
