"""In-place foreach ops through functionalization (csrc/aten/functional_inplace.cc): what
optimizers run with foreach=True. PyTorch's meta reference for them ran the Python meta kernel
of every tensor of the list (AdamW's foreach step 4-5x slower than its single-tensor one on the
xla device); the replacement calls the functional foreach op once and checks each result, so
values, write-through to views and the errors must match eager CPU, and no Meta kernel runs."""
import pytest
import torch
import torch_xla

from conftest import CounterDelta, raises_as_eager, run_python

SHAPES = [(3, 4), (5,), (), (0, 2), (2, 1, 3)]


def _lists(dtype, seed, positive=False):
    torch.manual_seed(seed)
    make = (lambda s: torch.rand(s, dtype=dtype) + 0.5) if positive else (lambda s: torch.randn(s, dtype=dtype) * 2)
    return [make(s) for s in SHAPES]


# (op, args after self built from (list maker, dtype)), positive inputs)
CASES = [
    ('_foreach_add_', lambda L, d: (L(1),), {'alpha': 0.5}, False),
    ('_foreach_add_', lambda L, d: (0.25,), {}, False),
    ('_foreach_add_', lambda L, d: ([0.1 * i for i in range(len(SHAPES))],), {}, False),
    ('_foreach_add_', lambda L, d: (torch.tensor(1.5, dtype=d),), {'alpha': 2}, False),
    ('_foreach_sub_', lambda L, d: (L(2),), {'alpha': 2}, False),
    ('_foreach_mul_', lambda L, d: (0.9,), {}, False),
    ('_foreach_mul_', lambda L, d: (L(3),), {}, False),
    ('_foreach_mul_', lambda L, d: (torch.tensor(-0.5, dtype=d),), {}, False),
    ('_foreach_div_', lambda L, d: ([1.0 + i for i in range(len(SHAPES))],), {}, False),
    ('_foreach_div_', lambda L, d: (L(4, True),), {}, False),
    ('_foreach_addcmul_', lambda L, d: (L(5), L(6)), {'value': 0.1}, False),
    ('_foreach_addcmul_', lambda L, d: (L(5), L(6), [0.5 * i for i in range(len(SHAPES))]), {}, False),
    ('_foreach_addcdiv_', lambda L, d: (L(7), L(8, True)), {'value': -0.5}, False),
    ('_foreach_addcdiv_', lambda L, d: (L(7), L(8, True), [-0.1 * i for i in range(len(SHAPES))]), {}, False),
    ('_foreach_lerp_', lambda L, d: (L(9), 0.3), {}, False),
    ('_foreach_lerp_', lambda L, d: (L(9), L(10, True)), {}, False),
    ('_foreach_sqrt_', lambda L, d: (), {}, True),
    ('_foreach_neg_', lambda L, d: (), {}, False),
    ('_foreach_zero_', lambda L, d: (), {}, False),
    ('_foreach_maximum_', lambda L, d: (L(11),), {}, False),
    ('_foreach_clamp_min_', lambda L, d: (0.1,), {}, False),
    ('_foreach_clamp_max_', lambda L, d: (-0.1,), {}, False),
    ('_foreach_pow_', lambda L, d: (2.0,), {}, False),
    ('_foreach_reciprocal_', lambda L, d: (), {}, True),
    ('_foreach_exp_', lambda L, d: (), {}, False),
    ('_foreach_abs_', lambda L, d: (), {}, False),
]


def _to(dev, a):
    if isinstance(a, torch.Tensor):
        return a.to(dev) if a.dim() else a  # a 0-dim tensor operand stays where eager's optimizers keep it
    if isinstance(a, list) and a and isinstance(a[0], torch.Tensor):
        return [t.to(dev) for t in a]
    return a


@pytest.mark.parametrize('case', range(len(CASES)), ids=lambda i: f'{CASES[i][0]}-{i}')
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_values_match_eager(dev, case, dtype):
    name, make_args, kwargs, positive = CASES[case]
    selves = _lists(dtype, 100 + case, positive)
    selves[0].view(-1)[0] = float('nan')
    selves[0].view(-1)[1] = float('inf')
    args = make_args(lambda seed, pos=False: _lists(dtype, seed, pos), dtype)
    op = getattr(torch, name)
    expected = [t.clone() for t in selves]
    op(expected, *args, **kwargs)
    with CounterDelta('FunctionalizedForeachInplace', 'MetaKernelShapes') as delta:
        xs = [t.to(dev) for t in selves]
        op(xs, *[_to(dev, a) for a in args], **kwargs)
        got = [x.cpu() for x in xs]
    assert delta['FunctionalizedForeachInplace'] == 1
    tol = 1e-12 if dtype == torch.float64 else 1e-6
    for g, e in zip(got, expected):
        assert g.dtype == dtype and g.shape == e.shape
        torch.testing.assert_close(g, e, rtol=tol, atol=tol, equal_nan=True)


def test_no_meta_kernel_runs_in_a_repeated_step(dev):
    # The first call of a signature may ask a Meta kernel for shapes; a step repeated with new
    # scalars (Adam's bias corrections) must not.
    xs = [torch.randn(4, 3).to(dev), torch.randn(5).to(dev)]
    gs = [torch.randn(4, 3).to(dev), torch.randn(5).to(dev)]
    for step in range(1, 4):
        with CounterDelta('MetaKernelShapes') as delta:
            torch._foreach_lerp_(xs, gs, 0.1 * step)
            torch._foreach_addcdiv_(xs, gs, [g.abs() + 1 for g in gs], [-0.01 * step, -0.02 * step])
            torch._foreach_mul_(xs, 1 - 0.01 * step)
        if step > 1:
            assert delta['MetaKernelShapes'] == 0
    [x.cpu() for x in xs]


def test_writes_through_views(dev):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = base.to(dev)
    views = [x.t()[1:], x[0]]  # a non-contiguous view and a row: the base sees both writes
    torch._foreach_mul_(views, [2.0, -1.0])
    expected = base.clone()
    torch._foreach_mul_([expected.t()[1:], expected[0]], [2.0, -1.0])
    torch.testing.assert_close(x.cpu(), expected)


def test_aliasing_lists_keep_eagers_order(dev):
    # Eager updates one position at a time: a later position reads what an earlier one wrote.
    a, b = torch.randn(3), torch.randn(3)
    xa, xb = a.to(dev), b.to(dev)
    torch._foreach_add_([xa, xb], [xb, xa], alpha=2.0)  # b += 2 * (a + 2b)
    torch._foreach_add_([a, b], [b, a], alpha=2.0)
    torch.testing.assert_close([xa.cpu(), xb.cpu()], [a, b])
    t = torch.randn(4)
    xt = t.to(dev)
    torch._foreach_mul_([xt, xt], 3.0)  # the same tensor twice: times 9
    torch._foreach_mul_([t, t], 3.0)
    torch.testing.assert_close(xt.cpu(), t)


def test_plain_cpu_tensors_in_a_foreach_op_run_on_the_cpu(dev):
    # Adam keeps its step counts on the CPU and adds to them with a foreach op.
    steps = [torch.tensor(0.0), torch.tensor(3.0)]
    torch._foreach_add_(steps, torch.tensor(1.0), alpha=1.0)
    assert [s.item() for s in steps] == [1.0, 4.0]
    assert all(s.device.type == 'cpu' for s in steps)


ERRORS = [
    # self may not be broadcast
    lambda d: torch._foreach_add_([torch.zeros(3, device=d)], [torch.ones(2, 3, device=d)]),
    lambda d: torch._foreach_addcmul_([torch.zeros(3, device=d)], [torch.ones(2, 3, device=d)],
                                      [torch.ones(3, device=d)]),
    # an integer self cannot hold a float result
    lambda d: torch._foreach_mul_([torch.ones(3, dtype=torch.long, device=d)], 2.5),
    # lists of different lengths
    lambda d: torch._foreach_add_([torch.zeros(3, device=d), torch.zeros(2, device=d)],
                                  [torch.ones(3, device=d)]),
    lambda d: torch._foreach_div_([torch.zeros(3, device=d)], [1.0, 2.0]),
]


@pytest.mark.parametrize('case', range(len(ERRORS)))
def test_errors_match_eager(dev, case):
    raises_as_eager(ERRORS[case], dev)


def _train_small_model(device, make_opt, clip=None):
    """A small float64 MLP's parameters after four steps of `make_opt(params)` on `device`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)).double()
    model = model.to(device)
    opt = make_opt(model.parameters())
    x, y = torch.randn(8, 6, dtype=torch.float64), torch.randn(8, 3, dtype=torch.float64)
    for _ in range(4):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize('make_opt', [
    lambda p, fe: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=fe),
    lambda p, fe: torch.optim.Adam(p, lr=0.01, foreach=fe),
    lambda p, fe: torch.optim.AdamW(p, lr=0.01, amsgrad=True, foreach=fe),
    lambda p, fe: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, maximize=True, foreach=fe),
    lambda p, fe: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, foreach=fe),
    lambda p, fe: torch.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True, foreach=fe),
    lambda p, fe: torch.optim.Adagrad(p, lr=0.1, foreach=fe),
    lambda p, fe: torch.optim.NAdam(p, lr=0.1, foreach=fe),
    lambda p, fe: torch.optim.RAdam(p, lr=0.1, foreach=fe),
    lambda p, fe: torch.optim.Adamax(p, lr=0.1, foreach=fe),
    lambda p, fe: torch.optim.Adadelta(p, foreach=fe),
    lambda p, fe: torch.optim.ASGD(p, foreach=fe),
], ids=['sgd', 'adam', 'adamw_amsgrad', 'adam_wd_maximize', 'sgd_nesterov', 'rmsprop_centered',
        'adagrad', 'nadam', 'radam', 'adamax', 'adadelta', 'asgd'])
def test_foreach_optimizers_train_as_on_the_cpu(dev, make_opt):
    """foreach=True on the xla device: the same parameters as eager's foreach after several steps,
    through FunctionalizedForeachInplace; the single-tensor path as eager's."""
    def train(device, foreach):
        return _train_small_model(device, lambda params: make_opt(params, foreach))

    expected = train('cpu', True)
    with CounterDelta('FunctionalizedForeachInplace') as delta:
        got = train(dev, True)
    assert delta['FunctionalizedForeachInplace'] >= 4
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-12)
    # The single-tensor path against eager's (ASGD's two paths round differently in eager too).
    for s, e in zip(train(dev, False), train('cpu', False)):
        torch.testing.assert_close(s, e, rtol=1e-10, atol=1e-12)


_DEFAULT_PATH_SCRIPT = """
import torch, torch_xla
from torch.optim.optimizer import _default_to_fused_or_foreach
from torch.utils._foreach_utils import _has_foreach_support
import torch_xla.debug.metrics as met
p = torch.nn.Parameter(torch.ones(3, device='xla'))
p.grad = torch.full((3,), 0.5, device='xla')
opt = torch.optim.AdamW([p], lr=0.1)
opt.step()
torch.nn.utils.clip_grad_norm_([p], 1.0)
print(_default_to_fused_or_foreach([p], False, False)[1], _has_foreach_support([p.grad], p.device),
      met.counter_value('FunctionalizedForeachInplace') or 0)
"""


def test_optimizers_default_to_their_foreach_path_on_xla():
    """torch picks foreach=None's path by device type: xla is listed as CUDA is (one call per
    update term instead of a Python loop over the parameters), unless TXLA_FOREACH_DEFAULT=0."""
    chosen, clip, foreach_ops = run_python(_DEFAULT_PATH_SCRIPT).split()
    assert chosen == 'True' and clip == 'True' and int(foreach_ops) > 0
    assert run_python(_DEFAULT_PATH_SCRIPT, TXLA_FOREACH_DEFAULT='0').split() == ['False', 'False', '0']


def test_the_default_foreach_path_trains_as_the_loop_does(dev):
    """The path foreach=None now takes on xla gives the Python loop's values (eager's default)."""
    def train(device):
        return _train_small_model(
            device, lambda params: torch.optim.AdamW(params, lr=0.05, weight_decay=0.1), clip=0.5)

    for g, e in zip(train(dev), train('cpu')):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('name', ['Adam', 'AdamW', 'NAdam', 'RAdam', 'Adamax', 'ASGD', 'RMSprop'])
def test_capturable_optimizers_keep_their_single_tensor_path_on_xla(dev, name):
    """torch's capturable foreach paths reject xla tensors; such a group is not moved onto them."""
    def train(device):
        torch.manual_seed(0)
        p = torch.nn.Parameter(torch.randn(4, 3, dtype=torch.float64).to(device))
        opt = getattr(torch.optim, name)([p], lr=0.05, capturable=device != 'cpu')
        for i in range(3):
            p.grad = torch.full_like(p, 0.1 * (i + 1))
            opt.step()
        return opt.param_groups[0]['foreach'], p.detach().cpu()

    foreach, got = train(dev)
    assert foreach is False
    # The capturable step count is a float32 tensor: its bias corrections round as float32.
    torch.testing.assert_close(got, train('cpu')[1], rtol=1e-4, atol=1e-6)


def test_clip_grad_norm_without_gradients_returns_zero_on_the_device(dev):
    # torch returns a CPU zero; PyTorch/XLA (and so this package) the parameters' device's.
    params = [torch.ones(3, device=dev, requires_grad=True), torch.ones(2, device=dev, requires_grad=True)]
    total = torch.nn.utils.clip_grad_norm_(params, 1.0)
    assert total.device.type == 'xla' and total.cpu().item() == 0.0
    # With gradients, and on the CPU, torch's own result.
    params[0].grad = torch.full((3,), 4.0, device=dev)
    total = torch.nn.utils.clip_grad_norm_(params, 1.0)
    assert total.device.type == 'xla'
    torch.testing.assert_close(total.cpu(), torch.tensor(48.0).sqrt())
    assert torch.nn.utils.clip_grad_norm_(torch.ones(2, requires_grad=True), 1.0).device.type == 'cpu'


def test_a_foreach_call_records_one_node_counted_per_tensor(dev):
    """A foreach call is one node with an output per tensor (not one op per tensor through ATen's
    loop); the per-op counters count its tensors, as PyTorch/XLA's decomposition counts them."""
    xs = [torch.randn(s).to(dev) for s in SHAPES]
    gs = [torch.randn(s).to(dev) for s in SHAPES]
    with CounterDelta('xla::mul', 'xla::addcdiv') as delta:
        torch._foreach_mul_(xs, 0.9)
        torch._foreach_addcdiv_(xs, gs, [g.abs() + 1 for g in gs], [-0.1 * i for i in range(len(SHAPES))])
    text = torch_xla._XLAC._get_xla_tensors_text(xs)
    assert text.count('aten::_foreach_mul.Scalar(') == 1 and text.count('aten::_foreach_addcdiv.ScalarList(') == 1
    assert 'aten::mul.Scalar(' not in text and 'aten::addcdiv(' not in text
    assert delta['xla::mul'] == len(SHAPES) and delta['xla::addcdiv'] == len(SHAPES)


def test_changing_scalar_lists_do_not_recompile(dev):
    """Adam's per-tensor step sizes change every step: they are graph parameters (0 and 1 are
    constants, so a list holding them is a graph of its own), and the graph compiles once."""
    xs = [torch.randn(4, 3).to(dev), torch.randn(5).to(dev)]
    gs = [torch.randn(4, 3).to(dev), torch.randn(5).to(dev)]
    compiles = []
    for step in range(1, 5):
        with CounterDelta('UncachedCompile') as delta:
            torch._foreach_addcdiv_(xs, gs, [g.abs() + 1 for g in gs], [-0.01 * step, -0.02 * step])
            torch._foreach_div_(xs, [1.0 + 0.1 * step, 2.0 + 0.1 * step])
            [x.cpu() for x in xs]
        compiles.append(delta['UncachedCompile'])
    assert compiles[1:] == [0, 0, 0], compiles


@pytest.mark.parametrize('interpreted', [False, True], ids=['compiled', 'interpreted'])
def test_foreach_lists_of_mixed_dtypes_promote_per_position(dev, xla_env, interpreted):
    """Each position promotes as its element op does (an integer tensor times a float scalar is
    float), compiled and on the reference interpreter."""
    if interpreted:
        xla_env(SYNC_TENSORS_OPBYOP='1', GET_TENSORS_OPBYOP='1')
    selves = [torch.arange(6).reshape(2, 3), torch.randn(4, dtype=torch.float64), torch.randn(3).bfloat16()]
    others = [torch.randn(3), torch.randn(4, dtype=torch.float64), torch.randn(3).bfloat16()]
    for op, args in [(torch._foreach_mul, (2.5,)), (torch._foreach_add, (others,)),
                     (torch._foreach_mul, ([0.5, 3.0, 1.0],)), (torch._foreach_sub, (others,))]:
        expected = op(selves, *args)
        got = op([t.to(dev) for t in selves], *[[o.to(dev) for o in a] if isinstance(a, list) and
                                                 isinstance(a[0], torch.Tensor) else a for a in args])
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            torch.testing.assert_close(g.cpu(), e)


FUNCTIONAL_ERRORS = [
    lambda d: torch._foreach_add([torch.zeros(3, device=d), torch.zeros(2, device=d)], [torch.ones(3, device=d)]),
    lambda d: torch._foreach_mul([torch.zeros(3, device=d)], [1.0, 2.0]),
    lambda d: torch._foreach_addcmul([torch.zeros(3, device=d)], [torch.ones(3, device=d)],
                                     [torch.ones(3, device=d), torch.ones(1, device=d)]),
    lambda d: torch._foreach_lerp([torch.zeros(3, device=d)], [torch.ones(3, device=d)], [0.5, 0.5]),
]


@pytest.mark.parametrize('case', range(len(FUNCTIONAL_ERRORS)))
def test_functional_foreach_errors_match_eager(dev, case):
    raises_as_eager(FUNCTIONAL_ERRORS[case], dev)


def test_a_positions_error_is_its_element_ops(dev):
    """Shapes that do not broadcast at one position raise what the element op raises there."""
    with pytest.raises(RuntimeError) as single:
        torch.mul(torch.zeros(3, device=dev), torch.ones(4, device=dev))
    with pytest.raises(RuntimeError) as foreach:
        torch._foreach_mul([torch.zeros(2, device=dev), torch.zeros(3, device=dev)],
                           [torch.ones(2, device=dev), torch.ones(4, device=dev)])
    assert str(foreach.value) == str(single.value)


def test_foreach_over_cpu_and_xla_tensors_names_the_cpu_tensor(dev):
    with pytest.raises(RuntimeError, match='not an XLA tensor|same device'):
        torch._foreach_add([torch.zeros(3, device=dev)], [torch.ones(3)])
