"""Every op the device records, against eager CPU PyTorch: values and gradients, over several
shapes (broadcast, 0-dim, empty), dtypes, and non-contiguous (transposed) device inputs."""
import pytest
import torch

import torch_xla
import op_specs
import op_specs_special

SPECS = op_specs.SPECS + op_specs_special.SPECS

RANDOM_OPS = {  # checked in test_random.py: their values cannot match eager's stream
    'aten::normal_functional', 'aten::uniform', 'aten::bernoulli.p', 'aten::random',
    'aten::random.from', 'aten::native_dropout', 'aten::native_dropout_backward', 'aten::bernoulli.Tensor',
    'aten::bernoulli', 'aten::randperm', 'aten::randperm.generator',
}
SPMD_ONLY_OPS = {  # checked in test_spmd.py: they exist only in a program partitioned over devices
    'txla::spmd_full_to_shard_shape', 'txla::spmd_shard_to_full_shape',
}


def _ir_text(tensors):
    tensors = [t for t in tensors if isinstance(t, torch.Tensor) and t.device.type == 'xla']
    return torch_xla._XLAC._get_xla_tensors_text(tensors) if tensors else ''


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _leaf_and_arg(t, transpose):
    """The leaf to differentiate and the argument to pass. Transposed: the same logical tensor,
    as a non-contiguous transposed view of a contiguous leaf."""
    if transpose and t.dim() >= 2:
        return t.transpose(0, 1).contiguous(), lambda leaf: leaf.transpose(0, 1)
    return t, lambda leaf: leaf


def _tolerances(spec, dtype):
    """A spec's tolerances are for float32; float64 results are held to float64's precision,
    scaled by how much looser than float32's defaults (1.3e-6, 1e-5) the spec is."""
    if dtype != torch.float64:
        return spec.rtol, spec.atol
    return 1e-7 * max(1.0, spec.rtol / 1.3e-6), 1e-7 * max(1.0, spec.atol / 1e-5)


def _run_case(spec, inputs, dev, transpose):
    floating = [t.is_floating_point() for t in inputs]
    want_grad = [spec.grad and f and i not in spec.nograd for i, f in enumerate(floating)]
    prepared = [_leaf_and_arg(t, transpose) for t in inputs]
    cpu_leaves = [t.clone().requires_grad_(g) for (t, _), g in zip(prepared, want_grad)]
    xla_leaves = [t.clone().to(dev).requires_grad_(g) for (t, _), g in zip(prepared, want_grad)]
    out_cpu = _as_tuple(spec.fn(*[view(t) for t, (_, view) in zip(cpu_leaves, prepared)]))
    out_xla = _as_tuple(spec.fn(*[view(t) for t, (_, view) in zip(xla_leaves, prepared)]))

    text = _ir_text(out_xla)
    for op in spec.ops:
        assert f' {op}(' in text, f'{spec.name}: expected {op} in the IR:\n{text}'
    assert len(out_cpu) == len(out_xla)
    for c, x in zip(out_cpu, out_xla):
        assert x.device.type == 'xla'
        assert x.dtype == c.dtype and x.shape == c.shape, (spec.name, x.dtype, c.dtype, x.shape, c.shape)
        rtol, atol = _tolerances(spec, c.dtype)
        torch.testing.assert_close(x.cpu(), c.detach(), rtol=rtol, atol=atol, equal_nan=True)

    if not any(want_grad):
        return
    gen = torch.Generator().manual_seed(1)
    pairs = [(c, x) for c, x in zip(out_cpu, out_xla) if c.requires_grad and c.is_floating_point()]
    if not pairs:
        return
    weights = [torch.rand(c.shape, generator=gen, dtype=c.dtype) for c, _ in pairs]
    sum(((c * w).sum() for (c, _), w in zip(pairs, weights))).backward()
    sum(((x * w.to(dev)).sum() for (_, x), w in zip(pairs, weights))).backward()
    grads = [x.grad for x in xla_leaves if x.grad is not None]
    text = _ir_text(grads)
    for op in spec.grad_ops:
        assert f' {op}(' in text, f'{spec.name}: expected {op} in the backward IR:\n{text}'
    for c, x in zip(cpu_leaves, xla_leaves):
        if c.grad is None:
            assert x.grad is None
            continue
        rtol, atol = _tolerances(spec, c.dtype)
        floor = 1e-7 if c.dtype == torch.float64 else 1e-5
        torch.testing.assert_close(x.grad.cpu(), c.grad, rtol=max(rtol, floor),
                                   atol=max(atol, floor) * 10, equal_nan=True)


def _fallback_counts():
    """Counters of graphs that left the compiler: a rule that throws, a form it does not lower,
    or a module codegen cannot emit."""
    names = torch_xla._XLAC._xla_counter_names()
    return {n: torch_xla._XLAC._xla_counter_value(n) for n in names
            if n.startswith(('LoweringError:', 'NoCodegen:', 'NoLowering:'))}


@pytest.mark.parametrize('spec', SPECS, ids=lambda s: s.name)
def test_op_matches_eager(spec, dev):
    gen = torch.Generator().manual_seed(0)
    before = _fallback_counts()
    for dtype in spec.dtypes:
        for case in spec.cases:
            inputs = [make(dtype, gen) for make in case]
            _run_case(spec, inputs, dev, transpose=False)
            if spec.transposed and any(t.dim() >= 2 for t in inputs):
                _run_case(spec, inputs, dev, transpose=True)
    # A lowering rule that throws or a module codegen cannot emit would silently run on the
    # interpreter: the values above would still match, so check it did not happen.
    grown = {n: v - before.get(n, 0) for n, v in _fallback_counts().items() if v != before.get(n, 0)}
    assert not grown, f'{spec.name}: graphs fell back to the interpreter: {grown}'


def test_lowered_ops_compile_to_native_code(dev):
    """A graph of lowered ops runs as native code, not on the interpreter."""
    from conftest import CounterDelta
    x = torch.randn(4, 3, 8, 8).to(dev).requires_grad_()
    w = torch.randn(5, 3, 3, 3).to(dev).requires_grad_()
    with CounterDelta('InterpretedGraph', 'UncachedCompile') as d:
        y = torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(x, w, padding=1), 2)
        y = torch.nn.functional.batch_norm(y, None, None, training=True)
        y.sum().backward()
        torch_xla.sync()
        x.grad.cpu()
    assert d['UncachedCompile'] >= 1 and d['InterpretedGraph'] == 0


def _reaches_backends(name):
    """Whether this torch dispatches `name` to a backend at all: an op it does not have, or one
    it decomposes above autograd (CompositeImplicitAutograd, e.g. torch 2.x's upsample .vec
    overloads), never reaches the device, so no test can record it."""
    namespace, _, op = name.partition('::')
    base, _, overload = op.partition('.')
    packet = getattr(getattr(torch.ops, namespace), base, None)
    if packet is None or (overload or 'default') not in packet.overloads():
        return False  # no such operator in this torch
    return not torch._C._dispatch_has_kernel_for_dispatch_key(name, 'CompositeImplicitAutograd')


def test_every_recorded_op_has_a_lowering_rule_and_every_rule_a_recorded_op():
    """The op table (what the device records) and the lowering rules are keyed by one name: a
    recorded op without a rule would run every graph holding it on the interpreter."""
    assert sorted(torch_xla._XLAC._xla_op_table()) == torch_xla._XLAC._xla_lowered_ops()


def test_every_lowered_op_has_a_differential_spec():
    covered = set(RANDOM_OPS) | SPMD_ONLY_OPS
    for spec in SPECS:
        covered.update(spec.ops)
        covered.update(spec.grad_ops)
    missing = sorted(n for n in set(torch_xla._XLAC._xla_op_table()) - covered if _reaches_backends(n))
    assert not missing, f'lowered ops without a differential test: {missing}'
