"""`torch.ops.xla.dynamo_set_buffer_donor_(t, True)`: asks, from inside a function compiled with
torch.compile(backend='openxla'), that `t`'s buffer be donated to the graph that next runs over
it (PyTorch/XLA's op; registered when torch_xla is imported).

On an xla tensor it is `torch_xla._XLAC._set_buffer_donation(t, should_donate)`; the bridge's
trace of the compiled function on the real tensors makes the request. A fake tensor (dynamo's and
AOTAutograd's tracing) has no buffer to donate, nor has a tensor of another device: nothing is
done. Returns `t`.
"""
import torch

import torch_xla

_lib = torch.library.Library('xla', 'FRAGMENT')
_lib.define('dynamo_set_buffer_donor_(Tensor t, bool should_donoate) -> Tensor')


def _is_fake(t):
    from torch._subclasses.fake_tensor import FakeTensor
    return isinstance(t, FakeTensor)


def _set_buffer_donor_xla(t, should_donoate):
    if not _is_fake(t):
        torch_xla._XLAC._set_buffer_donation(t, should_donoate)
    return t


def _set_buffer_donor_other(t, should_donoate):
    return t


_lib.impl('dynamo_set_buffer_donor_', _set_buffer_donor_xla, 'XLA')
_lib.impl('dynamo_set_buffer_donor_', _set_buffer_donor_other, 'CompositeExplicitAutograd')
