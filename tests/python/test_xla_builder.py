"""PyTorch/XLA's Python XLA builder (torch_xla.core.xla_builder, xla_op_registry): each operation
keeps XLA's semantics, checked against eager torch, and records into the lazy graph."""
import pytest
import torch

import torch_xla
import torch_xla.core.xla_builder as xb
import torch_xla.core.xla_op_registry as xor
import torch_xla.debug.metrics as met


def _run(opfn, *cpu_args, **kwargs):
    op = xor.register('test_op', opfn)
    return op(*[a.to('xla') for a in cpu_args], **kwargs)


def test_elementwise_ops_and_scalars():
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    out = _run(lambda x, y: (x + y) * y - xb.Op.scalar(x.builder(), 2.0) / x.sin(), a, b)
    torch.testing.assert_close(out.cpu(), (a + b) * b - 2.0 / a.sin())
    ints = torch.tensor([7, -7, 9]), torch.tensor([2, 2, -4])
    # XLA's integer Div rounds toward zero and Rem takes the dividend's sign.
    q, r = _run(lambda x, y: xb.Op.tuple((x / y, x % y)), *ints)
    assert q.cpu().tolist() == [3, -3, -2] and r.cpu().tolist() == [1, -1, 1]


def test_a_tuple_of_mixed_dtypes_and_the_graph_it_records():
    met.clear_all()
    a = torch.randn(2, 3)
    same, cast = _run(lambda x: xb.Op.tuple((x, x.cast(xb.Type.BF16))), a)
    assert same.dtype == torch.float32 and cast.dtype == torch.bfloat16
    assert 'aten::_to_copy' in torch_xla._XLAC._get_xla_tensors_text([cast])  # recorded lazily
    torch.testing.assert_close(cast.cpu(), a.bfloat16())


@pytest.mark.parametrize('k0', [0.1, 0.9])
def test_conditional_takes_the_branch_the_predicate_picks(k0):
    def op_fn(k, a, b, k0=None):
        cond = k > xb.Op.scalar(k.builder(), k0, dtype=k.shape().dtype)
        return cond.mkconditional((a, b), lambda a, b: a + b, lambda a, b: a - b)

    k, a, b = torch.tensor(0.2), torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(_run(op_fn, k, a, b, k0=k0).cpu(), a + b if 0.2 > k0 else a - b)


def test_while_loop_runs_its_body_until_the_condition_fails():
    def op_fn(a, b, limit=None):
        def cond(counter, a, b):
            return counter < xb.Op.scalar(counter.builder(), limit, dtype=xb.Type.S32)

        def body(counter, a, b):
            return xb.Op.tuple((counter + xb.Op.scalar(counter.builder(), 1, dtype=xb.Type.S32), a + b, b))

        w = xb.Op.mkwhile((xb.Op.scalar(a.builder(), 0, dtype=xb.Type.S32), a, b), cond, body)
        return w.get_tuple_element(1)

    a, b = torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(_run(op_fn, a, b, limit=5).cpu(), a + 5 * b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('lower,transpose_a,left', [(False, False, True), (True, False, True), (True, True, True),
                                                    (False, True, False)])
def test_triangular_solve(lower, transpose_a, left):
    A = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
    A = A.tril() if lower else A.triu()
    b = torch.randn(3, 2, dtype=torch.float64) if left else torch.randn(2, 3, dtype=torch.float64)
    x = _run(lambda b, A: A.triangualr_solve(b, left, lower, False, transpose_a), b, A).cpu()
    opA = A.T if transpose_a else A
    torch.testing.assert_close(opA @ x if left else x @ opA, b)


def test_reduce_with_a_computation_and_shape_ops():
    a = torch.randn(4, 5, 3)
    add = lambda x, y: x + y  # noqa: E731
    out = _run(lambda x: x.reduce(xb.Op.scalar(x.builder(), 1.5), add, [0, 2]), a)
    torch.testing.assert_close(out.cpu(), a.sum((0, 2)) + 1.5, rtol=1e-5, atol=1e-5)
    biggest = _run(lambda x: x.reduce_all(xb.Op.scalar(x.builder(), float('-inf')), lambda p, q: p.max(q)), a)
    torch.testing.assert_close(biggest.cpu(), a.max())
    v = torch.arange(3.)
    bcast = _run(lambda x: x.broadcast_in_dim([2, 3, 4], [1]), v)
    torch.testing.assert_close(bcast.cpu(), v.reshape(1, 3, 1).expand(2, 3, 4))
    # Dynamic slices clamp their starts so that the slice stays inside the operand.
    m = torch.arange(20.).reshape(4, 5)
    starts = torch.tensor(3), torch.tensor(-2)
    sl = _run(lambda x, i, j: x.dynamic_slice([i, j], [2, 3]), m, *starts)
    torch.testing.assert_close(sl.cpu(), m[2:4, 0:3])
    upd = _run(lambda x, u, i, j: x.dynamic_update_slice(u, [i, j]), m, torch.ones(2, 2), torch.tensor(1),
               torch.tensor(9))
    expected = m.clone()
    expected[1:3, 3:5] = 1
    torch.testing.assert_close(upd.cpu(), expected)


def test_xla_callable_and_flattened_input_func():
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    fn = xb.XlaCallable(lambda a, b: {'out': xb.Op.sin(a) + b['y']})
    res = fn(a.to('xla'), {'y': b.to('xla')})
    torch.testing.assert_close(res['out'].cpu(), a.sin() + b)
    flat = xb.FlattenedInputFunc(lambda d, l: [d['a'] + l[1], d['b']])
    assert flat.postprocess(flat.flat_call(flat.preprocess(({'a': 1, 'b': 2}, [0, 5])))) == [6, 2]


def test_a_computation_of_shapes_and_its_hlo():
    comp = xb.create_computation('scaled', lambda x, y: x * y + x, [xb.mkshape(xb.Type.F32, (2, 3))] * 2)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(comp(a.to('xla'), b.to('xla')).value.cpu(), a * b + a)
    assert 'multiply' in xb.get_computation_hlo(comp)


def test_an_operation_without_a_torch_form_raises():
    with pytest.raises(NotImplementedError, match='conv_general_dilated'):
        _run(lambda x: x.conv_general_dilated(x, [1], [], [], []), torch.randn(1, 1, 3))
    with pytest.raises(AttributeError):
        xb.Op(torch.zeros(1)).not_an_operation


@pytest.mark.parametrize('lhs_shape,rhs_shape,dims,equation', [
    ((2, 1), (1, 2), (([1], [0]), ()), 'ik,kj->ij'),
    ((4, 3, 5), (4, 5, 6), (([2], [1]), ([0], [0])), 'bik,bkj->bij'),
    ((3, 4, 5), (5, 2, 4), (([2, 1], [0, 2]), ()), 'akl,lbk->ab'),
    ((2, 3, 7), (7, 2), (([-1], [0]), ()), 'abk,kc->abc'),
])
def test_xla_dot_general_is_xlas_dot_general(dev, lhs_shape, rhs_shape, dims, equation):
    a, b = torch.randn(*lhs_shape, dtype=torch.float64), torch.randn(*rhs_shape, dtype=torch.float64)
    out = torch_xla._XLAC._xla_dot_general(a.to(dev), b.to(dev), dims)
    torch.testing.assert_close(out.cpu(), torch.einsum(equation, a, b))
    as_f32 = torch_xla._XLAC._xla_dot_general(a.to(dev), b.to(dev), dims, preferred_element_type=torch.float32)
    assert as_f32.dtype == torch.float32


def test_xla_dot_general_refuses_mismatched_dimensions(dev):
    with pytest.raises(RuntimeError, match='contracting dimension 0 is 3 in lhs and 4 in rhs'):
        torch_xla._XLAC._xla_dot_general(torch.zeros(2, 3).to(dev), torch.zeros(4, 2).to(dev), (([1], [0]), ()))
