"""Differential test specs (see op_specs.py) for special functions, float classification, shifts,
distances, resampling (upsampling, edge padding, pixel shuffle), 3-D pooling and the ops that
ATen implements as composites over views (addr, mvlgamma, affine_grid)."""
import math

import torch
import torch.nn.functional as F

from op_specs import FLOAT, INTS, UNARY, UNARY_UNIT, BINARY, Spec, pos, rnd, unary

TORCH_1 = torch.__version__.startswith('1.')

A = torch.ops.aten
NAN, INF = math.nan, math.inf


def vals(values):
    """A fixed tensor in the spec's dtype (edge values: NaN, infinities, signed zeros)."""
    return lambda dtype, gen: torch.tensor(values).to(dtype)


EDGES = [1.5, -2.0, 0.0, -0.0, NAN, INF, -INF, 3e38, -1e-30]
SPECS = [
    # Float classification and cleanup, on the edge values.
    Spec('isnan', torch.isnan, [[vals(EDGES)], [rnd(3, 4)]], ops=('aten::isnan',), grad=False),
    Spec('isnan_int', torch.isnan, [[rnd(3, 4)]], ops=('aten::isnan',), dtypes=INTS, grad=False),
    Spec('isposinf', torch.isposinf, [[vals(EDGES)]], ops=('aten::isposinf',), grad=False),
    Spec('isneginf', torch.isneginf, [[vals(EDGES)]], ops=('aten::isneginf',), grad=False),
    Spec('nan_to_num', torch.nan_to_num, [[vals(EDGES)], [rnd(3, 4)]], ops=('aten::nan_to_num',)),
    Spec('nan_to_num_values', lambda x: torch.nan_to_num(x, nan=2.0, posinf=7.0, neginf=-7.5),
         [[vals(EDGES)]], ops=('aten::nan_to_num',)),
    # Special functions (their backwards are composites of lowered ops).
    unary('lgamma', torch.lgamma, 'aten::lgamma', grad_ops=('aten::digamma',),
          cases=[[pos(3, 4)], [vals([0.5, 1.0, 2.0, 3.5, 10.0, 100.0, -0.5, -2.5, 1e-3])]]),
    unary('digamma', torch.digamma, 'aten::digamma', grad=False, rtol=1e-5,
          cases=[[pos(3, 4)], [rnd(5, lo=-3, hi=3)],
                 [vals([0.0, -0.0, -1.0, -2.0, 10.0, 1e18, 0.25, -0.5, NAN, INF])]]),
    unary('acosh', torch.acosh, 'aten::acosh', cases=[[rnd(3, 4, lo=1.1, hi=4)], [vals([1.0, 1e30, 0.5, NAN])]]),
    unary('asinh', torch.asinh, 'aten::asinh', cases=UNARY + [[vals([1e-20, -1e30, 0.0, -0.0, INF])]]),
    unary('atanh', torch.atanh, 'aten::atanh', cases=UNARY_UNIT + [[vals([1e-20, 1.0, -1.0, 2.0])]]),
    unary('logit', torch.logit, 'aten::logit', grad_ops=('aten::logit_backward',),
          cases=[[rnd(3, 4, lo=0.05, hi=0.95)], [vals([0.0, 1.0, -0.5, 1.5, 0.5])]]),
    unary('logit_eps', lambda x: torch.logit(x, 0.1), 'aten::logit', grad_ops=('aten::logit_backward',),
          cases=[[rnd(3, 4, lo=-0.2, hi=1.2)]]),
    unary('mvlgamma_p1', lambda x: torch.mvlgamma(x, 1), 'aten::mvlgamma', cases=[[rnd(3, 4, lo=0.5, hi=4)]]),
    unary('mvlgamma_p3', lambda x: torch.mvlgamma(x, 3), 'aten::mvlgamma', cases=[[rnd(3, 4, lo=1.5, hi=4)], [rnd(0, lo=2, hi=3)]]),
    # erfinv as ATen's calc_erfinv: +-inf at +-1, NaN outside [-1, 1]; a steep gradient near the ends.
    unary('erfinv', torch.erfinv, 'aten::erfinv', rtol=2e-6,
          cases=UNARY_UNIT + [[rnd(0)], [vals([0.0, -0.0, 0.7, -0.7, 0.71, 0.999, -0.9999, 1e-30])]]),
    unary('erfinv.edges', torch.erfinv, 'aten::erfinv', grad=False,
          cases=[[vals([1.0, -1.0, 1.5, -2.0, NAN, INF])]]),
    unary('erfinv.int', torch.erfinv, 'aten::erfinv', cases=[[rnd(3, 4, lo=-1, hi=1)]], dtypes=INTS, grad=False),
    # Modified Bessel functions as ATen's Cephes series: both sides of |x| = 8, signed zeros,
    # overflow to inf (and inf * series / sqrt(inf) = NaN at infinity, as eager computes it), NaN;
    # i0's gradient is i1, i1's a composite around x = 0.
    unary('i0', torch.i0, 'aten::i0', grad_ops=('aten::special_i1',),
          cases=UNARY + [[rnd(3, 4, lo=-12, hi=12)], [vals([0.0, -0.0, 8.0, -8.0001, 50.0, -700.0, 1e-30])]]),
    unary('i0.edges', torch.i0, 'aten::i0', grad=False, cases=[[vals([800.0, INF, -INF, NAN])]]),
    unary('i0.int', torch.i0, 'aten::i0', cases=[[rnd(3, 4, lo=-9, hi=9)]], dtypes=INTS, grad=False),
    unary('i0e', torch.special.i0e, 'aten::special_i0e', grad_ops=('aten::special_i1e',),
          cases=UNARY + [[rnd(3, 4, lo=-12, hi=12)], [vals([0.0, 8.0, -8.0001, 50.0, -700.0, 800.0])]]),
    unary('i0e.edges', torch.special.i0e, 'aten::special_i0e', grad=False, cases=[[vals([INF, -INF, NAN])]]),
    unary('i1', torch.special.i1, 'aten::special_i1',
          cases=UNARY + [[rnd(3, 4, lo=-12, hi=12)], [vals([0.0, -0.0, 8.0, -8.0001, 50.0, -700.0, 1e-30])]]),
    unary('i1e', torch.special.i1e, 'aten::special_i1e',
          cases=UNARY + [[rnd(3, 4, lo=-12, hi=12)], [vals([0.0, -0.0, 8.0, -8.0001, 50.0, -700.0, 800.0])]]),
    unary('i1.edges', lambda x: (torch.special.i1(x), torch.special.i1e(x)), 'aten::special_i1', grad=False,
          cases=[[vals([INF, -INF, NAN, 800.0])]]),
    # hypot without overflow or underflow in between; an infinite side wins over a NaN.
    Spec('hypot', torch.hypot, BINARY + [[vals([3e38, 1e-30, 0.0, -0.0, INF, NAN, -INF, 3.0]),
                                          vals([3e38, -1e-30, 0.0, 0.0, NAN, -INF, 1.0, -4.0])]],
         ops=('aten::hypot',)),
    Spec('gcd', torch.gcd, [[rnd(3, 4, lo=-60, hi=60), rnd(3, 4, lo=-60, hi=60)], [rnd(3, 4, lo=-9, hi=9), rnd(4, lo=0, hi=0)],
                           [vals([0, 0, -12, 12, 1, 7]), vals([0, 5, 18, -18, -1, 49])]],
         ops=('aten::gcd',), dtypes=INTS + (torch.int16, torch.uint8), grad=False),
    Spec('xlogy', torch.xlogy, [[rnd(3, 4), pos(3, 4)], [vals([0.0, 0.0, 1.0, 2.0]), vals([0.0, NAN, NAN, INF])]],
         ops=('aten::xlogy.Tensor',)),
    Spec('xlogy.Scalar_Other', lambda x: torch.xlogy(x, 3.0), [[rnd(3, 4)]], ops=('aten::xlogy.Scalar_Other',)),
    Spec('xlogy.Scalar_Self', lambda y: torch.xlogy(2.0, y), [[pos(3, 4)]], ops=('aten::xlogy.Scalar_Self',)),
    Spec('logaddexp', torch.logaddexp, BINARY + [[vals([INF, -INF, INF, 1.0]), vals([INF, -INF, -INF, NAN])]],
         ops=('aten::logaddexp',)),
    Spec('floor_divide', torch.floor_divide,
         [[rnd(3, 4, lo=-9, hi=9), pos(3, 4)],
          [vals([1.0, -1.0, 7.5, -7.5, 0.0, -0.0, 5.0, -5.0, 1.0]), vals([0.1, 0.1, -2.0, 2.0, 3.0, -3.0, 0.0, 0.0, INF])]],
         ops=('aten::floor_divide',), grad=False),
    Spec('floor_divide_python_scalar', lambda x: torch.floor_divide(x, 0.7), [[rnd(3, 4, lo=-9, hi=9)]],
         ops=('aten::floor_divide',), grad=False),
    Spec('div_floor_edges', lambda x, y: torch.div(x, y, rounding_mode='floor'),
         [[vals([1.0, -1.0, 7.5, -7.5, 0.0, -0.0, 5.0, -5.0]), vals([0.1, 0.1, -2.0, 2.0, 3.0, -3.0, 0.0, 0.0])]],
         ops=('aten::div.Tensor_mode',), grad=False),
    # Integer division: truncated (fmod, div 'trunc') or floored (remainder, //, div 'floor'),
    # negative operands and -1 divisors (the minimum divided by -1 traps eager itself).
    Spec('integer_division', lambda x, y: (x % y, x // y, torch.fmod(x, y), torch.div(x, y, rounding_mode='trunc'),
                                           torch.div(x, y, rounding_mode='floor'), x % 3, x // -2, torch.fmod(x, -4)),
         [[rnd(3, 4, lo=-50, hi=50), vals([[1, -1, 7, -7]] * 3)], [rnd(3, 4, lo=-50, hi=50), rnd(4, lo=1, hi=9)],
          [vals([7, -7, 7, -7, 0, 0, -1]), vals([2, 2, -2, -2, 5, -5, 3])]],
         ops=('aten::remainder.Tensor', 'aten::floor_divide', 'aten::fmod.Tensor', 'aten::div.Tensor_mode',
              'aten::remainder.Scalar', 'aten::fmod.Scalar'), dtypes=INTS + (torch.int16, torch.int8), grad=False),
    Spec('integer_division.uint8', lambda x, y: (x % y, x // y, torch.fmod(x, y), x // 7),
         [[rnd(3, 4, lo=0, hi=255), rnd(3, 4, lo=1, hi=255)]],
         ops=('aten::remainder.Tensor', 'aten::floor_divide', 'aten::fmod.Tensor'), dtypes=(torch.uint8,), grad=False),
    # Integer powers (by squaring, wrapping as ATen does), and shifts.
    Spec('pow_int_scalar', lambda x: x ** 3, [[rnd(3, 4, lo=-9, hi=9)]], ops=('aten::pow.Tensor_Scalar',),
         dtypes=INTS + (torch.uint8, torch.int8), grad=False),
    Spec('pow_int_tensor', lambda x, y: x ** y, [[rnd(3, 4, lo=-9, hi=9), rnd(3, 4, lo=-2, hi=40)]],
         ops=('aten::pow.Tensor_Tensor',), dtypes=INTS, grad=False),
    Spec('pow_int_scalar_base', lambda y: A.pow.Scalar(3, y), [[rnd(3, 4, lo=0, hi=30)]], ops=('aten::pow.Scalar',),
         dtypes=INTS, grad=False),
    Spec('lshift', lambda x, y: x << y, [[rnd(3, 4, lo=-50, hi=50), rnd(3, 4, lo=0, hi=7)]],
         ops=('aten::__lshift__.Tensor',), dtypes=INTS + (torch.uint8, torch.int8), grad=False),
    Spec('rshift', lambda x, y: x >> y, [[rnd(3, 4, lo=-50, hi=50), rnd(4, lo=0, hi=7)]],
         ops=('aten::__rshift__.Tensor',), dtypes=INTS + (torch.int8,), grad=False),
    Spec('lshift.Scalar', lambda x: x << 3, [[rnd(3, 4, lo=-50, hi=50)]], ops=('aten::__lshift__.Scalar',),
         dtypes=INTS, grad=False),
    Spec('rshift.Scalar', lambda x: x >> 2, [[rnd(3, 4, lo=-50, hi=50)]], ops=('aten::__rshift__.Scalar',),
         dtypes=INTS, grad=False),
    Spec('bitwise_left_shift', torch.bitwise_left_shift, [[rnd(3, 4, lo=-50, hi=50), rnd(3, 4, lo=0, hi=7)]],
         ops=('aten::bitwise_left_shift.Tensor',), dtypes=INTS, grad=False),
    Spec('bitwise_right_shift', torch.bitwise_right_shift, [[rnd(3, 4, lo=-50, hi=50), rnd(3, 4, lo=0, hi=7)]],
         ops=('aten::bitwise_right_shift.Tensor',), dtypes=INTS, grad=False),
    # Small layers.
    unary('softshrink', lambda x: F.softshrink(x, 0.6), 'aten::softshrink', grad_ops=('aten::softshrink_backward',)),
    unary('hardshrink', lambda x: F.hardshrink(x, 0.6), 'aten::hardshrink', grad_ops=('aten::hardshrink_backward',)),
    unary('logsigmoid', F.logsigmoid, 'aten::log_sigmoid_forward', grad_ops=('aten::log_sigmoid_backward',),
          cases=UNARY + [[vals([-100.0, 100.0, 0.0])]]),
    Spec('glu', lambda x: F.glu(x, -1), [[rnd(3, 4)], [rnd(2, 3, 6)]], ops=('aten::glu',), grad_ops=('aten::glu_backward',)),
    Spec('glu_dim0', lambda x: F.glu(x, 0), [[rnd(4, 3)]], ops=('aten::glu',), grad_ops=('aten::glu_backward',)),
    Spec('addr', lambda s, a, b: torch.addr(s, a, b, beta=0.5, alpha=2.0), [[rnd(3, 4), rnd(3), rnd(4)], [rnd(4), rnd(3), rnd(4)]],
         ops=('aten::addr',)),
    Spec('addr_int', torch.addr, [[rnd(3, 4), rnd(3), rnd(4)]], ops=('aten::addr',), dtypes=INTS, grad=False),
    Spec('addr_beta0_ignores_nan', lambda s, a, b: torch.addr(s, a, b, beta=0),
         [[vals([[NAN, 1.0], [INF, 2.0]]), rnd(2), rnd(2)]], ops=('aten::addr',), grad=False),
    # Distances: the accurate direct form (tolerance covers eager's own summation order).
    Spec('cdist', torch.cdist, [[rnd(4, 3), rnd(5, 3)], [rnd(2, 4, 3), rnd(2, 5, 3)]],
         ops=('aten::_cdist_forward',), grad_ops=('aten::_cdist_backward',), atol=1e-5, rtol=1e-5),
    Spec('cdist_p1', lambda a, b: torch.cdist(a, b, p=1), [[rnd(4, 3), rnd(5, 3)]],
         ops=('aten::_cdist_forward',), grad_ops=('aten::_cdist_backward',), rtol=1e-5),
    Spec('cdist_p3', lambda a, b: torch.cdist(a, b, p=3), [[rnd(4, 3), rnd(5, 3)]],
         ops=('aten::_cdist_forward',), grad_ops=('aten::_cdist_backward',), rtol=1e-5),
    Spec('cdist_pinf_p0', lambda a, b: (torch.cdist(a, b, p=float('inf')), torch.cdist(a, b, p=0)),
         [[rnd(4, 3), rnd(5, 3)]], ops=('aten::_cdist_forward',), grad=False),
    Spec('pdist', F.pdist, [[rnd(5, 3)], [rnd(2, 4)]], ops=('aten::_pdist_forward',),
         grad_ops=('aten::_pdist_backward',), rtol=1e-5, transposed=False),
    Spec('pdist_p1', lambda x: F.pdist(x, 1), [[rnd(5, 3)]], ops=('aten::_pdist_forward',),
         grad_ops=('aten::_pdist_backward',), rtol=1e-5, transposed=False),
    Spec('affine_grid', lambda t: F.affine_grid(t, (2, 3, 5, 4), align_corners=False), [[rnd(2, 2, 3)]],
         ops=('aten::affine_grid_generator',), transposed=False),
    Spec('affine_grid_aligned_3d', lambda t: F.affine_grid(t, (2, 1, 3, 4, 1), align_corners=True), [[rnd(2, 3, 4)]],
         ops=('aten::affine_grid_generator',), transposed=False),
]

# Resampling: every mode with sizes and scale factors (integral and not), and its gradient.
IMG1, IMG2, IMG3 = [[rnd(2, 3, 7)]], [[rnd(2, 3, 5, 7)], [rnd(1, 2, 4, 4)]], [[rnd(1, 2, 3, 4, 5)]]
SPECS += [
    Spec('upsample_nearest1d', lambda x: F.interpolate(x, scale_factor=2.5), IMG1,
         ops=('aten::upsample_nearest1d',), grad_ops=('aten::upsample_nearest1d_backward',), transposed=False),
    Spec('upsample_nearest2d', lambda x: F.interpolate(x, scale_factor=2), IMG2,
         ops=('aten::upsample_nearest2d',), grad_ops=('aten::upsample_nearest2d_backward',), transposed=False),
    Spec('upsample_nearest2d_size', lambda x: F.interpolate(x, size=(6, 3)), IMG2,
         ops=('aten::upsample_nearest2d',), grad_ops=('aten::upsample_nearest2d_backward',), transposed=False),
    # (torch 1.13 records the .vec overload whole; torch 2.x decomposes it into the sized one)
    Spec('upsample_nearest3d', lambda x: F.interpolate(x, scale_factor=(2, 1.5, 0.5)), IMG3,
         ops=(('aten::upsample_nearest3d.vec' if TORCH_1 else 'aten::upsample_nearest3d'),),
         grad_ops=(('aten::upsample_nearest3d_backward.vec' if TORCH_1 else 'aten::upsample_nearest3d_backward'),),
         transposed=False),
    Spec('upsample_nearest3d_size', lambda x: A.upsample_nearest3d(x, [4, 5, 6]), IMG3,
         ops=('aten::upsample_nearest3d',), grad_ops=('aten::upsample_nearest3d_backward',), transposed=False),
    Spec('upsample_linear1d', lambda x: F.interpolate(x, scale_factor=1.7, mode='linear'), IMG1,
         ops=('aten::upsample_linear1d',), grad_ops=('aten::upsample_linear1d_backward',), transposed=False),
    Spec('upsample_bilinear2d', lambda x: F.interpolate(x, scale_factor=2, mode='bilinear'), IMG2,
         ops=('aten::upsample_bilinear2d',), grad_ops=('aten::upsample_bilinear2d_backward',), transposed=False),
    Spec('upsample_bilinear2d_aligned', lambda x: F.interpolate(x, size=(9, 4), mode='bilinear', align_corners=True),
         IMG2, ops=('aten::upsample_bilinear2d',), grad_ops=('aten::upsample_bilinear2d_backward',), transposed=False),
    Spec('upsample_bilinear2d_down', lambda x: F.interpolate(x, size=(3, 2), mode='bilinear'), IMG2,
         ops=('aten::upsample_bilinear2d',), grad_ops=('aten::upsample_bilinear2d_backward',), transposed=False),
    Spec('upsample_trilinear3d', lambda x: F.interpolate(x, scale_factor=2, mode='trilinear'), IMG3,
         ops=('aten::upsample_trilinear3d',), grad_ops=('aten::upsample_trilinear3d_backward',), transposed=False),
    Spec('pixel_shuffle', lambda x: F.pixel_shuffle(x, 2), [[rnd(2, 8, 3, 4)], [rnd(4, 3, 5)]],
         ops=('aten::pixel_shuffle',), grad_ops=('aten::pixel_unshuffle',), transposed=False),
    Spec('pixel_unshuffle', lambda x: F.pixel_unshuffle(x, 2), [[rnd(2, 3, 4, 6)]],
         ops=('aten::pixel_unshuffle',), grad_ops=('aten::pixel_shuffle',), transposed=False),
    Spec('avg_pool3d', lambda x: F.avg_pool3d(x, 2, stride=1, padding=1), [[rnd(1, 2, 3, 4, 5)], [rnd(2, 3, 4, 4)]],
         ops=('aten::avg_pool3d',), grad_ops=('aten::avg_pool3d_backward',), transposed=False),
    Spec('avg_pool3d_ceil', lambda x: F.avg_pool3d(x, (1, 2, 3), stride=2, ceil_mode=True, count_include_pad=False),
         [[rnd(1, 2, 3, 5, 7)]], ops=('aten::avg_pool3d',), grad_ops=('aten::avg_pool3d_backward',), transposed=False),
    Spec('adaptive_avg_pool3d', lambda x: F.adaptive_avg_pool3d(x, (1, 2, 2)), [[rnd(1, 2, 3, 4, 6)]],
         ops=('aten::_adaptive_avg_pool3d',), grad_ops=('aten::_adaptive_avg_pool3d_backward',), transposed=False),
    Spec('new_empty_strided', lambda x: x.new_empty_strided((2, 3), (3, 1)).fill_(1.5) * x.sum(), [[rnd(3, 4)]],
         ops=('aten::new_empty_strided',)),
]
for _kind in ('reflect', 'replicate'):
    _prefix = 'reflection' if _kind == 'reflect' else 'replication'
    SPECS += [
        Spec(f'{_prefix}_pad1d', (lambda k: lambda x: F.pad(x, (2, 1), mode=k))(_kind), IMG1,
             ops=(f'aten::{_prefix}_pad1d',), grad_ops=(f'aten::{_prefix}_pad1d_backward',), transposed=False),
        Spec(f'{_prefix}_pad2d', (lambda k: lambda x: F.pad(x, (1, 2, 3, 0), mode=k))(_kind), IMG2,
             ops=(f'aten::{_prefix}_pad2d',), grad_ops=(f'aten::{_prefix}_pad2d_backward',), transposed=False),
        Spec(f'{_prefix}_pad3d', (lambda k: lambda x: F.pad(x, (1, 1, 2, 0, 1, 2), mode=k))(_kind), IMG3,
             ops=(f'aten::{_prefix}_pad3d',), grad_ops=(f'aten::{_prefix}_pad3d_backward',), transposed=False),
    ]
