"""`torch.ops.xla.dynamo_set_buffer_donor_(t, True)`: asks, from inside a function compiled with
torch.compile(backend='openxla'), that `t`'s buffer be donated to the graph that next runs over
it (PyTorch/XLA's op; registered when torch_xla is imported).

On an xla tensor it is `torch_xla._XLAC._set_buffer_donation(t, should_donate)`. Under dynamo's
and AOTAutograd's tracing `t` is a fake tensor with no buffer: the request is counted
(`XlaSetBufferDonation`, as PyTorch/XLA counts it there) and the bridge's trace on the real
tensor makes it. Returns `t`; on other devices it does nothing.
"""
import torch

import torch_xla

_lib = torch.library.Library('xla', 'FRAGMENT')
_lib.define('dynamo_set_buffer_donor_(Tensor t, bool should_donoate) -> Tensor')


def _is_fake(t):
    from torch._subclasses.fake_tensor import FakeTensor
    return isinstance(t, FakeTensor)


def _set_buffer_donor_xla(t, should_donoate):
    if _is_fake(t):
        if should_donoate:
            torch_xla._XLAC._xla_counter_add('XlaSetBufferDonation', 1)
    else:
        torch_xla._XLAC._set_buffer_donation(t, should_donoate)
    return t


def _set_buffer_donor_other(t, should_donoate):
    return t


_lib.impl('dynamo_set_buffer_donor_', _set_buffer_donor_xla, 'XLA')
_lib.impl('dynamo_set_buffer_donor_', _set_buffer_donor_other, 'CompositeExplicitAutograd')
