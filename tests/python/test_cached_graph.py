"""PyTorch/XLA's entry points for running a compiled graph again by its hash (its older dynamo
bridge's): the device data a graph reads, compiling without running, running on other inputs,
and the helpers around them (GraphInputMatcher, UnsupportedNodesCollector, pending-IR checks)."""
import pytest
import torch

import torch_xla
import torch_xla.debug.metrics as met
from torch_xla import _XLAC
from torch_xla._dynamo.dynamo_bridge import GraphInputMatcher, UnsupportedNodesCollector
from conftest import CounterDelta


def test_device_data_of_a_graph_and_running_it_again_on_other_inputs(dev):
    w = torch.randn(4, 3).to(dev)
    x = torch.randn(5, 4).to(dev)
    torch_xla.sync()
    out = torch.tanh(x @ w) * 2 + w.sum()
    ids, data = _XLAC._get_tensors_xla_device_data_node([out])
    # x and w, each once, as the tensors that hold them (a number's shared buffer has no tensor).
    assert {_XLAC._xla_get_tensor_id(x), _XLAC._xla_get_tensor_id(w)} <= set(ids)
    assert sorted(_XLAC._get_tensors_handle([x, w])) == sorted(
        h for i, h in zip(ids, _XLAC._get_tensors_handle(data)) if i >= 0)
    graph_hash = _XLAC._get_graph_hash([out])
    with CounterDelta('ExecuteTime') as d:
        _XLAC._xla_warm_up_cache([out], [])
    assert _XLAC._xla_has_pending_ir(out)  # compiled, not run
    matcher = GraphInputMatcher({_XLAC._xla_get_tensor_id(x): 0}, ids, data, {_XLAC._xla_get_tensor_id(x)})
    assert matcher.graph_input_xla_values.count(None) == 1  # x comes from each call
    x2 = torch.randn(5, 4)
    for arg in (x2.to(dev), x2):  # an xla tensor, or a host one copied over
        res = _XLAC._run_cached_graph(graph_hash, matcher([arg]))
        assert len(res) == 1
        torch.testing.assert_close(res[0].cpu(), torch.tanh(x2 @ w.cpu()) * 2 + w.cpu().sum())
    torch.testing.assert_close(out.cpu(), torch.tanh(x.cpu() @ w.cpu()) * 2 + w.cpu().sum())
    with pytest.raises(RuntimeError, match='takes'):
        _XLAC._run_cached_graph(graph_hash, [x2.to(dev)])
    with pytest.raises(RuntimeError, match='no graph with hash'):
        _XLAC._run_cached_graph('0123', [])


def test_outputs_are_the_pending_tensors_each_once(dev):
    a, b, c = (torch.randn(3).to(dev) for _ in range(3))
    torch_xla.sync()
    # b returned as it is is no output; updated in place (and returned twice) it is one.
    for make, n in ((lambda: (a + b, a + c, b), 2), (lambda: (a * 2, b.zero_(), b, b), 2)):
        outs = make()
        ids, data = _XLAC._get_tensors_xla_device_data_node(list(outs))
        _XLAC._xla_warm_up_cache(list(outs), [])
        assert len(_XLAC._run_cached_graph(_XLAC._get_graph_hash(list(outs)), data)) == n
        torch_xla.sync()


def test_need_materialization_and_clearing_pending_irs(dev):
    t = torch.randn(4)
    assert _XLAC._check_tensor_need_materialization([t]) == [False]
    x = t.to(dev)
    assert _XLAC._check_tensor_need_materialization([x]) == [False]
    y = x * 2
    assert _XLAC._check_tensor_need_materialization([x, y]) == [False, True]
    torch_xla.sync()
    z = y + 1
    with CounterDelta('ExecuteTime') as d:
        _XLAC._clear_pending_irs(str(dev))
        assert 'aten::add' not in _XLAC._get_xla_tensors_text([z])
        torch_xla.sync()
    assert d['ExecuteTime'] == 0
    torch.testing.assert_close(y.cpu(), t * 2)
    with pytest.raises(RuntimeError):
        z.cpu()  # its value was dropped: a placeholder


def test_unsupported_nodes_collector_keeps_the_counters():
    class M(torch.nn.Module):
        def forward(self, a, b):
            return a + b

    met.clear_counters()
    _XLAC._xla_increment_counter('UncachedCompile', 3)
    collector = UnsupportedNodesCollector(torch.fx.symbolic_trace(M()))
    collector.run(torch.randn(1).to('xla'), torch.randn(1).to('xla'))
    assert collector.get_unsupported_nodes() == []
    assert met.counter_value('UncachedCompile') == 3
