"""Code paths of the kernel generator that exist for speed, each against eager CPU PyTorch (values
and gradients, odd and empty shapes, NaN/Inf), with the counter that shows the path ran:

- reads through reshapes, transposes, slices and pads whose index arithmetic is simplified by
  the loop ranges (codegen/index_expr.h);
- loops split at a concatenation's part boundaries (KernelLoopsSplitAtConcatenate);
- reductions over the contiguous last dimension with partial accumulators
  (KernelReductionsWithPartials), taking rows that load masks or bytes from a stage array
  (KernelReductionsStaged);
- very large reductions over leading dimensions split across threads by output slice
  (KernelRowReductionsInParallel);
- batched matrix products whose small products are shared out among threads
  (GemmBatchSplitAcrossThreads), and that read a batch of transposed matrices through the
  GEMM's transpose flags instead of a copy (BatchedTransposesReadByGemm);
- reshapes that GEMMs read in their operand's buffer instead of a copy (ReshapesReadInPlace);
- expensive values (GELU's backward, a concatenation, a large softmax's exponential) computed
  once for several consumers instead of again in each (FusionExpensiveValuesComputedOnce);
- loop kernels that also write the values they read at their own index (an optimizer's state
  update written by the parameter update's kernel: MultiOutputKernelExtraOutputs);
- sibling reductions, two sums over the same loops of a tensor they both read, computed by one
  kernel with an accumulator each (batch norm's and layer norm's backward sums:
  SiblingReductionKernels);
- elementwise kernels of one body at several lengths in a graph emitted as one kernel that takes
  its length as an argument (KernelsFlat);
- values that change only along outer loops (a row's log-sum, an index clamped into a padded
  row) computed before the innermost loop, which then vectorizes (KernelLoopInvariantsHoisted);
- transposing kernels walked in tiles: indexed as tile * 8 + offset where the tiles are whole
  (KernelTileIndices), and down the output's columns when the transposed array is all they
  read (KernelTilesWalkedDownColumns).

Counters count compilations (or library calls), so each test uses shapes of its own: a graph
another test compiled first would come from the cache."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from conftest import CounterDelta

FLOATS = [torch.float32, torch.float64]


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)


def run_both(fn, *inputs, dev, grad=True):
    """fn on CPU and on the device; with grad, also the inputs' gradients of a weighted sum."""
    results = []
    for device in ('cpu', dev):
        xs = [x.detach().to(device) for x in inputs]
        if grad:
            for x in xs:
                x.requires_grad_()
        y = fn(*xs)
        grads = []
        if grad:
            w = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(device)
            (torch.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0) * w).sum().backward()
            grads = [x.grad for x in xs]
        xm.mark_step()
        results.append((y.detach().cpu(), [g.cpu() for g in grads]))
    return results


def eager_float64(fn, *inputs):
    """run_both's CPU result computed in float64, in the inputs' dtype: the exact values a sum of
    many float32 terms is held to."""
    (y, grads), = run_both(lambda *xs: fn(*xs), *[x.double() for x in inputs], dev='cpu')[:1]
    dtype = inputs[0].dtype
    return y.to(dtype), [g.to(dtype) for g in grads]


def assert_same(got, want, dtype):
    torch.testing.assert_close(got[0], want[0], equal_nan=True, **tol(dtype))
    for g, w in zip(got[1], want[1]):
        torch.testing.assert_close(g, w, equal_nan=True, **tol(dtype))


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('b,m,n,k', [(6, 13, 11, 7), (1, 40, 3, 29), (2, 0, 5, 3), (3, 4, 2, 0), (0, 3, 4, 5)])
def test_batched_products_read_transposed_operands_in_place(dev, dtype, b, m, n, k):
    """Attention's q @ k^T and its backward: each matrix of a batch transposed ({0, 2, 1}) feeds
    batched products only, which read it through the GEMM's transpose flags instead of a copy."""
    torch.manual_seed(11)
    q, kk, v = (torch.randn(b, m, k, dtype=dtype), torch.randn(b, n, k, dtype=dtype),
                torch.randn(b, n, k, dtype=dtype))
    if q.numel():
        q[0, 0, 0] = float('nan')
        v[-1, -1, -1] = float('inf')

    def fn(q, kk, v):
        scores = torch.bmm(q, kk.transpose(1, 2))         # [b, m, n]
        mixed = torch.bmm(scores, v)                       # [b, m, k]
        return torch.bmm(mixed.transpose(1, 2), scores)    # [b, k, n], both operands transposed

    with CounterDelta('BatchedTransposesReadByGemm') as d:
        want, got = run_both(fn, q, kk, v, dev=dev)
    assert_same(got, want, dtype)
    assert d['BatchedTransposesReadByGemm'] >= 2


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('rows,widths', [(24, (5, 3, 7)), (1, (1, 1, 2)), (9, (4, 0, 6)), (0, (2, 3, 1))])
def test_concatenation_read_by_a_reduction_and_a_product_is_materialized_once(dev, dtype, rows, widths):
    """A bias gradient and a weight gradient of fused q/k/v projections: the concatenation of the
    three gradients feeds a reduction over rows and a GEMM. Fused into the reduction, every
    element would evaluate each part at a clamped index; it is computed once instead, its loop
    split at the part boundaries, and both read it (FusionExpensiveValuesComputedOnce)."""
    torch.manual_seed(3)
    parts = [torch.randn(rows, w, dtype=dtype) for w in widths]
    x = torch.randn(rows, 6, dtype=dtype)
    if parts[0].numel():
        parts[0][0, 0] = float('nan')
        parts[2][-1, -1] = float('-inf')

    def fn(a, b, c, x):
        grad = torch.cat([a * 2, b.tanh(), c + 1], dim=1)
        bias_grad = grad.sum(0)
        weight_grad = grad.t() @ x
        return torch.cat([bias_grad, weight_grad.sum(1)])

    with CounterDelta('FusionExpensiveValuesComputedOnce') as d:
        want, got = run_both(fn, *parts, x, dev=dev)
    assert_same(got, want, dtype)
    assert d['FusionExpensiveValuesComputedOnce'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('sizes,dim', [((3, 5, 1), -1), ((7, 1, 4), 0), ((2, 0, 3), -1), ((17, 33, 9), 1)])
def test_concatenation_splits_the_loop_at_part_boundaries(dev, dtype, sizes, dim):
    torch.manual_seed(0)
    rows = 11
    shapes = [(s, rows) if dim == 0 else (rows, s) for s in sizes]
    parts = [torch.randn(s, dtype=dtype) for s in shapes]
    if parts[0].numel():
        parts[0].view(-1)[0] = float('nan')
        parts[-1].view(-1)[-1] = float('inf')

    def fn(a, b, c):
        return torch.cat([a * 2, b + 1, c.exp()], dim=dim) * 3

    with CounterDelta('KernelLoopsSplitAtConcatenate') as d:
        want, got = run_both(fn, *parts, dev=dev)
    assert_same(got, want, dtype)
    nonempty = sum(1 for s in sizes if s)
    if nonempty > 1:
        assert d['KernelLoopsSplitAtConcatenate'] >= 1


def test_concatenation_of_integers_and_predicates(dev):
    a = torch.arange(-6, 6).reshape(3, 4)
    b = torch.arange(9).reshape(3, 3) * 7
    want = torch.cat([a * 3, b - 1], dim=1) % 5
    got = (torch.cat([a.to(dev) * 3, b.to(dev) - 1], dim=1) % 5).cpu()
    assert torch.equal(got, want)
    m = torch.tensor([[True, False], [False, True]])
    want = torch.cat([m, ~m], dim=1) & torch.tensor([True, True, False, True])
    got = (torch.cat([m.to(dev), ~m.to(dev)], dim=1) & torch.tensor([True, True, False, True]).to(dev)).cpu()
    assert torch.equal(got, want)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('n', [31, 32, 33, 75, 160])
@pytest.mark.parametrize('op', ['sum', 'amax', 'amin', 'mean', 'logsumexp', 'softmax', 'prod'])
def test_last_dimension_reductions_with_partial_accumulators(dev, dtype, n, op):
    torch.manual_seed(n)
    x = torch.randn(5, n, dtype=dtype)
    if op == 'prod':
        x = 1 + 0.01 * x  # a product of n values near 1 stays in range
    x[1, n // 2] = float('nan')  # a row with NaN: every reduction of it is NaN
    x[0, 13] = float('nan')  # in a high partial (lane 13), which the halving fold carries down
    x[2, 3] = float('inf')
    x[3, n - 1] = -float('inf')
    fns = {
        'sum': lambda t: t.sum(-1), 'amax': lambda t: t.amax(-1), 'amin': lambda t: t.amin(-1),
        'mean': lambda t: t.mean(-1), 'logsumexp': lambda t: t.logsumexp(-1),
        'softmax': lambda t: t.softmax(-1), 'prod': lambda t: t.prod(-1),
    }
    fn = fns[op]
    # Gradients through infinities are NaN in both; the finite rows are compared.
    with CounterDelta('KernelReductionsWithPartials') as d:
        want, got = run_both(fn, x, dev=dev, grad=op not in ('amax', 'amin', 'prod'))
    assert_same(got, want, dtype)
    if n >= 32:
        assert d['KernelReductionsWithPartials'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('n', [63, 64, 100, 130, 200])
@pytest.mark.parametrize('op', ['masked_exp_sum', 'masked_max', 'masked_logsumexp', 'int8_weighted_sum',
                                'sibling_sums'])
def test_last_dimension_reductions_of_narrow_loads_are_staged(dev, dtype, n, op):
    """A row whose body loads masks or bytes beside wider values (attention's masked softmax
    through torch.compile) is computed 64 elements at a time into a stage array that the partial
    accumulators then take (KernelReductionsStaged): the same values as eager, with NaN and Inf,
    rows that leave 16-wide blocks and a tail after the staged part, rows too short to stage, and
    sibling reductions of which only one loads the mask."""
    torch.manual_seed(n + len(op))
    x = torch.randn(5, n, dtype=dtype)
    mask = torch.rand(5, n) < 0.3
    mask[:, 0] = False  # no row wholly masked: its max would be -inf and its exp-sum NaN
    mask[4, 1:] = True  # a row of one live element
    x[1, n // 2] = float('nan')
    x[2, min(70, n - 1)] = float('inf')  # past the staged part when n is 100 or 130
    x[3, n - 1] = -float('inf')
    weights = torch.randint(-3, 4, (n,), dtype=torch.int8)

    def fn(t):
        m = mask.to(t.device)
        if op == 'masked_exp_sum':
            return (t.masked_fill(m, -float('inf')) - 1).exp().sum(-1)
        if op == 'masked_max':
            return t.masked_fill(m, -float('inf')).amax(-1)
        if op == 'masked_logsumexp':
            return t.masked_fill(m, -float('inf')).logsumexp(-1)
        if op == 'sibling_sums':  # one kernel, two accumulators, only the second reading the mask
            return t.sum(-1) * 2 + t.masked_fill(m, 0).sum(-1)
        return (t * weights.to(t.device)).sum(-1)

    with CounterDelta('KernelReductionsStaged') as d:
        want, got = run_both(fn, x, dev=dev, grad=False)
    assert_same(got, want, dtype)
    assert (d['KernelReductionsStaged'] >= 1) == (n >= 64)
    if op != 'masked_max':
        want, got = run_both(fn, x, dev=dev)
        assert_same(got, want, dtype)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('heads,seq,width', [(4, 64, 32), (3, 10, 7), (2, 9, 16)])
def test_concatenated_attention_heads_read_at_affine_offsets(dev, dtype, heads, seq, width):
    """Attention's backward concatenates the gradients of q, k (transposed) and v, each taken
    from [batch*heads, seq, width] back to [batch, seq, heads*width]: a later operand's loop runs
    over its slice of the output, where the offset's division and remainder fold into constants
    (the generated read is affine). Values and gradients against eager, with NaN and Inf."""
    torch.manual_seed(heads * seq)
    batch = 2
    q = torch.randn(batch * heads, seq, width, dtype=dtype)
    kt = torch.randn(batch * heads, width, seq, dtype=dtype)
    v = torch.randn(batch * heads, seq, width, dtype=dtype)
    q[0, 1, 2] = float('nan')
    kt[-1, -1, -1] = float('inf')

    def merge(t):  # [batch*heads, seq, width] -> [batch, seq, heads*width]
        return t.reshape(batch, heads, seq, width).transpose(1, 2).reshape(batch, seq, heads * width)

    def fn(q, kt, v):
        return torch.cat([merge(q), merge(kt.transpose(1, 2)), merge(v * 2)], dim=-1)

    want, got = run_both(fn, q, kt, v, dev=dev)
    assert_same(got, want, dtype)


@pytest.mark.parametrize('dtype', [torch.int64, torch.int32, torch.bool])
def test_integer_and_predicate_reductions_with_partial_accumulators(dev, dtype):
    torch.manual_seed(3)
    x = torch.randint(-50, 50, (4, 97)).to(dtype)
    cases = [lambda t: t.amax(-1), lambda t: t.amin(-1), lambda t: t.any(-1), lambda t: t.all(-1)]
    if dtype != torch.bool:
        cases += [lambda t: t.sum(-1)]
    for fn in cases:
        assert torch.equal(fn(x.to(dev)).cpu(), fn(x)), fn


@pytest.mark.parametrize('dtype', FLOATS)
def test_leading_dimension_reductions_split_across_threads(dev, dtype):
    torch.manual_seed(4)
    x = torch.randn(8200, 1040, dtype=dtype)  # 8.5M elements (only so large a one is split), 65 blocks
    x[7, 5] = float('nan')
    x[9, 1039] = float('inf')
    with CounterDelta('KernelRowReductionsInParallel') as d:
        want, got = run_both(lambda t: t.sum(0) * 2, x, dev=dev)
        got_max = (x.to(dev).amax(0)).cpu()
    # Eager float32 sums 8200 terms in float32 (a few 1e-5 off near zero); the device accumulates
    # in double: both are held to the float64 sum.
    exact = x.double().sum(0) * 2
    torch.testing.assert_close(got[0].double(), exact, equal_nan=True, **tol(dtype))
    torch.testing.assert_close(want[0].double(), exact, equal_nan=True, rtol=1e-5, atol=1e-4)
    for g, w in zip(got[1], want[1]):
        torch.testing.assert_close(g, w, equal_nan=True, **tol(dtype))
    assert torch.equal(got_max.isnan(), x.amax(0).isnan())
    torch.testing.assert_close(got_max, x.amax(0), equal_nan=True)
    assert d['KernelRowReductionsInParallel'] >= 2
    # Columns that are not whole blocks of 16, and several kept dimensions: values only.
    ints = torch.randint(-9, 9, (229, 302))
    assert torch.equal(ints.to(dev).sum(0).cpu(), ints.sum(0))
    y = torch.randn(300, 15, 17, dtype=dtype)
    torch.testing.assert_close(y.to(dev).sum(0).cpu(), y.sum(0), **tol(dtype))


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shapes', [((64, 19, 9), (64, 9, 23)), ((3, 5, 0), (3, 0, 4)), ((0, 2, 3), (0, 3, 2)),
                                    ((1, 70, 80), (1, 80, 90))])
def test_batched_matrix_products(dev, dtype, shapes):
    torch.manual_seed(5)
    a, b = torch.randn(shapes[0], dtype=dtype), torch.randn(shapes[1], dtype=dtype)
    if a.numel():
        a[0, 0, 0] = float('nan')
    with CounterDelta('GemmBatchSplitAcrossThreads') as d:
        want, got = run_both(torch.bmm, a, b, dev=dev)
    assert_same(got, want, dtype)
    if shapes[0][0] == 64 and torch.get_num_threads() > 1:
        assert d['GemmBatchSplitAcrossThreads'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
def test_reads_through_reshape_transpose_slice_and_pad_chains(dev, dtype):
    torch.manual_seed(6)
    x = torch.randn(6, 10, 21, dtype=dtype)
    x[0, 0, 0] = float('nan')

    def fn(t):
        # Attention-style head split and merge, a shifted slice and a pad back to length: the
        # reads the index simplifier rewrites.
        y = t.reshape(6, 10, 3, 7).transpose(1, 2).reshape(18, 70)
        y = F.pad(y[:, 1:] * 2, (0, 1))
        y = y.reshape(6, 3, 10, 7).transpose(1, 2).reshape(6, 10, 21)
        return y.flip(-1)[:, ::3] + t[:, ::3]

    want, got = run_both(fn, x, dev=dev)
    assert_same(got, want, dtype)


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(5, 1, 3, 7), (1, 2, 1, 1), (0, 1, 3, 7)])
def test_flattened_input_and_reshaped_gradients_are_read_in_place(dev, dtype, shape):
    """Flatten -> Linear: the GEMMs read the flattened input and the reshaped gradient in the
    buffers they live in; values and gradients as eager's (NaN included)."""
    torch.manual_seed(10)
    features = shape[1] * shape[2] * shape[3]
    x = torch.randn(*shape, dtype=dtype)
    if x.numel():
        x.view(-1)[1] = float('nan')
    w = torch.randn(features, 4, dtype=dtype)

    def fn(t, m):
        h = t.flatten(1) @ m
        return (h.reshape(shape[0], 2, 2) * 3).reshape(shape[0], 4) @ m.t()

    with CounterDelta('ReshapesReadInPlace') as d:
        want, got = run_both(fn, x, w, dev=dev)
    assert_same(got, want, dtype)
    if x.numel():
        assert d['ReshapesReadInPlace'] >= 1


def test_a_parameter_read_in_place_through_a_reshape_is_not_overwritten_before_its_reader(dev):
    """An in-place update of a tensor a GEMM reads through a reshape in the same graph: the update
    may take over the tensor's buffer only after the GEMM has read it."""
    torch.manual_seed(11)
    a_cpu, m = torch.randn(4, 6), torch.randn(3, 2)
    a = a_cpu.to(dev)
    with CounterDelta('ReshapesReadInPlace') as d:
        for step in range(3):  # later steps run with `a` held by nothing but the graph
            y = a.reshape(8, 3) @ m.to(dev)
            a.add_(1.0)
            xm.mark_step()
            want = a_cpu.reshape(8, 3) @ m
            a_cpu.add_(1.0)
            torch.testing.assert_close(y.cpu(), want)
            torch.testing.assert_close(a.cpu(), a_cpu)
    assert d['ReshapesReadInPlace'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
def test_gelu_backward_is_computed_once_for_the_bias_and_weight_gradients(dev, dtype):
    """A transformer MLP's GELU backward feeds the bias gradient (a reduction over batch and
    time) and the GEMMs of the weight and input gradients: it is computed once and read by
    each, with eager's values (a NaN included; eager's float32 GELU of +inf is NaN, a quirk of its
    vectorized erf that this test does not pin down)."""
    torch.manual_seed(12)
    x, w, b = torch.randn(3, 5, 12, dtype=dtype), torch.randn(12, 9, dtype=dtype), torch.randn(9, dtype=dtype)
    x[1, 2, 3] = float('nan')

    def fn(t, m, bias):
        return F.gelu(t @ m + bias)

    with CounterDelta('FusionExpensiveValuesComputedOnce') as d:
        want, got = run_both(fn, x, w, b, dev=dev)
    assert_same(got, want, dtype)
    assert d['FusionExpensiveValuesComputedOnce'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape,once', [((4, 33, 65), True), ((2, 3, 5), False), ((3, 0, 7), False)])
def test_softmax_exponential_is_computed_once_when_large(dev, dtype, shape, once):
    """Softmax's exp(x - max) feeds its sum and the normalizing division. On a large tensor it is
    computed once and read by both (FusionExpensiveValuesComputedOnce); on a small one each
    computes it again, which costs less than a kernel of its own. Rows of NaN, -inf and +inf
    keep eager's values either way."""
    torch.manual_seed(13)
    x = torch.randn(*shape, dtype=dtype) * 4
    if x.numel():
        x[0, 0, 0] = float('nan')
        x[-1, -1, :] = float('-inf')
        x[0, -1, 1] = float('inf')

    with CounterDelta('FusionExpensiveValuesComputedOnce') as d:
        want, got = run_both(lambda t: torch.softmax(t, -1), x, dev=dev, grad=False)
    assert_same(got, want, dtype)
    assert (d['FusionExpensiveValuesComputedOnce'] >= 1) == once


OPTIMIZERS = {
    'sgd_momentum': lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2),
    'adamw': lambda p: torch.optim.AdamW(p, lr=1e-2),
    'adam_amsgrad': lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True),
}


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('name', sorted(OPTIMIZERS))
def test_optimizer_state_and_parameter_updates_share_one_loop(dev, dtype, name):
    """An optimizer's state update (momentum buffer, Adam's moments) is written by the kernel of
    the parameter update that reads it, in one pass over memory; parameters, gradients and state
    stay eager's over steps where both are updated in place (donated), for odd and empty shapes,
    with a NaN gradient element spreading as in eager."""
    torch.manual_seed(13)
    shapes = [(7, 5), (13,), (0, 3), (3, 1, 4)]
    params = [torch.randn(s, dtype=dtype) for s in shapes]
    grads = [[torch.randn(s, dtype=dtype) for s in shapes] for _ in range(3)]
    grads[2][1][4] = float('nan')
    results = {}
    with CounterDelta('MultiOutputKernelExtraOutputs') as d:
        for device in ('cpu', dev):
            ps = [p.clone().to(device).requires_grad_() for p in params]
            opt = OPTIMIZERS[name](ps)
            for step_grads in grads:
                for p, g in zip(ps, step_grads):
                    p.grad = g.to(device)
                opt.step()
                xm.mark_step()
            state = [{k: v.cpu() for k, v in opt.state[p].items() if k != 'step'} for p in ps]
            results[device] = ([p.detach().cpu() for p in ps], state)
    want, got = results['cpu'], results[dev]
    for g, w in zip(got[0], want[0]):
        torch.testing.assert_close(g, w, equal_nan=True, **tol(dtype))
    for gs, ws in zip(got[1], want[1]):
        assert gs.keys() == ws.keys()
        for k in ws:
            torch.testing.assert_close(gs[k], ws[k], equal_nan=True, **tol(dtype))
    assert d['MultiOutputKernelExtraOutputs'] >= 1


def test_masked_fill_reads_the_mask_as_bytes(dev):
    torch.manual_seed(7)
    x = torch.randn(4, 3, 40, 40)
    x[0, 0, 0, 1] = float('nan')
    mask = torch.triu(torch.ones(40, 40, dtype=torch.bool), diagonal=1)

    def fn(t):
        return (t / 3).masked_fill(mask.to(t.device), float('-inf')).softmax(-1)

    want, got = run_both(fn, x, dev=dev)
    assert_same(got, want, torch.float32)


@pytest.mark.parametrize('dtype', FLOATS)
def test_kernels_are_named_by_content_shared_in_a_graph_and_reused_by_later_graphs(dev, dtype):
    """Identical kernels (the same optimizer update for layers of one shape) are compiled once per
    graph (KernelsSharedInGraph), and the steady step's graph links the kernels the first step's
    graph compiled (KernelsReused), with the values eager computes."""
    torch.manual_seed(8)
    widths = (31, 27, 27, 27, 6) if dtype == torch.float32 else (30, 26, 26, 26, 5)

    def make():
        torch.manual_seed(9)
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.Tanh()]
        return torch.nn.Sequential(*layers[:-1]).to(dtype)

    x = torch.randn(13, widths[0], dtype=dtype)
    y = torch.randint(0, widths[-1], (13,))

    def train(device, steps):
        model = make().to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            out = model(x.to(device))
            loss = F.cross_entropy(out, y.to(device))
            loss.backward()
            opt.step()
            xm.mark_step()
            losses.append(loss.detach().cpu())
        return torch.stack(losses), [p.detach().cpu() for p in model.parameters()]

    want_losses, want_params = train('cpu', 3)
    with CounterDelta('KernelsSharedInGraph', 'KernelsReused', 'KernelsCompiled') as d:
        got_losses, got_params = train(dev, 3)
    assert d['KernelsSharedInGraph'] > 0
    assert d['KernelsReused'] > d['KernelsCompiled'] / 4, d.delta
    torch.testing.assert_close(got_losses, want_losses, **tol(dtype))
    for g, w in zip(got_params, want_params):
        torch.testing.assert_close(g, w, **tol(dtype))


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(3, 5, 7, 2), (2, 4, 3, 3), (300, 7, 3, 3), (1, 1, 1, 1), (4, 0, 3, 3)])
def test_dimensions_read_in_row_major_order_run_as_one_loop(dev, dtype, shape):
    """An elementwise kernel whose operands are read at its own index, or broadcast along its
    trailing dimensions (a per-channel scale), runs those dimensions as one loop
    (KernelLoopsMerged); the forward and backward kernels of such an update compute eager's
    values, with NaN and Inf, one element, empty, and 300 rows split across threads."""
    torch.manual_seed(21)
    x = torch.randn(shape, dtype=dtype)
    if x.numel() >= 3:
        x.view(-1)[:3] = torch.tensor([float('nan'), float('inf'), -float('inf')], dtype=dtype)
    g = torch.randn(shape, dtype=dtype)
    s = torch.randn(shape[1], dtype=dtype)

    def fn(x, g, s):
        return torch.tanh(x) * 0.5 - g * s[:, None, None] + torch.relu(g)

    with CounterDelta('KernelLoopsMerged') as d:
        got = run_both(fn, x, g, s, dev=dev)
    assert_same(got[1], got[0], dtype)
    if x.numel() >= 2:
        assert d['KernelLoopsMerged'] > 0, d.delta


def _flat_inputs(shapes, dtype, seed):
    torch.manual_seed(seed)
    xs = [torch.randn(s, dtype=dtype) for s in shapes]
    for x in xs:
        if x.numel() >= 3:
            x.view(-1)[:3] = torch.tensor([float('nan'), float('inf'), -float('inf')], dtype=dtype)
    return xs


def _each_on_both(fn, xs, dev):
    """fn applied to each input on the CPU and on the device (one graph), with the inputs'
    gradients of a weighted sum of all the outputs."""
    results = []
    for device in ('cpu', dev):
        ins = [x.detach().to(device).requires_grad_() for x in xs]
        outs = [fn(x) for x in ins]
        total = sum((torch.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0) *
                     torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(device)).sum()
                    for y in outs)
        total.backward()
        xm.mark_step()
        results.append(([y.detach().cpu() for y in outs], [x.grad.cpu() for x in ins]))
    return results


# Lengths 105, 1, 17, 69000 (past kParallelElements: the threads split it) and 6.
FLAT_SHAPES = [(3, 5, 7), (1,), (17,), (300, 230), (2, 3)]


@pytest.mark.parametrize('dtype', FLOATS)
def test_one_elementwise_body_at_many_lengths_is_one_flat_kernel(dev, dtype):
    """Kernels of one body that read only at their own offset or scalars, at several lengths in a
    graph, are one kernel taking its length as an argument (KernelsFlat; TXLA_FLAT_KERNELS=1, the
    default): values and gradients against eager with NaN and Inf, one element, and a length the
    threads split."""
    xs = _flat_inputs(FLAT_SHAPES, dtype, 31)

    # No transcendental: one that the forward and the gradient both read is, at the length the
    # threads split, computed once in a kernel of its own, whose body is then that length's alone.
    def fn(x):
        return torch.clamp(x, -2, 3) * 0.75 - x * x.abs() + 2.5

    with CounterDelta('KernelsFlat') as d:
        want, got = _each_on_both(fn, xs, dev)
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        torch.testing.assert_close(g, w, equal_nan=True, **tol(dtype))
    # The forward kernel and the gradient's kernel, each at four lengths (a one-element kernel's
    # index is the constant 0: its text is its own).
    assert d['KernelsFlat'] >= 2 * (len(FLAT_SHAPES) - 1), d.delta


@pytest.mark.parametrize('mode', ['0', '2'])
def test_flat_kernels_switch(dev, xla_env, mode):
    """TXLA_FLAT_KERNELS=0 never emits flat kernels; =2 makes every candidate flat, a kernel of one
    length too (the values stay eager's, here for integer, boolean and mixed-type kernels)."""
    xla_env(TXLA_FLAT_KERNELS=mode)
    torch.manual_seed(32)
    a = torch.randint(-50, 50, (37, 3), dtype=torch.int32)
    b = torch.randint(-50, 50, (37, 3), dtype=torch.int32)
    f = torch.randn(70001)
    f[:2] = torch.tensor([float('nan'), float('-inf')])

    def fn(a, b, f):
        return (a * 3 - b).abs() + torch.minimum(a, b), (a > b) & (b != 0), torch.where(f > 0, f, f * 0.125).to(torch.float64)

    want = fn(a, b, f)
    with CounterDelta('KernelsFlat') as d:
        out = fn(a.to(dev), b.to(dev), f.to(dev))
        xm.mark_step()
    for g, w in zip(out, want):
        torch.testing.assert_close(g.cpu(), w, equal_nan=True, rtol=0, atol=0)
    if mode == '0':
        assert d['KernelsFlat'] == 0, d.delta
    else:
        assert d['KernelsFlat'] >= 3, d.delta


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16])
def test_flat_kernels_store_16_bit_floats(dev, dtype):
    """A flat kernel over 16-bit floats computes each op in float32 and rounds its result to the
    type, as eager does (as a fused kernel does at any length)."""
    xs = [x.to(dtype) for x in _flat_inputs(FLAT_SHAPES, torch.float32, 33)]

    def fn(x):
        return x * 1.5 - torch.exp(x * 0.25)

    with CounterDelta('KernelsFlat') as d:
        outs = [fn(x.to(dev)) for x in xs]
        xm.mark_step()
    for x, y in zip(xs, outs):
        torch.testing.assert_close(y.cpu(), fn(x), equal_nan=True)
    assert d['KernelsFlat'] >= len(FLAT_SHAPES) - 1, d.delta


def test_sgd_momentum_over_parameters_of_many_shapes_is_flat(dev):
    """SGD with momentum over parameters of many shapes: the update (parameter and momentum buffer,
    two outputs) is one flat kernel for all of them; three steps stay eager's."""
    torch.manual_seed(34)
    shapes = [(9, 4), (4,), (3, 3, 3), (70, 1000), (2,)]
    params = [torch.randn(s) for s in shapes]
    grads = [[torch.randn(s) for s in shapes] for _ in range(3)]
    results = {}
    with CounterDelta('KernelsFlat') as d:
        for device in ('cpu', dev):
            ps = [p.clone().to(device).requires_grad_() for p in params]
            opt = torch.optim.SGD(ps, lr=0.03, momentum=0.8, weight_decay=0.01)
            for step_grads in grads:
                for p, g in zip(ps, step_grads):
                    p.grad = g.to(device)
                opt.step()
                xm.mark_step()
            results[device] = [p.detach().cpu() for p in ps] + [opt.state[p]['momentum_buffer'].cpu() for p in ps]
    for g, w in zip(results[dev], results['cpu']):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    assert d['KernelsFlat'] >= len(shapes), d.delta


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(5, 6, 16, 16), (3, 4, 7, 9), (2, 3, 4, 4), (300, 2, 5, 5), (1, 1, 1, 1), (0, 3, 4, 4)])
def test_trailing_reduced_dimensions_run_as_one_loop(dev, dtype, shape):
    """Per-channel sums over (N, H, W), as batch norm's statistics and its backward take them:
    H and W run as one reduced loop (KernelReducedLoopsMerged), with partial accumulators once it
    is 32 long; values and gradients against eager, with NaN and Inf, one element, empty."""
    torch.manual_seed(22)
    x = torch.randn(shape, dtype=dtype)
    y = torch.randn(shape, dtype=dtype)
    if x.numel() >= 4:
        x.view(-1)[1:4] = torch.tensor([float('nan'), float('inf'), -float('inf')], dtype=dtype)
        x[:, 1:].clamp_(-3, 3)  # channel 0 carries the NaN; the others stay finite

    def fn(x, y):
        return torch.stack([torch.relu(x).sum(dim=(0, 2, 3)), (x * y).sum(dim=(0, 2, 3))])

    with CounterDelta('KernelReducedLoopsMerged') as d:
        got = run_both(fn, x, y, dev=dev)
    assert_same(got[1], got[0], dtype)
    if x.numel() >= 2 and shape[2] * shape[3] > 1:
        assert d['KernelReducedLoopsMerged'] > 0, d.delta


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(4, 6, 5, 7), (16, 8, 16, 16), (300, 2, 3, 3), (2, 1, 1, 1)])
def test_batch_norm_backward_sums_share_one_kernel(dev, dtype, shape):
    """Batch norm's backward sums dy and dy * xhat over (N, H, W) in one kernel with two
    accumulators (SiblingReductionKernels), the ReLU mask between read once for both; the input,
    weight and bias gradients against eager, with NaN and Inf in channel 0, one element per
    channel, and 300 images split across threads."""
    torch.manual_seed(23)
    x = torch.randn(shape, dtype=dtype)
    if x[:, 0].numel() >= 3:
        x[1 % shape[0], 0].view(-1)[:1] = float('nan')
        x[0, 0].view(-1)[-1:] = float('inf')
    w = torch.rand(shape[1], dtype=dtype) + 0.5
    b = torch.randn(shape[1], dtype=dtype)

    def fn(x, w, b):
        return torch.relu(F.batch_norm(x, None, None, w, b, training=True))

    with CounterDelta('SiblingReductionKernels') as d:
        got = run_both(fn, x, w, b, dev=dev)
    # Eager float32 sums 4096 terms per channel in float (its bias gradient 6e-4 from the exact
    # one here); the device accumulates in double: both are held to eager float64.
    assert_same(got[1], eager_float64(fn, x, w, b), dtype)
    assert d['SiblingReductionKernels'] >= 1, d.delta


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(3, 7, 40), (64, 128), (1, 33), (5, 1), (0, 16)])
def test_layer_norm_backward_sums_share_kernels(dev, dtype, shape):
    """Layer norm's backward sums g and g * xhat along each row (for the input's gradient) and dy
    and dy * xhat down the columns (the bias and weight gradients): each pair is one kernel
    (SiblingReductionKernels), with partial accumulators from 32 columns; gradients against eager,
    with NaN and Inf in row 0, one column, and no rows at all."""
    torch.manual_seed(24)
    x = torch.randn(shape, dtype=dtype)
    if x.numel() >= 3:
        x.view(-1, shape[-1])[0, :2] = torch.tensor([float('nan'), float('inf')], dtype=dtype)[:shape[-1]]
    w = torch.rand(shape[-1], dtype=dtype) + 0.5
    b = torch.randn(shape[-1], dtype=dtype)

    def fn(x, w, b):
        return torch.tanh(F.layer_norm(x, shape[-1:], w, b))

    with CounterDelta('SiblingReductionKernels') as d:
        got = run_both(fn, x, w, b, dev=dev)
    assert_same(got[1], eager_float64(fn, x, w, b), dtype)
    if x.numel() > 0:
        assert d['SiblingReductionKernels'] >= 1, d.delta


def test_sibling_reductions_of_different_types_and_combiners(dev):
    """A float sum and an integer count of the same tensor (one kernel, a double and an int64
    accumulator), a max over the same dimensions beside them, and a product over other ones:
    values and dtypes against eager, NaN and Inf included."""
    torch.manual_seed(25)
    x = torch.randn(50, 9, 3)
    x[3, 2, 1] = float('nan')
    x[7, 4, 0] = float('inf')
    with CounterDelta('SiblingReductionKernels') as d:
        got = []
        for device in ('cpu', dev):
            t = x.to(device)
            outs = [t.sum((0, 2)), (t > 0).sum((0, 2)), t.amax((0, 2)), (t * 0.1 + 1).prod(0)]
            xm.mark_step()
            got.append([o.cpu() for o in outs])
    for lazy, eager in zip(got[1], got[0]):
        assert lazy.dtype == eager.dtype
        torch.testing.assert_close(lazy, eager, equal_nan=True, rtol=1e-5, atol=1e-5)
    assert d['SiblingReductionKernels'] >= 1, d.delta


RECONVERGING_CHAINS = r'''
import json, torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
dev = torch_xla.device()
perm = torch.randperm(24, generator=torch.Generator().manual_seed(0))
chains = {
    # lerp_ reads its own value twice: a + w * (b - a)
    'lerp_': (60, lambda x, y: x.lerp_(y, 0.25)),
    # each value read at its own index and at permuted ones (gather): x + x[perm]
    'gather': (40, lambda x, y: (x + x[:, perm.to(x.device)]) * 0.5),
    'reverse': (40, lambda x, y: torch.maximum(x, x.flip(-1)) - 0.25 * y),
}
out = {}
for dtype in (torch.float32, torch.float64):
    for name, (depth, step) in chains.items():
        x0 = torch.randn(5, 24, dtype=dtype); y = torch.randn(5, 24, dtype=dtype)
        results = []
        for device in ('cpu', dev):
            x = x0.detach().to(device).requires_grad_(name != 'lerp_')
            h = x.detach().clone() if name == 'lerp_' else x
            for _ in range(depth):
                h = step(h, y.to(device))
            grad = None
            if name != 'lerp_':
                (h * torch.linspace(-1, 1, h.numel(), dtype=dtype).reshape(h.shape).to(device)).sum().backward()
                grad = x.grad.cpu()
            xm.mark_step()
            results.append((h.detach().cpu(), grad))
        (v_cpu, g_cpu), (v_dev, g_dev) = results
        tol = 1e-5 if dtype == torch.float32 else 1e-12
        ok = torch.allclose(v_dev, v_cpu, rtol=tol, atol=tol)
        if g_cpu is not None:
            ok = ok and torch.allclose(g_dev, g_cpu, rtol=tol, atol=tol)
        out[f'{name}/{dtype}'] = ok
out['limited'] = met.counter_value('FusionCodeDuplicationLimited') or 0
print(json.dumps(out))
'''


def test_chains_that_read_each_value_twice_compile_and_match_eager():
    """Chains where every step reads the previous value twice (lerp_), or also at other indices
    (a gather, a reverse), in float32 and float64, with the gradient through the chain. Such a
    chain compiled in time exponential in its depth twice over: the emitter's check for loops it
    may merge walked every path through the chain (a 20-step lerp_ chain took minutes), and a
    value read at other indices inside one loop kernel was computed again per index, 2^depth
    copies of code (FusionCodeDuplicationLimited now cuts the kernel). In a subprocess with a
    time limit, so a return of either shows as a failure, not a hang."""
    import json
    import subprocess
    import sys
    run = subprocess.run([sys.executable, '-c', RECONVERGING_CHAINS], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result.pop('limited') >= 1
    assert all(result.values()), result


@pytest.mark.parametrize('dtype', FLOATS + [torch.bfloat16])
@pytest.mark.parametrize('rows,shift', [(7, 1), (21, 3), (1, 1)])
def test_values_constant_along_the_inner_loop_are_computed_once_per_row(dev, dtype, rows, shift):
    """A language model's loss: log_softmax over shifted rows (a slice, then a pad in the
    gradient), whose backward reads each row's log-sum at a clamped row index; bfloat16 as under
    autocast."""
    torch.manual_seed(5)
    logits = torch.randn(2, rows + shift, 37, dtype=dtype)
    target = torch.randint(0, 37, (2, rows))
    compute = torch.float32 if dtype == torch.bfloat16 else dtype
    with CounterDelta('KernelLoopInvariantsHoisted') as d:
        want, got = run_both(lambda x: F.cross_entropy(x[:, :-shift].reshape(-1, 37).to(compute), target.reshape(-1).to(x.device),
                                                       reduction='none').reshape(2, rows), logits, dev=dev)
    if dtype == torch.bfloat16:
        torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got[1][0].float(), want[1][0].float(), rtol=1.6e-2, atol=1e-5)
    else:
        assert_same(got, want, dtype)
    assert d['KernelLoopInvariantsHoisted'] >= 1


@pytest.mark.parametrize('dtype', FLOATS)
def test_a_row_index_is_checked_once_per_row(dev, dtype):
    """An embedding plus positions (a language model's input): each token's row index is read and
    bounds-checked before the loop along the row, which vectorizes; values and the table's
    gradient as eager's."""
    torch.manual_seed(6)
    table, positions = torch.randn(50, 24, dtype=dtype), torch.randn(9, 24, dtype=dtype)
    tokens = torch.randint(0, 50, (3, 9))
    with CounterDelta('KernelLoopInvariantsHoisted') as d:
        want, got = run_both(lambda t, p: F.embedding(tokens.to(t.device), t) + p, table, positions, dev=dev)
    assert_same(got, want, dtype)
    assert d['KernelLoopInvariantsHoisted'] >= 1


@pytest.mark.parametrize('dtype,out_dtype', [(torch.float32, torch.bfloat16), (torch.float32, torch.float32),
                                             (torch.float64, torch.float64), (torch.float32, torch.float16)])
@pytest.mark.parametrize('shape', [(136, 520), (97, 45), (3, 40, 24), (16, 16)])
def test_transposed_copies_walk_tiles_down_columns(dev, dtype, out_dtype, shape):
    """A kernel whose only array input is read through a transpose of its last two dimensions
    (a weight's transposed bf16 copy, as torch.compile saves one for the backward) walks each
    tile along the input's rows (KernelTilesWalkedDownColumns): values against eager, whole and
    partial tiles (sizes that are and are not multiples of 8), NaN, infinities and signed zeros,
    one scalar scale; a kernel that also reads an array in the output's order keeps its rows."""
    torch.manual_seed(3)
    x = torch.randn(shape, dtype=dtype) * 100
    x.view(-1)[0], x.view(-1)[1], x.view(-1)[2], x.view(-1)[-1] = float('nan'), float('inf'), -float('inf'), -0.0
    other = torch.randn(shape[:-2] + (shape[-1], shape[-2]), dtype=dtype)

    def copy(t):
        return t.transpose(-2, -1).to(out_dtype) * 3

    def mixed(t, o):
        return (t.transpose(-2, -1) + o).to(out_dtype)

    with CounterDelta('KernelTilesWalkedDownColumns') as d:
        (got, _), = [r for r in run_both(copy, x, dev=dev, grad=False)[1:]]
    want = copy(x)
    torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
    numbers = ~want.isnan()
    assert torch.equal(torch.signbit(got)[numbers], torch.signbit(want)[numbers])  # -0.0 stays negative
    assert d['KernelTilesWalkedDownColumns'] == 1
    with CounterDelta('KernelTilesWalkedDownColumns') as d:
        (got, _), = [r for r in run_both(mixed, x, other, dev=dev, grad=False)[1:]]
    torch.testing.assert_close(got, mixed(x, other), equal_nan=True, rtol=0, atol=0)
    assert d['KernelTilesWalkedDownColumns'] == 0


@pytest.mark.parametrize('heads,seq,width,whole', [(4, 64, 32, True), (2, 24, 16, True), (3, 10, 7, False)])
def test_a_bf16_concatenation_of_attention_gradients_is_indexed_by_tiles(dev, heads, seq, width, whole):
    """The attention backward's concatenation of the q, k (transposed) and v gradients, converted
    to bf16 as autocast's backward through torch.compile does: with whole 8x8 tiles each part's
    '/ width' and '% width' fold into per-tile values (KernelTileIndices); values against eager
    exactly (one rounding of each element), NaN and Inf included, and partial tiles."""
    torch.manual_seed(seq)
    batch = 2
    q = torch.randn(batch * heads, seq, width)
    kt = torch.randn(batch * heads, width, seq)
    v = torch.randn(batch * heads, seq, width)
    q[0, 1, 2], kt[-1, -1, -1] = float('nan'), -float('inf')

    def merge(t):
        return t.reshape(batch, heads, seq, width).transpose(1, 2).reshape(batch, seq, heads * width)

    def fn(q, kt, v):
        return torch.cat([merge(q), merge(kt.transpose(1, 2)), merge(v)], dim=-1).to(torch.bfloat16)

    with CounterDelta('KernelTileIndices') as d:
        (got, _), = run_both(fn, q, kt, v, dev=dev, grad=False)[1:]
    torch.testing.assert_close(got, fn(q, kt, v), equal_nan=True, rtol=0, atol=0)
    assert (d['KernelTileIndices'] > 0) == whole


@pytest.mark.parametrize('rows_a,rows_b,cols,whole', [(256, 512, 384, True), (48, 40, 24, True), (20, 12, 36, False)])
def test_transposed_parts_concatenated_along_the_threads_rows(dev, rows_a, rows_b, cols, whole):
    """Two transposed parts concatenated along the first dimension, which the threads split in
    rows of tiles: each part's loop nest takes its own tiles of the thread's range, indexed by
    tile where the parts' rows are whole tiles (KernelTileIndices), split at the part boundary
    (KernelLoopsSplitAtConcatenate); exact against eager's bf16, NaN included."""
    torch.manual_seed(rows_a)
    a, b = torch.randn(cols, rows_a), torch.randn(cols, rows_b)
    a[0, 0] = float('nan')

    def fn(a, b):
        return torch.cat([a.t(), b.t() * 2], dim=0).to(torch.bfloat16)

    with CounterDelta('KernelTileIndices', 'KernelLoopsSplitAtConcatenate') as d:
        (got, _), = run_both(fn, a, b, dev=dev, grad=False)[1:]
    torch.testing.assert_close(got, fn(a, b), equal_nan=True, rtol=0, atol=0)
    assert d['KernelLoopsSplitAtConcatenate'] == 1
    assert (d['KernelTileIndices'] == 2) == whole


DEEP_CHAIN = '''
import json, torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
dev = torch_xla.device()
torch.manual_seed(0)
t0, g = torch.randn(16, 16), torch.randn(16, 16)
results = []
for device in ('cpu', dev):
    t, gd = t0.clone().to(device), g.to(device)
    with torch.no_grad():
        for _ in range(3000):
            t.lerp_(gd, 0.01)
            t.mul_(1.0001)
    xm.mark_step()
    results.append(t.cpu())
print(json.dumps({'close': torch.allclose(results[0], results[1], rtol=1e-4, atol=1e-5),
                  'limited': met.counter_value('FusionDepthLimited') or 0}))
'''


def test_thousands_of_in_place_updates_between_barriers_compile_and_match_eager():
    """6000 in-place updates of one tensor without a barrier are one elementwise chain. Emitting
    it as one kernel recursed once per link and overflowed the host's stack (the process died);
    FusionDepthLimited now cuts the chain into kernels of bounded depth. In a subprocess, so a
    crash shows as a failure."""
    import json
    import subprocess
    import sys
    run = subprocess.run([sys.executable, '-c', DEEP_CHAIN], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result['close'] and result['limited'] >= 1, result
