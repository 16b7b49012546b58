"""Differential test specs: one per lowered op family.

Each spec runs `fn` on CPU tensors and on copies on the xla device, and names the op-table ops the
forward (`ops`) and backward (`grad_ops`) must record: the test reads them out of the IR, so a spec
cannot claim coverage of an op it does not exercise.
"""
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
import torch.nn.functional as F

A = torch.ops.aten
FLOAT = (torch.float32, torch.float64)
INTS = (torch.int64, torch.int32)


def rnd(*shape, lo=-2.0, hi=2.0):
    def make(dtype, gen):
        if dtype.is_floating_point:
            return torch.empty(shape, dtype=dtype).uniform_(lo, hi, generator=gen)
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).bool()
        return torch.randint(int(lo), int(hi) + 1, shape, generator=gen).to(dtype)
    return make


def pos(*shape):
    return rnd(*shape, lo=0.5, hi=2.0)


def mask(*shape):
    return lambda dtype, gen: torch.randint(0, 2, shape, generator=gen).bool()


def idx(*shape, hi):
    return lambda dtype, gen: torch.randint(0, hi, shape, generator=gen)


def srt(*shape, lo=-2.0, hi=2.0):
    """rnd's values, sorted along the last dimension (a searchsorted sequence)."""
    return lambda dtype, gen: rnd(*shape, lo=lo, hi=hi)(dtype, gen).sort(-1)[0]


def fixed(tensor):
    return lambda dtype, gen: tensor.clone()


def _masked_scores(dtype, gen):
    """Attention scores with a row masked throughout (-inf) and a single masked entry."""
    x = rnd(3, 4, 5)(dtype, gen)
    x[1, 2, :] = -math.inf
    x[0, 1, 3] = -math.inf
    return x


# A boolean attention mask whose third query sees no key.
_ROW_MASK = torch.ones(4, 5, dtype=torch.bool)
_ROW_MASK[2] = False


@dataclass
class Spec:
    name: str
    fn: Callable
    cases: Sequence
    ops: Sequence[str] = ()
    grad_ops: Sequence[str] = ()
    dtypes: Sequence[torch.dtype] = FLOAT
    grad: bool = True
    atol: float = 1e-5
    rtol: float = 1.3e-6
    transposed: bool = True  # also run on non-contiguous (transposed) device inputs
    nograd: Sequence[int] = ()  # inputs that must not require grad (running stats, weights)


UNARY = [[rnd()], [rnd(0)], [rnd(5)], [rnd(3, 4)], [rnd(2, 3, 4)]]
UNARY_POS = [[pos()], [pos(0)], [pos(5)], [pos(3, 4)], [pos(2, 3, 4)]]
UNARY_UNIT = [[rnd(lo=-0.9, hi=0.9)], [rnd(5, lo=-0.9, hi=0.9)], [rnd(3, 4, lo=-0.9, hi=0.9)]]
BINARY = [[rnd(3, 4), rnd(3, 4)], [rnd(3, 4), rnd(4)], [rnd(2, 1, 4), rnd(3, 1)],
          [rnd(), rnd(3, 4)], [rnd(0, 3), rnd(3)]]
BINARY_POS_RHS = [[rnd(3, 4), pos(3, 4)], [rnd(3, 4), pos(4)], [rnd(2, 1, 4), pos(3, 1)],
                  [rnd(), pos(3, 4)], [rnd(0, 3), pos(3)]]
MATRIX = [[rnd(4, 5)], [rnd(3, 4, 5)], [rnd(2, 3, 4)]]
IMAGE = [[rnd(2, 3, 8, 8)], [rnd(1, 2, 7, 9)]]


def unary(name, fn, op, cases=UNARY, grad_ops=(), dtypes=FLOAT, grad=True, **kw):
    return Spec(name, fn, cases, ops=(op,), grad_ops=grad_ops, dtypes=dtypes, grad=grad, **kw)


def _lstm_outputs(x, h, c, params):
    """One LSTM layer with biases: its output and final states, summed into one tensor."""
    out, h_n, c_n = torch.lstm(x, (h, c), params, True, 1, 0.0, False, False, False)
    return out + h_n[0] + 2 * c_n[0]


def _gru_outputs(x, h, params):
    """One bidirectional GRU layer without biases: its output and final states."""
    out, h_n = torch.gru(x, h, params, False, 1, 0.0, False, True, False)
    return out + torch.cat([h_n[0], 2 * h_n[1]], -1)


SPECS = [
    # Elementwise, unary.
    unary('abs', torch.abs, 'aten::abs', dtypes=FLOAT + INTS),
    unary('neg', torch.neg, 'aten::neg', dtypes=FLOAT + INTS),
    unary('exp', torch.exp, 'aten::exp'),
    unary('log', torch.log, 'aten::log', cases=UNARY_POS),
    unary('log2', torch.log2, 'aten::log2', cases=UNARY_POS),
    unary('log10', torch.log10, 'aten::log10', cases=UNARY_POS),
    unary('log1p', torch.log1p, 'aten::log1p', cases=UNARY_POS),
    unary('expm1', torch.expm1, 'aten::expm1'),
    unary('sqrt', torch.sqrt, 'aten::sqrt', cases=UNARY_POS),
    unary('rsqrt', torch.rsqrt, 'aten::rsqrt', cases=UNARY_POS),
    unary('sin', torch.sin, 'aten::sin'),
    unary('cos', torch.cos, 'aten::cos'),
    unary('tan', torch.tan, 'aten::tan', cases=UNARY_UNIT),
    unary('asin', torch.asin, 'aten::asin', cases=UNARY_UNIT),
    unary('acos', torch.acos, 'aten::acos', cases=UNARY_UNIT),
    unary('atan', torch.atan, 'aten::atan'),
    unary('sinh', torch.sinh, 'aten::sinh'),
    unary('cosh', torch.cosh, 'aten::cosh'),
    unary('tanh', torch.tanh, 'aten::tanh', grad_ops=('aten::tanh_backward',)),
    unary('erf', torch.erf, 'aten::erf'),
    unary('erfc', torch.erfc, 'aten::erfc'),
    unary('floor', torch.floor, 'aten::floor'),
    unary('ceil', torch.ceil, 'aten::ceil'),
    unary('round', torch.round, 'aten::round'),
    unary('trunc', torch.trunc, 'aten::trunc'),
    unary('frac', torch.frac, 'aten::frac'),
    unary('sign', torch.sign, 'aten::sign', dtypes=FLOAT + INTS),
    unary('sgn', torch.sgn, 'aten::sgn'),
    unary('reciprocal', torch.reciprocal, 'aten::reciprocal', cases=UNARY_POS),
    unary('bitwise_not', torch.bitwise_not, 'aten::bitwise_not', dtypes=INTS + (torch.bool,)),
    unary('logical_not', torch.logical_not, 'aten::logical_not',
          dtypes=FLOAT + INTS + (torch.bool,)),
    unary('clamp', lambda x: torch.clamp(x, -0.5, 0.7), 'aten::clamp', dtypes=FLOAT + INTS),
    Spec('clamp.Tensor', lambda x, lo, hi: torch.clamp(x, lo, hi),
         [[rnd(3, 4), rnd(3, 4, lo=-2, hi=-0.5), rnd(4, lo=0.5, hi=2)]], ops=('aten::clamp.Tensor',)),
    unary('clamp_min', lambda x: torch.clamp_min(x, 0.3), 'aten::clamp_min'),
    unary('clamp_max', lambda x: torch.clamp_max(x, 0.3), 'aten::clamp_max'),
    unary('pow.Tensor_Scalar', lambda x: x ** 2.5, 'aten::pow.Tensor_Scalar', cases=UNARY_POS),
    Spec('pow.Tensor_Tensor', lambda x, y: x ** y, [[pos(3, 4), rnd(3, 4)], [pos(3, 4), rnd(4)]],
         ops=('aten::pow.Tensor_Tensor',)),
    unary('pow.Scalar', lambda x: A.pow.Scalar(2.5, x), 'aten::pow.Scalar'),
    # Activations: the forward op and its backward.
    unary('relu', torch.relu, 'aten::relu', grad_ops=('aten::threshold_backward',)),
    unary('threshold', lambda x: F.threshold(x, 0.2, -1.0), 'aten::threshold',
          grad_ops=('aten::threshold_backward',)),
    unary('sigmoid', torch.sigmoid, 'aten::sigmoid', grad_ops=('aten::sigmoid_backward',)),
    unary('gelu', F.gelu, 'aten::gelu', grad_ops=('aten::gelu_backward',)),
    unary('gelu_tanh', lambda x: F.gelu(x, approximate='tanh'), 'aten::gelu',
          grad_ops=('aten::gelu_backward',)),
    unary('silu', F.silu, 'aten::silu'),
    unary('leaky_relu', lambda x: F.leaky_relu(x, 0.1), 'aten::leaky_relu',
          grad_ops=('aten::leaky_relu_backward',)),
    # PReLU: one weight or one per channel (dim 1), images and a 1-D input, one element, empty,
    # negative and zero weights; the weight's gradient is summed down by autograd
    Spec('prelu', lambda x, w: F.prelu(x, w),
         [[rnd(2, 3, 4, 4), rnd(3)], [rnd(5, 3), rnd(1)], [rnd(6), rnd(1)], [rnd(1, 1), rnd(1, lo=-1, hi=0)],
          [rnd(0, 3), rnd(3)], [rnd(2, 3), lambda dtype, gen: torch.tensor([0.0, -0.5, 2.0], dtype=dtype)]],
         ops=('aten::_prelu_kernel',), grad_ops=('aten::_prelu_kernel_backward',)),
    unary('elu', F.elu, 'aten::elu', grad_ops=('aten::elu_backward',)),
    unary('hardtanh', F.hardtanh, 'aten::hardtanh', grad_ops=('aten::hardtanh_backward',)),
    unary('softplus', F.softplus, 'aten::softplus', grad_ops=('aten::softplus_backward',)),
    unary('hardsigmoid', F.hardsigmoid, 'aten::hardsigmoid',
          grad_ops=('aten::hardsigmoid_backward',)),
    unary('hardswish', F.hardswish, 'aten::hardswish', grad_ops=('aten::hardswish_backward',)),
    unary('mish', F.mish, 'aten::mish'),
    # Elementwise, binary and ternary (broadcasting, 0-dim and empty operands).
    Spec('add', lambda x, y: x + y, BINARY, ops=('aten::add.Tensor',), dtypes=FLOAT + INTS),
    Spec('add_alpha', lambda x, y: torch.add(x, y, alpha=2.5), BINARY, ops=('aten::add.Tensor',)),
    Spec('add_python_scalar', lambda x: x + 2.5, UNARY, ops=('aten::add.Tensor',)),
    Spec('add.Scalar', lambda x: A.add.Scalar(x, 2.5), UNARY, ops=('aten::add.Scalar',)),
    Spec('sub', lambda x, y: x - y, BINARY, ops=('aten::sub.Tensor',), dtypes=FLOAT + INTS),
    Spec('sub.Scalar', lambda x: A.sub.Scalar(x, 2.5), UNARY, ops=('aten::sub.Scalar',)),
    Spec('rsub', lambda x, y: torch.rsub(x, y), BINARY, ops=('aten::rsub.Tensor',)),
    Spec('rsub.Scalar', lambda x: A.rsub.Scalar(x, 2.5), UNARY, ops=('aten::rsub.Scalar',)),
    Spec('mul', lambda x, y: x * y, BINARY, ops=('aten::mul.Tensor',), dtypes=FLOAT + INTS),
    Spec('mul.Scalar', lambda x: A.mul.Scalar(x, 2.5), UNARY, ops=('aten::mul.Scalar',)),
    Spec('div', lambda x, y: x / y, BINARY_POS_RHS, ops=('aten::div.Tensor',)),
    Spec('div_int_promotes', lambda x, y: x / y, [[rnd(3, 4), pos(3, 4)]],
         ops=('aten::div.Tensor',), dtypes=INTS, transposed=False),
    Spec('div.Tensor_mode', lambda x, y: torch.div(x, y, rounding_mode='floor'),
         BINARY_POS_RHS, ops=('aten::div.Tensor_mode',), grad=False),
    Spec('div.Scalar', lambda x: A.div.Scalar(x, 2.5), UNARY, ops=('aten::div.Scalar',)),
    Spec('maximum', torch.maximum, BINARY, ops=('aten::maximum',), dtypes=FLOAT + INTS),
    Spec('minimum', torch.minimum, BINARY, ops=('aten::minimum',), dtypes=FLOAT + INTS),
    Spec('remainder', torch.remainder, BINARY_POS_RHS, ops=('aten::remainder.Tensor',),
         grad=False),
    Spec('remainder.Scalar', lambda x: torch.remainder(x, 0.7), UNARY,
         ops=('aten::remainder.Scalar',), grad=False),
    Spec('fmod', torch.fmod, BINARY_POS_RHS, ops=('aten::fmod.Tensor',), grad=False),
    Spec('fmod.Scalar', lambda x: torch.fmod(x, 0.7), UNARY, ops=('aten::fmod.Scalar',),
         grad=False),
    Spec('atan2', torch.atan2, BINARY_POS_RHS, ops=('aten::atan2',)),
    # copysign: broadcasting, zeros of both signs, infinities and NaNs carrying a sign bit in
    # `other` (their signs decide), a Scalar `other`
    Spec('copysign', torch.copysign, BINARY + [[rnd(6), lambda dtype, gen: torch.tensor(
        [0.0, -0.0, float('inf'), -float('inf'), float('nan'), -float('nan')], dtype=dtype)]],
         ops=('aten::copysign.Tensor',)),
    # sinc: 1 at 0, integers promoted to float, infinities and NaN (NaN, as eager)
    unary('sinc', torch.sinc, 'aten::sinc', cases=UNARY + [[lambda dtype, gen: torch.tensor(
        [0.0, 1.0, -2.5, 1e-4, float('inf'), float('nan')], dtype=dtype)]]),
    unary('sinc.int', lambda x: torch.sinc(x), 'aten::sinc', cases=[[rnd(3, 4)]], dtypes=INTS, grad=False),
    Spec('copysign.Scalar', lambda x: torch.copysign(x, -0.0) + torch.copysign(x, 2), UNARY,
         ops=('aten::copysign.Scalar',)),
    # linalg_cross along any dim of size 3, broadcasting; torch.cross names the dim.
    Spec('linalg_cross', lambda x, y: (torch.linalg.cross(x, y), torch.cross(x.transpose(0, -1), y.transpose(0, -1), dim=0)),
         [[rnd(4, 3), rnd(4, 3)], [rnd(2, 5, 3), rnd(1, 5, 3)], [rnd(1, 3), rnd(2, 3)]],
         ops=('aten::linalg_cross',), dtypes=FLOAT + INTS),
    # isin: every element against every test element (NaN is in nothing), a number, invert.
    Spec('isin', lambda e, t: (torch.isin(e, t), torch.isin(e, t, invert=True), torch.isin(e, 2), torch.isin(e, t[:0])),
         [[rnd(3, 4, lo=-3, hi=3), rnd(5, lo=-3, hi=3)], [rnd(6, lo=-3, hi=3), rnd(2, 2, lo=-3, hi=3)],
          [rnd(0, lo=-3, hi=3), rnd(3, lo=-3, hi=3)]], ops=('aten::isin.Tensor_Tensor', 'aten::isin.Tensor_Scalar'),
         dtypes=INTS, grad=False, transposed=False),  # eager's isin views a transposed input and fails
    Spec('isin.float', lambda e, t: (torch.isin(e, t), torch.isin(e.long(), t), torch.isin(e.long(), 2.5)),
         [[fixed(torch.tensor([1.0, 2.5, float('nan'), -0.0, float('inf'), 3.0])),
           fixed(torch.tensor([float('nan'), 0.0, 2.5, 3.0]))]],
         ops=('aten::isin.Tensor_Tensor', 'aten::isin.Tensor_Scalar'), grad=False),
    Spec('where', torch.where, [[mask(3, 4), rnd(3, 4), rnd(3, 4)], [mask(4), rnd(3, 4), rnd(3, 1)]],
         ops=('aten::where.self',), dtypes=FLOAT + INTS),
    Spec('addcmul', lambda x, y, z: torch.addcmul(x, y, z, value=0.5),
         [[rnd(3, 4), rnd(3, 4), rnd(4)]], ops=('aten::addcmul',)),
    Spec('addcdiv', lambda x, y, z: torch.addcdiv(x, y, z, value=0.5),
         [[rnd(3, 4), rnd(3, 4), pos(4)]], ops=('aten::addcdiv',)),
    Spec('lerp.Scalar', lambda x, y: torch.lerp(x, y, 0.3), [[rnd(3, 4), rnd(3, 4)]],
         ops=('aten::lerp.Scalar',)),
    Spec('lerp.Tensor', torch.lerp, [[rnd(3, 4), rnd(3, 4), rnd(4, lo=0, hi=1)]],
         ops=('aten::lerp.Tensor',)),
    Spec('masked_fill.Scalar', lambda x, m: x.masked_fill(m, -3.5), [[rnd(3, 4), mask(3, 4)]],
         ops=('aten::masked_fill.Scalar',), dtypes=FLOAT + INTS),
    Spec('masked_fill.Tensor', lambda x, m, v: x.masked_fill(m, v),
         [[rnd(3, 4), mask(3, 4), rnd()]], ops=('aten::masked_fill.Tensor',)),
]

for _name in ('eq', 'ne', 'lt', 'le', 'gt', 'ge'):
    _op = getattr(torch, _name)
    SPECS.append(Spec(_name, _op, BINARY, ops=(f'aten::{_name}.Tensor',), dtypes=FLOAT + INTS,
                      grad=False))
    SPECS.append(Spec(f'{_name}.Scalar', (lambda op: lambda x: op(x, 0.25))(_op), UNARY,
                      ops=(f'aten::{_name}.Scalar',), dtypes=FLOAT + INTS, grad=False))
for _name in ('logical_and', 'logical_or', 'logical_xor'):
    SPECS.append(Spec(_name, getattr(torch, _name), BINARY, ops=(f'aten::{_name}',),
                      dtypes=(torch.bool, torch.float32), grad=False))
for _name in ('bitwise_and', 'bitwise_or', 'bitwise_xor'):
    SPECS.append(Spec(_name, getattr(torch, _name), BINARY, ops=(f'aten::{_name}.Tensor',),
                      dtypes=INTS + (torch.bool,), grad=False))

REDUCE = [[rnd(3, 4)], [rnd(2, 3, 4)], [rnd(5)]]
SPECS += [
    Spec('sum', torch.sum, REDUCE + [[rnd()], [rnd(0, 3)]], ops=('aten::sum',),
         dtypes=FLOAT + INTS),
    Spec('sum.dim', lambda x: x.sum(0), REDUCE, ops=('aten::sum.dim_IntList',),
         dtypes=FLOAT + INTS),
    Spec('sum.dim_keepdim', lambda x: x.sum(-1, keepdim=True), REDUCE,
         ops=('aten::sum.dim_IntList',)),
    Spec('mean', torch.mean, REDUCE + [[rnd()]], ops=('aten::mean',)),
    Spec('mean.dim', lambda x: x.mean((0, -1)), REDUCE[:2], ops=('aten::mean.dim',)),
    Spec('prod', torch.prod, REDUCE, ops=('aten::prod',)),
    Spec('prod.dim', lambda x: x.prod(0), REDUCE, ops=('aten::prod.dim_int',)),
    Spec('amax', lambda x: x.amax(0), REDUCE, ops=('aten::amax',), dtypes=FLOAT + INTS),
    Spec('amin', lambda x: x.amin(-1), REDUCE, ops=('aten::amin',), dtypes=FLOAT + INTS),
    Spec('max', torch.max, REDUCE, ops=('aten::max',), dtypes=FLOAT + INTS),
    Spec('min', torch.min, REDUCE, ops=('aten::min',), dtypes=FLOAT + INTS),
    Spec('max.dim', lambda x: torch.max(x, 0), REDUCE, ops=('aten::max.dim',)),
    Spec('min.dim', lambda x: torch.min(x, -1, keepdim=True), REDUCE, ops=('aten::min.dim',)),
    Spec('argmax', lambda x: x.argmax(0), REDUCE, ops=('aten::argmax',), grad=False),
    Spec('argmin', lambda x: x.argmin(), REDUCE, ops=('aten::argmin',), grad=False),
    Spec('var', lambda x: x.var(0), REDUCE, ops=('aten::var.correction',)),
    Spec('std', lambda x: x.std(-1, unbiased=False), REDUCE, ops=('aten::std.correction',)),
    Spec('var_mean', lambda x: torch.var_mean(x, 0), REDUCE, ops=('aten::var_mean.correction',)),
    Spec('std_mean', lambda x: torch.std_mean(x, -1, correction=0, keepdim=True), REDUCE,
         ops=('aten::std_mean.correction',)),
    Spec('var_mean.all', lambda x: torch.stack(torch.var_mean(x)), [[rnd(3, 4)], [rnd(5)], [rnd(2, 3, 4)], [rnd(1)]],
         ops=('aten::var_mean.correction',)),
    Spec('linalg_vector_norm', lambda x: torch.linalg.vector_norm(x, 3, -1), REDUCE,
         ops=('aten::linalg_vector_norm',)),
    Spec('norm', lambda x: x.norm(), REDUCE, ops=('aten::norm.ScalarOpt_dim',)),
    Spec('norm.dim', lambda x: x.norm(dim=0), REDUCE, ops=('aten::norm.ScalarOpt_dim',)),
    Spec('aminmax', lambda x: torch.aminmax(x) + torch.aminmax(x, dim=-1) + torch.aminmax(x, dim=0, keepdim=True),
         REDUCE + [[rnd()], [fixed(torch.tensor([[1.0, float('nan')], [-float('inf'), 2.0]]))]],
         ops=('aten::aminmax',), dtypes=FLOAT + INTS, grad=False),
    Spec('count_nonzero', lambda x: (torch.count_nonzero(x), torch.count_nonzero(x, dim=-1),
                                     torch.count_nonzero(x, dim=(0, -1))),
         [[rnd(3, 4, lo=-1, hi=1)], [rnd(2, 3, 4, lo=-1, hi=1)], [rnd(0, 3)],
          [fixed(torch.tensor([[0.0, -0.0, float('nan')], [1e-30, 0.0, float('inf')]]))]],
         ops=('aten::count_nonzero.dim_IntList',), dtypes=FLOAT + INTS + (torch.bool,), grad=False),
    Spec('count_nonzero.dim', lambda x: (A.count_nonzero.default(x, -1), A.count_nonzero.default(x, None),
                                         A.count_nonzero.default(x, 0)),
         [[rnd(3, 4, lo=-1, hi=1)], [rnd(0, 3)], [rnd()]], ops=('aten::count_nonzero',), dtypes=FLOAT + INTS, grad=False),
    # renorm: slices along dim whose p-norm is above maxnorm scaled down to it; p = 1, 2, 3, inf.
    Spec('renorm', lambda x: (x.renorm(2, 0, 1.0), x.renorm(1, -1, 0.8), x.renorm(3, 0, 1.5),
                              x.renorm(float('inf'), 1, 0.5)),
         [[rnd(3, 4)], [rnd(2, 3, 4)], [rnd(4, 1)]], ops=('aten::renorm',)),
    Spec('logsumexp', lambda x: x.logsumexp(0), REDUCE, ops=('aten::logsumexp',)),
    Spec('any', torch.any, [[mask(3, 4)], [mask(0)]], ops=('aten::any',), dtypes=(torch.bool,),
         grad=False),
    Spec('any.dim', lambda x: x.any(0), [[mask(3, 4)]], ops=('aten::any.dim',),
         dtypes=(torch.bool,), grad=False),
    Spec('all', torch.all, [[mask(3, 4)], [mask(0)]], ops=('aten::all',), dtypes=(torch.bool,),
         grad=False),
    Spec('all.dim', lambda x: x.all(1), [[mask(3, 4)]], ops=('aten::all.dim',),
         dtypes=(torch.bool,), grad=False),
    Spec('cumsum', lambda x: x.cumsum(0), REDUCE, ops=('aten::cumsum',), dtypes=FLOAT + INTS),
    Spec('cumprod', lambda x: x.cumprod(-1), REDUCE, ops=('aten::cumprod',)),
    # Running extrema: the latest of equal values wins, a NaN wins and stays; values and indices.
    Spec('cummax', lambda x: torch.cummax(x, -1), REDUCE + [[rnd(0, 3)], [rnd()]], ops=('aten::cummax',),
         dtypes=FLOAT + INTS),
    Spec('cummin', lambda x: torch.cummin(x, 0), REDUCE + [[rnd(0, 3)], [rnd()]], ops=('aten::cummin',),
         dtypes=FLOAT + INTS),
    Spec('cummax.ties', lambda x: torch.cummax(x, 1) + torch.cummin(x, 0), [[fixed(torch.tensor(
        [[1.0, 3.0, 3.0, float('nan'), 2.0, 5.0], [-1.0, 0.0, -float('inf'), float('inf'), 1.0, float('inf')],
         [2.0, 2.0, float('nan'), float('nan'), 7.0, -3.0]]))]], ops=('aten::cummax', 'aten::cummin'), grad=False),
    # logcumsumexp: a running log-sum-exp, so terms far below the line's maximum still count.
    Spec('logcumsumexp', lambda x: torch.logcumsumexp(x, -1), REDUCE + [[rnd(0, 3)], [rnd()]],
         ops=('aten::_logcumsumexp',)),
    Spec('logcumsumexp.extremes', lambda x: torch.logcumsumexp(x, 1), [[fixed(torch.tensor(
        [[-1000.0, 0.0, -float('inf'), 1.0, float('inf'), 2.0], [-float('inf'), -float('inf'), 3.0, float('nan'), 1.0, 0.0],
         [float('inf'), float('inf'), -float('inf'), 1e30, -1e30, 5.0]]))]], ops=('aten::_logcumsumexp',), grad=False),
    Spec('sort', lambda x: torch.sort(x, -1), REDUCE, ops=('aten::sort',)),
    Spec('topk', lambda x: torch.topk(x, 2, -1), REDUCE, ops=('aten::topk',)),
    # Adaptive max pooling: windows of unequal sizes (7 -> 3 rows), more cells than inputs,
    # unbatched and empty inputs; values, plane offsets, and the gradient scattered to them.
    Spec('adaptive_max_pool2d', lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True) + (F.adaptive_max_pool2d(x, 1),),
         [[rnd(2, 3, 7, 9)], [rnd(1, 2, 3, 3)], [rnd(3, 8, 8)], [rnd(0, 2, 4, 4)]],
         ops=('aten::adaptive_max_pool2d',), grad_ops=('aten::adaptive_max_pool2d_backward',)),
    Spec('adaptive_max_pool2d.ties', lambda x: F.adaptive_max_pool2d(x, (2, 2), return_indices=True),
         [[fixed(torch.tensor([[[1.0, 5.0, 5.0, 2.0], [float('nan'), 0.0, float('nan'), 3.0], [4.0, 4.0, 1.0, -float('inf')]]]))]],
         ops=('aten::adaptive_max_pool2d',), grad=False),
    # F.grid_sample on images: bilinear and nearest, every padding mode, both corner alignments,
    # grid points outside [-1, 1] (reflection folds them back); gradients for input and grid.
    Spec('grid_sample', lambda x, g: tuple(F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=a)
                                           for m in ('bilinear', 'nearest') for p in ('zeros', 'border', 'reflection')
                                           for a in (False, True)),
         [[rnd(2, 3, 5, 6), rnd(2, 4, 7, 2, lo=-1.3, hi=1.3)], [rnd(1, 2, 1, 1), rnd(1, 3, 2, 2, lo=-3.0, hi=3.0)],
          [rnd(0, 2, 3, 3), rnd(0, 2, 2, 2)]],
         ops=('aten::grid_sampler_2d',), grad_ops=('aten::grid_sampler_2d_backward',), transposed=False),
    # Sliding-window patches: F.unfold (im2col) and F.fold (col2im), each the other's gradient:
    # padding, dilation, strides, unbatched inputs, empty batches, and whole tiles (a ViT's patchify).
    Spec('unfold', lambda x: (F.unfold(x, 3, padding=1), F.unfold(x, (3, 2), dilation=(2, 1), padding=(2, 1), stride=(2, 3)),
                              F.unfold(x, 2, stride=2)),
         [[rnd(2, 3, 8, 10)], [rnd(3, 6, 4)], [rnd(0, 2, 4, 4)]], ops=('aten::im2col',), grad_ops=('aten::col2im',)),
    Spec('fold', lambda c: (F.fold(c, (8, 8), 3, padding=1), F.fold(c[..., :20], (9, 10), (3, 3), dilation=(2, 1), padding=(2, 1), stride=(2, 3)),
                            F.fold(c[..., :16, :16], (8, 8), 2, stride=2)),
         [[rnd(2, 27, 64)], [rnd(27, 64)], [rnd(0, 27, 64)]], ops=('aten::col2im',), grad_ops=('aten::im2col',)),
    # Integers sort too (narrower ones and bool as int32): values, and the stable order's indices.
    Spec('sort.ints', lambda x: (torch.sort(x, -1)[0], torch.topk(x, 2, 0)[0]) + torch.sort(x.long(), dim=0, stable=True),
         [[rnd(3, 4, lo=-3, hi=3)], [rnd(5, 2, lo=-3, hi=3)]], ops=('aten::sort', 'aten::topk', 'aten::sort.stable'),
         dtypes=INTS + (torch.uint8, torch.int16, torch.int8), grad=False),
    Spec('sort.bool', lambda x: torch.sort(x, -1)[0], [[mask(3, 5)]], ops=('aten::sort',),
         dtypes=(torch.bool,), grad=False),
    # Order statistics, read from the stable sort: values and indices (random floats are distinct;
    # among equal integers eager's selection picks an index of its own, so those compare values).
    Spec('kthvalue', lambda x: torch.kthvalue(x, 2, -1) + torch.kthvalue(x, 1, 0, keepdim=True),
         REDUCE, ops=('aten::kthvalue',)),
    Spec('kthvalue.empty', lambda x: torch.kthvalue(x, 2, 0) + torch.median(x, 0) + torch.nanmedian(x, 0),
         [[rnd(3, 0)]], ops=('aten::kthvalue', 'aten::median.dim', 'aten::nanmedian.dim')),
    Spec('kthvalue.0dim', lambda x: torch.kthvalue(x, 1), [[rnd()]], ops=('aten::kthvalue',)),
    Spec('median.dim', lambda x: torch.median(x, -1) + torch.median(x, 0, keepdim=True),
         REDUCE + [[rnd()]], ops=('aten::median.dim',)),
    Spec('nanmedian.dim', lambda x: torch.nanmedian(x, -1) + torch.nanmedian(x, 0, keepdim=True),
         REDUCE + [[rnd()]], ops=('aten::nanmedian.dim',)),
    Spec('median', torch.median, REDUCE + [[rnd()], [rnd(0)], [rnd(2, 0)]], ops=('aten::median',)),
    Spec('nanmedian', torch.nanmedian, REDUCE + [[rnd()], [rnd(0)]], ops=('aten::nanmedian',)),
    Spec('median.ints', lambda x: (torch.median(x), torch.median(x, 0)[0], torch.kthvalue(x, 3, 1)[0],
                                   torch.nanmedian(x, 1)[0], torch.nanmedian(x)),
         [[rnd(3, 4, lo=-3, hi=3)], [rnd(5, 3, lo=-3, hi=3)]],
         ops=('aten::median', 'aten::median.dim', 'aten::kthvalue', 'aten::nanmedian.dim', 'aten::nanmedian'),
         dtypes=INTS + (torch.uint8, torch.int16), grad=False),
    # NaN: the largest value (kthvalue), a row's first NaN (median), skipped (nanmedian; a row of
    # NaNs is NaN, its index eager's choice, so not compared).
    Spec('median.nan', lambda x: (torch.median(x, 1) + torch.kthvalue(x[[0, 2, 3]], 4, 1) + torch.nanmedian(x[[0, 2, 3]], 1) +
                                  (torch.kthvalue(x, 2, 1)[0], torch.kthvalue(x, 4, 1)[0], torch.nanmedian(x, 1)[0], torch.median(x),
                                   torch.nanmedian(x), torch.nanmedian(x[1]))),
         [[fixed(torch.tensor([[3.0, float('nan'), 1.0, float('nan'), 2.0], [float('nan')] * 5,
                               [5.0, -float('inf'), 3.0, 2.0, float('inf')], [2.5, 0.5, 1.0, -1.0, float('nan')]]))]],
         ops=('aten::median.dim', 'aten::kthvalue', 'aten::nanmedian.dim', 'aten::median', 'aten::nanmedian'),
         grad=False),
    # mode: the most frequent value (the smallest of a tie), at its last occurrence; rows short
    # enough for eager's insertion sort, whose pick among equal values is then that one too.
    Spec('mode', lambda x: torch.mode(x, -1) + torch.mode(x, 0, keepdim=True), [[rnd(4, 6, lo=-2, hi=2)], [rnd(3, 1)], [rnd()]],
         ops=('aten::mode',), dtypes=INTS + (torch.uint8,), grad=False),
    Spec('mode.float', lambda x: torch.mode(x.round(), -1)[0], [[rnd(5, 7)], [rnd(2, 300)]], ops=('aten::mode',), grad=False),
    Spec('mode.grad', lambda x: torch.mode(x, 1), [[rnd(3, 5)], [rnd(0, 3)]], ops=('aten::mode',)),
    Spec('mode.nan', lambda x: torch.mode(x, 1), [[fixed(torch.tensor([[float('nan'), 1.0, 1.0, float('nan')], [2.0, float('nan'), 3.0, 0.0]]))]],
         ops=('aten::mode',), grad=False),
    Spec('mode.bool', lambda x: torch.mode(x, 1), [[mask(3, 5)]], ops=('aten::mode',), dtypes=(torch.bool,), grad=False),
    # Binary search, step for step as ATen's (so unsorted sequences and NaNs land where eager's
    # do): left and right, int32 results, 1-D sequences for any values, N-D row by row, empty.
    Spec('searchsorted', lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True),
                                       torch.searchsorted(s, v, side='right', out_int32=True)),
         [[srt(6), rnd(3, 4)], [srt(2, 5), rnd(2, 3)], [srt(1), rnd(4)], [srt(0), rnd(3)], [srt(7), rnd()],
          [rnd(6), rnd(5)], [srt(3, 4), rnd(3, 0)], [srt(4), rnd(0)]],
         ops=('aten::searchsorted.Tensor',), dtypes=FLOAT + INTS, grad=False),
    Spec('searchsorted.sorter', lambda s, v: torch.searchsorted(s, v, sorter=torch.argsort(s, -1)),
         [[rnd(6), rnd(3, 4)], [rnd(2, 5), rnd(2, 3)]], ops=('aten::searchsorted.Tensor', 'aten::sort'), grad=False),
    Spec('searchsorted.Scalar', lambda s: (torch.searchsorted(s, 0.5), torch.searchsorted(s, 1, right=True),
                                           torch.searchsorted(s, -1, out_int32=True)),
         [[srt(6)], [srt(1)], [srt(0)]], ops=('aten::searchsorted.Scalar',), dtypes=FLOAT + INTS, grad=False),
    Spec('searchsorted.promotion', lambda s, v: (torch.searchsorted(s.long(), v), torch.searchsorted(s, v.int()),
                                                 torch.searchsorted(s.long(), 0.5)),
         [[srt(6, lo=-4, hi=4), rnd(3, 4, lo=-4, hi=4)]],
         ops=('aten::searchsorted.Tensor', 'aten::searchsorted.Scalar'), grad=False),
    Spec('searchsorted.nan', lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True)),
         [[fixed(torch.tensor([1.0, 2.0, float('nan'), 3.0, float('nan')])),
           fixed(torch.tensor([[1.5, float('nan'), 3.0], [-float('inf'), float('inf'), 2.0]]))]],
         ops=('aten::searchsorted.Tensor',), grad=False),
    Spec('bucketize', lambda v, b: (torch.bucketize(v, b), torch.bucketize(v, b, right=True, out_int32=True)),
         [[rnd(3, 4), srt(5)], [rnd(), srt(3)], [rnd(0), srt(2)], [rnd(4), srt(0)]],
         ops=('aten::bucketize.Tensor',), dtypes=FLOAT + INTS, grad=False),
    Spec('bucketize.Scalar', lambda b: (torch.bucketize(0.5, b), torch.bucketize(1, b, right=True, out_int32=True)),
         [[srt(5)], [srt(0)]], ops=('aten::bucketize.Scalar',), dtypes=FLOAT + INTS, grad=False),
    # Matrix products.
    Spec('mm', torch.mm, [[rnd(3, 4), rnd(4, 5)], [rnd(0, 4), rnd(4, 2)]], ops=('aten::mm',)),
    Spec('matmul_2d_1d', torch.matmul, [[rnd(3, 4), rnd(4)]], ops=('aten::mv',)),
    Spec('addmm', lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0),
         [[rnd(5), rnd(3, 4), rnd(4, 5)]], ops=('aten::addmm',)),
    # One op each way (aten/linear_autograd.cc), for every input rank.
    Spec('linear', F.linear, [[rnd(6, 4), rnd(5, 4), rnd(5)], [rnd(2, 3, 4), rnd(5, 4)], [rnd(4), rnd(5, 4), rnd(5)]],
         ops=('txla::linear',), grad_ops=('txla::linear_backward',)),
    Spec('bmm', torch.bmm, [[rnd(2, 3, 4), rnd(2, 4, 5)]], ops=('aten::bmm',)),
    Spec('baddbmm', lambda b, x, y: torch.baddbmm(b, x, y, alpha=0.5),
         [[rnd(3, 5), rnd(2, 3, 4), rnd(2, 4, 5)]], ops=('aten::baddbmm',)),
    Spec('dot', torch.dot, [[rnd(5), rnd(5)]], ops=('aten::dot',)),
    Spec('mv', torch.mv, [[rnd(3, 4), rnd(4)]], ops=('aten::mv',)),
    Spec('addmv', torch.addmv, [[rnd(3), rnd(3, 4), rnd(4)]], ops=('aten::addmv',)),
    # Neural-network layers and losses.
    Spec('conv2d', lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1),
         [[rnd(2, 3, 8, 8), rnd(4, 3, 3, 3), rnd(4)]], ops=('aten::convolution',),
         grad_ops=('aten::convolution_backward',), atol=1e-4, transposed=False),
    Spec('conv2d_strided_grouped', lambda x, w: F.conv2d(x, w, stride=2, groups=2, dilation=1),
         [[rnd(1, 4, 9, 9), rnd(6, 2, 3, 3)]], ops=('aten::convolution',),
         grad_ops=('aten::convolution_backward',), atol=1e-4, transposed=False),
    Spec('conv_transpose2d', lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=1),
         [[rnd(1, 3, 5, 5), rnd(3, 2, 3, 3)]], ops=('aten::convolution',),
         grad_ops=('aten::convolution_backward',), atol=1e-4, transposed=False),
    Spec('conv1d', lambda x, w: F.conv1d(x, w, padding=2), [[rnd(2, 3, 10), rnd(4, 3, 5)]],
         ops=('aten::convolution',), grad_ops=('aten::convolution_backward',), atol=1e-4,
         transposed=False),
    Spec('batch_norm_train',
         lambda x, w, b: F.batch_norm(x, torch.zeros(3, dtype=x.dtype, device=x.device),
                                      torch.ones(3, dtype=x.dtype, device=x.device), w, b,
                                      training=True),
         [[rnd(4, 3, 5, 5), rnd(3), rnd(3)], [rnd(6, 3), rnd(3), rnd(3)]],
         ops=('aten::native_batch_norm',), grad_ops=('aten::native_batch_norm_backward',),
         atol=1e-4, transposed=False),
    # What AOTAutograd (torch.compile) records batch norm as: native_batch_norm's arguments.
    Spec('native_batch_norm_legit',
         lambda x, w, b: torch.ops.aten._native_batch_norm_legit(
             x, w, b, torch.zeros(3, dtype=x.dtype, device=x.device),
             torch.ones(3, dtype=x.dtype, device=x.device), True, 0.1, 1e-5)[0],
         [[rnd(4, 3, 5, 5), rnd(3), rnd(3)], [rnd(6, 3), rnd(3), rnd(3)]],
         ops=('aten::_native_batch_norm_legit',), grad_ops=('aten::native_batch_norm_backward',),
         atol=1e-4, transposed=False),
    Spec('batch_norm_eval', lambda x, m, v: F.batch_norm(x, m, v, training=False),
         [[rnd(4, 3, 5, 5), rnd(3), pos(3)]], ops=('aten::native_batch_norm',),
         transposed=False, nograd=(1, 2)),
    Spec('layer_norm', lambda x, w, b: F.layer_norm(x, (5,), w, b),
         [[rnd(4, 3, 5), rnd(5), rnd(5)]], ops=('aten::native_layer_norm',),
         grad_ops=('aten::native_layer_norm_backward',), atol=1e-4, transposed=False),
    # Windows that tile the input: max_pool2d's autograd (aten/max_pool_autograd.cc) finds the
    # gradient's maxima in the input again; with a margin, ATen's backward reads the indices.
    Spec('max_pool2d', lambda x: F.max_pool2d(x, 2), [[rnd(2, 3, 8, 8)], [rnd(3, 6, 4)]],
         ops=('aten::max_pool2d_with_indices',),
         grad_ops=('txla::max_pool2d_backward_from_input',)),
    # nn.LSTM / nn.GRU (aten/recurrent_layers.cc): each layer and direction one fused recurrence;
    # the output and the final states, with gradients for the input, states and weights.
    Spec('lstm', lambda x, h, c, wi, wh, bi, bh: _lstm_outputs(x, h, c, (wi, wh, bi, bh)),
         [[rnd(4, 3, 5), rnd(1, 3, 6), rnd(1, 3, 6), rnd(24, 5), rnd(24, 6), rnd(24), rnd(24)]],
         ops=('txla::rnn_layer',), grad_ops=('txla::rnn_layer_backward',), atol=1e-4),
    Spec('gru_bidirectional', lambda x, h, wi, wh, wi_r, wh_r: _gru_outputs(x, h, (wi, wh, wi_r, wh_r)),
         [[rnd(4, 3, 5), rnd(2, 3, 6), rnd(18, 5), rnd(18, 6), rnd(18, 5), rnd(18, 6)]],
         ops=('txla::rnn_layer',), grad_ops=('txla::rnn_layer_backward',), atol=1e-4),
    Spec('max_pool2d_margin', lambda x: F.max_pool2d(x, 2), [[rnd(1, 2, 7, 9)]],
         ops=('aten::max_pool2d_with_indices',),
         grad_ops=('aten::max_pool2d_with_indices_backward',)),
    Spec('max_pool2d_padded', lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
         IMAGE, ops=('aten::max_pool2d_with_indices',),
         grad_ops=('aten::max_pool2d_with_indices_backward',)),
    Spec('avg_pool2d', lambda x: F.avg_pool2d(x, 2, padding=1), IMAGE, ops=('aten::avg_pool2d',),
         grad_ops=('aten::avg_pool2d_backward',)),
    Spec('adaptive_avg_pool2d', lambda x: F.adaptive_avg_pool2d(x, (3, 2)), IMAGE,
         ops=('aten::_adaptive_avg_pool2d',), grad_ops=('aten::_adaptive_avg_pool2d_backward',)),
    Spec('softmax', lambda x: F.softmax(x, -1), REDUCE + [[rnd()], [fixed(torch.tensor(0.0))]],
         ops=('aten::_softmax',), grad_ops=('aten::_softmax_backward_data',)),
    Spec('log_softmax', lambda x: F.log_softmax(x, 0), REDUCE + [[rnd()]], ops=('aten::_log_softmax',),
         grad_ops=('aten::_log_softmax_backward_data',)),
    # scaled_dot_product_attention's softmax: 0 across a row that is -inf throughout (and NaN
    # where a NaN is), softmax elsewhere.
    Spec('_safe_softmax', lambda x: A._safe_softmax(x, -1),
         [[_masked_scores], [rnd(3, 4)], [rnd()], [fixed(torch.tensor(-math.inf))], [rnd(0, 3)]],
         ops=('aten::_safe_softmax',), grad_ops=('aten::_softmax_backward_data',)),
    Spec('_safe_softmax.dim0_dtype', lambda x: A._safe_softmax(x, 0, torch.float64), [[_masked_scores]],
         ops=('aten::_safe_softmax',), dtypes=(torch.float32,)),
    # 4-D attention takes the fused op each way (aten/attention_autograd.cc); a mask that needs
    # a gradient takes the math path.
    Spec('scaled_dot_product_attention.fused',
         lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
         [[rnd(2, 3, 5, 4), rnd(2, 3, 7, 4), rnd(2, 3, 7, 4), rnd(2, 1, 5, 7)]], nograd=(3,),
         ops=('aten::_scaled_dot_product_flash_attention_for_cpu',),
         grad_ops=('aten::_scaled_dot_product_flash_attention_for_cpu_backward',)),
    Spec('scaled_dot_product_attention.masked_row',
         lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
         [[rnd(2, 4, 3), rnd(2, 5, 3), rnd(2, 5, 3), fixed(_ROW_MASK)]],
         ops=('aten::_safe_softmax',), grad_ops=('aten::_softmax_backward_data',), transposed=False),
    Spec('nll_loss', lambda x, t: F.nll_loss(x, t), [[rnd(6, 5), idx(6, hi=5)]],
         ops=('aten::nll_loss_forward',), grad_ops=('aten::nll_loss_backward',)),
    # Infinite and NaN log-probabilities of classes the target does not pick leave the loss
    # what the picked ones make it (0 * inf was NaN).
    Spec('nll_loss.non_finite', lambda x, t: F.nll_loss(x, t) + F.nll_loss(x, t, reduction='none').sum(),
         [[fixed(torch.tensor([[1.0, math.inf], [-math.inf, 2.0]])), fixed(torch.tensor(target))]
          for target in ([0, 0], [0, 1], [1, 0], [1, 1])]
         + [[fixed(torch.tensor([[1.0, math.nan], [math.nan, 2.0]])), fixed(torch.tensor(target))]
            for target in ([0, 0], [0, 1], [1, 0], [1, 1])],
         ops=('aten::nll_loss_forward',), grad_ops=('aten::nll_loss_backward',), transposed=False),
    Spec('nll_loss_weighted_sum',
         lambda x, t, w: F.nll_loss(x, t, weight=w, reduction='sum', ignore_index=2),
         [[rnd(6, 5), idx(6, hi=5), pos(5)]], ops=('aten::nll_loss_forward',),
         grad_ops=('aten::nll_loss_backward',), transposed=False, nograd=(2,)),
    Spec('nll_loss2d', lambda x, t: F.nll_loss(x, t), [[rnd(2, 4, 3, 3), idx(2, 3, 3, hi=4)]],
         ops=('aten::nll_loss2d_forward',), grad_ops=('aten::nll_loss2d_backward',),
         transposed=False),
    Spec('cross_entropy', lambda x, t: F.cross_entropy(x, t), [[rnd(6, 5), idx(6, hi=5)]],
         ops=('aten::_log_softmax', 'aten::nll_loss_forward'),
         grad_ops=('aten::_log_softmax_backward_data',)),
    # Multi-class margin loss: p 1 and 2, a margin, class weights, each reduction, a single
    # sample (1-D, its unreduced loss 0-dim); a NaN score counts nothing, as in ATen's loop.
    Spec('multi_margin_loss', lambda x, y, w: (F.multi_margin_loss(x, y), F.multi_margin_loss(x, y, p=2, margin=0.7, reduction='sum'),
                                               F.multi_margin_loss(x, y, weight=w, reduction='none')),
         [[rnd(5, 4), idx(5, hi=4), pos(4)], [rnd(1, 3), idx(1, hi=3), pos(3)]],
         ops=('aten::multi_margin_loss',), grad_ops=('aten::multi_margin_loss_backward',), nograd=(2,), transposed=False),
    Spec('multi_margin_loss.single', lambda x, y: (F.multi_margin_loss(x, y), F.multi_margin_loss(x, y, reduction='none')),
         [[rnd(6), idx(hi=6)]], ops=('aten::multi_margin_loss',), grad_ops=('aten::multi_margin_loss_backward',)),
    Spec('multi_margin_loss.nan', lambda x, y: F.multi_margin_loss(x, y, reduction='none'),
         [[fixed(torch.tensor([[0.5, float('nan'), -1.0], [float('nan'), 2.0, 1.0], [0.0, 0.2, -0.2]])),
           fixed(torch.tensor([0, 0, 2]))]], ops=('aten::multi_margin_loss',), grad_ops=('aten::multi_margin_loss_backward',)),
    Spec('mse_loss', F.mse_loss, [[rnd(3, 4), rnd(3, 4)]], ops=('aten::mse_loss',),
         grad_ops=('aten::mse_loss_backward',)),
    Spec('binary_cross_entropy', lambda x, t: F.binary_cross_entropy(x, t),
         [[rnd(3, 4, lo=0.05, hi=0.95), rnd(3, 4, lo=0, hi=1)]],
         ops=('aten::binary_cross_entropy',), grad_ops=('aten::binary_cross_entropy_backward',)),
    Spec('smooth_l1_loss', F.smooth_l1_loss, [[rnd(3, 4), rnd(3, 4)]],
         ops=('aten::smooth_l1_loss',), grad_ops=('aten::smooth_l1_loss_backward',)),
    # Huber: quadratic inside delta, linear outside; every reduction, a delta other than 1.
    Spec('huber_loss', lambda x, t: (F.huber_loss(x, t), F.huber_loss(x, t, reduction='sum', delta=0.4),
                                     F.huber_loss(x, t, reduction='none', delta=2.5)),
         [[rnd(3, 4), rnd(3, 4)], [rnd(5), rnd(5)], [rnd(2, 3), rnd(3)]],
         ops=('aten::huber_loss',), grad_ops=('aten::huber_loss_backward',)),
    Spec('embedding', lambda w, i: F.embedding(i, w), [[rnd(10, 3), idx(4, 2, hi=10)]],
         ops=('aten::embedding',), grad_ops=('aten::embedding_dense_backward',),
         transposed=False),
    # Views, recorded as the copies functionalization turns them into.
    Spec('view', lambda x: x.view(4, 3), [[rnd(3, 4)], [rnd(2, 6)]], ops=('aten::view_copy',),
         transposed=False),
    Spec('view_infer', lambda x: x.view(-1), [[rnd(3, 4)], [rnd(0, 2)]], ops=('aten::view_copy',),
         transposed=False),
    Spec('view.dtype', lambda x: x.view(torch.int32), [[rnd(3, 4)]], dtypes=(torch.float32,),
         ops=('aten::view_copy.dtype',), grad=False),
    Spec('_unsafe_view', lambda x: A._unsafe_view(x, [2, 6]), [[rnd(3, 4)]],
         ops=('aten::_unsafe_view',), grad=False, transposed=False),
    Spec('reshape', lambda x: x.reshape(2, 6), [[rnd(3, 4)]], ops=('aten::view_copy',),
         transposed=False),
    Spec('_reshape_alias', lambda x: A._reshape_alias(x, [2, 6], [6, 1]), [[rnd(3, 4)]],
         ops=('aten::_reshape_alias_copy',), transposed=False, grad=False),
    Spec('slice', lambda x: x[1:3], [[rnd(4, 5)], [rnd(4)]], ops=('aten::slice_copy.Tensor',),
         grad_ops=('aten::slice_backward',)),
    Spec('slice_step_negative_start', lambda x: x[:, -3::2], [[rnd(4, 5)]],
         ops=('aten::slice_copy.Tensor',), grad_ops=('aten::slice_backward',)),
    Spec('select', lambda x: x[1], [[rnd(4, 5)], [rnd(3)]], ops=('aten::select_copy.int',),
         grad_ops=('aten::select_backward',)),
    Spec('transpose', lambda x: x.transpose(0, 1), [[rnd(3, 4)], [rnd(2, 3, 4)]],
         ops=('aten::transpose_copy.int',)),
    Spec('t', lambda x: x.t(), [[rnd(3, 4)], [rnd(3)]], ops=('aten::t_copy',)),
    Spec('permute', lambda x: x.permute(2, 0, 1), [[rnd(2, 3, 4)]], ops=('aten::permute_copy',)),
    Spec('expand', lambda x: x.expand(3, 4), [[rnd(4)], [rnd(3, 1)]], ops=('aten::expand_copy',)),
    Spec('unsqueeze', lambda x: x.unsqueeze(-1), [[rnd(3, 4)], [rnd()]],
         ops=('aten::unsqueeze_copy',)),
    Spec('squeeze', lambda x: x.squeeze(), [[rnd(3, 1, 4)]], ops=('aten::squeeze_copy',),
         transposed=False),
    Spec('squeeze.dim', lambda x: x.squeeze(1), [[rnd(3, 1, 4)]], ops=('aten::squeeze_copy.dim',),
         transposed=False),
    Spec('diagonal', lambda x: x.diagonal(), [[rnd(4, 4)], [rnd(3, 5)]],
         ops=('aten::diagonal_copy',), grad_ops=('aten::diagonal_backward',)),
    # torch.diag of a vector and diag_embed at offsets either side, batched, one element, empty
    Spec('diag_embed', lambda x: torch.diag(x) if x.dim() == 1 else torch.diag_embed(x, 1, 0, -1),
         [[rnd(4)], [rnd(1)], [rnd(0)], [rnd(2, 3)]], ops=('aten::diag_embed',),
         grad_ops=('aten::diagonal_copy',), transposed=False),
    Spec('trace', torch.trace, [[rnd(4, 4)], [rnd(3, 5)], [rnd(5, 2)], [rnd(1, 1)], [rnd(0, 3)]],
         ops=('aten::trace',), dtypes=FLOAT + INTS),
    Spec('diag_embed.offset', lambda x: torch.diag_embed(x, -2, 2, 0),
         [[rnd(2, 3)], [rnd(3, 2, 4)]], ops=('aten::diag_embed',), grad_ops=('aten::diagonal_copy',)),
    # alias and detach share the argument's value: nothing is recorded (see test_lazy.py).
    Spec('alias', lambda x: A.alias(x), [[rnd(3, 4)]], grad=False),
    Spec('detach', lambda x: x.detach() * 1.5, [[rnd(3, 4)]], grad=False),
    Spec('detach_copy', lambda x: A.detach_copy(x), [[rnd(3, 4)]], grad=False),
    Spec('as_strided', lambda x: x.as_strided((2, 2), (1, 2), 1), [[rnd(3, 4)]],
         ops=('aten::as_strided_copy',), transposed=False),
    Spec('unfold', lambda x: x.unfold(0, 2, 1), [[rnd(5, 3)]], ops=('aten::unfold_copy',)),
    Spec('split', lambda x: torch.split(x, 2), [[rnd(5, 3)]], ops=('aten::split_copy.Tensor',)),
    Spec('split_with_sizes', lambda x: torch.split(x, [1, 4]), [[rnd(5, 3)]],
         ops=('aten::split_with_sizes_copy',)),
    Spec('unbind', lambda x: torch.unbind(x, 1), [[rnd(5, 3)]], ops=('aten::unbind_copy.int',)),
    # Joining, indexing, reshuffling.
    Spec('cat', lambda x, y: torch.cat([x, y], 0), [[rnd(2, 3), rnd(4, 3)], [rnd(0, 3), rnd(1, 3)]],
         ops=('aten::cat',), dtypes=FLOAT + INTS),
    Spec('stack', lambda x, y: torch.stack([x, y], 1), [[rnd(2, 3), rnd(2, 3)]],
         ops=('aten::stack',)),
    Spec('index_select', lambda x, i: x.index_select(1, i), [[rnd(3, 5), idx(4, hi=5)]],
         ops=('aten::index_select',), dtypes=FLOAT + INTS),
    Spec('gather', lambda x, i: x.gather(1, i), [[rnd(3, 5), idx(3, 2, hi=5)]],
         ops=('aten::gather',), transposed=False),
    Spec('scatter.src', lambda x, i, s: x.scatter(1, i, s),
         [[rnd(3, 5), fixed(torch.tensor([[0, 1], [2, 3], [4, 0]])), rnd(3, 2)]],
         ops=('aten::scatter.src',), transposed=False),
    Spec('scatter.value', lambda x, i: x.scatter(1, i, 2.5),
         [[rnd(3, 5), fixed(torch.tensor([[0, 1], [2, 3], [4, 0]]))]],
         ops=('aten::scatter.value',), transposed=False),
    Spec('scatter_add', lambda x, i, s: x.scatter_add(1, i, s),
         [[rnd(3, 5), idx(3, 4, hi=5), rnd(3, 4)]], ops=('aten::scatter_add',), transposed=False),
    # A 0-dim tensor indexes as a one-element vector (cummax's gradient scatters into one).
    Spec('gather_scatter.0d', lambda x, i, s: (x.gather(0, i), x.gather(-1, i.reshape(1)), x.scatter(0, i, s),
                                               x.scatter_add(0, i, s), x.scatter(0, i, 1.5),
                                               x.scatter_reduce(0, i, s, 'sum')),
         [[rnd(), fixed(torch.tensor(0)), rnd()]],
         ops=('aten::gather', 'aten::scatter.src', 'aten::scatter_add', 'aten::scatter.value',
              'aten::scatter_reduce.two'), transposed=False),
    Spec('scatter_reduce', lambda x, i, s: x.scatter_reduce(1, i, s, 'amax'),
         [[rnd(3, 5), idx(3, 4, hi=5), rnd(3, 4)]], ops=('aten::scatter_reduce.two',),
         grad=False, transposed=False),
    Spec('index', lambda x, i: x[i], [[rnd(5, 3), idx(4, hi=5)]], ops=('aten::index.Tensor',),
         dtypes=FLOAT + INTS),
    Spec('index_put', lambda x, i, v: x.index_put((i,), v, accumulate=True),
         [[rnd(5, 3), idx(4, hi=5), rnd(4, 3)]], ops=('aten::index_put',), transposed=False),
    Spec('index_add', lambda x, i, s: x.index_add(0, i, s, alpha=2),
         [[rnd(5, 3), idx(4, hi=5), rnd(4, 3)]], ops=('aten::index_add',), transposed=False),
    Spec('index_add.0d', lambda x, i, s: x.index_add(0, i, s), [[rnd(), fixed(torch.tensor([0])), rnd()]],
         ops=('aten::index_add',), transposed=False),
    # index_copy: rows replaced (distinct indices: repeated ones leave eager's order unspecified);
    # its gradient is index_fill and index_select.
    Spec('index_copy', lambda x, i, s: x.index_copy(1, i, s),
         [[rnd(3, 5), fixed(torch.tensor([4, 0, 2])), rnd(3, 3)], [rnd(2, 4, 3), fixed(torch.tensor([3])), rnd(2, 1, 3)],
          [rnd(3, 5), fixed(torch.tensor([], dtype=torch.long)), rnd(3, 0)]],
         ops=('aten::index_copy',), grad_ops=('aten::index_fill.int_Scalar',), dtypes=FLOAT + INTS, transposed=False),
    Spec('index_copy.0d', lambda x, i, s: x.index_copy(0, i, s), [[rnd(), fixed(torch.tensor([0])), rnd()]],
         ops=('aten::index_copy',), transposed=False),
    # index_fill: negative indices count from the end; repeated ones are harmless; a 0-dim value tensor
    # (non-negative indices there: eager's gradient for the value reads them with index_select).
    Spec('index_fill', lambda x, i: (x.index_fill(1, i, -1.5), x.index_fill(0, i[2:3], 7)),
         [[rnd(3, 5), fixed(torch.tensor([-1, 0, 2, 0]))], [rnd(3, 5), fixed(torch.tensor([], dtype=torch.long))]],
         ops=('aten::index_fill.int_Scalar',), dtypes=FLOAT + INTS),
    Spec('index_fill.Tensor', lambda x, i, v: x.index_fill(0, i, v),
         [[rnd(4, 3), fixed(torch.tensor([1, 3])), rnd()], [rnd(), fixed(torch.tensor([0])), rnd()]],
         ops=('aten::index_fill.int_Tensor',), transposed=False),
    # take: the flattened tensor at any-shaped indices, negatives from the end.
    Spec('take', lambda x, i: x.take(i),
         [[rnd(3, 4), fixed(torch.tensor([[0, -1], [7, 11], [-12, 3]]))], [rnd(5), fixed(torch.tensor(2))],
          [rnd(3, 4), fixed(torch.tensor([], dtype=torch.long))], [rnd(), fixed(torch.tensor([0, -1]))]],
         ops=('aten::take',), dtypes=FLOAT + INTS),
    # put: the flattened tensor written at any-shaped indices (distinct ones: eager leaves the
    # order of repeats unspecified), or added to (repeats accumulate); negatives from the end.
    Spec('put', lambda x, i, s: (x.put(i, s), x.put(i, s, accumulate=True), x.clone().put_(i, s * 2, True)),
         [[rnd(3, 4), fixed(torch.tensor([[0, -1], [7, 5], [-11, 3]])), rnd(3, 2)],
          [rnd(5), fixed(torch.tensor(2)), rnd()], [rnd(3, 4), fixed(torch.tensor([], dtype=torch.long)), rnd(0)]],
         ops=('aten::put',), dtypes=FLOAT + INTS, transposed=False),
    Spec('put.repeats', lambda x, i, s: x.put(i, s, accumulate=True),
         [[rnd(2, 3), fixed(torch.tensor([1, 1, -5, 4, 1])), rnd(5)]], ops=('aten::put',)),
    Spec('flip', lambda x: x.flip(0), [[rnd(3, 4)]], ops=('aten::flip',)),
    Spec('rot90', lambda x: (x.rot90(), x.rot90(2), x.rot90(3), x.rot90(-1), x.rot90(4), x.rot90(1, (-1, 0))),
         [[rnd(3, 4)], [rnd(2, 3, 5)], [rnd(0, 2)]], ops=('aten::rot90',), dtypes=FLOAT + INTS),
    Spec('roll', lambda x: x.roll(1, 1), [[rnd(3, 4)]], ops=('aten::roll',)),
    Spec('repeat', lambda x: x.repeat(2, 3), [[rnd(3, 4)], [rnd(2)]], ops=('aten::repeat',)),
    Spec('pad', lambda x: F.pad(x, (1, 2)), [[rnd(3, 4)]], ops=('aten::constant_pad_nd',)),
    Spec('tril', lambda x: x.tril(), [[rnd(4, 4)]], ops=('aten::tril',)),
    Spec('triu', lambda x: x.triu(1), [[rnd(4, 5)]], ops=('aten::triu',)),
    # Fills, copies, casts, factories.
    Spec('fill.Scalar', lambda x: x.detach().clone().fill_(2.5), [[rnd(3, 4)]],
         ops=('aten::fill.Scalar',), grad=False),
    Spec('fill.Tensor', lambda x, v: x.detach().clone().fill_(v), [[rnd(3, 4), rnd()]],
         ops=('aten::fill.Tensor',), grad=False),
    Spec('zero_', lambda x: x.detach().clone().zero_(), [[rnd(3, 4)]], ops=('aten::zero',),
         grad=False),
    Spec('copy_broadcast', lambda x, y: x.detach().clone().copy_(y), [[rnd(3, 4), rnd(4)]],
         ops=('aten::copy',), grad=False),
    Spec('to_dtype', lambda x: x.to(torch.float64) * 2, [[rnd(3, 4)]], ops=('aten::_to_copy',),
         dtypes=(torch.float32,) + INTS, grad=False),
    Spec('zeros', lambda x: x + torch.zeros(3, 4, device=x.device), [[rnd(3, 4)]],
         ops=('aten::zeros',)),
    Spec('ones', lambda x: x * torch.ones(3, 4, device=x.device), [[rnd(3, 4)]],
         ops=('aten::ones',)),
    Spec('full', lambda x: x * torch.full((3, 4), 2.5, device=x.device), [[rnd(3, 4)]],
         ops=('aten::full',)),
    Spec('arange', lambda x: x * torch.arange(0.5, 2.5, 0.5, device=x.device, dtype=x.dtype),
         [[rnd(4)], [rnd(3, 4)]], ops=('aten::arange.start_step',)),
    Spec('arange_int_dtype', lambda x: x * torch.arange(7, -5, -3, device=x.device, dtype=x.dtype),
         [[rnd(4)], [rnd(2, 4)]], ops=('aten::arange.start_step',), dtypes=FLOAT + INTS),
    Spec('arange_end', lambda x: x + torch.arange(4, device=x.device), [[rnd(4)], [rnd(2, 4)]],
         ops=('aten::arange.start_step',), dtypes=FLOAT + INTS),
    Spec('eye', lambda x: x @ torch.eye(4, device=x.device, dtype=x.dtype), [[rnd(3, 4)], [rnd(0, 4)]],
         ops=('aten::eye',)),
    Spec('eye_dtype', lambda x: x * torch.eye(4, device=x.device, dtype=torch.float64).to(x.dtype),
         [[rnd(4, 4)], [rnd(2, 4, 4)]], ops=('aten::eye',), dtypes=FLOAT + INTS, grad=False),
    Spec('eye_m', lambda x: x * torch.eye(3, 4, device=x.device, dtype=x.dtype), [[rnd(3, 4)]],
         ops=('aten::eye.m',), dtypes=FLOAT + INTS, grad=False),
    # LSTM and GRU cells chunk their gates with these.
    Spec('unsafe_chunk', lambda x: torch.stack(x.unsafe_chunk(2, 1)) * 2, [[rnd(3, 4)], [rnd(2, 6, 3)]],
         ops=('aten::unsafe_split.Tensor',)),
    Spec('unsafe_split_with_sizes', lambda x: x.unsafe_split_with_sizes([1, 3], 1)[1] * 2,
         [[rnd(3, 4)], [rnd(2, 4, 3)]], ops=('aten::unsafe_split_with_sizes',)),
    Spec('group_norm', lambda x, w, b: F.group_norm(x, 2, w, b), [[rnd(2, 4, 3, 3), rnd(4), rnd(4)],
                                                                  [rnd(3, 6, 5), rnd(6), rnd(6)]],
         ops=('aten::native_group_norm',), grad_ops=('aten::native_group_norm_backward',), atol=1e-4, rtol=1e-4),
    Spec('group_norm_no_affine', lambda x: F.group_norm(x * 3, 1), [[rnd(2, 3, 4)], [rnd(1, 4, 2, 2)]],
         ops=('aten::native_group_norm',), grad_ops=('aten::native_group_norm_backward',), atol=1e-4, rtol=1e-4),
]


def _write_through_view(view, update):
    """fn(x, y): writes y into a view of a copy of x in place; functionalization records the
    view's inverse (a *_scatter op) to apply the write to the base."""
    def fn(x, y):
        z = x * 1
        update(view(z), y)
        return z
    return fn


SPECS += [
    Spec('write_slice', _write_through_view(lambda z: z[1:3], lambda v, y: v.add_(y)),
         [[rnd(4, 5), rnd(2, 5)]], ops=('aten::slice_scatter',)),
    Spec('write_select', _write_through_view(lambda z: z[:, 1], lambda v, y: v.mul_(y)),
         [[rnd(4, 5), rnd(4)]], ops=('aten::select_scatter',)),
    Spec('write_diagonal', _write_through_view(lambda z: z.diagonal(), lambda v, y: v.copy_(y)),
         [[rnd(4, 4), rnd(4)]], ops=('aten::diagonal_scatter',)),
    Spec('write_as_strided',
         _write_through_view(lambda z: z.as_strided((2, 2), (1, 2), 1), lambda v, y: v.sub_(y)),
         [[rnd(3, 4), rnd(2, 2)]], ops=('aten::as_strided_scatter',), transposed=False),
]

# Collectives over the one replica a test process has: the identity, on both sides (eager runs
# the ops' CPU kernels through the same transport). Multi-replica semantics are in
# test_distributed.py.
_TXLA = torch.ops.txla
COLLECTIVE_CASES = [[rnd(5)], [rnd(3, 4)], [rnd(2, 3, 4)], [rnd(0, 3)]]
SPECS += [
    Spec('all_reduce', lambda x: _TXLA.all_reduce(x * 2, 3, [], 0) + 1, UNARY,
         ops=('txla::all_reduce',), dtypes=FLOAT + INTS, grad=False),
    Spec('all_reduce_in_group', lambda x: _TXLA.all_reduce(x, 1, [0], 1), COLLECTIVE_CASES,
         ops=('txla::all_reduce',), dtypes=FLOAT + INTS, grad=False),
    Spec('all_gather_last_dim', lambda x: _TXLA.all_gather(x, -1, [0], 1), COLLECTIVE_CASES,
         ops=('txla::all_gather',), dtypes=FLOAT + INTS, grad=False),
    # Outside SPMD a sharding annotation is the identity (SPMD's own tests: test_spmd.py).
    Spec('custom_sharding', lambda x: _TXLA.custom_sharding(x * 2, '{replicated}') + 1, UNARY,
         ops=('txla::custom_sharding',), dtypes=FLOAT + INTS, grad=False),
    Spec('reduce_scatter_first_dim', lambda x: _TXLA.reduce_scatter(x + 1, 0, 0, [0], 1), COLLECTIVE_CASES,
         ops=('txla::reduce_scatter',), dtypes=FLOAT + INTS, grad=False),
]

# Foreach ops (one node per call, each position lowered as its element op): every overload the
# device records, on lists of several shapes (0-dim and empty included), a list broadcasting
# against the first, scalar lists holding the constants 0 and 1 beside parameters.
_FE_SAME = [rnd(3, 4), rnd(5), rnd(), rnd(0, 2)]
_FE_POS = [pos(3, 4), pos(5), pos(), pos(0, 2)]


def _fe_cases(lists, positive=(), broadcast=True):
    """Cases of `lists` tensor lists (the positions of list k positive when k is in `positive`)."""
    same = [m for k in range(lists) for m in (_FE_POS if k in positive else _FE_SAME)]
    cases = [same]
    if broadcast and lists > 1:  # the other lists' entries broadcast against self's
        make = [pos if k in positive else rnd for k in range(lists)]
        cases.append([make[0](2, 3)] + [make[k](3) for k in range(1, lists)])
    return cases


def _foreach(op, lists, *extra, scalars=None, **kwargs):
    """fn over a case's tensors split into `lists` lists; `scalars(n)` appends a Scalar list."""
    def fn(*ts):
        n = len(ts) // lists
        split = [list(ts[k * n:(k + 1) * n]) for k in range(lists)]
        more = (scalars(n),) if scalars else ()
        return op(*split, *extra, *more, **kwargs)
    return fn


def _factors(n):
    return [(1.0, 0.0, 2.5, -0.5)[i % 4] for i in range(n)]


def _zeroed(*ts):
    """_foreach_zero_, what Python reaches (functionalization records the functional op)."""
    ts = [t.clone() for t in ts]
    torch._foreach_zero_(ts)
    return ts


def _fe_spec(name, fn, cases, **kw):
    return Spec(f'foreach.{name}', fn, cases, ops=(f'aten::_foreach_{name}',), **kw)


SPECS += [
    _fe_spec('add.Scalar', _foreach(torch._foreach_add, 1, 0.75), _fe_cases(1)),
    _fe_spec('add.List', _foreach(torch._foreach_add, 2, alpha=-1.5), _fe_cases(2)),
    _fe_spec('add.ScalarList', _foreach(torch._foreach_add, 1, scalars=_factors), _fe_cases(1)),
    _fe_spec('add.Tensor', lambda *ts: torch._foreach_add(list(ts), torch.tensor(0.5), alpha=2), _fe_cases(1)),
    _fe_spec('sub.Scalar', _foreach(torch._foreach_sub, 1, 0.75), _fe_cases(1)),
    _fe_spec('sub.List', _foreach(torch._foreach_sub, 2, alpha=0.5), _fe_cases(2)),
    _fe_spec('sub.ScalarList', _foreach(torch._foreach_sub, 1, scalars=_factors), _fe_cases(1)),
    _fe_spec('mul.Scalar', _foreach(torch._foreach_mul, 1, -1.25), _fe_cases(1)),
    _fe_spec('mul.List', _foreach(torch._foreach_mul, 2), _fe_cases(2)),
    _fe_spec('mul.ScalarList', _foreach(torch._foreach_mul, 1, scalars=_factors), _fe_cases(1)),
    _fe_spec('mul.Tensor', lambda *ts: torch._foreach_mul(list(ts), torch.tensor(-0.5)), _fe_cases(1)),
    _fe_spec('div.Scalar', _foreach(torch._foreach_div, 1, 3.0), _fe_cases(1)),
    _fe_spec('div.List', _foreach(torch._foreach_div, 2), _fe_cases(2, positive=(1,))),
    _fe_spec('div.ScalarList', _foreach(torch._foreach_div, 1, scalars=lambda n: [0.5 + i for i in range(n)]),
             _fe_cases(1)),
    _fe_spec('div.Tensor', lambda *ts: torch._foreach_div(list(ts), torch.tensor(4.0)), _fe_cases(1)),
    _fe_spec('addcmul.Scalar', _foreach(torch._foreach_addcmul, 3, 0.3), _fe_cases(3)),
    _fe_spec('addcmul.ScalarList', _foreach(torch._foreach_addcmul, 3, scalars=_factors), _fe_cases(3)),
    # torch's own backward of foreach addcdiv fails on these lists (IndexError in select).
    _fe_spec('addcdiv.Scalar', _foreach(torch._foreach_addcdiv, 3, -0.3), _fe_cases(3, positive=(2,)), grad=False),
    _fe_spec('addcdiv.ScalarList', _foreach(torch._foreach_addcdiv, 3, scalars=_factors),
             _fe_cases(3, positive=(2,)), grad=False),
    _fe_spec('lerp.Scalar', _foreach(torch._foreach_lerp, 2, 0.3), _fe_cases(2)),
    _fe_spec('lerp.List', _foreach(torch._foreach_lerp, 3), _fe_cases(3, positive=(2,))),
    _fe_spec('lerp.ScalarList', _foreach(torch._foreach_lerp, 2, scalars=_factors), _fe_cases(2)),
    _fe_spec('maximum.List', _foreach(torch._foreach_maximum, 2), _fe_cases(2)),
    _fe_spec('clamp_min.Scalar', _foreach(torch._foreach_clamp_min, 1, 0.25), _fe_cases(1)),
    _fe_spec('clamp_max.Scalar', _foreach(torch._foreach_clamp_max, 1, -0.25), _fe_cases(1)),
    _fe_spec('pow.Scalar', _foreach(torch._foreach_pow, 1, 3.0), _fe_cases(1)),
    _fe_spec('pow.ScalarList', _foreach(torch._foreach_pow, 1, scalars=lambda n: [(2.0, 0.5, -1.0, 3.0)[i % 4] for i in range(n)]),
             [_FE_POS]),
    _fe_spec('pow.List', _foreach(torch._foreach_pow, 2), _fe_cases(2, positive=(0,))),
    _fe_spec('sqrt', _foreach(torch._foreach_sqrt, 1), [_FE_POS]),
    _fe_spec('neg', _foreach(torch._foreach_neg, 1), [_FE_SAME]),
    _fe_spec('exp', _foreach(torch._foreach_exp, 1), [_FE_SAME]),
    _fe_spec('abs', _foreach(torch._foreach_abs, 1), [_FE_SAME]),
    _fe_spec('sign', _foreach(torch._foreach_sign, 1), [_FE_SAME], grad=False),
    _fe_spec('reciprocal', _foreach(torch._foreach_reciprocal, 1), [_FE_POS]),
    _fe_spec('zero', _zeroed, [_FE_SAME], grad=False),
]
