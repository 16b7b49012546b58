"""PyTorch/XLA's data utilities: walking nested structures (for_each_instance), sending them to
a device (send_cpu_data_to_device, ToXlaTensorArena, DataWrapper), synthetic data and timing,
and the _XLAC entry points that describe tensors and the build."""
import re

import torch
import torch.nn as nn

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.utils.utils as xu


class _Node:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def test_for_each_instance_visits_each_object_once_through_every_container():
    shared = _Node([1, 'x'], (2.5,))
    data = {'k': [shared, {3: frozenset({'y'})}], 4: shared, 'cycle': None}
    data['cycle'] = data  # a reference back to the top
    seen = []
    xu.for_each_instance(data, lambda v: isinstance(v, (int, str, float)), seen.append)
    # keys and values of dicts, list, tuple and set items, object attributes; `shared` once
    assert sorted(map(str, seen)) == sorted(map(str, ['k', 1, 'x', 2.5, 3, 'y', 4, 'cycle']))
    assert len(seen) == len({id(v) for v in seen})


def test_for_each_instance_rewrite_replaces_in_the_same_order_and_keeps_objects():
    node = _Node({'w': [1.5, 2.5]}, ('p', 7.5))
    data = [node, node, {'z': 9.5}]
    order = []
    xu.for_each_instance(data, lambda v: isinstance(v, float), lambda v: order.append(id(v)))
    rewritten_order = []

    def double(v):
        rewritten_order.append(id(v))
        return v * 2

    out = xu.for_each_instance_rewrite(data, lambda v: isinstance(v, float), double)
    assert rewritten_order == order
    assert out[0] is node and out[1] is node  # objects rewritten in place, shared once
    assert node.a == {'w': [3.0, 5.0]} and node.b == ('p', 15.0)
    assert out[2] == {'z': 19.0}


def test_send_cpu_data_to_device_lists_a_single_tensor_and_keeps_structures(dev):
    t = torch.arange(4.0)
    [moved] = xm.send_cpu_data_to_device(t, dev)
    assert moved.device.type == 'xla' and torch.equal(moved.cpu(), t)
    key = torch.ones(2)
    data = {key: (torch.zeros(3), [torch.ones(1)]), 'set': {1.5}}
    out = xm.send_cpu_data_to_device(data, dev)
    [(new_key, (zeros, [ones]))] = [(k, v) for k, v in out.items() if k != 'set']
    assert all(x.device.type == 'xla' for x in (new_key, zeros, ones))
    assert out['set'] == {1.5}


def test_a_data_wrapper_is_rebuilt_from_its_moved_tensors(dev):
    class PackWrapper(xu.DataWrapper):
        def __init__(self, pack):
            super().__init__()
            self.pack = pack

        def get_tensors(self):
            return [self.pack.data, self.pack.sorted_indices, self.pack.unsorted_indices]

        def from_tensors(self, tensors):
            return nn.utils.rnn.PackedSequence(tensors[0], self.pack.batch_sizes, tensors[1], tensors[2])

    batch = torch.tensor([[1., 2, 3], [4, 5, 0], [6, 0, 0]]).unsqueeze(-1)
    pack = nn.utils.rnn.pack_padded_sequence(batch, [3, 2, 1], batch_first=True)
    [moved] = xm.send_cpu_data_to_device([PackWrapper(pack)], dev)
    assert isinstance(moved, nn.utils.rnn.PackedSequence)
    assert moved.data.device.type == 'xla' and moved.batch_sizes.device.type == 'cpu'
    assert torch.equal(moved.data.cpu(), pack.data)


def test_fn_data_generator_and_timing_helpers():
    gen = xu.FnDataGenerator(lambda x: x * 2 + 1, 4, torch.ones, dims=[3], count=2)
    batches = list(gen)
    assert len(gen) == 2 and len(batches) == 2
    assert all(d.shape == (4, 3) and torch.equal(t, d * 2 + 1) for d, t in batches)
    reports = []
    with xu.TimedScope(msg='block: ', printfn=reports.append):
        pass
    assert xu.timed(lambda: 41 + 1, msg='fn: ', printfn=reports.append) == 42
    assert len(reports) == 2 and re.fullmatch(r'block: \d+\.\d{3}s', reports[0])
    with xu.TimedScope(printfn=None):  # no report
        pass


def test_tensor_and_build_info_entry_points(dev):
    assert torch_xla._XLAC._xla_real_devices([str(dev)]) == ['CPU:0']
    assert torch_xla._XLAC._get_xla_tensor_shape_type(torch.ones(2, dtype=torch.float16, device=dev)) == 'f16'
    t = torch.tensor(42, device=dev)  # a tensor created from host data has its buffer
    assert torch_xla._XLAC._unsafe_buffer_pointer(t) > 0
    pending = t + 1
    try:
        torch_xla._XLAC._unsafe_buffer_pointer(pending)
        raise AssertionError('a value not computed yet has no buffer')
    except RuntimeError as e:
        assert 'torch_xla.sync()' in str(e)
    [a, b] = torch_xla._XLAC._xla_tensors_from_aten([torch.ones(2), torch.zeros(1)], [str(dev)] * 2)
    assert a.device.type == 'xla' and torch.equal(b.cpu(), torch.zeros(1))
    revs = torch_xla._XLAC._get_git_revs()
    assert revs['xla'] and 'torch' in revs
    met.clear_all()
    torch.arange(6, device=dev).reshape(2, 3).nonzero().cpu()  # data-dependent shape: on the CPU
    assert 'aten::nonzero' in torch_xla._XLAC._get_executed_fallback_ops()
