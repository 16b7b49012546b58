"""F.scaled_dot_product_attention on the device: one fused node each way where eager's CPU takes
its fused kernel, computed as PyTorch's math path computes, the forward without a mask in one
pass over the keys (values and q/k/v gradients against eager's math path); ATen's composite, with
its checks, everywhere else."""
import contextlib

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import torch_xla.core.xla_model as xm
from conftest import CounterDelta

FUSED = 'xla::_scaled_dot_product_flash_attention_for_cpu'
FUSED_BACKWARD = 'xla::_scaled_dot_product_flash_attention_for_cpu_backward'
TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12),
             torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def _run(device, q, k, v, mask=None, backend=None, **kwargs):
    """Output and q/k/v (and a mask's) gradients of one attention, with the op counts it recorded."""
    ins = [t.detach().to(device).requires_grad_() for t in (q, k, v)]
    m = mask.detach().to(device).requires_grad_(mask.requires_grad) if mask is not None else None
    if m is not None:
        kwargs['attn_mask'] = m
    # The reference is eager's math path (eager's own fused kernel rounds apart from it).
    if device == 'cpu':
        backend = [SDPBackend.MATH]
    with CounterDelta() as counts, sdpa_kernel(backend) if backend else contextlib.nullcontext():
        out = F.scaled_dot_product_attention(*ins, **kwargs)
        weights = torch.linspace(-1, 1, out.numel(), dtype=torch.float32).reshape(out.shape).to(out.dtype)
        (out * weights.to(device)).sum().backward()
        if device != 'cpu':
            xm.mark_step()
    grads = [t.grad.cpu() for t in ins] + ([m.grad.cpu()] if m is not None and m.requires_grad else [])
    return [out.detach().cpu()] + grads, counts.delta


def _inputs(dtype, batch=2, heads=3, target=5, source=7, head_size=4, kv_heads=None):
    torch.manual_seed(0)
    q = torch.randn(batch, heads, target, head_size).to(dtype)
    k = torch.randn(batch, kv_heads or heads, source, head_size).to(dtype)
    v = torch.randn(batch, kv_heads or heads, source, head_size).to(dtype)
    return q, k, v


def _mask(kind, dtype, batch=2, heads=3, target=5, source=7):
    torch.manual_seed(1)
    if kind == 'bool':
        m = torch.rand(target, source) > 0.3
        m[:, 0] = True
        return m
    if kind == 'rows_fully_masked':
        m = torch.rand(batch, 1, target, source) > 0.3
        m[..., 0] = True
        m[1, 0, 2] = False
        return m
    if kind == 'float_4d':
        return torch.randn(batch, heads, target, source).to(dtype)
    if kind == 'float_per_batch':  # a padding mask: [B, 1, 1, S]
        m = torch.zeros(batch, 1, 1, source)
        m[0, ..., -2:] = float('-inf')
        return m.to(dtype)
    return None


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize('mask', ['none', 'causal', 'bool', 'rows_fully_masked', 'float_4d', 'float_per_batch'])
def test_fused_attention_matches_the_math_path(dev, dtype, mask):
    q, k, v = _inputs(dtype)
    kwargs = {'is_causal': True} if mask == 'causal' else {}
    m = _mask(mask, dtype)
    want, _ = _run('cpu', q, k, v, m, **kwargs)
    got, counts = _run(dev, q, k, v, m, **kwargs)
    assert counts.get(FUSED) == 1 and counts.get(FUSED_BACKWARD) == 1, counts
    assert 'xla::_safe_softmax' not in counts and not any(k.startswith('aten::') for k in counts), counts
    assert 'InterpretedGraph' not in counts, counts  # compiled, both ways
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOLERANCE[dtype])
    if mask == 'rows_fully_masked':  # zeros, with zero gradients, as the math path has them
        assert (got[0][1, :, 2] == 0).all() and (got[1][1, :, 2] == 0).all()


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize('causal', [False, True])
@pytest.mark.parametrize('shape', [(2, 3, 70, 150, 16), (1, 2, 1, 65, 64), (2, 1, 33, 5, 3)])
def test_unmasked_attention_runs_in_one_pass_over_the_keys(dev, dtype, causal, shape):
    """Without a mask the forward is one library call (AttentionOnePass) that takes the softmax
    online over blocks of keys and never stores the scores: values and gradients as the math
    path's across query and key blocks, a tail of each, one query, an odd head size; a NaN in q
    makes its row NaN, an infinite key weighs as there."""
    batch, heads, target, source, head_size = shape
    torch.manual_seed(4)
    q = torch.randn(batch, heads, target, head_size).to(dtype)
    k = torch.randn(batch, heads, source, head_size).to(dtype)
    v = torch.randn(batch, heads, source, head_size).to(dtype)
    q[0, 0, -1, 0] = float('nan')
    k[-1, -1, 0, 1] = float('inf')
    want, _ = _run('cpu', q, k, v, is_causal=causal)
    with CounterDelta('AttentionOnePass') as one_pass:
        got, counts = _run(dev, q, k, v, is_causal=causal)
    assert counts.get(FUSED) == 1 and counts.get(FUSED_BACKWARD) == 1, counts
    assert one_pass['AttentionOnePass'] >= 1
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, equal_nan=True, **TOLERANCE[dtype])
    assert got[0][0, 0, -1].isnan().all()


def test_a_row_of_minus_infinite_scores_attends_to_nothing_in_one_pass(dev):
    """A query whose every score is -inf (no mask) gets zeros, as _safe_softmax gives them; the
    other rows are the math path's."""
    q, k, v = _inputs(torch.float32)
    k = k.abs() + 0.1
    q[1, 2, 3] = float('-inf')
    want = F.scaled_dot_product_attention(q, k, v)
    with CounterDelta('AttentionOnePass') as one_pass:
        got = F.scaled_dot_product_attention(*(t.to(dev) for t in (q, k, v))).cpu()
    assert one_pass['AttentionOnePass'] >= 1
    assert (got[1, 2, 3] == 0).all()
    torch.testing.assert_close(got, want.nan_to_num(0.0), **TOLERANCE[torch.float32])


def test_masked_attention_keeps_the_math_path(dev):
    q, k, v = _inputs(torch.float32, source=9)
    with CounterDelta('AttentionOnePass') as one_pass:
        out = F.scaled_dot_product_attention(*(t.to(dev) for t in (q, k, v)), attn_mask=_mask('bool', None, source=9).to(dev))
        xm.mark_step()
    assert out.shape == (2, 3, 5, 4) and one_pass['AttentionOnePass'] == 0


@pytest.mark.parametrize('scale', [0.3, -0.7])
def test_fused_attention_with_a_scale_and_transposed_inputs(dev, scale):
    torch.manual_seed(0)
    # [B, L, H, E] projections viewed as [B, H, L, E], as transformers' attention layers do.
    q, k, v = (torch.randn(2, 6, 3, 8).transpose(1, 2) for _ in range(3))
    want, _ = _run('cpu', q, k, v, scale=scale)
    got, counts = _run(dev, q, k, v, scale=scale)
    assert counts.get(FUSED) == 1 and 'InterpretedGraph' not in counts, counts
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOLERANCE[torch.float32])


def test_fused_attention_in_inference(dev):
    q, k, v = _inputs(torch.float32)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with CounterDelta() as counts:
        with torch.inference_mode():
            got_inference = F.scaled_dot_product_attention(*(t.to(dev) for t in (q, k, v)), is_causal=True).cpu()
        with torch.no_grad():
            got = F.scaled_dot_product_attention(*(t.to(dev) for t in (q, k, v)), is_causal=True).cpu()
    assert counts[FUSED] >= 1 and FUSED_BACKWARD not in counts.delta, counts.delta
    torch.testing.assert_close(got, want, **TOLERANCE[torch.float32])
    torch.testing.assert_close(got_inference, want, **TOLERANCE[torch.float32])


@pytest.mark.parametrize('case', ['math_backend_chosen', 'mask_needs_a_gradient', 'three_dims',
                                  'grouped_query_heads', 'head_sizes_differ'])
def test_other_attentions_take_the_math_path(dev, case):
    q, k, v = _inputs(torch.float32)
    mask, kwargs, backend = None, {}, None
    if case == 'math_backend_chosen':
        backend = [SDPBackend.MATH]
    elif case == 'mask_needs_a_gradient':
        mask = torch.randn(5, 7).requires_grad_()
    elif case == 'three_dims':
        q, k, v = q[0], k[0], v[0]
    elif case == 'grouped_query_heads':
        q, k, v = _inputs(torch.float32, heads=4, kv_heads=2)
        kwargs['enable_gqa'] = True
    elif case == 'head_sizes_differ':
        v = torch.randn(2, 3, 7, 6)
    want, _ = _run('cpu', q, k, v, mask, **kwargs)
    got, counts = _run(dev, q, k, v, mask, backend=backend, **kwargs)
    assert FUSED not in counts and counts.get('xla::_safe_softmax') == 1, counts
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOLERANCE[torch.float32])


def test_dropout_takes_the_math_path(dev):
    q, k, v = _inputs(torch.float32)
    with CounterDelta() as delta:
        out = F.scaled_dot_product_attention(*(t.to(dev) for t in (q, k, v)), dropout_p=0.5)
        xm.mark_step()
    assert out.shape == (2, 3, 5, 4)
    counts = delta.delta
    assert FUSED not in counts and counts.get('xla::_safe_softmax') == 1, counts


def test_bad_attention_arguments_raise_the_math_paths_errors(dev):
    q, k, v = (t.to(dev) for t in _inputs(torch.float32))
    with pytest.raises(RuntimeError, match='attn_mask'):
        F.scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(5, 7, device=dev), is_causal=True)
    with pytest.raises(RuntimeError, match='same dtype'):
        F.scaled_dot_product_attention(q, k.double(), v)


def test_fused_attention_through_torch_compile(dev):
    q, k, v = _inputs(torch.float32)
    mask = _mask('float_per_batch', torch.float32)

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum()

    compiled = torch.compile(attend, backend='openxla')
    ins = [t.to(dev).requires_grad_() for t in (q, k, v)]
    compiled(*ins, mask.to(dev)).backward()
    ref = [t.clone().requires_grad_() for t in (q, k, v)]
    attend(*ref, mask).backward()
    for got, want in zip(ins, ref):
        torch.testing.assert_close(got.grad.cpu(), want.grad, **TOLERANCE[torch.float32])
