"""C++ shape rules for the pointwise ops, unary math and matrix products an optimizer step and a
model's forward run most: they give the output shape and dtype without the op's Meta kernel (in
torch 2.9 often Python, 0.1-0.3 ms a call, run once per new signature: 25 ms of a GPT decoder's
first step). Checked against eager (values, shapes, dtypes) on signatures no other test uses, and
through the MetaKernelShapes counter; mixed dtypes, complex numbers, bool alphas and mismatched
shapes still go to the Meta kernel, which applies eager's promotion and raises eager's errors."""
import pytest
import torch

from conftest import CounterDelta

G = torch.Generator().manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=G).to(dtype)


SPECIAL = torch.tensor([[float('nan'), float('inf'), -float('inf'), 0.0, -0.0, 4.0, 1e-30]])

RULED = [
    ('add', lambda a, b: torch.add(a, b, alpha=0.3), (rand(7, 1, 13), rand(11, 1))),
    ('sub', torch.sub, (rand(7, 13, dtype=torch.float64), rand(13, dtype=torch.float64))),
    ('mul 0-dim', torch.mul, (rand(), rand(3, 7))),
    ('mul empty', torch.mul, (rand(0, 7), rand(1, 7))),
    ('div', torch.div, (SPECIAL, SPECIAL.t())),
    ('maximum', torch.maximum, (SPECIAL, SPECIAL.flip(1))),
    ('minimum bf16', torch.minimum, (rand(5, 9, dtype=torch.bfloat16), rand(9, dtype=torch.bfloat16))),
    ('addcmul', lambda a, b, c: torch.addcmul(a, b, c, value=0.7), (rand(6, 11), rand(1, 11), rand(6, 1))),
    ('addcdiv', lambda a, b, c: torch.addcdiv(a, b, c, value=-2), (rand(6, 11), rand(6, 11), rand(6, 11))),
    ('lerp', lambda a, b: torch.lerp(a, b, 0.125), (rand(9, 17), rand(9, 17))),
    ('lerp tensor weight', torch.lerp, (rand(9, 17), rand(17), rand(9, 1))),
    ('sqrt', torch.sqrt, (SPECIAL,)),
    ('exp f64', torch.exp, (rand(19, dtype=torch.float64),)),
    ('reciprocal', torch.reciprocal, (SPECIAL,)),
    ('mm', torch.mm, (rand(7, 23), rand(23, 5))),
    ('mm empty k', torch.mm, (rand(7, 0), rand(0, 5))),
    ('bmm', torch.bmm, (rand(3, 7, 29), rand(3, 29, 2))),
    # Python numbers (an optimizer's `p.mul_(1 - lr * wd)`): wrapped 0-dim tensors or Scalars that
    # keep a floating tensor's dtype.
    ('mul wrapped float', lambda a: a * 0.25, (rand(5, 3, dtype=torch.float64),)),
    ('mul wrapped bool', lambda a: a * True, (rand(5, 3),)),
    ('div wrapped int', lambda a: a / 3, (rand(5, 3, dtype=torch.bfloat16),)),
    ('div by zero', lambda a: a / 0, (SPECIAL,)),
    ('add wrapped', lambda a: torch.add(a, 2, alpha=-1.5), (rand(4, 6),)),
    ('mul.Scalar', lambda a: torch.ops.aten.mul.Scalar(a, 3), (rand(4, 6),)),
    ('add.Scalar', lambda a: torch.ops.aten.add.Scalar(a, 2.5, 2), (rand(4, 6),)),
    ('sub.Scalar', lambda a: torch.ops.aten.sub.Scalar(a, 1), (rand(4, 6, dtype=torch.float64),)),
    ('div.Scalar', lambda a: torch.ops.aten.div.Scalar(a, -7), (SPECIAL,)),
    ('sum all', torch.sum, (rand(6, 5),)),
    ('sum ints', torch.sum, (torch.arange(12).view(3, 4).int(),)),
    ('sum dim', lambda a: a.sum(1), (rand(3, 8, 5),)),
    ('sum dims keepdim', lambda a: a.sum((0, -1), keepdim=True), (rand(3, 8, 5),)),
    ('sum bools', lambda a: a.sum(0), (rand(7, 3) > 0,)),
    ('sum empty dim', lambda a: a.sum(0), (rand(0, 4),)),
    ('softmax', lambda a: torch.softmax(a, -1), (SPECIAL,)),
    ('log_softmax f64', lambda a: torch.log_softmax(a, 0), (rand(6, 5, dtype=torch.float64),)),
]


@pytest.mark.parametrize('name, fn, args', RULED, ids=[c[0] for c in RULED])
def test_ruled_ops_match_eager_without_the_meta_kernel(name, fn, args, dev):
    expected = fn(*args)
    with CounterDelta('MetaKernelShapes') as d:
        got = fn(*[a.to(dev) for a in args])
    assert d['MetaKernelShapes'] == 0
    assert got.shape == expected.shape and got.dtype == expected.dtype
    got = got.cpu()
    tol = 1e-2 if expected.dtype == torch.bfloat16 else None
    torch.testing.assert_close(got, expected, atol=tol, rtol=tol, equal_nan=True)


def test_gradients_of_ruled_ops_match_eager(dev):
    a, b, c = rand(5, 1, 31), rand(1, 4, 31), rand(31)
    def loss(a, b, c):
        return (torch.addcdiv(a * b, b, c.abs() + 1, value=0.5).sqrt().lerp(a, 0.25) - torch.maximum(a, c)).sum()
    leaves = [t.clone().requires_grad_() for t in (a, b, c)]
    loss(*leaves).backward()
    xla_leaves = [t.clone().to(dev).requires_grad_() for t in (a, b, c)]
    loss(*xla_leaves).backward()
    for x, e in zip(xla_leaves, leaves):
        torch.testing.assert_close(x.grad.cpu(), e.grad, equal_nan=True)


MIXED = [
    ('promotion', torch.add, (rand(4, 37), rand(37, dtype=torch.float64))),
    ('wrapped number', lambda a: a * 2.5, (rand(4, 37, dtype=torch.float64),)),
    ('integers', torch.mul, (torch.arange(37).view(1, 37), torch.arange(4).view(4, 1))),
    ('mm mixed', torch.mm, (rand(3, 37), rand(37, 2, dtype=torch.float64))),
]


@pytest.mark.parametrize('name, fn, args', MIXED, ids=[c[0] for c in MIXED])
def test_other_signatures_still_follow_eager(name, fn, args, dev):
    expected = None
    try:
        expected = fn(*args)
    except RuntimeError as e:
        with pytest.raises(RuntimeError):
            fn(*[a.to(dev) for a in args]).cpu()
        return
    got = fn(*[a.to(dev) for a in args])
    assert got.shape == expected.shape and got.dtype == expected.dtype
    torch.testing.assert_close(got.cpu(), expected)


def test_eager_errors_are_raised_at_the_op(dev):
    x, y = rand(3, 41).to(dev), rand(5, 41).to(dev)
    # Where PyTorch/XLA words a check of its own, its message (test_error_messages.py).
    with pytest.raises(RuntimeError, match='Shapes are not compatible for broadcasting'):
        torch.add(x, y)
    with pytest.raises(RuntimeError, match='Boolean alpha only supported'):
        torch.add(x, x, alpha=True)
    with pytest.raises(RuntimeError):
        torch.mm(x, y)
    with pytest.raises(RuntimeError):
        torch.bmm(rand(2, 3, 41).to(dev), rand(3, 41, 2).to(dev))
    with pytest.raises(IndexError, match='Dimension out of range'):
        x.sum(2)
    with pytest.raises(RuntimeError, match='dim 0 appears multiple times in the list of dims'):
        x.sum((0, -2))
    with pytest.raises(IndexError, match='Dimension out of range'):
        torch.softmax(x, 2)


def test_softmax_gradients_need_no_meta_kernel(dev):
    a = rand(4, 9).requires_grad_()
    expected = torch.autograd.grad((torch.softmax(a, 1) * a.detach()).sum() + torch.log_softmax(a, 0).sum(), a)[0]
    x = a.detach().to(dev).requires_grad_()
    loss = (torch.softmax(x, 1) * x.detach()).sum() + torch.log_softmax(x, 0).sum()
    with CounterDelta('MetaKernelShapes') as d:
        got = torch.autograd.grad(loss, x)[0]
    assert d['MetaKernelShapes'] == 0
    torch.testing.assert_close(got.cpu(), expected)


def test_nll_loss_takes_float_class_indices_as_pytorch_xla_does(dev):
    # PyTorch/XLA's training loops (its SPMD tests among them) pass `torch.zeros(N)` as the
    # target of CrossEntropyLoss; the classes are the values truncated. Eager CPU refuses them.
    logits = rand(8, 5)
    classes = torch.tensor([0, 4, 2, 1, 3, 3, 0, 2])
    expected_leaf = logits.clone().requires_grad_()
    expected = torch.nn.functional.cross_entropy(expected_leaf, classes, reduction='none')
    expected.sum().backward()
    x = logits.to(dev).requires_grad_()
    with CounterDelta('MetaKernelShapes') as d:
        got = torch.nn.functional.cross_entropy(x, (classes.float() + 0.5).to(dev), reduction='none')
        got.sum().backward()
    assert d['MetaKernelShapes'] == 0
    torch.testing.assert_close(got.cpu(), expected)
    torch.testing.assert_close(x.grad.cpu(), expected_leaf.grad)
    single = torch.nn.functional.nll_loss(logits[0].to(dev), torch.tensor(4.0).to(dev))
    torch.testing.assert_close(single.cpu(), -logits[0, 4])


def test_nll_loss_errors_are_raised_at_the_op(dev):
    x = rand(6, 5).to(dev)
    with pytest.raises(ValueError, match='to match target batch_size'):
        torch.nn.functional.nll_loss(x, torch.zeros(4, dtype=torch.long).to(dev))
    with pytest.raises(RuntimeError, match='size mismatch'):
        torch.ops.aten.nll_loss_forward(x, torch.zeros(4, dtype=torch.long).to(dev), None, 1, -100)
    with pytest.raises(RuntimeError, match='multi-target not supported'):
        torch.nn.functional.nll_loss(x, torch.zeros(6, 2, dtype=torch.long).to(dev))
    with pytest.raises(RuntimeError, match='weight tensor should be defined'):
        torch.nn.functional.nll_loss(x, torch.zeros(6, dtype=torch.long).to(dev), weight=torch.ones(3).to(dev))
    with pytest.raises(RuntimeError, match='expected class indices'):
        torch.nn.functional.nll_loss(x, torch.zeros(6, dtype=torch.bool).to(dev))
