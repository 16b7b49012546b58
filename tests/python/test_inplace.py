"""In-place ops through functionalization (csrc/aten/functional_inplace.cc): PyTorch's Python meta
reference is replaced by a check of the functional variant's result, so values, write-through to
views and every error an in-place op has must still match eager CPU."""
import pytest
import torch

from conftest import CounterDelta, raises_as_eager

# (op, args after self as CPU tensors or scalars, dtypes to run in)
F = (torch.float32, torch.float64)
CASES = [
    ('add_', lambda: (torch.randn(3, 4) * 3,), {'alpha': 2}, F + (torch.int64,)),
    ('add_', lambda: (2,), {}, F + (torch.int64,)),
    ('sub_', lambda: (torch.randn(4),), {'alpha': 2}, F),
    ('sub_', lambda: (1.5,), {}, F),
    ('mul_', lambda: (torch.randn(1, 4),), {}, F),
    ('mul_', lambda: (3,), {}, F + (torch.int64,)),
    ('div_', lambda: (torch.randn(3, 4),), {}, F),
    ('div_', lambda: (0.25,), {}, F),
    ('div_', lambda: (torch.randn(3, 4),), {'rounding_mode': 'floor'}, F),
    ('addcmul_', lambda: (torch.randn(3, 4), torch.randn(4)), {'value': 0.1}, F),
    ('addcdiv_', lambda: (torch.randn(3, 4), torch.rand(3, 4) + 1), {'value': -0.5}, F),
    ('lerp_', lambda: (torch.randn(3, 4), 0.3), {}, F),
    ('lerp_', lambda: (torch.randn(3, 4), torch.rand(4)), {}, F),
    ('sqrt_', lambda: (), {}, F), ('rsqrt_', lambda: (), {}, F), ('neg_', lambda: (), {}, F),
    ('exp_', lambda: (), {}, F), ('log_', lambda: (), {}, F), ('abs_', lambda: (), {}, F),
    ('reciprocal_', lambda: (), {}, F), ('relu_', lambda: (), {}, F), ('sigmoid_', lambda: (), {}, F),
    ('tanh_', lambda: (), {}, F), ('silu_', lambda: (), {}, F), ('floor_', lambda: (), {}, F),
    ('round_', lambda: (), {}, F), ('sign_', lambda: (), {}, F), ('zero_', lambda: (), {}, F),
    ('clamp_', lambda: (-0.5, 0.5), {}, F),
    ('clamp_', lambda: (torch.full((4,), -0.2), torch.full((3, 4), 0.3)), {}, F),
    ('clamp_min_', lambda: (0.1,), {}, F), ('clamp_max_', lambda: (0.1,), {}, F),
    ('masked_fill_', lambda: (torch.rand(3, 4) > 0.5, 7.0), {}, F + (torch.int64,)),
    ('masked_fill_', lambda: (torch.rand(4) > 0.5, torch.tensor(-1.0)), {}, F),
    ('hardtanh_', lambda: (-0.3, 0.3), {}, F), ('leaky_relu_', lambda: (0.2,), {}, F),
    ('threshold_', lambda: (0.1, 9.0), {}, F),
    ('fill_', lambda: (2.5,), {}, F), ('fill_', lambda: (torch.tensor(-3.0),), {}, F),
    ('hardswish_', lambda: (), {}, F), ('hardsigmoid_', lambda: (), {}, F), ('elu_', lambda: (), {}, F),
    ('celu_', lambda: (0.7,), {}, F), ('selu_', lambda: (), {}, F), ('mish_', lambda: (), {}, F),
    ('gelu_', lambda: (), {'approximate': 'tanh'}, F), ('sin_', lambda: (), {}, F), ('cos_', lambda: (), {}, F),
    ('tan_', lambda: (), {}, F), ('atan_', lambda: (), {}, F), ('sinh_', lambda: (), {}, F),
    ('cosh_', lambda: (), {}, F), ('erf_', lambda: (), {}, F), ('expm1_', lambda: (), {}, F),
    ('exp2_', lambda: (), {}, F), ('trunc_', lambda: (), {}, F), ('ceil_', lambda: (), {}, F),
    ('frac_', lambda: (), {}, F),
    ('log1p_', lambda: (), {}, (torch.float64,)), ('log2_', lambda: (), {}, (torch.float64,)),
    ('erfinv_', lambda: (), {}, (torch.float64,)), ('logit_', lambda: (), {}, (torch.float64,)),
    ('digamma_', lambda: (), {}, (torch.float64,)), ('lgamma_', lambda: (), {}, (torch.float64,)),
    ('remainder_', lambda: (1.5,), {}, F), ('remainder_', lambda: (torch.rand(4) + 0.5,), {}, F),
    ('fmod_', lambda: (1.5,), {}, F), ('fmod_', lambda: (torch.rand(3, 4) + 0.5,), {}, F),
    ('clamp_min_', lambda: (torch.zeros(4),), {}, F), ('clamp_max_', lambda: (torch.zeros(3, 1),), {}, F),
    ('copysign_', lambda: (torch.randn(4),), {}, F), ('hypot_', lambda: (torch.randn(3, 4),), {}, F),
    ('nan_to_num_', lambda: (), {'nan': 0.5}, F), ('xlogy_', lambda: (torch.rand(3, 4) + 0.1,), {}, F),
    ('addmm_', lambda: (torch.randn(3, 5), torch.randn(5, 4)), {'beta': 0.5, 'alpha': 2}, F),
    ('tril_', lambda: (1,), {}, F), ('triu_', lambda: (-1,), {}, F),
]


def _to(dev, args):
    return tuple(a.to(dev) if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize('case', range(len(CASES)), ids=lambda i: CASES[i][0])
def test_values_match_eager(dev, case):
    name, make_args, kwargs, dtypes = CASES[case]
    torch.manual_seed(case)
    for dtype in dtypes:
        base = torch.rand(3, 4, dtype=torch.float64) + 0.5 if name in ('sqrt_', 'rsqrt_', 'log_') \
            else torch.randn(3, 4, dtype=torch.float64) * 2
        base = base.to(dtype)
        args = tuple(a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                     for a in make_args())
        expected = getattr(torch.ops.aten, name)(base.clone(), *args, **kwargs)
        with CounterDelta('FunctionalizedInplace') as delta:
            x = base.to(dev)
            out = getattr(torch.ops.aten, name)(x, *_to(dev, args), **kwargs)
            assert out is x
            got = x.cpu()
        assert delta['FunctionalizedInplace'] >= 1
        assert got.dtype == dtype
        tol = 1e-12 if dtype == torch.float64 else 1e-6
        torch.testing.assert_close(got, expected, rtol=tol, atol=tol, equal_nan=True)


def test_writes_through_views_and_nan(dev):
    base = torch.tensor([[1.0, float('nan'), 3.0], [float('inf'), -2.0, 0.0]])
    x = base.to(dev)
    x.t()[1:].mul_(2.0)           # a non-contiguous view: the base sees the write
    x[0].addcmul_(x[1], x[1], value=0.5)
    expected = base.clone()
    expected.t()[1:].mul_(2.0)
    expected[0].addcmul_(expected[1], expected[1], value=0.5)
    torch.testing.assert_close(x.cpu(), expected, equal_nan=True)


def test_empty_and_scalar(dev):
    e = torch.empty(0, 3, device=dev)
    e.add_(torch.ones(3, device=dev)).mul_(2)
    assert e.shape == (0, 3)
    s = torch.tensor(2.0, device=dev)
    s.lerp_(torch.tensor(4.0, device=dev), 0.5).sqrt_()
    assert s.shape == () and abs(s.item() - 3.0 ** 0.5) < 1e-6


ERRORS = [
    lambda d: torch.zeros(3, device=d).add_(torch.ones(2, 3, device=d)),
    lambda d: torch.zeros(3, device=d).addcmul_(torch.ones(2, 3, device=d), torch.ones(3, device=d)),
    lambda d: torch.zeros(3, device=d).lerp_(torch.ones(2, 3, device=d), 0.5),
    lambda d: torch.zeros(3, device=d).masked_fill_(torch.ones(2, 3, dtype=torch.bool, device=d), 1.0),
    lambda d: torch.zeros(2, 3, device=d)[0].add_(torch.ones(2, 3, device=d)),
    lambda d: torch.ones(3, dtype=torch.long, device=d).mul_(2.5),
    lambda d: torch.ones(3, dtype=torch.long, device=d).div_(2),
    lambda d: torch.ones(3, dtype=torch.long, device=d).add_(torch.ones(3, device=d)),
    lambda d: torch.ones(3, dtype=torch.bool, device=d).add_(1),
    lambda d: torch.ones(3, dtype=torch.long, device=d).clamp_(0.5, 1.5),
    lambda d: torch.ones(3, dtype=torch.long, device=d).sqrt_(),
]


@pytest.mark.parametrize('case', range(len(ERRORS)))
def test_errors_match_eager(dev, case):
    raises_as_eager(ERRORS[case], dev)


def test_functionalize_on_cpu_unchanged():
    # The kernel replaces PyTorch's for every functional tensor: torch.func.functionalize on CPU
    # tensors must behave as before.
    def f(x, y):
        v = x[1:]
        v.addcmul_(y, y, value=2.0)
        x.mul_(0.5).add_(1)
        return x * 1

    x, y = torch.randn(3, 4), torch.randn(2, 4)
    expected = f(x.clone(), y)
    got = torch.func.functionalize(f)(x.clone(), y)
    torch.testing.assert_close(got, expected)
    with pytest.raises(RuntimeError, match='broadcast shape'):
        torch.func.functionalize(lambda a: a.add_(torch.ones(2, 3)))(torch.zeros(3))


def test_views_in_a_custom_ops_body_are_read_and_refuse_writes(dev):
    """A custom op's body runs on unwrapped tensors (below functionalization): a view there is
    computed as a copy, which is right to read, and a write through it raises instead of being
    lost. Its gradient through autograd is eager's."""
    from torch.library import custom_op

    @custom_op('txla_test::last_column', mutates_args=())
    def last_column(x: torch.Tensor) -> torch.Tensor:
        i = x.clone()
        return i[..., -1] + torch.ops.aten.slice(i, -1, 0, 1).squeeze(-1)

    @last_column.register_fake
    def _(x):
        return torch.empty_like(x[..., 0])

    @custom_op('txla_test::write_column', mutates_args=())
    def write_column(x: torch.Tensor) -> torch.Tensor:
        i = x.clone()
        i[..., 0].fill_(1.0)  # a write through a view
        return i

    @write_column.register_fake
    def _(x):
        return torch.empty_like(x)

    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(last_column(x.to(dev)).cpu(), last_column(x))
    with pytest.raises(RuntimeError, match='in-place write to a view'):
        write_column(x.to(dev)).cpu()


def test_in_place_ops_inside_composites_below_functionalization_stay_on_the_device(dev):
    """allclose runs isclose on unwrapped tensors, whose `bitwise_and_` / `bitwise_or_` are
    recorded as their functional twins (no CPU fallback), with eager's answers."""
    import torch_xla.debug.metrics as met
    a = torch.tensor([1.0, float('nan'), 3.0, float('inf')])
    cases = [(a, a.clone(), {}), (a, a.clone(), {'equal_nan': True}), (a, a + 1e-7, {}), (a, a + 1, {}),
             (torch.arange(6).reshape(2, 3), torch.arange(6).reshape(2, 3), {})]
    met.clear_counters()
    for x, y, kw in cases:
        assert torch.allclose(x.to(dev), y.to(dev), **kw) == torch.allclose(x, y, **kw)
    assert not [n for n in met.counter_names() if n.startswith('aten::bitwise')]
