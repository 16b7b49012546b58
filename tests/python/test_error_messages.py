"""Bad arguments raise at the op with PyTorch/XLA 2.9's messages, where PyTorch/XLA words a check of
its own (csrc/ir/shape_rules_checks.cc): a script, or a test, that reads them sees the same text.
Each case is checked against eager too, which must refuse the same arguments."""
import pytest
import torch

import torch_xla


def _raises(fn, message, *cpu_args):
    """fn on xla tensors raises RuntimeError with exactly `message`; on CPU ones, it raises too."""
    with pytest.raises(RuntimeError) as info:
        fn(*[a.to('xla') if isinstance(a, torch.Tensor) else a for a in cpu_args])
    assert str(info.value) == message
    with pytest.raises((RuntimeError, IndexError)):
        fn(*cpu_args)


def test_binary_operands_that_do_not_broadcast():
    _raises(torch.add, 'Shapes are not compatible for broadcasting: f32[3,2,5] vs. f32[4,5]. Expected dimension 1 '
            'of shape f32[3,2,5] (2) to match dimension 0 of shape f32[4,5] (4). Either that or that any of them is '
            'either 1 or unbounded. Try reshaping one of the tensors to match the other.',
            torch.rand(3, 2, 5), torch.rand(4, 5))
    _raises(torch.mul, 'Shapes are not compatible for broadcasting: f64[6] vs. f64[2,5]. Expected dimension 0 of '
            'shape f64[6] (6) to match dimension 1 of shape f64[2,5] (5). Either that or that any of them is either 1 '
            'or unbounded. Try reshaping one of the tensors to match the other.',
            torch.rand(6, dtype=torch.float64), torch.rand(2, 5, dtype=torch.float64))
    # Broadcasting operands and Python numbers are not refused.
    x = torch.rand(3, 1, 5)
    y = torch.rand(4, 5)
    torch.testing.assert_close(torch.add(x.to('xla'), y.to('xla')).cpu(), x + y)
    torch.testing.assert_close((x.to('xla') * 2).cpu(), x * 2)


def test_cat_of_incompatible_shapes():
    _raises(lambda a, b: torch.cat([a, b], 1), 'cat(): cannot concatenate tensors of shape s64[2,3] with s64[4,1] at '
            'dimension 1. Expected shapes to be equal (except at dimension 1) or that either of them was a 1D empty '
            'tensor of size (0,).', torch.ones(2, 3, dtype=torch.long), torch.ones(4, 1, dtype=torch.long))
    # A 1-D empty tensor joins anything, as in eager.
    got = torch.cat([torch.ones(2, 3).to('xla'), torch.ones(0).to('xla')]).cpu()
    assert got.shape == (2, 3)


def test_div_with_an_unknown_rounding_mode():
    _raises(lambda a: torch.div(a, 2, rounding_mode='round'), "div(): invalid rounding mode `round`. Expected it to be "
            "either 'trunc', 'floor', or be left unspecified.", torch.rand(3))


def test_flip_of_repeated_dimensions():
    _raises(lambda a: torch.flip(a, [1, -2, 2, 2]), 'flip(): expected each dimension to appear at most once. Found '
            'dimensions: 1 (2 times), 2 (2 times). Consider changing dims from [1, -2, 2, 2] to [1, 2].',
            torch.rand(2, 3, 4))


def test_flip_of_a_dimension_out_of_range():
    for dims in ([3], [0, 1, 2, 3], [-4]):
        _raises(lambda a: torch.flip(a, dims), 'Dimension out of range (expected to be in range of [-3, 2], but got '
                f'{dims[-1]})', torch.rand(2, 3, 4))


def test_max_and_min_of_nothing():
    empty = torch.rand(2, 0, 4)
    for op in ('max', 'min'):
        fn = getattr(torch, op)
        _raises(fn, f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                "dim with the 'dim' argument.", empty)
        _raises(lambda a: fn(a, dim=1), f'{op}(): Expected reduction dim 1 to have non-zero size.', empty)
        _raises(lambda a: fn(a, dim=-2, keepdim=True), f'{op}(): Expected reduction dim 1 to have non-zero size.',
                empty)
        # Reducing a dimension that has elements leaves an empty result, as eager does.
        values, indices = fn(empty.to('xla'), dim=2)
        assert values.shape == indices.shape == (2, 0)
        assert fn(torch.full((3,), float('nan')).to('xla')).isnan().item()


def test_full_of_a_negative_size():
    with pytest.raises(RuntimeError) as info:
        torch.full([3, -1], 2.0, device='xla')
    assert str(info.value) == ('full(): expected concrete sizes (i.e. non-symbolic) to be positive values. However '
                               'found negative ones: [3, -1].')


def test_gather_of_mismatched_ranks_and_sizes():
    _raises(lambda a, i: torch.gather(a, 0, i), 'gather(): expected rank of input (2) and index (1) tensors to be the '
            'same.', torch.rand(3, 3), torch.zeros(2, dtype=torch.long))
    _raises(lambda a, i: torch.gather(a, -1, i), 'gather(): expected sizes of index [4, 2, 5] to be smaller or equal '
            'those of input [3, 2, 2] on all dimensions, except on dimension 2. However, that\'s not true on '
            'dimensions [0].', torch.rand(3, 2, 2), torch.zeros(4, 2, 5, dtype=torch.long))


def test_mm_of_non_matrices_and_mismatched_matrices():
    _raises(torch.mm, 'mm(): expected the second input tensor f32[3] to be a matrix (i.e. a 2D tensor).',
            torch.rand(2, 3), torch.rand(3))
    _raises(torch.mm, 'mm(): cannot matrix-multiply tensors f32[2,3] and f32[4,2]. Expected the size of dimension 1 '
            'of the first input tensor (3) to be equal the size of dimension 0 of the second input tensor (4).',
            torch.rand(2, 3), torch.rand(4, 2))


def test_random_of_an_empty_or_unrepresentable_range():
    _raises(lambda a: a.random_(5, 5), 'random_(): expected `from` (5) to be smaller than `to` (5).', torch.empty(4))
    with pytest.raises(RuntimeError) as info:
        torch.empty(4, dtype=torch.int8, device='xla').random_(-200, 3)
    assert str(info.value) == ('random_(): expected `from` to be within the range [-128, 127]. However got value '
                               '-200, which is smaller than the lower bound.')
    a = torch.empty(1000, device='xla').random_(2, 6).cpu()
    assert a.min() >= 2 and a.max() <= 5


def test_roll_with_mismatched_shifts_and_dims():
    a = torch.rand(2, 3)
    _raises(lambda x: torch.roll(x, []), 'roll(): expected `shifts` to have at least 1 element.', a)
    _raises(lambda x: torch.roll(x, [1, 2]), 'roll(): expected `shifts` [1, 2] (size=2) to have exactly 1 element when '
            '`dims` is empty.', a)
    _raises(lambda x: torch.roll(x, [1, 2], [0]), 'roll(): expected `dims` [0] (size=1) to match the size of `shifts` '
            '[1, 2] (size=2).', a)


def test_trace_of_a_non_matrix():
    _raises(torch.trace, 'trace(): expected the input tensor f32[2,2,2] to be a matrix (i.e. a 2D tensor).',
            torch.rand(2, 2, 2))


def test_the_process_keeps_working_after_each_refusal():
    x = torch.rand(3, 3)
    for bad in (lambda t: torch.mm(t, t[0]), lambda t: torch.roll(t, [])):
        with pytest.raises(RuntimeError):
            bad(x.to('xla'))
    torch.testing.assert_close((x.to('xla') @ x.to('xla')).cpu(), x @ x)
    torch_xla.sync()
