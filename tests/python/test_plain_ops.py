"""Plain op use that an independent op-by-op suite found wrong or crashing (issue: right answers):
integer matrix products and divisions, empty medians, norms, NaN/inf losses, writes through
views and out= views, `.data` of a view, tensors made by torch.tensor(device=xla), integer powers
and ops whose ATen kernels are composites over views."""
import math

import pytest
import torch
import torch.nn.functional as F


def _same(fn, *args, atol=1e-6, rtol=1e-6, dev):
    expected = fn(*args)
    got = fn(*[a.to(dev) if isinstance(a, torch.Tensor) else a for a in args])
    got = got.cpu()
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, expected.shape)
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol, equal_nan=True)


G = torch.Generator().manual_seed(0)
BIG = torch.randint(-2**40, 2**40, (3, 4), generator=G)
MID = torch.randint(-2**20, 2**20, (4, 5), generator=G)


@pytest.mark.parametrize('fn, args', [
    (torch.mm, (BIG, MID)),
    (torch.bmm, (BIG.view(1, 3, 4), MID.view(1, 4, 5))),
    (torch.mv, (BIG, MID[:, 0])),
    (torch.dot, (BIG[0], MID[:, 1])),
    (torch.inner, (BIG, MID.t()[:2])),
    (torch.addmm, (torch.ones(3, 5, dtype=torch.long), BIG, MID)),
    (torch.addmv, (torch.ones(3, dtype=torch.long), BIG, MID[:, 0])),
    (torch.baddbmm, (torch.ones(1, 3, 5, dtype=torch.long), BIG.view(1, 3, 4), MID.view(1, 4, 5))),
    (lambda a, b: torch.tensordot(a, b, dims=1), (BIG, MID)),
    (torch.mm, (BIG.int() % 1000, MID.int() % 1000)),
])
def test_integer_matrix_products_are_exact(fn, args, dev):
    _same(fn, *args, atol=0, rtol=0, dev=dev)


N = torch.tensor([-7, 7, -7, 7, 0, 2**50 + 3, -2**50 - 3, 9, -9, 1])
D = torch.tensor([2, -2, -2, 2, 5, 1024, 1024, 3, 3, -1])


@pytest.mark.parametrize('fn', [
    lambda a, b: torch.div(a, b, rounding_mode='floor'),
    lambda a, b: torch.div(a, b, rounding_mode='trunc'),
    torch.fmod, torch.remainder, torch.floor_divide,
    lambda a, b: torch.div(a.int(), b.int(), rounding_mode='floor'),
    lambda a, b: torch.div(a, 3, rounding_mode='floor'),
    lambda a, b: torch.fmod(a, -3),
], ids=['floor', 'trunc', 'fmod', 'remainder', 'floor_divide', 'floor_i32', 'floor_scalar', 'fmod_scalar'])
def test_integer_division_modes(fn, dev):
    _same(fn, N, D, atol=0, rtol=0, dev=dev)


def test_float_floor_division_as_python(dev):
    x = torch.tensor([1.0, -1.0, 7.5, 5.0, -5.0, 0.0], dtype=torch.float64)
    y = torch.tensor([0.1, 0.1, -2.0, 0.0, 0.0, -3.0], dtype=torch.float64)
    got = torch.div(x.to(dev), y.to(dev), rounding_mode='floor').cpu()
    assert got[0].item() == 9.0 and got[1].item() == -10.0  # 1 // 0.1 == 9 in Python and eager
    torch.testing.assert_close(got, torch.div(x, y, rounding_mode='floor'), equal_nan=True)


@pytest.mark.parametrize('fn', [
    lambda x: x.sum(0), lambda x: x.amax(0), lambda x: (x > 0).sum(0), lambda x: x.sum(0, keepdim=True),
    lambda x: x.var(0), lambda x: x.t().sum(0), lambda x: torch.median(x, 0)[0], lambda x: x.argmax(0),
])
def test_reducing_a_full_dimension_into_an_empty_result(fn, dev):
    # [3, 0] reduced over its 3: the result is empty. The compiler divided by the empty dimension
    # (a SIGFPE that killed the process) before kernels with only empty outputs were skipped.
    _same(fn, torch.randn(3, 0), dev=dev)


@pytest.mark.parametrize('fn', [torch.median, torch.nanmedian])
def test_median_of_empty_is_0_dim(fn, dev):
    _same(fn, torch.empty(0), dev=dev)


X = torch.randn(1000, generator=G) * 1e3
Y = torch.randn(1000, generator=G)


@pytest.mark.parametrize('fn', [
    torch.dist, lambda a, b: torch.dist(a, b, 1), lambda a, b: torch.dist(a, b, 3),
    lambda a, b: torch.dist(a, b, math.inf), lambda a, b: torch.norm(a),
    lambda a, b: torch.norm(a.view(25, 40), 'fro'), lambda a, b: torch.linalg.vector_norm(a, 3),
    lambda a, b: torch.norm(a.view(25, 40), dim=1),
])
def test_distances_and_norms_within_rounding(fn, dev):
    _same(fn, X, Y, atol=1e-5, rtol=2e-6, dev=dev)


def test_nll_loss_with_inf_and_nan(dev):
    logits = torch.randn(4, 5, generator=G)
    logits[0, 1], logits[1, 2], logits[2, 3] = math.inf, math.nan, -math.inf
    target = torch.tensor([1, 2, 3, 0])
    for reduction in ('mean', 'sum', 'none'):
        _same(lambda a, t: F.nll_loss(a, t, reduction=reduction), logits, target, dev=dev)
    _same(F.cross_entropy, logits, target, dev=dev)


def test_writes_through_views_reach_the_base(dev):
    def as_strided_write(a):
        a = a.clone()
        a.as_strided((2, 2), (1, 2), 1).mul_(10)
        return a

    def out_into_view(a, b):
        a = a.clone()
        torch.mm(b, b, out=a[1:3, 1:3])
        torch.add(b[0], 1, out=a.t()[0, :2])
        return a

    def data_of_view_write(a):
        a = a.clone()
        a.select(0, 1).data.fill_(3)
        a[:, 2].data.mul_(0)
        return a

    _same(as_strided_write, torch.randn(3, 4, generator=G), dev=dev)
    _same(out_into_view, torch.randn(4, 4, generator=G), torch.randn(2, 2, generator=G), dev=dev)
    _same(data_of_view_write, torch.randn(3, 4, generator=G), dev=dev)
    _same(lambda a: a.select(0, 1).data, torch.randn(3, 4, generator=G), dev=dev)


def test_tensors_from_torch_tensor_take_views_and_writes(dev):
    t = torch.tensor([1, 2, 3, 0], device=dev)
    assert torch._is_functional_tensor(t)
    t[1:3] = 7
    assert t.cpu().tolist() == [1, 7, 7, 0]
    assert torch.equal(F.one_hot(torch.tensor([1, 2, 3, 0], device=dev), 5).cpu(),
                       F.one_hot(torch.tensor([1, 2, 3, 0]), 5))


@pytest.mark.parametrize('dtype', [torch.int64, torch.int32, torch.int8, torch.uint8])
def test_integer_powers(dtype, dev):
    n = torch.arange(-6, 7).to(dtype)
    for fn in (lambda a: a ** 2, lambda a: a ** 3, lambda a: torch.pow(a, 0), lambda a: a ** 13):
        _same(fn, n, atol=0, rtol=0, dev=dev)
    with pytest.raises(RuntimeError, match='negative integer powers'):
        torch.pow(n.to(dev), -2)


@pytest.mark.parametrize('fn, args', [
    (torch.addr, (torch.randn(3, 4, generator=G), torch.randn(3, generator=G), torch.randn(4, generator=G))),
    (lambda a: torch.mvlgamma(a, 2), (torch.rand(5, generator=G) + 2,)),
    (lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), (torch.randn(2, 2, 3, generator=G),)),
    (lambda a: a.repeat_interleave(2, dim=0), (torch.randn(3, 2, generator=G),)),
    (lambda a: torch.linalg.cholesky(a @ a.t() + 4 * torch.eye(4, dtype=a.dtype, device=a.device)), (torch.randn(4, 4, generator=G),)),
    (lambda a, m, s: a.masked_scatter(m, s), (torch.randn(3, 4, generator=G), torch.rand(3, 4, generator=G) > 0.5,
                                              torch.randn(12, generator=G))),
    (lambda a: a.flip(0), (torch.randn(3, 4, generator=G),)),
])
def test_ops_that_crashed_now_match_eager(fn, args, dev):
    _same(fn, *args, atol=1e-5, rtol=1e-5, dev=dev)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_pow_by_the_exponents_aten_computes_without_pow_matches_eager_to_the_bit(dtype, dev):
    """x**2, x**3, x**-2 and x**-1 are products and quotients in ATen's CPU kernel (x**0 is one,
    x**1 a copy); the device computes them the same way, so they agree to the bit, NaN and
    infinities included; each exponent is its own graph (the exponent is part of the graph)."""
    torch.manual_seed(0)
    x = torch.randn(257, dtype=dtype) * 4
    x[:5] = torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, -0.0], dtype=dtype)
    for e in (0, 1, 2, 3, -2, -1, 2.0, 3.0):
        want = x ** e
        got = (x.to(dev) ** e).cpu()
        assert torch.equal(got.isnan(), want.isnan()), e
        assert torch.equal(torch.nan_to_num(got), torch.nan_to_num(want)), e
        assert torch.equal(torch.signbit(got), torch.signbit(want)), e


def _ulps(a, b):
    """Distance in float32 units in the last place."""
    ai, bi = a.view(torch.int32).long(), b.view(torch.int32).long()
    ai = torch.where(ai < 0, -(ai & 0x7fffffff), ai)
    bi = torch.where(bi < 0, -(bi & 0x7fffffff), bi)
    return (ai - bi).abs()


def test_float_tanh_is_correctly_rounded_and_keeps_its_special_values(dev):
    """The kernels' float tanh (computed in double, rounded once, vectorizable) against tanh in
    float64 rounded to float: equal over a sweep of [-12, 12] and of tiny values (eager's own
    tanh is 1 ulp off on ~0.1% of them), and +-0, +-inf, NaN and denormals as eager has them."""
    x = torch.cat([torch.linspace(-12, 12, 400_001), torch.randn(100_000) * 1e-3, torch.randn(1000) * 1e-38])
    want = x.double().tanh().float()
    got = x.to(dev).tanh().cpu()
    assert _ulps(got, want).max() <= 1
    assert (_ulps(got, want) > 0).sum() <= 4  # a tie between two floats, if any
    special = torch.tensor([0.0, -0.0, float('inf'), -float('inf'), float('nan'), 1e-45, -1e-45, 9.02, -50.0])
    got = special.to(dev).tanh().cpu()
    want = special.tanh()
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))
    assert torch.equal(torch.signbit(got), torch.signbit(want))
