"""Ops that create tensors on the device: sizes, dtypes and values as eager's, usable in further
ops (a (0,)-shaped arange broke every position embedding), and eager's errors at the call."""
import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
from conftest import CounterDelta

FACTORIES = {
    'arange_end': lambda d: torch.arange(5, device=d),
    'arange_start_end_step': lambda d: torch.arange(1, 10, 2, device=d),
    'arange_negative_step': lambda d: torch.arange(10, 1, -3, device=d),
    'arange_float_step': lambda d: torch.arange(0, 1, 0.1, device=d),
    'arange_float64': lambda d: torch.arange(0.5, 4, 0.25, device=d, dtype=torch.float64),
    'arange_int32': lambda d: torch.arange(3, 17, 4, device=d, dtype=torch.int32),
    'arange_empty': lambda d: torch.arange(3, 3, device=d),
    'arange_large': lambda d: torch.arange(100000, device=d),
    'eye': lambda d: torch.eye(4, device=d),
    'eye_rect': lambda d: torch.eye(3, 5, device=d),
    'eye_tall_int': lambda d: torch.eye(5, 2, device=d, dtype=torch.int64),
    'eye_empty': lambda d: torch.eye(0, device=d),
    'eye_dtype': lambda d: torch.eye(3, device=d, dtype=torch.float32),
    'eye_m_dtype': lambda d: torch.eye(2, 3, device=d, dtype=torch.float64),
    'linspace': lambda d: torch.linspace(-1, 1, 7, device=d),
    'logspace': lambda d: torch.logspace(0, 2, 5, device=d),
    'full': lambda d: torch.full((2, 3), 7.5, device=d),
    'full_int': lambda d: torch.full((2,), 3, device=d, dtype=torch.int64),
    'zeros': lambda d: torch.zeros(2, 3, device=d),
    'ones_int': lambda d: torch.ones(2, 3, device=d, dtype=torch.int64),
    'zeros_like': lambda d: torch.zeros_like(torch.ones(2, 3, device=d)),
    'ones_like': lambda d: torch.ones_like(torch.ones(2, 3, device=d, dtype=torch.float64)),
    'full_like': lambda d: torch.full_like(torch.ones(2, 3, device=d), 3),
    'tril_indices': lambda d: torch.tril_indices(3, 3, device=d),
    'triu_indices': lambda d: torch.triu_indices(3, 4, 1, device=d),
    'tensor': lambda d: torch.tensor([[1, 2], [3, 4]], device=d),
    'scalar_tensor': lambda d: torch.scalar_tensor(3.5, device=d),
    'new_zeros': lambda d: torch.ones(2, device=d).new_zeros(3, 2),
    'new_full': lambda d: torch.ones(2, device=d).new_full((3,), 2.0),
    'new_ones': lambda d: torch.ones(2, device=d, dtype=torch.int32).new_ones(2, 2),
}


@pytest.mark.parametrize('name', sorted(FACTORIES))
def test_factory_matches_eager(name):
    make = FACTORIES[name]
    want = make('cpu')
    got = make(xm.xla_device())
    assert got.shape == want.shape and got.dtype == want.dtype
    # Usable in further ops with its real size.
    doubled = got + got
    assert doubled.shape == want.shape
    torch.testing.assert_close(got.cpu(), want)
    torch.testing.assert_close(doubled.cpu(), want + want)


def test_arange_and_eye_are_recorded_not_fallen_back(dev):
    with CounterDelta('aten::arange', 'aten::eye') as d:
        pos = torch.arange(16, device=dev)
        table = torch.eye(16, device=dev)
        y = table[pos].sum(0)
    assert d['aten::arange'] == 0 and d['aten::eye'] == 0
    text = torch_xla._XLAC._get_xla_tensors_text([y])
    assert 'aten::arange.start_step' in text and 'aten::eye' in text
    torch.testing.assert_close(y.cpu(), torch.ones(16))


def test_position_embedding(dev):
    """The GPT pattern: token embedding + position embedding of arange(T)."""
    torch.manual_seed(0)
    tok = torch.nn.Embedding(11, 4)
    pos = torch.nn.Embedding(8, 4)
    ids = torch.randint(0, 11, (2, 6))
    want = tok(ids) + pos(torch.arange(6))
    tok_x, pos_x = tok.to(dev), pos.to(dev)
    got = tok_x(ids.to(dev)) + pos_x(torch.arange(6, device=dev))
    torch.testing.assert_close(got.cpu(), want)


@pytest.mark.parametrize('call, message', [
    (lambda d: torch.arange(1, 0, 1, device=d), 'upper bound and (larger|lower) bound inconsistent'),
    (lambda d: torch.arange(0, 5, 0, device=d), 'step must be nonzero'),
    (lambda d: torch.eye(-1, device=d), 'n must be greater or equal to 0'),
])
def test_factory_errors_as_eager(call, message):
    with pytest.raises(RuntimeError, match=message):
        call('cpu')
    with pytest.raises(RuntimeError, match=message):
        call(xm.xla_device())


def test_fallback_out_argument_is_resized(dev):
    """An op run on the CPU fallback into an empty out= tensor (ATen composites such as
    soft_margin_loss do this internally) leaves the tensor with the result's size."""
    x = torch.randn(3, 4)
    out = torch.empty(0, device=dev)
    torch.logit(x.to(dev), eps=1e-3, out=out)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out.cpu(), torch.logit(x, eps=1e-3))
    y = torch.randn(2, 3)
    t = torch.randint(0, 2, (2, 3)) * 2. - 1
    got = torch.nn.functional.soft_margin_loss(y.to(dev), t.to(dev), reduction='none')
    assert got.shape == (2, 3)
    torch.testing.assert_close(got.cpu(), torch.nn.functional.soft_margin_loss(y, t, reduction='none'))
