"""Buffer donation as PyTorch/XLA has it (csrc/graph/buffer_donation.h): a run writes an output
over an input nothing else holds, the old value of a tensor updated in place or an input the user
donated (whose tensors become placeholders); InputOutputAliasCount counts, per compiled graph, the
outputs that take over an input. Values are checked against eager; donations through the counters."""
import pytest
import torch

import torch_xla
import torch_xla.debug.metrics as met

C = torch_xla._XLAC


def alias_counts():
    data = met.metric_data('InputOutputAliasCount')
    return (0, 0.0) if data is None else (data[0], data[1])


def donated_buffers():
    return met.counter_value('DonatedBuffers') or 0


@pytest.fixture(autouse=True)
def fresh_metrics():
    torch_xla.sync(wait=True)
    met.clear_all()
    before = C._xla_get_enable_alias_with_buffer_donor_config()
    yield
    C._xla_set_enable_alias_with_buffer_donor_config(before)


def test_in_place_updates_take_over_their_inputs():
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    xa, xb = a.to('xla'), b.to('xla')
    torch_xla.sync(wait=True)
    met.clear_all()
    xa *= 2
    xb += 1
    torch_xla.sync(wait=True)
    assert alias_counts() == (1, 2.0)  # one graph; xa's and xb's old buffers
    assert donated_buffers() == 2
    torch.testing.assert_close(xa.cpu(), a * 2)
    torch.testing.assert_close(xb.cpu(), b + 1)


def test_an_old_value_read_beside_its_update_is_still_taken_over():
    # The sum reads both old values; the updates run after it (passes/update_order.h) and take
    # both over.
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    xa, xb = a.to('xla'), b.to('xla')
    torch_xla.sync(wait=True)
    met.clear_all()
    s = xa + xb
    xa *= 2
    xb += 1
    torch_xla.sync(wait=True)
    assert alias_counts() == (1, 2.0) and donated_buffers() == 2
    torch.testing.assert_close(s.cpu(), a + b)
    torch.testing.assert_close(xa.cpu(), a * 2)
    torch.testing.assert_close(xb.cpu(), b + 1)


def test_a_graph_found_in_the_cache_adds_no_sample():
    x = torch.randn(5).to('xla')
    for _ in range(3):
        x += 1
        torch_xla.sync(wait=True)
    assert alias_counts()[0] == 1
    assert donated_buffers() >= 2


def test_a_buffer_another_tensor_shares_is_not_written_over():
    a = torch.randn(4, 2)
    x = a.to('xla')
    kept = x.clone()
    x += 1
    torch_xla.sync(wait=True)
    torch.testing.assert_close(kept.cpu(), a)
    torch.testing.assert_close(x.cpu(), a + 1)


def test_a_donated_tensor_becomes_a_placeholder_that_raises_when_used():
    a, b = torch.randn(4, 2, 2), torch.randn(4, 2, 2)
    t0, t1 = a.to('xla'), b.to('xla')
    assert C._set_buffer_donation(t0, True)
    assert C._get_buffer_donation(t0) and not C._get_buffer_donation(t1)
    assert met.counter_value('XlaSetBufferDonation') == 1
    t2 = t0 + t1
    torch_xla.sync(wait=True)
    assert C._is_placecholder(t0) and not C._is_placecholder(t1)
    assert alias_counts()[1] == 1.0
    torch.testing.assert_close(t2.cpu(), a + b)
    with pytest.raises(RuntimeError, match='donated'):
        t0.cpu()
    with pytest.raises(RuntimeError, match='donated'):
        t0 + 1
    torch.testing.assert_close((t1 * 2).cpu(), b * 2)  # the process goes on


def test_a_sync_that_keeps_its_inputs_donates_only_what_the_config_allows():
    for enabled in (False, True):
        C._xla_set_enable_alias_with_buffer_donor_config(enabled)
        met.clear_all()
        a, b = torch.randn(3), torch.randn(3)
        t0, t1 = a.to('xla'), b.to('xla')
        assert C._set_buffer_donation(t0, True)
        t2 = t0 + t1
        t1 += 2
        C._xla_sync_multi([t0, t1, t2], ['xla:0'], True, False)
        assert C._is_placecholder(t0) == enabled
        assert alias_counts()[1] == (1.0 if enabled else 0.0)
        torch.testing.assert_close(t2.cpu(), a + b)
        torch.testing.assert_close(t1.cpu(), b + 2)


def test_a_request_waits_for_a_run_that_reads_the_buffer():
    t = torch.randn(5, 5).to('xla')
    assert C._set_buffer_donation(t, True)
    torch_xla.sync()
    torch_xla.sync()
    assert C._get_buffer_donation(t)
    assert not C._set_buffer_donation(t + 1, True)  # a pending value has no buffer to donate
    assert C._set_buffer_donation(t, False) and not C._get_buffer_donation(t)


def test_gradient_accumulation_compiles_two_graphs_and_aliases_the_gradient():
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4, bias=False)
    reference = torch.nn.Linear(16, 4, bias=False)
    reference.load_state_dict(model.state_dict())
    model.to('xla')
    x, y = torch.rand(2, 16), torch.tensor([1, 3])
    xx, xy = x.to('xla'), y.to('xla')
    torch_xla.sync(wait=True)
    met.clear_all()
    for _ in range(4):
        torch.nn.functional.cross_entropy(model(xx), xy).backward()
        torch_xla.sync()
        torch.nn.functional.cross_entropy(reference(x), y).backward()
    torch_xla.sync(wait=True)
    torch.testing.assert_close(model.weight.grad.cpu(), reference.weight.grad)
    assert alias_counts() == (2, 1.0)


def test_a_created_placeholder_is_traced_but_never_read_or_run(dev):
    from torch_xla.core.xla_builder import create_placeholder_tensor
    assert not C._is_placecholder(torch.zeros(2).to(dev))
    before = met.metric_data('TransferToDeviceTime')
    p = create_placeholder_tensor((2, 3), torch.bfloat16)
    q = create_placeholder_tensor((3, 4), 'f32')
    assert p.device == dev and p.dtype == torch.bfloat16 and p.shape == (2, 3) and q.dtype == torch.float32
    assert C._is_placecholder(p) and C._is_placecholder(q)
    y = (torch.sin(p) @ p.float().t()) * 2
    text = C._get_xla_tensors_text([y])
    assert text.count('bf16[2,3]{1,0} xla::device_data()') == 1  # p read twice: one parameter
    assert 'ENTRY' in C._get_xla_tensors_hlo([y])
    assert met.metric_data('TransferToDeviceTime') == before  # nothing went to the device
    with pytest.raises(RuntimeError, match='placeholder'):
        p.cpu()
    with pytest.raises(RuntimeError, match='placeholder'):
        y.cpu()  # running the graph would read it
    h1, h2 = C._get_tensors_handle([p, q])
    assert h1 != h2
    del y  # a graph that reads a placeholder stays pending (every barrier would raise) until dropped
    z = torch.ones(3).to(dev) + 1  # the device goes on working
    assert z.cpu().tolist() == [2.0, 2.0, 2.0]


def test_a_donated_tensor_has_no_handle(dev):
    t0 = torch.randn(4, 2).to(dev)
    t1 = torch.randn(4, 2).to(dev)
    assert C._set_buffer_donation(t0, True)
    _ = t0 + t1
    torch_xla.sync(wait=True)
    assert C._is_placecholder(t0)
    with pytest.raises(RuntimeError, match='deleted'):
        C._get_tensors_handle([t0])


def test_debug_info_shows_a_donated_buffer_as_deleted(dev):
    t0, t1 = torch.randn(4, 2).to(dev), torch.randn(4, 2).to(dev)
    assert 'Data Handle: Deleted' not in C._get_xla_tensor_debug_info(t0)
    assert 'Data Handle: None' not in C._get_xla_tensor_debug_info(t0)  # a buffer with a value
    assert C._set_buffer_donation(t0, True)
    t2 = t0 + t1
    torch_xla.sync(wait=True)
    info = C._get_xla_tensor_debug_info(t0)
    assert 'Data Handle: Deleted' in info and 'Data Shape: f32[4,2]' in info
    assert 'XLAData: None' in C._get_xla_tensor_debug_info(t2 * 2)  # pending: no buffer yet


def test_alias_with_buffer_donor_config_sets_and_restores_the_switch():
    from torch_xla._dynamo.dynamo_bridge import alias_with_buffer_donor_config
    C._xla_set_enable_alias_with_buffer_donor_config(False)
    with alias_with_buffer_donor_config() as saved:
        assert saved is False and C._xla_get_enable_alias_with_buffer_donor_config()
        with alias_with_buffer_donor_config(should_alias=False) as inner:
            assert inner is True and not C._xla_get_enable_alias_with_buffer_donor_config()
        assert C._xla_get_enable_alias_with_buffer_donor_config()
    assert not C._xla_get_enable_alias_with_buffer_donor_config()
    with pytest.raises(ValueError):
        with alias_with_buffer_donor_config():
            raise ValueError('restored on the way out')
    assert not C._xla_get_enable_alias_with_buffer_donor_config()


def test_dynamo_set_buffer_donor_op_requests_donation_on_xla_only():
    a = torch.randn(3)
    t = a.to('xla')
    assert torch.ops.xla.dynamo_set_buffer_donor_(t, True) is not None
    assert C._get_buffer_donation(t) and met.counter_value('XlaSetBufferDonation') == 1
    out = t * 2
    C._xla_set_enable_alias_with_buffer_donor_config(True)
    torch_xla.sync(wait=True)
    assert C._is_placecholder(t)
    torch.testing.assert_close(out.cpu(), a * 2)
    cpu = torch.randn(2)
    assert torch.ops.xla.dynamo_set_buffer_donor_(cpu, True) is cpu  # other devices: nothing
    assert met.counter_value('XlaSetBufferDonation') == 1
